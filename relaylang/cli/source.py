"""`relay parse`, `relay check` and `relay fmt`: the commands over source files.

    relay parse FILE...          check syntax; errors as FILE:LINE:COL: message
    relay check FILE...          parse + type check; prints each global's type
    relay fmt FILE... [--check] [-i [--force]]

A directory stands for the `.relay` files under it (one that holds none is an error);
`-` is standard input.

`fmt` keeps comments (syntax/format.py): a comment on its own line(s) stays before the
statement after it, re-indented; a comment after a statement stays after it on its line;
a comment before a block's `}` stays at the end of the block. A comment inside an
expression (`add(%x, /* c */ %y)`), or in a definition's head, moves to its own line
before the statement (the definition). Definitions print types first, then functions,
each by name, with the comments before each. Should a comment have no place, `fmt -i`
refuses to rewrite the file (exit 1, the file untouched; the message names the comment's
line) unless `--force`, which drops it.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import (EXIT_DIAGNOSTICS, EXIT_OK, EXIT_USAGE, STDIN, color, error, expand,
                     parse_file, read, source_name, type_check, write)


def cmd_parse(args: argparse.Namespace) -> int:
    paths = expand(args.files)
    status = EXIT_OK if paths is not None else EXIT_DIAGNOSTICS
    for path in paths or ():
        if parse_file(path) is None:
            status = EXIT_DIAGNOSTICS
    return status


def cmd_check(args: argparse.Namespace) -> int:
    from ..syntax.printer import astext
    paths = expand(args.files)
    status = EXIT_OK if paths is not None else EXIT_DIAGNOSTICS
    for path in paths or ():
        mod = parse_file(path)
        typed = type_check(mod) if mod is not None else None
        if typed is None:
            status = EXIT_DIAGNOSTICS
            continue
        for gv in sorted(typed.functions, key=lambda g: g.name_hint):
            print(f"{source_name(path)}: @{gv.name_hint}: {astext(gv.checked_type)}")
    return status


def cmd_fmt(args: argparse.Namespace) -> int:
    import difflib

    from ..ir.diagnostics import DiagnosticError
    from ..syntax.format import format_text
    if args.in_place and STDIN in args.files:
        error("relay fmt", "-i cannot rewrite standard input (-)")
        return EXIT_USAGE
    if args.force and not args.in_place:
        error("relay fmt", "--force only goes with -i")
        return EXIT_USAGE
    paths = expand(args.files)
    status = EXIT_OK if paths is not None else EXIT_DIAGNOSTICS
    for path in paths or ():
        name = source_name(path)
        text = read(path)
        if text is None:
            status = EXIT_DIAGNOSTICS
            continue
        try:
            formatted = format_text(text, source_name=name)
        except DiagnosticError as e:
            print(e.render(color=color()), file=sys.stderr)
            status = EXIT_DIAGNOSTICS
            continue
        where = ", ".join(f"{name}:{line}" for line in formatted.unplaced)
        if formatted.dropped_comments and args.in_place and not args.force:
            error(name, f"not rewritten: {formatted.dropped_comments} comment(s) inside "
                        f"definitions would be lost (at {where}): fmt found no place for "
                        "them in the new layout; move them before a statement, or give "
                        "--force to drop them")
            status = EXIT_DIAGNOSTICS
            continue
        if formatted.dropped_comments:
            print(f"{name}: warning: {formatted.dropped_comments} comment(s) inside definitions "
                  f"are not kept by fmt (at {where})", file=sys.stderr)
        if args.check:
            if formatted.text != text:
                diff = difflib.unified_diff(text.splitlines(keepends=True),
                                            formatted.text.splitlines(keepends=True),
                                            fromfile=name, tofile=f"{name} (formatted)")
                sys.stdout.writelines(diff)
                status = EXIT_DIAGNOSTICS
        elif args.in_place:
            if formatted.text != text and not write(path, formatted.text):
                status = EXIT_DIAGNOSTICS
        else:
            sys.stdout.write(formatted.text)
    return status


def _files(p: argparse.ArgumentParser) -> None:
    p.add_argument("files", nargs="+", metavar="FILE",
                   help=".relay files or directories; - for standard input")


def add_parse_parser(sub: Any) -> None:
    p = sub.add_parser("parse", help="check syntax; errors as FILE:LINE:COL: message")
    _files(p)
    p.set_defaults(run=cmd_parse)


def add_check_parser(sub: Any) -> None:
    p = sub.add_parser("check", help="parse and type-check; print each global's type")
    _files(p)
    p.set_defaults(run=cmd_check)


def add_fmt_parser(sub: Any) -> None:
    p = sub.add_parser("fmt", help="print files in the canonical layout, keeping comments",
                       description="Print files in the canonical layout. Comments are kept: "
                       "before the statement they preceded, after the statement they "
                       "followed on its line, or at the end of their block; a comment inside "
                       "an expression or a definition's head moves to its own line before "
                       "the statement or definition.")
    _files(p)
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 and show a diff if a file would change")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    p.add_argument("--force", action="store_true",
                   help="with -i: rewrite even when a comment has no place and is lost")
    p.set_defaults(run=cmd_fmt)
