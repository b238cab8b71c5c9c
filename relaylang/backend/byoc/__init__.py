"""Bring your own codegen, the backend half: codegens for partitioned functions.

The IR half (`relaylang/transform/byoc/`) says what a target takes and partitions a
module into `Compiler="name"` global functions; this package turns each such function
into a Python callable over NumPy arrays (`registry.py`: `register_codegen`,
`get_codegen`), which `rl.build(..., byoc=[...])` and the interpreter run as one
executor step. Targets shipped with relaylang are modules of this package named after
the target (`blas.py`, `onnxruntime.py`), imported on the first lookup of their name.
"""
from .registry import get_codegen, register_codegen, registered_codegens, unregister_codegen

__all__ = ["get_codegen", "register_codegen", "registered_codegens", "unregister_codegen"]
