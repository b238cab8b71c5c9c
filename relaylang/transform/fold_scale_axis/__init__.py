"""FoldScaleAxis: BackwardFoldScaleAxis (`backward.py`), ForwardFoldScaleAxis (`forward.py`),
the messages and helpers both share (`common.py`) and the combined pass (`combined.py`)."""
