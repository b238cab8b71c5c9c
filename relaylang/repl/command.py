"""`relay repl [FILE...]`: the subcommand's arguments and entry point."""
from __future__ import annotations

import argparse
import sys
from typing import Any


def cmd_repl(args: argparse.Namespace) -> int:
    from .app import BANNER, Repl
    color = {"always": True, "never": False}.get(args.color)
    interactive = sys.stdin.isatty()      # else a plain line loop: no terminal control codes
    repl = Repl(color=color, interactive=interactive)
    if interactive and sys.stdout.isatty() and not args.quiet:
        print(BANNER)
    if not repl.load(args.files):
        return 1
    return repl.run() if interactive else repl.run_lines(sys.stdin)


def add_repl_parser(sub: Any) -> None:
    p = sub.add_parser("repl", help="interactive session: definitions, expressions, :commands")
    p.add_argument("files", nargs="*", metavar="FILE",
                   help=".relay files whose definitions start the session")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour results and errors (default: auto, when on a terminal)")
    p.add_argument("-q", "--quiet", action="store_true", help="no banner")
    p.set_defaults(run=cmd_repl)
