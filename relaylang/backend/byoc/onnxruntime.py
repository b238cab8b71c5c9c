"""The `onnxruntime` codegen: a partitioned function exported to ONNX and run by onnxruntime.

What the target takes is declared in `relaylang/transform/byoc/targets/onnxruntime.py`;
`_onnx_export.py` writes the ONNX graph. At codegen time the function is exported once
and one `InferenceSession` is made (CPUExecutionProvider, all graph optimisations,
sequential execution, intra-op threads = the build's thread count, `RELAY_NUM_THREADS`
or the CPUs, with spinning off: the host executor's own threads run between the
session's calls); the callable returned feeds the arrays to the session and returns
its outputs, regrouped as the function's result type.

onnx and onnxruntime are optional (`pip install 'relaylang[onnxruntime]'`): this module
imports without them and the codegen says which is missing when it runs.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.expr import Function
from .registry import register_codegen
from .runner import value_leaves

EXTRA_HINT = "pip install 'relaylang[onnxruntime]'"


class MissingExtraError(ImportError):
    """onnx or onnxruntime is not installed."""


def _import_libraries() -> tuple[Any, Any]:
    try:
        import onnx
    except ImportError as e:
        raise MissingExtraError(f"the onnxruntime target needs the `onnx` package, which is "
                                f"not installed ({e}); install the extra: {EXTRA_HINT}") from None
    try:
        import onnxruntime
    except ImportError as e:
        raise MissingExtraError(f"the onnxruntime target needs the `onnxruntime` package, "
                                f"which is not installed ({e}); install the extra: "
                                f"{EXTRA_HINT}") from None
    return onnx, onnxruntime


def _threads() -> int:
    try:
        from ..native.threads import num_threads
        return int(num_threads())
    except Exception:           # noqa: BLE001 -- no thread setting: onnxruntime's default
        return 0


def make_session(model: Any, ort: Any, threads: int | None = None) -> Any:
    options = ort.SessionOptions()
    n = _threads() if threads is None else threads
    if n > 0:
        options.intra_op_num_threads = n
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), options,
                                providers=["CPUExecutionProvider"])


@register_codegen("onnxruntime")
def onnxruntime_codegen(func: Function, symbol: str) -> Callable[..., Any]:
    """Export `func` to ONNX, open a session on it, return the function that runs it."""
    onnx, ort = _import_libraries()
    from ._onnx_export import export
    model, input_names, layout = export(func, symbol, onnx)
    session = make_session(model, ort)
    output_names = [o.name for o in session.get_outputs()]
    n_params = len(func.params)
    run_session = session.run

    def regroup(outs: list[Any]) -> Any:
        if isinstance(layout, int):
            return outs[layout]
        root: list[Any] = []
        done: dict[int, tuple] = {}
        # convert nested lists of indices to nested tuples of arrays, no recursion
        order: list[tuple[list[Any], list[Any]]] = []
        stack2 = [(layout, root)]
        while stack2:
            src, dst = stack2.pop()
            order.append((src, dst))
            for item in src:
                if isinstance(item, list):
                    sub: list[Any] = []
                    dst.append(sub)
                    stack2.append((item, sub))
                else:
                    dst.append(outs[item])
        for src, dst in reversed(order):
            for k, item in enumerate(dst):
                if isinstance(item, list):
                    dst[k] = done[id(item)]
            done[id(dst)] = tuple(dst)
        return done[id(root)]

    shapes = [tuple(int(d.dim_value) for d in i.type.tensor_type.shape.dim)
              for i in model.graph.input]

    def checked(k: int, a: Any) -> Any:
        a = np.asarray(a)
        if a.shape != shapes[k]:
            raise ValueError(f"onnxruntime: `@{symbol}` input {input_names[k]}: expected "
                             f"shape {list(shapes[k])}, got {list(a.shape)}")
        return a

    def run(*args: Any) -> Any:
        flat = value_leaves(args)
        if len(flat) != len(input_names):
            raise ValueError(f"onnxruntime: `@{symbol}` takes {n_params} arguments "
                             f"({len(input_names)} tensors), got {len(flat)} tensors")
        feed = {name: checked(k, a) for k, (name, a) in enumerate(zip(input_names, flat))}
        return regroup(run_session(output_names, feed))
    run.__name__ = run.__qualname__ = f"onnxruntime[{symbol}]"
    run.model = model                   # type: ignore[attr-defined]
    run.session = session               # type: ignore[attr-defined]
    return run
