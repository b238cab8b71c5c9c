"""The golden-file harness: `.relay` files with `// RUN:` lines, checked by FileCheck
directives or sibling `.out`/`.err` files (`relay test`, and pytest via tests/conftest.py).

  cases.py    reading a test file: cases split by `// -----`, RUN lines, GOLDEN-SKIP
  runner.py   running `relay ...` in-process with captured output
  checks.py   FileCheck, and the automatic checks of every `relay opt` run
  golden.py   running a case, judging it against `.out`/`.err`, `--update`
  command.py  the `relay test` command
"""
from .cases import Case, GoldenFormatError, RunLine, read_cases, split_cases
from .golden import CaseRun, FileOutcome, judge, run_case, run_file

__all__ = ["Case", "CaseRun", "FileOutcome", "GoldenFormatError", "RunLine", "judge",
           "read_cases", "run_case", "run_file", "split_cases"]
