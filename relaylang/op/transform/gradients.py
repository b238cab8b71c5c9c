"""Gradient rules of the transform family (TVM's FPrimalGradient,
python/tvm/relay/op/_tensor_grad.py), as the nn family's (`op/nn/gradients.py` says the
contract): `rule(orig, grad) -> [one expression per input]`.

Moves of data are inverted by the inverse move (reshape_like, the inverse permutation,
layout_transform back, split <-> concatenate); selections scatter the adjoint back:
strided_slice dilates and pads it (no strided_set op: one expand_dims/pad/reshape per
strided axis, one pad), take / gather / gather_nd add it into zeros with scatter_nd /
scatter_elements; copies (broadcast_to, tile, repeat) sum it back. Integer inputs
(indices, lengths) get zeros.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ir import builder
from ...ir.expr import Expr
from .. import make
from ..nn.gradients import (
    GradientNotSupported,
    dtype_of,
    field,
    inverse_perm,
    norm_axis,
    shape_of,
)
from ..registry import get_op_def, implement


def _fields_of(e: Expr) -> int:
    return len(e.checked_type.fields)


def _zero(like: Expr) -> Expr:
    return builder.const(0, dtype_of(like))


# ------------------------------------------------------------------ reshapes


@implement("reshape", "expand_dims", "squeeze", target="gradient")
def reshape_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.reshape_like(grad, orig.args[0])]


@implement("reshape_like", target="gradient")
def reshape_like_grad(orig: Any, grad: Any) -> list[Any]:
    data, like = orig.args
    return [make.reshape_like(grad, data), make.zeros_like(like)]


@implement("transpose", target="gradient")
def transpose_grad(orig: Any, grad: Any) -> list[Any]:
    rank = len(shape_of(orig.args[0]))
    axes = orig.attrs.axes
    perm = list(range(rank))[::-1] if not axes else [norm_axis(int(a), rank) for a in axes]
    return [make.transpose(grad, axes=tuple(inverse_perm(perm)))]


@implement("layout_transform", target="gradient")
def layout_transform_grad(orig: Any, grad: Any) -> list[Any]:
    attrs = orig.attrs
    back = make.layout_transform(grad, src_layout=attrs.dst_layout, dst_layout=attrs.src_layout)
    return [make.reshape_like(back, orig.args[0])]


# ------------------------------------------------------------------ joins and splits


def _split_points(sizes: list[int]) -> tuple[int, ...]:
    points, total = [], 0
    for s in sizes[:-1]:
        total += s
        points.append(total)
    return tuple(points)


@implement("concatenate", target="gradient")
def concatenate_grad(orig: Any, grad: Any) -> list[Any]:
    data = orig.args[0]
    fields = data.checked_type.fields
    rank = len(fields[0].shape)
    axis = norm_axis(int(orig.attrs.axis), rank)
    sizes = [int(f.shape[axis]) for f in fields]
    if len(fields) == 1:
        return [builder.Tuple([grad])]
    parts = make.split(grad, indices_or_sections=_split_points(sizes), axis=axis)
    return [builder.Tuple([builder.TupleGetItem(parts, i) for i in range(len(fields))])]


@implement("stack", target="gradient")
def stack_grad(orig: Any, grad: Any) -> list[Any]:
    data = orig.args[0]
    fields = data.checked_type.fields
    rank = len(fields[0].shape) + 1
    axis = norm_axis(int(orig.attrs.axis), rank)
    n = len(fields)
    if n == 1:
        return [builder.Tuple([make.squeeze(grad, axis=(axis,))])]
    parts = make.split(grad, indices_or_sections=n, axis=axis)
    return [builder.Tuple([make.squeeze(builder.TupleGetItem(parts, i), axis=(axis,))
                           for i in range(n)])]


@implement("split", target="gradient")
def split_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    rank = len(shape_of(x))
    axis = norm_axis(int(orig.attrs.axis), rank)
    n = len(orig.checked_type.fields)
    return [make.concatenate(builder.Tuple([field(grad, i) for i in range(n)]), axis=axis)]


# ------------------------------------------------------------------ copies


@implement("broadcast_to", target="gradient")
def broadcast_to_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.collapse_sum_like(grad, orig.args[0])]


@implement("broadcast_to_like", target="gradient")
def broadcast_to_like_grad(orig: Any, grad: Any) -> list[Any]:
    data, like = orig.args
    return [make.collapse_sum_like(grad, data), make.zeros_like(like)]


@implement("collapse_sum_like", target="gradient")
def collapse_sum_like_grad(orig: Any, grad: Any) -> list[Any]:
    data, like = orig.args
    return [make.broadcast_to_like(grad, data), make.zeros_like(like)]


@implement("tile", target="gradient")
def tile_grad(orig: Any, grad: Any) -> list[Any]:
    """Each output axis is (reps, size): sum over the reps."""
    x = orig.args[0]
    shape = shape_of(x)
    reps = [int(r) for r in orig.attrs.reps]
    rank = max(len(shape), len(reps))
    dims = [1] * (rank - len(shape)) + list(shape)
    reps = [1] * (rank - len(reps)) + reps
    split_shape: list[int] = []
    for r, d in zip(reps, dims):
        split_shape += [r, d]
    summed = make.sum(make.reshape(grad, newshape=tuple(split_shape)),
                      axis=tuple(range(0, 2 * rank, 2)))
    return [make.reshape_like(summed, x)]


@implement("repeat", target="gradient")
def repeat_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    shape = shape_of(x)
    r = int(orig.attrs.repeats)
    if orig.attrs.axis is None:           # numpy's: the flattened data
        grouped = make.reshape(grad, newshape=(-1, r))
        return [make.reshape_like(make.sum(grouped, axis=(1,)), x)]
    axis = norm_axis(int(orig.attrs.axis), len(shape))
    grouped = make.reshape(grad, newshape=shape[:axis + 1] + (r,) + shape[axis + 1:])
    return [make.sum(grouped, axis=(axis + 1,))]


@implement("reverse", target="gradient")
def reverse_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.reverse(grad, axis=orig.attrs.axis)]


@implement("reverse_sequence", target="gradient")
def reverse_sequence_grad(orig: Any, grad: Any) -> list[Any]:
    """Reversing each sequence's prefix is its own inverse."""
    lengths = orig.args[1]
    return [make.reverse_sequence(grad, lengths, seq_axis=orig.attrs.seq_axis,
                                  batch_axis=orig.attrs.batch_axis), make.zeros_like(lengths)]


