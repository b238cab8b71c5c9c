"""What the subcommands share: exit codes, reading files, rendering diagnostics.

Only the standard library at import time: `relay --help` imports the subcommand
modules, and they import this.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..ir.module import IRModule

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


def color() -> bool:
    """Whether diagnostics on stderr are coloured: when it is a terminal."""
    return sys.stderr.isatty()


def error(path: str, message: str) -> None:
    """`PATH: error: MESSAGE` on stderr (above any progress bar being drawn there)."""
    line = f"{path}: error: {message}"
    progress = sys.modules.get("relaylang.ir.progress")      # loaded when bars may be drawn
    if progress is not None and progress.active():
        progress.write(line, sys.stderr)
    else:
        print(line, file=sys.stderr)


def add_quiet_flag(parser: Any) -> None:
    """`-q/--quiet` for a subcommand: `relay` draws progress bars for it on a terminal
    (`relaylang/cli/progress.py`) unless it is given."""
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="show no progress bar (there is none when stderr is not a "
                             "terminal)")


STDIN = "-"
STDIN_NAME = "<stdin>"


def source_name(path: str) -> str:
    """The name diagnostics give a file: `<stdin>` for `-`."""
    return STDIN_NAME if path == STDIN else path


def read(path: str) -> str | None:
    """The text of `path` (`-`: standard input), a UTF-8 byte-order mark dropped, or None
    after saying on stderr why it cannot be read."""
    from pathlib import Path
    try:
        if path == STDIN:
            data = sys.stdin.buffer.read()
        else:
            data = Path(path).read_bytes()
        return data.decode("utf-8-sig").replace("\r\n", "\n").replace("\r", "\n")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        error(source_name(path), f"cannot read file: {reason}")
        return None


def write(path: str, text: str) -> bool:
    """Write `text` to `path`; False after saying on stderr why it could not be written."""
    from pathlib import Path
    try:
        Path(path).write_text(text, encoding="utf-8")
    except OSError as e:
        error(path, f"cannot write file: {e.strerror or e}")
        return False
    return True


def expand(paths: Sequence[str]) -> list[str] | None:
    """Files as given; directories become the `.relay` files inside them. None after an
    error on stderr for a directory that holds none (nothing checked is not a success)."""
    from pathlib import Path
    out: list[str] = []
    empty = False
    for p in paths:
        path = Path(p)
        if p != STDIN and path.is_dir():
            found = sorted(path.rglob("*.relay"))
            if not found:
                error(p, "no .relay files in this directory")
                empty = True
            out.extend(str(f) for f in found)
        else:
            out.append(p)
    return None if empty else out


def parse_file(path: str) -> IRModule | None:
    """The module in `path`, or None after printing why it cannot be had."""
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    text = read(path)
    if text is None:
        return None
    try:
        return parse(text, source_name=source_name(path))
    except DiagnosticError as e:
        print(e.render(color=color()), file=sys.stderr)
        return None


def type_check(mod: IRModule) -> IRModule | None:
    """The typed module, or None when it has type errors; diagnostics go to stderr."""
    from ..ir.diagnostics import Severity, render_all
    from ..typing import check_module
    typed, diagnostics = check_module(mod)
    if diagnostics:
        print(render_all(diagnostics, mod.sources, color=color()), file=sys.stderr)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return None
    return typed


def internal_error(headline: str, e: BaseException) -> int:
    """Say on stderr that a bug in relaylang, not the input, stopped the command
    (`relay opt: internal error in pass X (a bug in that pass): KeyError: ...`); EXIT_INTERNAL.
    With RELAYLANG_TRACEBACK set, `e` is raised instead, for its traceback."""
    if os.environ.get("RELAYLANG_TRACEBACK"):
        raise e
    print(f"{headline}: {type(e).__name__}: {e}\n(set RELAYLANG_TRACEBACK=1 to see the traceback)",
          file=sys.stderr)
    return EXIT_INTERNAL


def print_pass_notes(file: str, text: str, notes: Any) -> None:
    """What passes noted without failing (`relay build --byoc`, `relay opt`), on stderr
    (transform/byoc/notes.render_notes)."""
    from ..transform.byoc.notes import render_notes
    sys.stderr.write(render_notes(file, {source_name(file): text}, notes, color=color()))
