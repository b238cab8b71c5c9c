"""`:viz @NAME [--after PASSES] [-o FILE]`: a picture of a session function.

Written as one self-contained HTML page (pan, zoom, search, tooltips) in the temporary
directory unless `-o` names a file; its extension picks the format (.html, .svg, .dot).
The passes of `--after` run first, as `:opt` and `relay opt -p` read them. The session
module is not changed.
"""
from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from .reply import Reply, SessionError

if TYPE_CHECKING:
    from ..ir.module import IRModule
    from .source import Sources

USAGE = ":viz @NAME [--after PASSES] [-o FILE]"


def _arguments(arg: str) -> tuple[str, str | None, str | None]:
    """(function name, pipeline or None, output path or None)."""
    try:
        words = shlex.split(arg)
    except ValueError as e:
        raise SessionError(f"error: {e}; usage: {USAGE}") from e
    name = after = out = None
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("--after", "-o") and i + 1 < len(words):
            if w == "--after":
                after = words[i + 1]
            else:
                out = words[i + 1]
            i += 2
            continue
        if w.startswith("-") or name is not None:
            raise SessionError(f"usage: {USAGE}")
        name = w.removeprefix("@")
        i += 1
    if not name:
        raise SessionError(f"usage: {USAGE}")
    return name, after, out


def default_path(name: str) -> str:
    import tempfile
    from pathlib import Path
    folder = Path(tempfile.gettempdir()) / "relay-viz"
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    return str(folder / f"repl-{safe}.html")


def visualize(module: IRModule, arg: str, sources: Sources | None = None) -> Reply:
    """`sources`: the session's input texts, for the tooltips' source lines."""
    from ..viz import VizError, format_of, graph_of, render
    name, after, out = _arguments(arg)
    try:
        fmt = format_of(out) if out is not None else "html"
        graph = graph_of(module, name, after)
        path = out if out is not None else default_path(name)
    except VizError as e:
        raise SessionError(f"error: {e}") from e
    except OSError as e:
        raise SessionError(f"error: cannot create the output folder: {e.strerror or e}") from e
    for n in graph.nodes:
        where = n.span.source_name if n.span is not None else None
        if sources is not None and where is not None and where not in graph.sources:
            try:
                graph.sources[where] = sources.text(where)
            except KeyError:           # a combined text of re-read definitions
                pass
    text = render(graph, fmt, "REPL session" + (f" after {after}" if after else ""))
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as e:
        raise SessionError(f"{path}: error: cannot write file: {e.strerror or e}") from e
    return Reply(f"wrote {path} (@{name}: {len(graph.nodes)} nodes, {len(graph.edges)} edges"
                 f", {len(graph.clusters)} clusters)")