# ------------------------------------------------------------------ slices


def _place(grad: Expr, out_shape: tuple[int, ...], x: Expr,
           picks: list[tuple[int, int, int]]) -> Expr:
    """The adjoint of a slice: `grad` (out_shape) put back into zeros of x's shape, where
    axis j kept elements first, first + step, ... (`picks[j]` = (first, step, count), step
    > 0; a descending selection is reversed by the caller)."""
    shape = shape_of(x)
    g = grad
    cur = list(out_shape)
    for j, (first, step, count) in enumerate(picks):
        if step > 1 and count > 1:
            # dilate axis j: (.., count, ..) -> (.., count, 1, ..) -> pad to step -> merge
            g = make.expand_dims(g, axis=j + 1)
            widths = [(0, 0)] * (len(cur) + 1)
            widths[j + 1] = (0, step - 1)
            g = make.nn.pad(g, _zero(x), pad_width=tuple(widths))
            cur[j] = count * step
            g = make.reshape(g, newshape=tuple(cur))
    # pad each axis to its full length (cutting a dilation's tail when it overhangs)
    widths = []
    cut_end = []
    for j, (first, step, count) in enumerate(picks):
        after = shape[j] - first - cur[j]
        widths.append((first, max(after, 0)))
        cut_end.append(cur[j] + min(after, 0))
    if any(c != n for c, n in zip(cut_end, cur)):
        g = make.strided_slice(g, begin=(0,) * len(cur), end=tuple(cut_end),
                               strides=(1,) * len(cur))
    if any(w != (0, 0) for w in widths):
        g = make.nn.pad(g, _zero(x), pad_width=tuple(widths))
    return g


