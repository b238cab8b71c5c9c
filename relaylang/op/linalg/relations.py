"""Type relation of the linalg family: det takes a float tensor (..., n, n) and gives
(...) of its dtype."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, dims_equal, shape_str, tensor
from ..shape_rules import all_known


def det_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    if dtype_kind(data.dtype) != "float":
        raise TypeRelError(f"data must be a float tensor, got dtype {data.dtype}", arg=0)
    if len(data.shape) < 2:
        raise TypeRelError(f"data must have rank >= 2 (matrices in its last two axes), got "
                           f"shape {shape_str(data.shape)}", arg=0)
    rows, cols = data.shape[-2:]
    if dims_equal(rows, cols) is False:
        raise TypeRelError(f"data must hold square matrices, got shape "
                           f"{shape_str(data.shape)}", arg=0, dim=len(data.shape) - 1)
    return TensorType(tuple(data.shape[:-2]), data.dtype)
