"""Type relation of nn.max_pool2d_with_argmax: nn.max_pool2d's (op/pool/relations.py) for
both outputs, the indices int64."""
from __future__ import annotations

from typing import Any

from ...ir.types import TensorType, TupleType, Type
from ..pool.relations import pool_rel
from ..relation import TypeRelError, is_known

_POOL2D = pool_rel(2)


def max_pool2d_with_argmax_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    if attrs.layout != "NCHW":
        raise TypeRelError(f"max_pool2d_with_argmax supports layout NCHW only, got "
                           f"{attrs.layout!r}")
    if attrs.out_layout not in ("", "NCHW"):
        raise TypeRelError(f"out_layout must be NCHW, got {attrs.out_layout!r}")
    if attrs.storage_order not in (0, 1):
        raise TypeRelError(f"storage_order must be 0 or 1, got {attrs.storage_order}")
    values = _POOL2D(args, attrs)
    assert isinstance(values, TensorType)
    return TupleType((values, TensorType(values.shape, "int64")))
