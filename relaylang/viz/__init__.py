"""Pictures of Relay functions: `relay viz`, the REPL's `:viz`, the editor's "Show graph".

    graph = graph_of(mod, "main", after="FuseOps")    # typed; passes run first if asked
    text = render(graph, "html")                        # "dot", "svg" or "html"

`graph.py` extracts the dataflow graph (explicit stacks, no recursion over the IR),
`layout.py` lays it out in pure Python (no Graphviz needed), and `dot.py`, `svg.py`,
`html.py` write it. Errors the user can fix are `VizError`s with a one-line message
(several lines only for type errors, rendered as `relay check` renders them).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .graph import Graph, VizError, extract

if TYPE_CHECKING:
    from ..ir.module import IRModule

FORMATS = ("dot", "svg", "html")


def format_of(path: str) -> str:
    """The output format an output file's extension names; VizError for any other."""
    from pathlib import Path
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        said = f"`.{ext}`" if ext else "no extension"
        raise VizError(f"unknown output format ({said}): use .dot, .svg or .html")
    return ext


def _typed(mod: IRModule) -> IRModule:
    from ..ir.diagnostics import Severity, render_all
    from ..typing import check_module
    typed, diagnostics = check_module(mod)
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if errors:
        raise VizError(render_all(errors, mod.sources))
    return typed


def prepare(mod: IRModule, function: str = "main", after: str | None = None) -> IRModule:
    """`mod` type-checked, after the passes of pipeline text `after` (as `relay opt -p`
    reads it; each named pass runs whatever its opt level). VizError when the function is
    missing, the pipeline unknown, or the program has type errors."""
    if not any(gv.name_hint == function for gv in mod.functions):
        extract(mod, function)                 # raises the VizError naming what exists
    if after:
        from ..ir.diagnostics import render_all
        from ..transform.pipeline import PassFailed, Pipeline, PipelineError, PipelineOptions
        try:
            pipeline = Pipeline.parse(after, PipelineOptions(opt_level=4))
        except PipelineError as e:
            raise VizError(str(e)) from e
        try:
            mod = pipeline.run(mod).module
        except PassFailed as e:
            if not e.user_error:
                raise
            raise VizError(render_all(e.diagnostics, e.sources(mod)) or str(e)) from e
    return _typed(mod)


def graph_of(mod: IRModule, function: str = "main", after: str | None = None) -> Graph:
    """The graph of `@function` of `mod` (type-checked, after the passes `after`)."""
    return extract(prepare(mod, function, after), function)


def render(graph: Graph, fmt: str, title: str = "") -> str:
    """The graph as `fmt` text: "dot", "svg" or "html" (`title` heads the HTML page)."""
    if fmt == "dot":
        from .dot import to_dot
        return to_dot(graph)
    if fmt == "svg":
        from .svg import to_svg
        return to_svg(graph)
    if fmt == "html":
        from .html import to_html
        return to_html(graph, title)
    raise VizError(f"unknown output format `{fmt}`: use dot, svg or html")


def write_html_for(text: str, path: str, function: str, after: str | None = None,
                   out: str | None = None) -> str:
    """The editor's "Show graph": the HTML picture of `@function` of the source `text` (the
    document at `path`, maybe unsaved) written to `out` (default: a file in the temporary
    directory named after the document and function); returns the file's path. VizError
    for syntax or type errors, an unknown function or an unwritable file."""
    import tempfile
    from pathlib import Path

    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    try:
        mod = parse(text, source_name=path)
    except DiagnosticError as e:
        raise VizError(e.render()) from e
    graph = graph_of(mod, function, after)
    if out is None:
        folder = Path(tempfile.gettempdir()) / "relay-viz"
        stem = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in Path(path).stem)
        safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in function)
        out = str(folder / f"{stem}-{safe}.html")
    title = path + (f" after {after}" if after else "")
    try:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(render(graph, "html", title), encoding="utf-8")
    except OSError as e:
        raise VizError(f"{out}: cannot write file: {e.strerror or e}") from e
    return out


__all__ = ["FORMATS", "Graph", "VizError", "extract", "format_of", "graph_of", "prepare",
           "render", "write_html_for"]
