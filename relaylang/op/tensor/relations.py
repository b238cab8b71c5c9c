"""Type relations of the tensor family: TVM's IdentityRel / IdentityCompRel (unary ops),
BroadcastRel / BroadcastCompRel (binary ops), WhereRel, CastRel and CastLikeRel.

Where TVM's relations accept any dtype but its lowering then fails (logical ops on
non-bool, bitwise ops and shifts on floats: tir/op.cc checks these), the relations
here reject the call up front with a message.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.dtype import canonical_dtype, dtype_bits
from ...ir.types import TensorType, Type
from ..relation import (
    ANY_DTYPE,
    BOOL,
    DTypeRule,
    TypeRelError,
    broadcast_shapes,
    check_dtype,
    is_known,
    same_dtype,
    tensor,
)

Rel = Callable[[list[Type], Any], Type | None]


def broadcast(a: TensorType, b: TensorType, arg: int) -> tuple:
    """`broadcast_shapes` with the argument at fault attached to its error."""
    try:
        return broadcast_shapes(a.shape, b.shape)
    except TypeRelError as e:
        raise TypeRelError(e.message, arg=arg, dim=e.dim) from None


def unary_rel(rule: DTypeRule = ANY_DTYPE, result: str | None = None) -> Rel:
    """IdentityRel (result None: same dtype) or IdentityCompRel (result "bool")."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        check_dtype(data, rule, "data", 0)
        return TensorType(data.shape, result or data.dtype)
    return rel


def binary_rel(rule: DTypeRule = ANY_DTYPE, result: str | None = None) -> Rel:
    """BroadcastRel (result None: the operands' dtype) or BroadcastCompRel ("bool")."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not (is_known(args[0]) and is_known(args[1])):
            return None
        lhs, rhs = tensor(args, 0, "lhs"), tensor(args, 1, "rhs")
        same_dtype(lhs, rhs, ("lhs", "rhs"), 1)
        check_dtype(lhs, rule, "lhs", 0)
        return TensorType(broadcast(lhs, rhs, 1), result or lhs.dtype)
    return rel


def where_rel(args: list[Type], attrs: Any) -> Type | None:
    """WhereRel: x and y of one dtype; condition, x and y broadcast together."""
    if not all(is_known(a) for a in args[:3]):
        return None
    cond, x, y = tensor(args, 0, "condition"), tensor(args, 1, "x"), tensor(args, 2, "y")
    check_dtype(cond, BOOL, "condition", 0)
    same_dtype(x, y, ("x", "y"), 2)
    xy = TensorType(broadcast(x, y, 2), x.dtype)
    return TensorType(broadcast(cond, xy, 0), x.dtype)


def _target_dtype(attrs: Any) -> str:
    dtype = canonical_dtype(attrs.dtype)
    if dtype is None:
        raise TypeRelError(f"`{attrs.dtype}` is not a dtype")
    return dtype


def cast_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastRel: the input's shape with attrs.dtype."""
    if not is_known(args[0]):
        return None
    return TensorType(tensor(args, 0, "data").shape, _target_dtype(attrs))


def reinterpret_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastRel, plus the size check TVM makes when lowering (tir reinterpret)."""
    if not is_known(args[0]):
        return None
    data, dtype = tensor(args, 0, "data"), _target_dtype(attrs)
    if dtype_bits(data.dtype) != dtype_bits(dtype):
        raise TypeRelError(f"cannot reinterpret {data.dtype} ({dtype_bits(data.dtype)} bits) "
                           f"as {dtype} ({dtype_bits(dtype)} bits)", arg=0)
    return TensorType(data.shape, dtype)


def cast_like_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastLikeRel: the shape of `data`, the dtype of `dtype_like`."""
    if not (is_known(args[0]) and is_known(args[1])):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "dtype_like")
    return TensorType(data.shape, like.dtype)
