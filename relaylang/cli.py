"""The `relay` command (DESIGN.md "The command line").

Exit status: 0 success, 1 diagnostics reported, 2 usage error. Subcommands
import what they need when they run, so `relay --help` stays fast.
"""
from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

if TYPE_CHECKING:
    from .ir.module import IRModule

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE = 0, 1, 2


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        print(f"{path}: error: cannot read file: {reason}", file=sys.stderr)
        return None


def _color() -> bool:
    return sys.stderr.isatty()


def _expand(paths: Sequence[str]) -> list[str]:
    """Files as given; directories become the `.relay` files inside them."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*.relay")))
        else:
            out.append(p)
    return out


def _parse_file(path: str) -> IRModule | None:
    """The module in `path`, or None after printing why it cannot be had."""
    from .syntax.diagnostics import DiagnosticError
    from .syntax.parser import parse
    text = _read(path)
    if text is None:
        return None
    try:
        return parse(text, source_name=path)
    except DiagnosticError as e:
        print(e.render(color=_color()), file=sys.stderr)
        return None


def cmd_parse(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in _expand(args.files):
        if _parse_file(path) is None:
            status = EXIT_DIAGNOSTICS
    return status


def cmd_check(args: argparse.Namespace) -> int:
    from .syntax.diagnostics import Severity, render_all
    from .syntax.printer import astext
    from .typing import check_module
    status = EXIT_OK
    for path in _expand(args.files):
        mod = _parse_file(path)
        if mod is None:
            status = EXIT_DIAGNOSTICS
            continue
        typed, diagnostics = check_module(mod)
        if diagnostics:
            print(render_all(diagnostics, mod.sources, color=_color()), file=sys.stderr)
        if any(d.severity is Severity.ERROR for d in diagnostics):
            status = EXIT_DIAGNOSTICS
            continue
        for gv in sorted(typed.functions, key=lambda g: g.name_hint):
            print(f"{path}: @{gv.name_hint}: {astext(gv.checked_type)}")
    return status


def cmd_fmt(args: argparse.Namespace) -> int:
    from .syntax.diagnostics import DiagnosticError
    from .syntax.format import format_text
    status = EXIT_OK
    for path in _expand(args.files):
        text = _read(path)
        if text is None:
            status = EXIT_DIAGNOSTICS
            continue
        try:
            formatted = format_text(text, source_name=path)
        except DiagnosticError as e:
            print(e.render(color=_color()), file=sys.stderr)
            status = EXIT_DIAGNOSTICS
            continue
        if formatted.dropped_comments:
            print(f"{path}: warning: {formatted.dropped_comments} comment(s) inside definitions "
                  "are not kept by fmt", file=sys.stderr)
        if args.check:
            if formatted.text != text:
                diff = difflib.unified_diff(text.splitlines(keepends=True),
                                            formatted.text.splitlines(keepends=True),
                                            fromfile=path, tofile=f"{path} (formatted)")
                sys.stdout.writelines(diff)
                status = EXIT_DIAGNOSTICS
        elif args.in_place:
            if formatted.text != text:
                Path(path).write_text(formatted.text, encoding="utf-8")
        else:
            sys.stdout.write(formatted.text)
    return status


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relay", description="Tools for the Relay text IR (TVM's text format 0.0.5).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("parse", help="check syntax; errors as FILE:LINE:COL: message")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    p.set_defaults(run=cmd_parse)

    p = sub.add_parser("check", help="parse and type-check; print each global's type")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("fmt", help="print files in the canonical layout")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 and show a diff if a file would change")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    p.set_defaults(run=cmd_fmt)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