def _selected(op: str, attrs: Any, shape: tuple[int, ...], axis: int) -> np.ndarray:
    """Which indices of `axis` the op's kernel keeps (in output order)."""
    view = [1] * len(shape)
    view[axis] = shape[axis]
    ids = np.broadcast_to(np.arange(shape[axis], dtype=np.int64).reshape(view), shape)
    out = np.asarray(get_op_def(op).kernel([ids], attrs))
    at = tuple(slice(None) if k == axis else 0 for k in range(len(shape)))
    return out[at] if out.size else np.zeros((0,), np.int64)


@implement("strided_slice", target="gradient")
def strided_slice_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    shape = shape_of(x)
    out_shape = shape_of(orig)
    if 0 in out_shape:
        return [make.zeros_like(x)]
    picks, backward = [], []
    for j in range(len(shape)):
        kept = _selected("strided_slice", orig.attrs, shape, j)
        step = int(kept[1] - kept[0]) if len(kept) > 1 else 1
        if step < 0:
            backward.append(j)
            kept, step = kept[::-1], -step
        picks.append((int(kept[0]), step, len(kept)))
    g = make.reverse(grad, axis=backward[0]) if backward else grad
    for j in backward[1:]:
        g = make.reverse(g, axis=j)
    return [_place(g, out_shape, x, picks)]


@implement("slice_like", target="gradient")
def slice_like_grad(orig: Any, grad: Any) -> list[Any]:
    data, like = orig.args
    shape, out_shape = shape_of(data), shape_of(orig)
    widths = tuple((0, n - m) for n, m in zip(shape, out_shape))
    return [make.nn.pad(grad, _zero(data), pad_width=widths), make.zeros_like(like)]


# ------------------------------------------------------------------ gathers


def _take_indices(idx: Expr, n: int, mode: str) -> Expr:
    """The indices the kernel reads (take's clip / wrap modes)."""
    if mode == "clip":
        return make.clip(idx, a_min=0, a_max=n - 1)
    if mode == "wrap":
        return make.floor_mod(idx, builder.const(n, dtype_of(idx)))
    return idx          # fast: in range (negative ones wrap in scatter_nd as in take)


@implement("take", target="gradient")
def take_grad(orig: Any, grad: Any) -> list[Any]:
    """Adds the adjoint's slices into zeros at their indices (scatter_nd, mode add): the
    taken axis is moved first, the index axes of the adjoint likewise."""
    data, indices = orig.args
    shape = shape_of(data)
    idx_shape = shape_of(indices)
    attrs = orig.attrs
    dtype = dtype_of(data)
    if attrs.batch_dims not in (0, None) and not (attrs.batch_dims < 0 and
                                                  attrs.batch_dims + len(idx_shape) == 0):
        raise GradientNotSupported("take: the gradient rule takes batch_dims=0")
    if attrs.axis is None:
        size = int(np.prod(shape, dtype=np.int64))
        idx = _take_indices(indices, size, attrs.mode)
        idx = make.reshape(idx, newshape=(1,) + (idx_shape or (1,)))
        g = grad if idx_shape else make.reshape(grad, newshape=(1,))
        flat = make.scatter_nd(make.zeros(shape=(size,), dtype=dtype), idx, g, mode="add")
        return [make.reshape_like(flat, data), make.zeros_like(indices)]
    axis = norm_axis(int(attrs.axis), len(shape))
    idx = _take_indices(indices, shape[axis], attrs.mode)
    g = grad
    if not idx_shape:                       # a scalar index: the axis was dropped
        g = make.expand_dims(g, axis=axis)
        idx_shape = (1,)
    idx = make.reshape(idx, newshape=(1,) + idx_shape)
    r = len(idx_shape)
    pre, post = list(range(axis)), list(range(axis + r, len(shape) - 1 + r))
    # adjoint (pre.., I.., post..) -> (I.., pre.., post..)
    g = make.transpose(g, axes=tuple(range(axis, axis + r)) + tuple(pre) + tuple(post))
    moved = (shape[axis],) + shape[:axis] + shape[axis + 1:]
    out = make.scatter_nd(make.zeros(shape=moved, dtype=dtype), idx, g, mode="add")
    # (D, pre.., post..) -> (pre.., D, post..)
    back = tuple(range(1, axis + 1)) + (0,) + tuple(range(axis + 1, len(shape)))
    return [make.transpose(out, axes=back), make.zeros_like(indices)]


