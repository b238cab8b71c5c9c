"""Pass preview: what `relay opt FILE -p PIPELINE` prints for the text in an editor (the
language server's `relay.previewPass` command), and the definition of one function in it.

The text is parsed as it is in the editor, under the file's path, so diagnostics name the
file even when the edit is not saved; the pipeline is the library's (transform/pipeline.py)
at the default opt level, as `relay opt` runs it. The output is the printed module,
exactly as `relay opt` prints it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

# Passes offered as code actions on a function (any registered pass works as a command).
OFFERED_PASSES = ("FoldConstant", "SimplifyExpr", "FuseOps", "ToANormalForm",
                  "DeadCodeElimination")


@dataclass(frozen=True)
class Preview:
    output: str                 # the module after the passes, as `relay opt` prints it
    errors: str                 # diagnostics, warnings and messages, as on its stderr
    exit_code: int              # as `relay opt`'s: 0, 1 (errors), 70 (a pass crashed)
    function: str | None = None  # the definition of the asked-for function in `output`


def function_text(output: str, name: str) -> str | None:
    """The `def @name` definition of a printed module, up to the next top-level item."""
    m = re.search(rf"^def @{re.escape(name)}\b.*?(?=^(def @|type |extern type )|\Z)",
                  output, re.MULTILINE | re.DOTALL)
    return m.group(0).rstrip() + "\n" if m else None


def preview_pass(text: str, path: str, pipeline: str, function: str | None = None) -> Preview:
    """`pipeline` run on `text` (the document at `path`); `function`: also its definition."""
    from ..ir.diagnostics import DiagnosticError, render_all
    from ..syntax.parser import parse
    from ..transform.pipeline import PassFailed, Pipeline, PipelineError
    try:
        passes = Pipeline.parse(pipeline)
    except PipelineError as e:
        return Preview("", f"relay opt: error: {e}\n", 1)
    try:
        mod = parse(text, source_name=path)
    except DiagnosticError as e:
        return Preview("", e.render() + "\n", 1)
    skipped = "".join(f"{path}: warning: pass {info.name} skipped: its opt_level "
                      f"{info.opt_level} is above --opt-level {passes.options.level}\n"
                      for info in passes.skipped())
    try:
        result = passes.run(mod)
    except PassFailed as e:
        if not e.user_error:
            return Preview("", f"{skipped}{e.log}relay opt: internal error: {e}\n", 70)
        return Preview("", f"{skipped}{e.log}{render_all(e.diagnostics, e.sources(mod))}\n", 1)
    output = result.text()
    return Preview(output, skipped + result.log, 0,
                   function_text(output, function) if function else None)
