"""`relay test [PATH...] [--update]`: run golden files and report (turnt, LLVM lit).

Paths are `.relay` files or directories searched for them; with none, `tests/golden`.
With `--update` the `.out`/`.err` files are rewritten from what the cases print and the
diffs are shown, so reviewers read the change; CHECK lines are never rewritten. On a
terminal a progress bar counts the files (on stderr, cleared at the end); `--quiet` hides it.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

DEFAULT_PATH = Path("tests/golden")


def golden_files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for p in [Path(p) for p in paths] or [DEFAULT_PATH]:
        found += sorted(p.rglob("*.relay")) if p.is_dir() else [p]
    return found


def cmd_test(args: argparse.Namespace) -> int:
    from ..ir.progress import track, write
    from .cases import GoldenFormatError
    from .golden import run_file
    files = golden_files(args.paths)
    if not files:
        print("relay test: error: no .relay test files found", file=sys.stderr)
        return 1
    passed = failed = noted = 0
    for path in track(files, "golden files", unit="file"):
        try:
            outcome = run_file(path, update=args.update)
        except GoldenFormatError as e:
            write(f"FAIL {e}", sys.stdout)
            failed += 1
            continue
        except OSError as e:
            write(f"FAIL {path}: cannot read: {e.strerror or e}", sys.stdout)
            failed += 1
            continue
        for diff in outcome.updates:
            write(diff.removesuffix("\n"), sys.stdout)
        for case in outcome.new_diagnostics:
            write(f"NOTE {path} {case.name}: its diagnostics were recorded as expected in "
                  f"{path.with_suffix('.err').name}; check that they are meant", sys.stdout)
            noted += 1
        for case, problems in outcome.failures:
            lines = [f"FAIL {path} {case.name}"]
            lines += ["  " + problem.rstrip().replace("\n", "\n  ") for problem in problems]
            write("\n".join(lines), sys.stdout)
        passed += outcome.passed
        failed += len(outcome.failures)
    extra = f" ({noted} with newly recorded diagnostics)" if noted else ""
    print(f"{passed} passed, {failed} failed{extra}")
    return 1 if failed else 0


def add_test_parser(sub: Any) -> None:
    p = sub.add_parser("test", help="run golden-file tests (.relay files with RUN lines)")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help=f"test files or directories (default: {DEFAULT_PATH})")
    p.add_argument("--update", action="store_true",
                   help="rewrite the .out/.err files from the actual output; show the diffs")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="show no progress bar (there is none when stderr is not a terminal)")
    p.set_defaults(run=cmd_test)