@implement("gather", target="gradient")
def gather_grad(orig: Any, grad: Any) -> list[Any]:
    data, indices = orig.args
    axis = norm_axis(int(orig.attrs.axis), len(shape_of(data)))
    return [make.scatter_elements(make.zeros_like(data), indices, grad, axis=axis,
                                  reduction="add"), make.zeros_like(indices)]


@implement("gather_nd", target="gradient")
def gather_nd_grad(orig: Any, grad: Any) -> list[Any]:
    data, indices = orig.args
    if orig.attrs.batch_dims:
        raise GradientNotSupported("gather_nd: the gradient rule takes batch_dims=0")
    return [make.scatter_nd(make.zeros_like(data), indices, grad, mode="add"),
            make.zeros_like(indices)]


# ------------------------------------------------------------------ fills and scans


@implement("zeros", "ones", target="gradient")
def no_input_grad(orig: Any, grad: Any) -> list[Any]:
    return []


@implement("full", target="gradient")
def full_grad(orig: Any, grad: Any) -> list[Any]:
    value = orig.args[0]
    return [make.cast_like(make.sum(grad), value)]


@implement("full_like", target="gradient")
def full_like_grad(orig: Any, grad: Any) -> list[Any]:
    data, value = orig.args
    return [make.zeros_like(data), make.cast_like(make.sum(grad), value)]


@implement("shape_of", target="gradient")
def shape_of_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.zeros_like(orig.args[0])]


@implement("arange", target="gradient")
def arange_grad(orig: Any, grad: Any) -> list[Any]:
    """out[i] = start + i step: d/dstart = sum(g), d/dstep = sum(g i), stop only decides
    the length."""
    start, stop, step = orig.args
    index = make.divide(make.subtract(orig, start), step)
    return [make.cast_like(make.sum(grad), start), make.zeros_like(stop),
            make.cast_like(make.sum(make.multiply(grad, make.cast_like(index, grad))), step)]


@implement("one_hot", target="gradient")
def one_hot_grad(orig: Any, grad: Any) -> list[Any]:
    indices, on_value, off_value = orig.args
    attrs = orig.attrs
    dtype = dtype_of(orig)
    mask = make.one_hot(indices, builder.const(1, dtype), builder.const(0, dtype),
                        depth=attrs.depth, axis=attrs.axis, dtype=dtype)
    on = make.sum(make.multiply(grad, mask))
    off = make.subtract(make.sum(grad), on)
    return [make.zeros_like(indices), make.cast_like(on, on_value),
            make.cast_like(off, off_value)]


@implement("cumsum", target="gradient")
def cumsum_grad(orig: Any, grad: Any) -> list[Any]:
    """The adjoint summed from the end: reverse, cumsum, reverse (exclusive stays so)."""
    x = orig.args[0]
    attrs = orig.attrs
    g = grad
    axis = 0 if attrs.axis is None else norm_axis(int(attrs.axis), len(shape_of(x)))
    rev = make.reverse(g, axis=axis)
    summed = make.cumsum(rev, axis=axis, exclusive=attrs.exclusive)
    back = make.reverse(summed, axis=axis)
    return [make.cast_like(make.reshape_like(back, x), x)]
