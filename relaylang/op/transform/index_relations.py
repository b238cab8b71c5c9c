"""Type relations of indexing and tensor-creation ops: take, gather, gather_nd,
one_hot, zeros, ones, full, full_like, arange.

Mirrors TakeRel, GatherRel, GatherNDRel, OneHotRel, InitOpRel, FullRel,
FullLikeRel and ArangeRel of TVM's src/relay/op/tensor/transform.cc.
"""
from __future__ import annotations

import math
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, is_known, tensor
from ..shape_rules import (
    all_known,
    axis_of,
    expect_int_dtype,
    expect_scalar,
    ints,
    is_int,
    scalar_value,
)

TAKE_MODES = ("clip", "wrap", "fast")


def take_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, indices = tensor(args, 0, "data"), tensor(args, 1, "indices")
    expect_int_dtype(indices, "indices", 1)
    if attrs.mode not in TAKE_MODES:
        raise TypeRelError(f"mode must be one of {', '.join(TAKE_MODES)}, got {attrs.mode!r}")
    if attrs.axis is None:                  # take from the flattened data
        return TensorType(indices.shape, data.dtype)
    axis = axis_of(attrs.axis, len(data.shape))
    batch = attrs.batch_dims + len(indices.shape) if attrs.batch_dims < 0 else attrs.batch_dims
    if not 0 <= batch <= min(axis, len(indices.shape)):
        raise TypeRelError(f"batch_dims {attrs.batch_dims} must be between 0 and both the axis "
                           f"({axis}) and the rank of indices ({len(indices.shape)})")
    for k in range(batch):
        d, i = data.shape[k], indices.shape[k]
        if is_int(d) and is_int(i) and d != i:
            raise TypeRelError(f"batch dimension {k} is {d} in data but {i} in indices",
                               arg=1, dim=k)
    shape = data.shape[:axis] + indices.shape[batch:] + data.shape[axis + 1:]
    return TensorType(shape, data.dtype)


def gather_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, indices = tensor(args, 0, "data"), tensor(args, 1, "indices")
    expect_int_dtype(indices, "indices", 1)
    if len(data.shape) != len(indices.shape):
        raise TypeRelError(f"indices must have the rank of data ({len(data.shape)}), got rank "
                           f"{len(indices.shape)}", arg=1)
    if attrs.axis is None:
        raise TypeRelError("gather needs an axis")
    axis_of(attrs.axis, len(data.shape))
    return TensorType(indices.shape, data.dtype)


def gather_nd_rel(args: list[Type], attrs: Any) -> Type | None:
    """indices (M, Y...) picks M leading coordinates (after batch_dims) of data:
    the result is Y... + data.shape[batch_dims + M:]."""
    if not all_known(args[:2]):
        return None
    data, indices = tensor(args, 0, "data"), tensor(args, 1, "indices")
    expect_int_dtype(indices, "indices", 1)
    if not indices.shape:
        raise TypeRelError("indices must have rank 1 or more", arg=1)
    m = indices.shape[0] if attrs.index_rank is None else attrs.index_rank
    if not is_int(m):
        raise TypeRelError("the first dimension of indices must be known (or index_rank "
                           "given)", arg=1, dim=0)
    batch = attrs.batch_dims
    if batch < 0 or m + batch > len(data.shape):
        raise TypeRelError(f"indices address {m} dimensions after batch_dims {batch}, but data "
                           f"has rank {len(data.shape)}", arg=1, dim=0)
    return TensorType(indices.shape[1:] + data.shape[batch + m:], data.dtype)


def one_hot_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    indices = tensor(args, 0, "indices")
    on, off = tensor(args, 1, "on_value"), tensor(args, 2, "off_value")
    expect_int_dtype(indices, "indices", 0)
    expect_scalar(on, "on_value", 1)
    expect_scalar(off, "off_value", 2)
    if attrs.depth <= 0:
        raise TypeRelError(f"depth must be positive, got {attrs.depth}")
    rank = len(indices.shape)
    axis = rank if attrs.axis == -1 else axis_of(attrs.axis, rank + 1)
    shape = indices.shape[:axis] + (attrs.depth,) + indices.shape[axis:]
    return TensorType(shape, attrs.dtype or on.dtype)


# ------------------------------------------------------------ creation

def init_rel(args: list[Type], attrs: Any) -> Type | None:
    """zeros/ones: shape and dtype (float32 when unset) from the attributes."""
    shape = ints(attrs.shape, "shape")
    if any(d < 0 for d in shape):
        raise TypeRelError(f"shape must not have negative dimensions, got {list(shape)}")
    return TensorType(shape, attrs.dtype or "float32")


def full_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    fill = tensor(args, 0, "fill_value")
    expect_scalar(fill, "fill_value", 0)
    base = init_rel(args, attrs)
    assert isinstance(base, TensorType)
    return TensorType(base.shape, attrs.dtype or fill.dtype)


def full_like_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, fill = tensor(args, 0, "data"), tensor(args, 1, "fill_value")
    expect_scalar(fill, "fill_value", 1)
    return data


def arange_length(start: float, stop: float, step: float) -> int:
    if step == 0:
        raise TypeRelError("arange step must not be zero")
    n = math.ceil((stop - start) / step)
    if n <= 0:
        raise TypeRelError(f"arange({start}, {stop}, {step}) has no elements")
    return n


def arange_rel(args: list[Type], attrs: Any) -> Type | None:
    """ArangeRel: start, stop and step are scalars of attrs.dtype; the length is known
    when the attributes hold constants, `?` otherwise."""
    if not all_known(args[:3]):
        return None
    for k, name in enumerate(("start", "stop", "step")):
        t = tensor(args, k, name)
        expect_scalar(t, name, k)
        if attrs.dtype and t.dtype != attrs.dtype:
            raise TypeRelError(f"{name} has dtype {t.dtype} but arange's dtype is {attrs.dtype}",
                               arg=k)
    values = [scalar_value(getattr(attrs, name)) for name in ("start", "stop", "step")]
    dtype = attrs.dtype or tensor(args, 0).dtype
    if any(v is None for v in values):
        return TensorType((ANY,), dtype)
    return TensorType((arange_length(*values),), dtype)
