"""Type relations of the ops that join and cut tensors: concatenate, stack, split,
strided_slice, slice_like.

Mirrors ConcatenateRel (src/relay/op/tensor/transform.h), StackRel, SplitRel,
StridedSliceRel and SliceLikeRel (src/relay/op/tensor/transform.cc), and the
index canonicalisation of include/tvm/topi/detail/strided_slice.h, which
`slice_plan` shares with the strided_slice kernel.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, is_known, shape_str, tensor, type_str
from ..shape_rules import Dim, all_known, axis_of, dim_div, ints, is_int

INT64_MAX = 2**63 - 1


# ------------------------------------------------------------ concatenate, stack

def tuple_fields(args: list[Type], op: str) -> list[TensorType]:
    """The tensors of a tuple argument, all of one dtype and rank."""
    tup = args[0]
    if not isinstance(tup, TupleType):
        raise TypeRelError(f"{op} takes a tuple of tensors, got {type_str(tup)}", arg=0)
    if not tup.fields:
        raise TypeRelError(f"{op} needs at least one tensor, got an empty tuple", arg=0)
    fields = []
    for k, f in enumerate(tup.fields):
        if not isinstance(f, TensorType):
            raise TypeRelError(f"field {k} of the tuple must be a tensor, got {type_str(f)}",
                               arg=0)
        first = fields[0] if fields else f
        if f.dtype != first.dtype:
            raise TypeRelError(f"tensor 0 has dtype {first.dtype} but tensor {k} has dtype "
                               f"{f.dtype}", arg=0)
        if len(f.shape) != len(first.shape):
            raise TypeRelError(f"tensor 0 has rank {len(first.shape)} but tensor {k} has rank "
                               f"{len(f.shape)}", arg=0)
        fields.append(f)
    return fields


def common_dim(fields: Sequence[TensorType], d: int, why: str) -> Dim:
    """The dimension `d` all fields share (a known one if any is known)."""
    known = [(k, f.shape[d]) for k, f in enumerate(fields) if is_int(f.shape[d])]
    for k, v in known[1:]:
        if v != known[0][1]:
            raise TypeRelError(f"tensor {known[0][0]} has {known[0][1]} at dimension {d} but "
                               f"tensor {k} has {v}{why}", arg=0, dim=d)
    return known[0][1] if known else fields[0].shape[d]


def concatenate_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    fields = tuple_fields(args, "concatenate")
    rank = len(fields[0].shape)
    if rank == 0:
        raise TypeRelError("cannot concatenate scalars", arg=0)
    axis = axis_of(attrs.axis, rank)
    out: list[Dim] = []
    for d in range(rank):
        if d == axis:
            dims = [f.shape[d] for f in fields]
            out.append(sum(dims) if all(is_int(x) for x in dims) else ANY)
        else:
            out.append(common_dim(fields, d, f" (concatenating along axis {axis})"))
    return TensorType(tuple(out), fields[0].dtype)


def stack_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    fields = tuple_fields(args, "stack")
    rank = len(fields[0].shape)
    axis = axis_of(attrs.axis, rank + 1)
    shape = tuple(common_dim(fields, d, " (stacked tensors must have one shape)")
                  for d in range(rank))
    return TensorType(shape[:axis] + (len(fields),) + shape[axis:], fields[0].dtype)


# ------------------------------------------------------------ split

def split_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    if not data.shape:
        raise TypeRelError("cannot split a scalar", arg=0)
    axis = axis_of(attrs.axis, len(data.shape))
    size = data.shape[axis]
    spec = attrs.indices_or_sections
    if isinstance(spec, int):
        if spec <= 0:
            raise TypeRelError(f"indices_or_sections must be positive, got {spec}")
        if is_int(size) and size % spec:
            raise TypeRelError(f"cannot split dimension {axis} of size {size} into {spec} equal "
                               "sections", arg=0, dim=axis)
        parts: list[Dim] = [dim_div(size, spec)] * spec
    else:
        parts = split_parts(size, ints(spec, "indices_or_sections"), axis)
    return TupleType(tuple(TensorType(data.shape[:axis] + (p,) + data.shape[axis + 1:],
                                      data.dtype) for p in parts))


def split_parts(size: Dim, indices: Sequence[int], axis: int) -> list[Dim]:
    """SplitRel for split indices: ascending, positive, and below the axis' size."""
    parts: list[Dim] = []
    begin = 0
    for idx in indices:
        if idx <= begin:
            raise TypeRelError(f"split indices must be positive and ascending, got "
                               f"{list(indices)}")
        parts.append(idx - begin)
        begin = idx
    if is_int(size) and begin >= size:
        raise TypeRelError(f"split index {begin} is not below the size {size} of axis {axis}",
                           arg=0, dim=axis)
    parts.append(size - begin if is_int(size) else ANY)
    return parts


