"""Type relations of the shape-changing transform ops: reshape and its kin, transpose,
expand_dims/squeeze, tile/repeat/reverse, the broadcast_to family, shape_of.

Mirrors the relations of TVM's src/relay/op/tensor/transform.cc (ReshapeRel with
InferNewShape, ReshapeLikeRel, TransposeRel, ExpandDimsRel, SqueezeRel, TileRel,
RepeatRel, ReverseRel, ReverseSequenceRel, BroadCastToRel, BroadCastToLikeRel,
CollapseSumLikeRel, LayoutTransformRel) and ShapeOfRel of
src/relay/op/type_relations.cc.
`infer_newshape` is shared with the reshape kernel.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, Type
from ..layouts import parse_layout, primal_sizes, transformed_shape
from ..relation import TypeRelError, dim_str, is_known, shape_str, tensor
from ..shape_rules import (
    Dim,
    all_known,
    axis_of,
    dim_div,
    dim_mul,
    dim_prod,
    expect_int_dtype,
    expect_rank,
    ints,
    is_int,
)

# ------------------------------------------------------------------ reshape

def infer_newshape(shape: Sequence[Dim], newshape: Sequence[int],
                   allowzero: bool = False) -> tuple[Dim, ...]:
    """TVM's InferNewShape: newshape with its special values resolved against `shape`.

    0 copies an input dimension (a literal 0 with allowzero), -1 is inferred from the
    rest, -2 copies all remaining input dimensions, -3 merges two input dimensions,
    -4 splits one into the next two values (one of which may be -1)."""
    return _NewShape(tuple(shape), tuple(newshape), allowzero).resolve()


class _NewShape:
    """The walk of InferNewShape: `src` is the next input dimension; `used_in` and
    `used_out` are the dimensions copied or derived, which a -1 does not count."""

    def __init__(self, shape: tuple, newshape: tuple[int, ...], allowzero: bool):
        self.shape, self.newshape, self.allowzero = shape, newshape, allowzero
        self.out: list[Dim] = []
        self.used_in: set[int] = set()
        self.used_out: set[int] = set()
        self.src, self.pos, self.infer_at = 0, 0, -1

    def resolve(self) -> tuple[Dim, ...]:
        steps = {0: self._copy, -1: self._infer, -2: self._rest, -3: self._merge,
                 -4: self._split}
        while self.pos < len(self.newshape):
            v = self.newshape[self.pos]
            if v > 0 or (v == 0 and self.allowzero):
                self.out.append(v)
                self.src += 1
            elif v in steps:
                steps[v]()
            else:
                raise TypeRelError(f"newshape has the unsupported special value {v}", arg=0)
            self.pos += 1
        if self.infer_at >= 0:
            self.out[self.infer_at] = self._inferred()
        return tuple(self.out)

    def _need(self, count: int) -> None:
        if self.src + count > len(self.shape):
            raise TypeRelError(f"newshape value {self.newshape[self.pos]} at position "
                               f"{self.pos} needs input dimension {self.src + count - 1}, but "
                               f"the input has rank {len(self.shape)}", arg=0)

    def _take(self, dim: Dim, inputs: int) -> None:
        """Emit `dim`, derived from the next `inputs` input dimensions."""
        self.used_in.update(range(self.src, self.src + inputs))
        self.used_out.add(len(self.out))
        self.out.append(dim)
        self.src += inputs

    def _copy(self) -> None:
        self._need(1)
        self._take(self.shape[self.src], 1)

    def _infer(self) -> None:
        if self.infer_at >= 0:
            raise TypeRelError(f"newshape {list(self.newshape)} has more than one -1", arg=0)
        self.infer_at = len(self.out)
        self.out.append(1)
        self.src += 1            # as TVM: a -1 stands for one input dimension

    def _rest(self) -> None:
        while self.src < len(self.shape):
            self._take(self.shape[self.src], 1)

    def _merge(self) -> None:
        self._need(2)
        self._take(dim_mul(self.shape[self.src], self.shape[self.src + 1]), 2)

    def _split(self) -> None:
        """-4, d1, d2: split the next input dimension into d1 * d2 (one may be -1)."""
        i = self.pos
        if i + 2 >= len(self.newshape):
            raise TypeRelError(f"newshape value -4 at position {i} must be followed by two "
                               "values", arg=0)
        self._need(1)
        d0, d1, d2 = self.shape[self.src], self.newshape[i + 1], self.newshape[i + 2]
        if d1 == -1 and d2 == -1:
            raise TypeRelError("newshape value -4 cannot infer both parts of a split (-1, -1)",
                               arg=0)
        self.used_in.add(self.src)
        self.used_out.update((len(self.out), len(self.out) + 1))
        self.out.append(dim_div(d0, d2) if d1 == -1 else d1)
        self.out.append(dim_div(d0, d1) if d2 == -1 else d2)
        self.src += 1
        self.pos += 2

    def _inferred(self) -> Dim:
        rest = dim_prod([d for k, d in enumerate(self.shape) if k not in self.used_in])
        known = dim_prod([d for k, d in enumerate(self.out) if k not in self.used_out])
        if not (is_int(rest) and is_int(known)):
            return ANY
        if known == 0 or rest % known:
            raise TypeRelError(f"cannot infer the -1 of newshape {list(self.newshape)} for "
                               f"input shape {shape_str(self.shape)}: {rest} elements do not "
                               f"divide into parts of {known}", arg=0)
        return rest // known


def check_same_size(before: Sequence[Dim], after: Sequence[Dim], arg: int = 0) -> None:
    n, m = dim_prod(before), dim_prod(after)
    if is_int(n) and is_int(m) and n != m:
        raise TypeRelError(f"cannot reshape a tensor of shape {shape_str(before)} ({n} elements) "
                           f"into shape {shape_str(after)} ({m} elements)", arg=arg)


def reshape_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    out = infer_newshape(data.shape, ints(attrs.newshape, "newshape"), attrs.allowzero)
    check_same_size(data.shape, out)
    return TensorType(out, data.dtype)


def axis_range(begin: int, end: int | None, rank: int, what: str) -> tuple[int, int]:
    b = begin + rank if begin < 0 else begin
    e = rank if end is None else (end + rank if end < 0 else end)
    if not 0 <= b <= e <= rank:
        raise TypeRelError(f"{what} range [{begin}, {end}) does not fit a tensor of rank {rank}")
    return b, e


def reshape_like_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "shape_like")
    lb, le = axis_range(attrs.lhs_begin, attrs.lhs_end, len(data.shape), "lhs")
    rb, re_ = axis_range(attrs.rhs_begin, attrs.rhs_end, len(like.shape), "rhs")
    out = data.shape[:lb] + like.shape[rb:re_] + data.shape[le:]
    check_same_size(data.shape, out, arg=1)
    return TensorType(out, data.dtype)


# ------------------------------------------------------------ axes permutation

def transpose_axes(rank: int, axes: Any) -> list[int]:
    """TransposeRel's axes: None or [] reverse; otherwise a permutation (negatives ok)."""
    given = ints(axes, "axes")
    if not given:
        return list(range(rank - 1, -1, -1))
    if len(given) != rank:
        raise TypeRelError(f"axes {list(given)} has {len(given)} entries but the input has "
                           f"rank {rank}", arg=0)
    perm = [axis_of(a, rank, 0, "transpose axis") for a in given]
    if sorted(perm) != list(range(rank)):
        raise TypeRelError(f"axes {list(given)} is not a permutation of the {rank} axes", arg=0)
    return perm


