"""Layout passes: ConvertLayout and AlterOpLayout on one layout-propagation machinery
(`rewrite.py`), with the per-op rules in `rules.py` and the per-target preferred layouts
in `desired_layouts.py`."""
