"""Type relations of the reduce family, and which axes a call reduces.

Mirrors TVM's src/relay/op/tensor/reduce.cc: GetReduceAxes, ReduceShapeImpl,
ReduceRel, GenericReduceRel<ArgReduceAttrs>, VarianceRel.

Axis semantics as TVM's GetReduceAxes: `axis` None *or empty* reduces every
axis; negative axes count from the end; `exclude=True` reduces exactly the
axes not listed. Where TVM would crash or misbehave (a repeated axis, argmax
of a scalar) the relation reports an error instead.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.types import TensorType, Type
from ..relation import (ANY_DTYPE, Dim, DTypeRule, TypeRelError, check_dtype, dim_str, is_known,
                        same_dtype, tensor)


def reduce_axes(rank: int, attrs: Any) -> tuple[int, ...]:
    """The axes a reduction with `attrs` reduces, ascending (TVM's GetReduceAxes)."""
    if not attrs.axis:
        return tuple(range(rank))
    listed: set[int] = set()
    for axis in attrs.axis:
        if not -rank <= axis < rank:
            raise TypeRelError(f"axis {axis} is out of range for a tensor of rank {rank}", arg=0)
        index = axis + rank if axis < 0 else axis
        if index in listed:
            raise TypeRelError(f"axis {index} is listed twice in axis={list(attrs.axis)}", arg=0)
        listed.add(index)
    if attrs.exclude:
        return tuple(i for i in range(rank) if i not in listed)
    return tuple(sorted(listed))


def reduced_shape(shape: tuple[Dim, ...], axes: tuple[int, ...], keepdims: bool) -> tuple:
    """ReduceShapeImpl: reduced axes become 1 (keepdims) or disappear."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _need_rank(data: TensorType) -> None:
    # GenericReduceRel and VarianceRel ICHECK a non-scalar input.
    if not data.shape:
        raise TypeRelError("expects a tensor of rank at least 1, got a scalar", arg=0)


def reduce_rel(rule: DTypeRule = ANY_DTYPE) -> Callable[[list[Type], Any], Type | None]:
    """ReduceRel: the reduced shape, the input's dtype."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        check_dtype(data, rule, "data", 0)
        axes = reduce_axes(len(data.shape), attrs)
        return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), data.dtype)
    return rel


def arg_reduce_rel(args: list[Type], attrs: Any) -> Type | None:
    """GenericReduceRel<ArgReduceAttrs>: the reduced shape, int32 indices."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    _need_rank(data)
    axes = reduce_axes(len(data.shape), attrs)
    return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), "int32")


def variance_rel(args: list[Type], attrs: Any) -> Type | None:
    """VarianceRel: `mean` (as computed with keepdims) has data's rank and dtype and
    broadcasts against it without growing it; the result is reduced like `sum`."""
    if not (is_known(args[0]) and is_known(args[1])):
        return None
    data, mean = tensor(args, 0, "data"), tensor(args, 1, "mean")
    _need_rank(data)
    if len(mean.shape) != len(data.shape):
        raise TypeRelError(f"mean has rank {len(mean.shape)} but data has rank "
                           f"{len(data.shape)}; compute it with keepdims=True", arg=1)
    same_dtype(data, mean, ("data", "mean"), 1)
    for i, (d, m) in enumerate(zip(data.shape, mean.shape)):
        if isinstance(d, int) and isinstance(m, int) and m not in (1, d):
            raise TypeRelError(f"mean has {dim_str(m)} at dimension {i} where data has "
                               f"{dim_str(d)} (it must be 1 or equal)", arg=1, dim=i)
    axes = reduce_axes(len(data.shape), attrs)
    return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), data.dtype)