def transpose_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    perm = transpose_axes(len(data.shape), attrs.axes)
    return TensorType(tuple(data.shape[p] for p in perm), data.dtype)


def expand_dims_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    rank = len(data.shape)
    if attrs.num_newaxis < 0:
        raise TypeRelError(f"num_newaxis must be non-negative, got {attrs.num_newaxis}")
    axis = axis_of(attrs.axis, rank + 1)
    return TensorType(data.shape[:axis] + (1,) * attrs.num_newaxis + data.shape[axis:],
                      data.dtype)


def squeeze_axes(shape: Sequence[Dim], axis: Any) -> list[int]:
    """The axes squeeze removes: the listed ones (each of size 1 or `?`), or every
    dimension of size 1 when `axis` is None (then `?` dims are an error, as in TVM)."""
    rank = len(shape)
    if axis is None:
        for k, d in enumerate(shape):
            if not is_int(d):
                raise TypeRelError(f"squeeze without axis needs known dimensions, but "
                                   f"dimension {k} is {dim_str(d)}", arg=0, dim=k)
        return [k for k, d in enumerate(shape) if d == 1]
    out = []
    for a in ints(axis, "axis"):
        k = axis_of(a, rank)
        if is_int(shape[k]) and shape[k] != 1:
            raise TypeRelError(f"cannot squeeze axis {a}: its dimension is {shape[k]}, not 1",
                               arg=0, dim=k)
        out.append(k)
    return out


def squeeze_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    drop = set(squeeze_axes(data.shape, attrs.axis))
    return TensorType(tuple(d for k, d in enumerate(data.shape) if k not in drop), data.dtype)


# ------------------------------------------------------------ repetition