# ------------------------------------------------------------ strided_slice

def _canonical(index: int, extent: int, stride: int) -> int:
    """topi's CanonicalizeIndex: wrap negatives once, clamp into the walkable range."""
    lo, hi = (-1, extent - 1) if stride < 0 else (0, extent)
    if index < 0:
        index += extent
    return min(max(index, lo), hi)


def slice_params(rank: int, attrs: Any) -> tuple[list[int], list[int], list[int], list[int]]:
    """(axes, begin, end, strides) as StridedSliceRel completes them; with slice_mode
    "size", `end` already holds begin + size and strides are 1."""
    begin, end = list(ints(attrs.begin, "begin")), list(ints(attrs.end, "end"))
    strides = list(ints(attrs.strides, "strides"))
    if attrs.slice_mode not in ("end", "size"):
        raise TypeRelError(f"slice_mode must be \"end\" or \"size\", got {attrs.slice_mode!r}")
    if attrs.axes is not None:
        axes = [axis_of(a, rank) for a in ints(attrs.axes, "axes")]
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise TypeRelError("axes, begin, end and strides must have the same length, got "
                               f"{len(axes)}, {len(begin)}, {len(end)} and {len(strides)}")
    else:
        for name, vals in (("begin", begin), ("end", end), ("strides", strides)):
            if len(vals) > rank:
                raise TypeRelError(f"{name} has {len(vals)} values but data has rank {rank}",
                                   arg=0)
        axes = list(range(rank))
        strides += [1] * (rank - len(strides))
        begin += [0 if strides[k] > 0 else INT64_MAX for k in range(len(begin), rank)]
        end += [INT64_MAX if strides[k] > 0 else 0 for k in range(len(end), rank)]
    if attrs.slice_mode == "size":
        strides = [1] * len(axes)
        end = [INT64_MAX if e < 0 else b + e for b, e in zip(begin, end)]
    if 0 in strides:
        raise TypeRelError(f"strides must be non-zero, got {strides}")
    return axes, begin, end, strides


def slice_plan(shape: Sequence[Dim], attrs: Any) -> list[tuple[int, int | None, int | None, int]]:
    """For each sliced axis: (axis, first index, canonical end, stride); the indices are
    None when the dimension is not known before run time."""
    plan = []
    for axis, b, e, s in zip(*slice_params(len(shape), attrs)):
        dim = shape[axis]
        if not is_int(dim):
            plan.append((axis, None, None, s))
            continue
        cb, ce = _canonical(b, dim, s), _canonical(e, dim, s)
        if (s < 0 and ce > cb) or (s > 0 and cb > ce):
            raise TypeRelError(f"begin {b} and end {e} select nothing with stride {s} on axis "
                               f"{axis} of size {dim}", arg=0, dim=axis)
        plan.append((axis, cb, ce, s))
    return plan


def strided_slice_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    shape = list(data.shape)
    for axis, b, e, s in slice_plan(data.shape, attrs):
        shape[axis] = ANY if b is None else (abs(e - b) + abs(s) - 1) // abs(s)
    return TensorType(tuple(shape), data.dtype)


def slice_like_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "shape_like")
    rank = len(data.shape)
    if attrs.axes is None:
        axes = list(range(min(rank, len(like.shape))))
    else:
        axes = [axis_of(a, rank) for a in ints(attrs.axes, "axes")]
        if not axes:
            raise TypeRelError("axes must not be empty")
    shape = list(data.shape)
    for a in axes:
        if a >= len(like.shape):
            raise TypeRelError(f"axis {a} is beyond shape_like's rank {len(like.shape)}", arg=1)
        d, t = data.shape[a], like.shape[a]
        if is_int(d) and is_int(t) and t > d:
            raise TypeRelError(f"shape_like has {t} at axis {a} but data has only {d} "
                               f"(data shape {shape_str(data.shape)})", arg=1, dim=a)
        shape[a] = t
    return TensorType(tuple(shape), data.dtype)
