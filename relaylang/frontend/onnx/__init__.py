"""The ONNX importer: `from_onnx(model_or_path, shape=None, dtype="float32", opset=None,
freeze_params=False) -> (mod, params)`.

- `importer.py`: the walk over a graph (names, params, types, folding, subgraphs);
- `registry.py`: `@converter(op_type, since=opset)`, one converter per ONNX op and
  opset range;
- `ops/<family>.py`: the converters (elementwise, nn, tensor, reduce, control flow).
"""
from __future__ import annotations

from .importer import NeedsInputValues, OnnxImportError, UnsupportedOps, from_onnx, sanitize
from .registry import supported_ops

__all__ = ["NeedsInputValues", "OnnxImportError", "UnsupportedOps", "from_onnx", "sanitize",
           "supported_ops"]
