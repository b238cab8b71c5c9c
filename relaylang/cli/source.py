"""`relay parse`, `relay check` and `relay fmt`: the commands over source files.

    relay parse FILE...          check syntax; errors as FILE:LINE:COL: message
    relay check FILE...          parse + type check; prints each global's type
    relay fmt FILE... [--check] [-i]

A directory stands for the `.relay` files under it.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, color, expand, parse_file, read, type_check, write


def cmd_parse(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in expand(args.files):
        if parse_file(path) is None:
            status = EXIT_DIAGNOSTICS
    return status


def cmd_check(args: argparse.Namespace) -> int:
    from ..syntax.printer import astext
    status = EXIT_OK
    for path in expand(args.files):
        mod = parse_file(path)
        typed = type_check(mod) if mod is not None else None
        if typed is None:
            status = EXIT_DIAGNOSTICS
            continue
        for gv in sorted(typed.functions, key=lambda g: g.name_hint):
            print(f"{path}: @{gv.name_hint}: {astext(gv.checked_type)}")
    return status


def cmd_fmt(args: argparse.Namespace) -> int:
    import difflib

    from ..ir.diagnostics import DiagnosticError
    from ..syntax.format import format_text
    status = EXIT_OK
    for path in expand(args.files):
        text = read(path)
        if text is None:
            status = EXIT_DIAGNOSTICS
            continue
        try:
            formatted = format_text(text, source_name=path)
        except DiagnosticError as e:
            print(e.render(color=color()), file=sys.stderr)
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
            if formatted.text != text and not write(path, formatted.text):
                status = EXIT_DIAGNOSTICS
        else:
            sys.stdout.write(formatted.text)
    return status


def _files(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")


def add_parse_parser(sub: Any) -> None:
    p = sub.add_parser("parse", help="check syntax; errors as FILE:LINE:COL: message")
    _files(p)
    p.set_defaults(run=cmd_parse)


def add_check_parser(sub: Any) -> None:
    p = sub.add_parser("check", help="parse and type-check; print each global's type")
    _files(p)
    p.set_defaults(run=cmd_check)


def add_fmt_parser(sub: Any) -> None:
    p = sub.add_parser("fmt", help="print files in the canonical layout")
    _files(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 and show a diff if a file would change")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    p.set_defaults(run=cmd_fmt)
