"""LLVM lowerings of the annotation family: every op is the identity (see
`numpy_kernels.py`); the handle (a tensor, or a tuple of them) passes through, and the
scheduler copies it when it is a result."""
from __future__ import annotations

from typing import Any

from ..registry import implement
from . import ANNOTATIONS


@implement("on_device", "device_copy", *ANNOTATIONS, target="llvm")
def identity(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return inputs[0]
