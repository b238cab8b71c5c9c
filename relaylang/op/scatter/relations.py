"""Type relations of the scatter family (TVM v0.19's ScatterElementsRel, ScatterNDRel):
the result has data's type."""
from __future__ import annotations

from typing import Any

from ...ir.types import TensorType, Type
from ..relation import TypeRelError, choice, same_dtype, shape_str, tensor
from ..shape_rules import all_known, axis_of, expect_dim, expect_int_dtype, is_int

REDUCTIONS = ("update", "add", "mul", "min", "max")


def scatter_elements_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    data, indices = tensor(args, 0, "data"), tensor(args, 1, "indices")
    updates = tensor(args, 2, "updates")
    expect_int_dtype(indices, "indices", 1)
    same_dtype(data, updates, ("data", "updates"), 2)
    choice(attrs.reduction, REDUCTIONS, "reduction")
    rank = len(data.shape)
    if rank == 0:
        raise TypeRelError("data must have rank 1 or more", arg=0)
    if len(indices.shape) != rank:
        raise TypeRelError(f"indices must have the rank of data ({rank}), got rank "
                           f"{len(indices.shape)}", arg=1)
    if len(updates.shape) != rank:
        raise TypeRelError(f"updates must have the shape of indices {shape_str(indices.shape)}, "
                           f"got {shape_str(updates.shape)}", arg=2)
    axis = axis_of(attrs.axis, rank)
    for d, (u, i) in enumerate(zip(updates.shape, indices.shape)):
        expect_dim(u, i, f"updates must have the shape of indices {shape_str(indices.shape)}, "
                         f"got {shape_str(updates.shape)}", 2, d)
    for d, (i, n) in enumerate(zip(indices.shape, data.shape)):
        if d != axis and is_int(i) and is_int(n) and i > n:
            raise TypeRelError(f"indices has {i} elements along axis {d}, more than data "
                               f"({n})", arg=1, dim=d)
    return TensorType(data.shape, data.dtype)


def scatter_nd_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    data, indices = tensor(args, 0, "data"), tensor(args, 1, "indices")
    updates = tensor(args, 2, "updates")
    expect_int_dtype(indices, "indices", 1)
    same_dtype(data, updates, ("data", "updates"), 2)
    choice(attrs.mode, REDUCTIONS, "mode")
    if not indices.shape:
        raise TypeRelError("indices must have rank 1 or more (shape (M, Y...))", arg=1)
    m = indices.shape[0]
    if not is_int(m):
        raise TypeRelError("the first dimension of indices must be known", arg=1, dim=0)
    if m > len(data.shape):
        raise TypeRelError(f"indices address {m} dimensions, but data has rank "
                           f"{len(data.shape)}", arg=1, dim=0)
    expected = tuple(indices.shape[1:]) + tuple(data.shape[m:])
    if len(updates.shape) != len(expected):
        raise TypeRelError(f"updates must have shape {shape_str(expected)} (indices.shape[1:] "
                           f"+ data.shape[{m}:]), got {shape_str(updates.shape)}", arg=2)
    for d, (u, e) in enumerate(zip(updates.shape, expected)):
        expect_dim(u, e, f"updates must have shape {shape_str(expected)} (indices.shape[1:] + "
                         f"data.shape[{m}:]), got {shape_str(updates.shape)}", 2, d)
    return TensorType(data.shape, data.dtype)
