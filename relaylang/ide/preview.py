"""The `relay.previewPass` command: what `relay opt FILE -p PASS` prints for the editor's text.

It runs the CLI's own `cmd_opt` (relaylang/cli_opt.py) with stdout and stderr
captured, so the preview cannot drift from the command line. `cmd_opt` reads
a file; an unsaved buffer is written to a temporary file of the same name,
and that file's path is put back to the document's in the error text.
Runs are serialised: capturing swaps `sys.stdout`/`sys.stderr` for the whole
process (the server's own stdio writer holds the real stream, so the protocol
is not affected).
"""
from __future__ import annotations

import argparse
import contextlib
import io
import re
import tempfile
import threading
from pathlib import Path
from typing import Any

# Passes offered as code actions on a function (any registered pass works as a command).
OFFERED_PASSES = ("FoldConstant", "SimplifyExpr", "FuseOps", "ToANormalForm",
                  "DeadCodeElimination")

_lock = threading.Lock()


def _opt_args(path: str, pipeline: str) -> argparse.Namespace:
    from relaylang.cli_opt import add_opt_parser
    parser = argparse.ArgumentParser(prog="relay")
    add_opt_parser(parser.add_subparsers())
    return parser.parse_args(["opt", path, "-p", pipeline])


def _run_opt(path: str, pipeline: str) -> tuple[int, str, str]:
    from relaylang.cli_opt import cmd_opt
    out, err = io.StringIO(), io.StringIO()
    with _lock, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cmd_opt(_opt_args(path, pipeline))
        except SystemExit as e:           # argparse rejected the pipeline argument
            code = e.code if isinstance(e.code, int) else 2
    return code, out.getvalue(), err.getvalue()


def _function_text(output: str, name: str) -> str | None:
    """The `def @name` definition of a printed module, up to the next top-level item."""
    m = re.search(rf"^def @{re.escape(name)}\b.*?(?=^(def @|type |extern type )|\Z)",
                  output, re.MULTILINE | re.DOTALL)
    return m.group(0).rstrip() + "\n" if m else None


def preview_pass(text: str, path: str, pipeline: str, function: str | None = None) -> dict[str, Any]:
    """{"output": stdout of `relay opt PATH -p PIPELINE`, "errors": its stderr, "exitCode",
    "function": the definition of `@function` in the output (None if absent or not asked)}."""
    file = Path(path)
    try:
        saved = file.is_file() and file.read_text(encoding="utf-8") == text
    except (OSError, UnicodeDecodeError):
        saved = False
    if saved:
        code, out, err = _run_opt(path, pipeline)
    else:
        with tempfile.TemporaryDirectory(prefix="relay-lsp-") as tmp:
            scratch = Path(tmp) / (file.name or "buffer.relay")
            scratch.write_text(text, encoding="utf-8")
            code, out, err = _run_opt(str(scratch), pipeline)
            err = err.replace(str(scratch), path)
    return {"output": out, "errors": err, "exitCode": code,
            "function": _function_text(out, function) if function else None}
