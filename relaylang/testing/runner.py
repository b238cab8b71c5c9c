"""Running a RUN line in-process: `relaylang.cli.main` with stdout and stderr captured.

The case's text is written to a scratch directory under the test file's own name, so
`%s` is `<scratch>/name.relay` and the outputs, with `<scratch>/` removed, say
`name.relay:3:7: ...` whatever machine runs them. `.err` files hold diagnostics in the short
form `LINE:COL: message` (bril's turnt `.err`): the file name and the rendered source
snippets are dropped, and `error: ` is implied.
"""
from __future__ import annotations

import contextlib
import io
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .cases import RunLine

EXIT_INTERNAL = 70


@dataclass
class RunResult:
    run: RunLine
    argv: list[str]          # as run, `%s` substituted
    exit_code: int
    stdout: str              # with the scratch directory removed (stderr too, if 2>&1)
    stderr: str              # with the scratch directory removed


def call_relay(argv: Sequence[str], merge_stderr: bool = False) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of `relay ARGV`, run in this process."""
    from ..cli import main
    out = io.StringIO()
    err = out if merge_stderr else io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(list(argv))
        except SystemExit as e:             # argparse usage errors
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
    return code, out.getvalue(), "" if merge_stderr else err.getvalue()


def substitute(argv: Sequence[str], source: Path) -> list[str]:
    return [a.replace("%s", str(source)) for a in argv]


def execute(run: RunLine, source: Path) -> RunResult:
    """Run one RUN line on the case text saved at `source`."""
    argv = substitute(run.argv, source)
    code, out, err = call_relay(argv, run.merge_stderr)
    scratch = str(source.parent) + os.sep
    return RunResult(run, argv, code, out.replace(scratch, ""), err.replace(scratch, ""))


_SNIPPET = re.compile(r"^\s*\d*\s\|(\s|$)")
_HEADER = re.compile(r"^[^\s:]+:(\d+):(\d+): (\w+): (.*)$")


def short_diagnostics(stderr: str) -> str:
    """Rendered diagnostics as `LINE:COL: message` lines (`LINE:COL: warning: message` for
    other severities); source snippets dropped, other lines kept as they are."""
    lines: list[str] = []
    for line in stderr.splitlines():
        if _SNIPPET.match(line):
            continue
        m = _HEADER.match(line)
        if m is not None:
            line_no, col, severity, message = m.groups()
            sev = "" if severity == "error" else f"{severity}: "
            line = f"{line_no}:{col}: {sev}{message}"
        lines.append(line)
    return "".join(line + "\n" for line in lines)
