"""Importers: models of other formats as Relay modules (layer 8, built on the IR builder
and the op builders of `relaylang.op.make`; no parser involved).

`rl.frontend.from_onnx(model_or_path, shape=None, dtype="float32", opset=None,
freeze_params=False) -> (mod, params)`: see `onnx/`. The `onnx` package is an optional
dependency (the `onnx` extra), imported only when a model is imported.
"""
from __future__ import annotations

from typing import Any

__all__ = ["from_onnx"]


def from_onnx(model: Any, shape: Any = None, dtype: Any = "float32", opset: int | None = None,
              freeze_params: bool = False, bind: Any = None) -> tuple[Any, dict[str, Any]]:
    """An ONNX model (a `ModelProto` or a path) as `(mod, params)`, TVM's `from_onnx`
    (`bind`: graph inputs made constants of these values, relaylang's addition)."""
    from .onnx import from_onnx as convert
    return convert(model, shape=shape, dtype=dtype, opset=opset, freeze_params=freeze_params,
                   bind=bind)