def tile_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    reps = ints(attrs.reps, "reps")
    if any(r < 0 for r in reps):
        raise TypeRelError(f"reps must be non-negative, got {list(reps)}")
    rank = max(len(reps), len(data.shape))
    shape = (1,) * (rank - len(data.shape)) + tuple(data.shape)
    full = (1,) * (rank - len(reps)) + reps
    return TensorType(tuple(dim_mul(d, r) for d, r in zip(shape, full)), data.dtype)


def repeat_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    if not is_int(attrs.repeats) or attrs.repeats < 1:
        raise TypeRelError(f"repeats must be a positive integer, got {attrs.repeats}")
    if attrs.axis is None:        # NumPy's rule: repeat the flattened input
        return TensorType((dim_mul(dim_prod(data.shape), attrs.repeats),), data.dtype)
    axis = axis_of(attrs.axis, len(data.shape))
    shape = list(data.shape)
    shape[axis] = dim_mul(shape[axis], attrs.repeats)
    return TensorType(tuple(shape), data.dtype)


def reverse_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    if attrs.axis is not None:
        axis_of(attrs.axis, len(data.shape))
    return data


def reverse_sequence_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, lengths = tensor(args, 0, "data"), tensor(args, 1, "seq_lengths")
    rank = len(data.shape)
    if rank < 2:
        raise TypeRelError(f"data must have rank 2 or more, got rank {rank}", arg=0)
    seq = axis_of(attrs.seq_axis, rank, 0, "seq_axis")
    batch = axis_of(attrs.batch_axis, rank, 0, "batch_axis")
    if seq == batch:
        raise TypeRelError(f"seq_axis and batch_axis are both axis {seq}")
    expect_rank(lengths, 1, "seq_lengths", 1)
    expect_int_dtype(lengths, "seq_lengths", 1)
    n, b = lengths.shape[0], data.shape[batch]
    if is_int(n) and is_int(b) and n != b:
        raise TypeRelError(f"seq_lengths has {n} entries but the batch axis {batch} of data "
                           f"has {b}", arg=1, dim=0)
    return data


# ------------------------------------------------------------ broadcasting

def broadcast_into(shape: Sequence[Dim], target: Sequence[Dim], what: str, arg: int) -> None:
    """`shape` must broadcast to exactly `target` (each dim 1 or equal, aligned right)."""
    if len(shape) > len(target):
        raise TypeRelError(f"cannot broadcast {what} of shape {shape_str(shape)} to "
                           f"{shape_str(target)}: it has more dimensions", arg=arg)
    offset = len(target) - len(shape)
    for k, d in enumerate(shape):
        t = target[offset + k]
        if is_int(d) and is_int(t) and d != 1 and d != t:
            raise TypeRelError(f"cannot broadcast {what} of shape {shape_str(shape)} to "
                               f"{shape_str(target)}: dimension {k} is {d}, target {t}",
                               arg=arg, dim=k)


def broadcast_to_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    shape = ints(attrs.shape, "shape")
    broadcast_into(data.shape, shape, "data", 0)
    return TensorType(shape, data.dtype)


def broadcast_to_like_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "broadcast_type")
    broadcast_into(data.shape, like.shape, "data", 0)
    return TensorType(like.shape, data.dtype)


def collapse_sum_like_rel(args: list[Type], attrs: Any) -> Type | None:
    """CollapseSumLikeRel: the result has the type of the second argument."""
    if not all_known(args[:2]):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "collapse_type")
    broadcast_into(like.shape, data.shape, "collapse_type", 1)
    return like


def shape_of_rel(args: list[Type], attrs: Any) -> Type | None:
    """ShapeOfRel: (rank,) of attrs.dtype (int64 when unset); TVM's RankShape gives a
    scalar input a 0-d result."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    return TensorType((len(data.shape),) if data.shape else (), attrs.dtype or "int64")


def layout_transform_rel(args: list[Type], attrs: Any) -> Type | None:
    """LayoutTransformRel: BijectiveLayout(src, dst).ForwardShape(data.shape)."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    src = parse_layout(attrs.src_layout, "src_layout")
    dst = parse_layout(attrs.dst_layout, "dst_layout")
    if len(src) != len(data.shape):
        raise TypeRelError(f"src_layout {attrs.src_layout!r} has {len(src)} axes but data has "
                           f"rank {len(data.shape)}", arg=0)
    src_primal = {a for a, _ in src if a.isupper()}
    dst_primal = {a for a, _ in dst if a.isupper()}
    if src_primal != dst_primal:
        raise TypeRelError(f"cannot convert layout {attrs.src_layout} to {attrs.dst_layout}: "
                           "they have different primal axes")
    sizes = primal_sizes(data.shape, src)
    return TensorType(transformed_shape(sizes, dst), data.dtype)
