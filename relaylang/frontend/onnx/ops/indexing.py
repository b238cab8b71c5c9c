"""Indexing and search: TopK, ScatterElements (and opset 9's Scatter), ScatterND,
TensorScatter, Einsum, Unique, NonZero and Compress.

- TopK: k is an attribute until opset 10, then input 1 (it must be known at import);
  opset 11 adds `largest` and `sorted`. Relaylang's topk is stable, so equal values come
  lower index first, as ONNX asks; `sorted=0` still returns them in order (ONNX leaves
  that order unspecified). Indices are int64.
- ScatterElements/Scatter: scatter_elements; reduction "none" is relaylang's "update"
  (opset 16 adds add/mul, 18 max/min).
- ScatterND: ONNX's indices (Y..., k) are relaylang's (k, Y...): a transpose moves the
  last axis first; reductions as ScatterElements.
- TensorScatter (opset 24, the KV-cache update): present[..., s, ...] is
  update[..., s - w, ...] where 0 <= s - w < sequence_length (w the batch's write index;
  with mode "circular" s - w is taken modulo the cache length), past_cache elsewhere:
  a gather along the axis and a where, with static shapes.
- Einsum: relaylang's einsum on the tuple of inputs.
- Unique: relaylang's unique (axis or flattened, sorted or in first-occurrence order);
  the four ONNX outputs (Y, indices, inverse_indices, counts) are its fields 0, 1, 2 and
  4, the index outputs converted to int64. Y and the index outputs have a `?` length.
- NonZero: argwhere transposed to (rank, n), int64 (a scalar counts as one element).
- Compress: take along the axis (or of the flattened input) at the positions where the
  condition is true, argwhere of the condition (a constant condition folds at import).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....ir.expr import Tuple, TupleGetItem
from ....op import make as op
from ..registry import converter


def _axis(node: Any, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for an input of rank {rank}")
    return axis + rank if axis < 0 else axis


def _rank(ctx: Any, x: Any) -> int:
    return len(ctx.shape(x))


# ---------------------------------------------------------------- TopK

def _topk(ctx: Any, node: Any, k: int) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    if not shape:
        raise node.error("the input must have rank 1 or more")
    axis = _axis(node, int(node.attr("axis", -1)), len(shape))
    n = shape[axis]
    if k < 0:
        raise node.error(f"k must be non-negative, got {k}")
    if isinstance(n, int) and k > n:
        raise node.error(f"k = {k} is larger than axis {axis} ({n} elements)")
    largest = bool(int(node.attr("largest", 1)))
    if k == 0:
        zero = tuple(0 if d == axis else s for d, s in enumerate(shape))
        if not all(isinstance(s, int) for s in zero):
            raise node.error("k = 0 on an input with unknown dimensions")
        return [ctx.const(np.zeros(zero, ctx.dtype(x))),
                ctx.const(np.zeros(zero, "int64"))]
    out = op.topk(x, k=k, axis=axis, ret_type="both", is_ascend=not largest, dtype="int64")
    return [TupleGetItem(out, 0), TupleGetItem(out, 1)]


@converter("TopK", since=1)
def topk_1(ctx: Any, node: Any) -> Any:
    return _topk(ctx, node, int(node.attr("k")))


@converter("TopK", since=10)
def topk_10(ctx: Any, node: Any) -> Any:
    value = ctx.constant(node.inputs[1], node, "k")
    if value.size != 1:
        raise node.error(f"k must hold one value, got shape {value.shape}")
    return _topk(ctx, node, int(value.reshape(-1)[0]))


# ---------------------------------------------------------------- scatter

def _reduction(node: Any) -> str:
    reduction = str(node.attr("reduction", "none"))
    allowed = {"none": "update", "add": "add", "mul": "mul"}
    if node.opset >= 18:
        allowed.update(max="max", min="min")
    if reduction not in allowed:
        raise node.error(f"reduction {reduction!r} is not one of {', '.join(allowed)}")
    return allowed[reduction]


def _scatter_elements(ctx: Any, node: Any) -> Any:
    data, idx, upd = node.inputs[0], node.inputs[1], node.inputs[2]
    rank = _rank(ctx, data)
    if _rank(ctx, idx) != rank:
        raise node.error("data and indices must have one rank")
    axis = _axis(node, int(node.attr("axis", 0)), rank)
    return op.scatter_elements(data, idx, upd, axis=axis, reduction=_reduction(node))


converter("Scatter", since=9)(_scatter_elements)
converter("ScatterElements", since=11)(_scatter_elements)


@converter("ScatterND", since=11)
def scatter_nd(ctx: Any, node: Any) -> Any:
    data, idx, upd = node.inputs[0], node.inputs[1], node.inputs[2]
    ishape = ctx.shape(idx)
    if not ishape:
        raise node.error("indices must have rank 1 or more")
    if not isinstance(ishape[-1], int):
        raise node.error("the last dimension of indices must be known")
    r = len(ishape)
    moved = idx if r == 1 else op.transpose(idx, axes=(r - 1,) + tuple(range(r - 1)))
    return op.scatter_nd(data, moved, upd, mode=_reduction(node))


@converter("TensorScatter", since=24)
def tensor_scatter(ctx: Any, node: Any) -> Any:
    past, upd = node.inputs[0], node.inputs[1]
    writes = node.input(2)
    shape, ushape = ctx.static_shape(past), ctx.static_shape(upd)
    if shape is None or ushape is None:
        raise node.error("past_cache and update must have static shapes")
    rank = len(shape)
    if rank < 2 or len(ushape) != rank:
        raise node.error("past_cache and update must have one rank, at least 2")
    axis = _axis(node, int(node.attr("axis", -2)), rank)
    if axis == 0:
        raise node.error("axis cannot be 0 (the batch axis)")
    mode = str(node.attr("mode", "linear"))
    if mode not in ("linear", "circular"):
        raise node.error(f"mode must be 'linear' or 'circular', got {mode!r}")
    length, seq = shape[axis], ushape[axis]
    if any(u != s for d, (u, s) in enumerate(zip(ushape, shape)) if d != axis) or seq > length:
        raise node.error(f"update {list(ushape)} must have the shape of past_cache "
                         f"{list(shape)} except along axis {axis} (at most {length})")
    if ctx.dtype(past) != ctx.dtype(upd):
        raise node.error("past_cache and update must have one dtype")
    if seq == 0:
        return past
    positions = np.arange(length, dtype="int64").reshape(
        tuple(length if d == axis else 1 for d in range(rank)))
    j: Any = ctx.const(positions)
    if writes is not None:
        w = op.cast(writes, dtype="int64")
        w = op.reshape(w, newshape=(shape[0],) + (1,) * (rank - 1))
        j = op.subtract(j, w)
    if mode == "circular":
        j = op.floor_mod(j, ctx.const(np.array(length, "int64")))
    valid = op.logical_and(op.greater_equal(j, ctx.const(np.array(0, "int64"))),
                           op.less(j, ctx.const(np.array(seq, "int64"))))
    picked = op.gather(upd, op.broadcast_to(op.clip(j, a_min=0, a_max=seq - 1),
                                            shape=tuple(shape)), axis=axis)
    return op.where(valid, picked, past)


# ---------------------------------------------------------------- einsum

@converter("Einsum", since=12)
def einsum(ctx: Any, node: Any) -> Any:
    equation = node.attr("equation")
    if isinstance(equation, bytes):
        equation = equation.decode()
    return op.einsum(Tuple(tuple(node.inputs)), equation=str(equation))


# ---------------------------------------------------------------- unique / nonzero

@converter("Unique", since=11)
def unique(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    axis = node.attr("axis", None)
    if axis is not None:
        axis = _axis(node, int(axis), _rank(ctx, x))
    out = op.unique(x, sorted=bool(int(node.attr("sorted", 1))), return_counts=True,
                    axis=axis)
    as64 = [op.cast(TupleGetItem(out, k), dtype="int64") for k in (1, 2, 4)]
    return [TupleGetItem(out, 0)] + as64


@converter("NonZero", since=9)
def nonzero(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if not ctx.shape(x):
        x = op.reshape(x, newshape=(1,))
    return op.transpose(op.cast(op.argwhere(x), dtype="int64"), axes=(1, 0))


@converter("Compress", since=9)
def compress(ctx: Any, node: Any) -> Any:
    x, cond = node.inputs[0], node.inputs[1]
    if len(ctx.shape(cond)) != 1:
        raise node.error("condition must be a 1-D tensor")
    axis = node.attr("axis", None)
    if axis is None:
        x = op.reshape(x, newshape=(-1,))
        axis = 0
    else:
        axis = _axis(node, int(axis), _rank(ctx, x))
    if ctx.dtype(cond) != "bool":
        cond = op.cast(cond, dtype="bool")
    positions = op.reshape(op.argwhere(cond), newshape=(-1,))
    return op.take(x, positions, axis=axis, mode="fast")
