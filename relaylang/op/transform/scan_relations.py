"""Type relation of the scans, cumsum and cumprod: TVM's ScanopRel
(src/relay/op/tensor/transform.cc).

The result has the input's shape, or, when `axis` is None, one axis holding every
element (the scan runs over the flattened input: a scalar becomes a vector of one).
Its dtype is `dtype`, or the input's when that is "" (TVM's void dtype). Where TVM
would crash or fail later (an axis out of range, a scalar scanned along an axis, a
dtype that is none) the relation reports an error instead.
"""
from __future__ import annotations

from typing import Any

from ...ir.dtype import canonical_dtype
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, is_known, tensor
from ..shape_rules import dim_prod


def scan_rel(args: list[Type], attrs: Any) -> Type | None:
    """ScanopRel: data's shape (flattened when axis is None), in `dtype` or data's."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    dtype = data.dtype
    if attrs.dtype:
        dtype = canonical_dtype(str(attrs.dtype)) or ""
        if not dtype:
            raise TypeRelError(f"`{attrs.dtype}` is not a dtype")
    if attrs.axis is None:
        return TensorType((dim_prod(data.shape),), dtype)
    rank = len(data.shape)
    if not -rank <= attrs.axis < rank:
        raise TypeRelError(f"axis {attrs.axis} is out of range for a tensor of rank {rank}",
                           arg=0)
    return TensorType(data.shape, dtype)
