"""What the subcommands share: exit codes, reading files, rendering diagnostics.

Only the standard library at import time: `relay --help` imports the subcommand
modules, and they import this.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..ir.module import IRModule

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


def color() -> bool:
    """Whether diagnostics on stderr are coloured: when it is a terminal."""
    return sys.stderr.isatty()


def error(path: str, message: str) -> None:
    """`PATH: error: MESSAGE` on stderr."""
    print(f"{path}: error: {message}", file=sys.stderr)


def read(path: str) -> str | None:
    """The text of `path`, or None after saying on stderr why it cannot be read."""
    from pathlib import Path
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        error(path, f"cannot read file: {reason}")
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


def expand(paths: Sequence[str]) -> list[str]:
    """Files as given; directories become the `.relay` files inside them."""
    from pathlib import Path
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*.relay")))
        else:
            out.append(p)
    return out


def parse_file(path: str) -> IRModule | None:
    """The module in `path`, or None after printing why it cannot be had."""
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    text = read(path)
    if text is None:
        return None
    try:
        return parse(text, source_name=path)
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
