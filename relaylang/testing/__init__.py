"""The golden-file harness: `.relay` files with `// RUN:` lines, checked by FileCheck
directives or sibling `.out`/`.err` files (`relay test`, and pytest via tests/conftest.py).

  cases.py    reading a test file: cases split by `// -----`, RUN lines, GOLDEN-SKIP
  runner.py   running a RUN line (`relay parse|check|opt`) in-process, with the library
  checks.py   FileCheck, and the automatic checks of every `relay opt` run
  golden.py   running a case, judging it against `.out`/`.err`, `--update`
  command.py  the `relay test` command

The names below are imported when first used, so `relay --help`, which imports
command.py, does not load the harness.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

_LAZY = {
    "Case": "cases", "GoldenFormatError": "cases", "RunLine": "cases", "read_cases": "cases",
    "split_cases": "cases",
    "CaseRun": "golden", "FileOutcome": "golden", "judge": "golden", "run_case": "golden",
    "run_file": "golden",
}

if TYPE_CHECKING:
    from .cases import Case, GoldenFormatError, RunLine, read_cases, split_cases
    from .golden import CaseRun, FileOutcome, judge, run_case, run_file

__all__ = ["Case", "CaseRun", "FileOutcome", "GoldenFormatError", "RunLine", "judge",
           "read_cases", "run_case", "run_file", "split_cases"]


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
