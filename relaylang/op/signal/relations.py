"""Type relation of the signal family: DFTRel (TVM's src/relay/op/tensor/transform.cc).

Both parts are float tensors of rank >= 1 with the same shape and dtype; the result is
the tuple of two tensors of that type (real part, imaginary part)."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, dims_equal, same_dtype, shape_str, tensor
from ..shape_rules import all_known, is_int


def dft_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    re = tensor(args, 0, "re_data")
    im = tensor(args, 1, "im_data")
    if dtype_kind(re.dtype) != "float":
        raise TypeRelError(f"re_data must be a float tensor, got dtype {re.dtype}", arg=0)
    same_dtype(re, im, ("re_data", "im_data"), 1)
    if not re.shape:
        raise TypeRelError("re_data must have rank >= 1 (the transform runs along its last "
                           "axis), got a scalar", arg=0)
    if len(re.shape) != len(im.shape) or any(
            dims_equal(a, b) is False for a, b in zip(re.shape, im.shape)):
        raise TypeRelError(f"re_data and im_data must have the same shape, got "
                           f"{shape_str(re.shape)} and {shape_str(im.shape)}", arg=1)
    shape = tuple(a if is_int(a) else b for a, b in zip(re.shape, im.shape))
    out = TensorType(shape, re.dtype)
    return TupleType((out, out))
