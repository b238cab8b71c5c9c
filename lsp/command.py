"""`relay lsp [--tcp HOST:PORT]`: start the language server (stdio by default).

The `relay` command finds this subcommand through the entry-point group
`relaylang.commands` (pyproject.toml): relaylang never imports `lsp`. Only argparse
here: pygls and the analysis are imported when the command runs, so `relay --help`
does not pay for them.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import RelayLanguageServer


def _host_port(text: str) -> tuple[str, int]:
    """`HOST:PORT` (or `:PORT` for localhost) -> (host, port); argparse reports a bad one."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got `{text}`")
    return (host or "127.0.0.1"), int(port)


def create_server() -> RelayLanguageServer:
    """A server with every feature registered (handlers_*.py hold the feature handlers)."""
    from .handlers_editing import register_editing
    from .handlers_navigation import register_navigation
    from .server import RelayLanguageServer, register_sync
    server = RelayLanguageServer()
    register_sync(server)
    register_navigation(server)
    register_editing(server)
    return server


def cmd_lsp(args: argparse.Namespace) -> int:
    import logging

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="relay lsp: %(levelname)s: %(message)s")
    # The analysis thread holds the GIL for long stretches; a short switch interval hands it
    # to the event loop sooner, so requests answered from the live text stay quick.
    sys.setswitchinterval(0.001)
    server = create_server()
    if args.tcp is not None:
        host, port = args.tcp
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0


def add_lsp_parser(sub: Any) -> None:
    p = sub.add_parser("lsp", help="language server (stdio by default)")
    p.add_argument("--tcp", type=_host_port, metavar="HOST:PORT",
                   help="listen on a TCP socket instead of stdio")
    p.add_argument("--log-level", default="warning",
                   choices=["debug", "info", "warning", "error"],
                   help="what the server logs on stderr (default: warning)")
    p.set_defaults(run=cmd_lsp)
