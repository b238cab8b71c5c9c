"""The `relay` command (DESIGN.md "The command line"): a table of subcommands.

Each subcommand is defined in a module of its own, by a function that adds its argparse
parser (`add_opt_parser(sub)`); `COMMANDS` names them in the order `relay --help` lists
them. A subcommand's module is imported only when that subcommand runs or the commands
are listed, and it imports what its work needs only when it runs, so `relay --help`
stays fast. Other packages add subcommands through the entry-point group
`relaylang.commands` (`NAME = "module:add_parser"`): the language server's `relay lsp`
comes from the top-level `lsp` package that way, and `relaylang` never imports it.

A subcommand with a `--quiet` flag shows progress bars on a terminal
(`relaylang/cli/progress.py`) unless it is given.

Exit status: 0 success, 1 diagnostics reported, 2 usage error, 70 internal error.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from .common import EXIT_OK, internal_error

AddParser = Callable[[Any], None]      # adds one subcommand to argparse's subparsers

COMMANDS: dict[str, str] = {
    "parse": "relaylang.cli.source:add_parse_parser",
    "check": "relaylang.cli.source:add_check_parser",
    "fmt": "relaylang.cli.source:add_fmt_parser",
    "run": "relaylang.cli.run:add_run_parser",
    "build": "relaylang.cli.build:add_build_parser",
    "tune": "relaylang.cli.tune:add_tune_parser",
    "train": "relaylang.cli.train:add_train_parser",
    "opt": "relaylang.cli.opt:add_opt_parser",
    "import": "relaylang.cli.import_cmd:add_import_parser",
    "viz": "relaylang.cli.viz:add_viz_parser",
    "repl": "relaylang.repl.command:add_repl_parser",
    "test": "relaylang.testing.command:add_test_parser",
}
PLUGIN_GROUP = "relaylang.commands"


def _version() -> str:
    from .. import __version__
    return __version__


def _load(target: str) -> AddParser:
    import importlib
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)


def _plugins() -> dict[str, Any]:
    """The entry points of the subcommands other packages add, by name (a built-in wins)."""
    from importlib.metadata import entry_points
    return {ep.name: ep for ep in entry_points(group=PLUGIN_GROUP) if ep.name not in COMMANDS}


def _adders(argv: Sequence[str]) -> list[AddParser]:
    """Who adds the parsers this command line needs: the named subcommand's module alone,
    or every subcommand's when there is none to name (`relay --help`, a mistyped name)."""
    name = argv[0] if argv else None       # the top level has no options but -h, --version
    if name == "--version":
        return []
    if name in COMMANDS:
        return [_load(COMMANDS[name])]
    plugins = _plugins()
    if name in plugins:
        return [plugins[name].load()]
    adders = [_load(target) for target in COMMANDS.values()]
    for ep in plugins.values():
        try:
            adders.append(ep.load())
        except Exception:     # noqa: BLE001 -- a broken plugin must not break the listing
            continue
    return adders


def parser(argv: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The `relay` argument parser, with the subcommands `argv` needs (all when it names
    none)."""
    top = argparse.ArgumentParser(
        prog="relay", description="Tools for the Relay text IR (TVM's text format 0.0.5).")
    top.add_argument("--version", action="version", version=f"relay (relaylang) {_version()}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in _adders(argv):
        add(sub)
    return top


def _subcommand_parser(top: argparse.ArgumentParser, name: str | None) -> argparse.ArgumentParser:
    """The parser of subcommand `name` (the top-level one when there is none)."""
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction) and name in action.choices:
            return action.choices[name]
    return top


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    top = parser(argv)
    args, unknown = top.parse_known_args(argv)
    if unknown:      # said by the subcommand's parser, with its usage, not the top level's
        _subcommand_parser(top, args.command).error(
            f"unrecognized arguments: {' '.join(unknown)}")
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        if not hasattr(args, "quiet"):      # a subcommand without --quiet draws no bars
            return run(args)
        from .progress import terminal_progress
        with terminal_progress(args.quiet):
            return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:     # a bug in relaylang, not in the user's input: say so plainly
        return internal_error("relay: internal error (a bug in relaylang, please report it)", e)
