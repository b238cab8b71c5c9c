"""`:opt PASS[,PASS] [@global] [--diff]`: passes over the session module, shown as text.

The pipeline is read and run as `relay opt -p` runs it (transform/pipeline.py, options in
braces), at opt level 4, so a pass the user names runs whatever its level. The session
module is not changed.
"""
from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from .reply import SessionError

if TYPE_CHECKING:
    from ..ir.module import IRModule


def _split_arguments(arg: str) -> tuple[str, str | None, bool]:
    """(pipeline, global name or None, --diff)."""
    pipeline: list[str] = []
    name, diff = None, False
    for word in arg.split():
        if word == "--diff":
            diff = True
        elif word.startswith("@") and len(word) > 1:
            name = word[1:]
        else:
            pipeline.append(word)
    if not pipeline:
        raise SessionError("usage: :opt PASS[,PASS] [@global] [--diff]")
    return "".join(pipeline), name, diff


def _shown(module: IRModule, name: str | None) -> str:
    """The module's text, or only the definition of `@name`."""
    from ..ir.module import IRModule
    from ..syntax.printer import astext
    if name is None:
        return astext(module)
    if name not in module:
        raise SessionError(f"error: the module has no function @{name}")
    gv = module.get_global_var(name)
    only = IRModule({gv: module.functions[gv]}, module.type_definitions)
    text = astext(only)
    return text[text.index("\n") + 1:]           # without the version line


def _run(module: IRModule, pipeline: str) -> IRModule:
    from ..ir.diagnostics import render_all
    from ..transform.pipeline import PassFailed, Pipeline, PipelineError, PipelineOptions
    try:
        passes = Pipeline.parse(pipeline, PipelineOptions(opt_level=4))
    except PipelineError as e:
        raise SessionError(f"error: {e}") from e
    try:
        return passes.run(module).module
    except PassFailed as e:
        if not e.user_error:
            raise                     # a bug in a pass: the front end reports it, naming it
        raise SessionError(render_all(e.diagnostics, e.sources(module))) from e


def optimize(module: IRModule, arg: str) -> str:
    pipeline, name, diff = _split_arguments(arg)
    after = _shown(_run(module, pipeline), name)
    if not diff:
        return after.rstrip("\n")
    before = _shown(module, name)
    lines = difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                 fromfile="before", tofile=f"after {pipeline}")
    return "".join(lines).rstrip("\n") or "(no change)"
