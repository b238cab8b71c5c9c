"""The kernel of every annotation op: the identity (no NumPy needed)."""
from __future__ import annotations

from typing import Any

from ..registry import implement
from . import ANNOTATIONS


@implement("on_device", "device_copy", *ANNOTATIONS)
def identity_kernel(inputs: list, attrs: Any) -> Any:
    """The value passes through unchanged (values are never mutated in place)."""
    return inputs[0]
