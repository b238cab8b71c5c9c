"""NumPy reference kernels of the transform family (registered with `@implement`).

Semantics are those of TVM's topi (include/tvm/topi/transform.h, broadcast.h):
reshape's special values, split by sections or indices, strided_slice's
clamping and negative strides, take's clip/wrap/fast modes, and layout_transform
that zero-pads a split axis the factor does not divide. Each kernel returns the
dtype and shape its relation promises; index arithmetic shared with a relation
is imported from it rather than written twice.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..layouts import parse_layout, primal_sizes, transformed_shape
from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import np_dtype, quietly
from ..numpy_support import implement
from ..shape_rules import ints
from .index_relations import arange_length
from .shape_relations import axis_range, infer_newshape, squeeze_axes, transpose_axes
from .slice_relations import slice_plan


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


# ------------------------------------------------------------ shape changes

@implement("reshape")
def reshape(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return x.reshape(infer_newshape(x.shape, ints(attrs.newshape, "newshape"), attrs.allowzero))


@implement("reshape_like")
def reshape_like(inputs: list, attrs: Any) -> np.ndarray:
    x, like = inputs
    lb, le = axis_range(attrs.lhs_begin, attrs.lhs_end, x.ndim, "lhs")
    rb, re_ = axis_range(attrs.rhs_begin, attrs.rhs_end, like.ndim, "rhs")
    return x.reshape(x.shape[:lb] + like.shape[rb:re_] + x.shape[le:])


@implement("transpose")
def transpose(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return np.asarray(np.transpose(x, transpose_axes(x.ndim, attrs.axes)), order="C")


@implement("expand_dims")
def expand_dims(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    axis = _axis(attrs.axis, x.ndim + 1)
    return x.reshape(x.shape[:axis] + (1,) * attrs.num_newaxis + x.shape[axis:])


@implement("squeeze")
def squeeze(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    drop = set(squeeze_axes(x.shape, attrs.axis))
    return x.reshape(tuple(d for k, d in enumerate(x.shape) if k not in drop))


@implement("layout_transform")
def layout_transform(inputs: list, attrs: Any) -> np.ndarray:
    """Merge each split axis into its primal axis, reorder the primal axes, zero-pad
    where the destination factor does not divide, then split and order as dst."""
    x = inputs[0]
    src = parse_layout(attrs.src_layout)
    dst = parse_layout(attrs.dst_layout)
    names = [a for a, _ in src]
    primal = [a for a in names if a.isupper()]
    order = [i for a in primal for i in (names.index(a), *(
        [names.index(a.lower())] if a.lower() in names else []))]
    sizes = primal_sizes(x.shape, src)
    p = x.transpose(order).reshape([sizes[a] for a in primal])
    dst_primal = [a for a, _ in dst if a.isupper()]
    p = p.transpose([primal.index(a) for a in dst_primal])
    factors = {a.upper(): f for a, f in dst if f is not None}
    padded = [-(-sizes[a] // factors[a]) * factors[a] if a in factors else sizes[a]
              for a in dst_primal]
    widths = [(0, n - sizes[a]) for a, n in zip(dst_primal, padded)]
    if any(after for _, after in widths):   # np.pad copies even when it pads nothing
        p = np.pad(p, widths)
    labels = [lab for a in dst_primal for lab in ((a, a.lower()) if a in factors else (a,))]
    split = [d for a, n in zip(dst_primal, padded)
             for d in ((n // factors[a], factors[a]) if a in factors else (n,))]
    out = p.reshape(split).transpose([labels.index(a) for a, _ in dst])
    assert out.shape == transformed_shape(sizes, dst)
    return np.asarray(out, order="C")


@implement("shape_of")
def shape_of(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    dtype = attrs.dtype or "int64"
    # A scalar's shape_of is typed 0-d by TVM's RankShape; its value is the rank, 0.
    return np.array(x.shape if x.ndim else 0, dtype=dtype)


# ------------------------------------------------------------ join and cut

@implement("concatenate")
def concatenate(inputs: list, attrs: Any) -> np.ndarray:
    return np.concatenate(inputs[0], axis=attrs.axis)


@implement("stack")
def stack(inputs: list, attrs: Any) -> np.ndarray:
    return np.stack(inputs[0], axis=attrs.axis)


@implement("split")
def split(inputs: list, attrs: Any) -> tuple:
    spec = attrs.indices_or_sections
    parts = np.split(inputs[0], spec if isinstance(spec, int) else list(spec), axis=attrs.axis)
    return tuple(np.asarray(p, order="C") for p in parts)


@implement("strided_slice")
def strided_slice(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    index = [slice(None)] * x.ndim
    for axis, b, e, s in slice_plan(x.shape, attrs):
        if s < 0 and b is not None and b < 0:
            # A backward slice starting before index 0 selects nothing (Python would
            # read -1 as the last element).
            index[axis] = slice(0, 0)
        else:
            index[axis] = slice(b, None if e is not None and e < 0 else e, s)
    return np.asarray(x[tuple(index)], order="C")


@implement("slice_like")
def slice_like(inputs: list, attrs: Any) -> np.ndarray:
    x, like = inputs
    axes = range(min(x.ndim, like.ndim)) if attrs.axes is None else \
        [_axis(a, x.ndim) for a in attrs.axes]
    index = [slice(None)] * x.ndim
    for a in axes:
        index[a] = slice(0, like.shape[a])
    return np.asarray(x[tuple(index)], order="C")


# ------------------------------------------------------------ broadcasting

@implement("broadcast_to")
def broadcast_to(inputs: list, attrs: Any) -> np.ndarray:
    return np.array(np.broadcast_to(inputs[0], ints(attrs.shape, "shape")))


@implement("broadcast_to_like")
def broadcast_to_like(inputs: list, attrs: Any) -> np.ndarray:
    return np.array(np.broadcast_to(inputs[0], inputs[1].shape))


@implement("collapse_sum_like", float16=IN_FLOAT32)
def collapse_sum_like(inputs: list, attrs: Any) -> np.ndarray:
    """Sum away the axes along which `like` was broadcast to `data`'s shape."""
    x, like = inputs
    lead = x.ndim - like.ndim
    axes = tuple(range(lead)) + tuple(lead + k for k, d in enumerate(like.shape)
                                      if d == 1 and x.shape[lead + k] != 1)
    return x.sum(axis=axes).reshape(like.shape).astype(like.dtype)


@implement("tile")
def tile(inputs: list, attrs: Any) -> np.ndarray:
    return np.tile(inputs[0], ints(attrs.reps, "reps"))


@implement("repeat")
def repeat(inputs: list, attrs: Any) -> np.ndarray:
    return np.repeat(inputs[0], attrs.repeats, axis=attrs.axis)


@implement("reverse")
def reverse(inputs: list, attrs: Any) -> np.ndarray:
    return np.flip(inputs[0], axis=attrs.axis).copy()


@implement("reverse_sequence")
def reverse_sequence(inputs: list, attrs: Any) -> np.ndarray:
    """Reverse the first seq_lengths[b] entries along seq_axis of each batch entry b
    (a length above the axis size reverses it all; one of 1 or less changes nothing)."""
    x, lengths = inputs
    seq, batch = _axis(attrs.seq_axis, x.ndim), _axis(attrs.batch_axis, x.ndim)
    t = np.arange(x.shape[seq])
    n = np.minimum(lengths.astype(np.int64), x.shape[seq])[:, None]
    idx = np.where(t[None, :] < n, n - 1 - t[None, :], t[None, :])     # (batch, seq)
    if batch > seq:
        idx = idx.T
    shape = [1] * x.ndim
    shape[batch], shape[seq] = x.shape[batch], x.shape[seq]
    idx = np.broadcast_to(idx.reshape(shape), x.shape)
    return np.take_along_axis(x, idx, axis=seq)


# ------------------------------------------------------------ indexing

def _take_indices(idx: np.ndarray, n: int, mode: str) -> np.ndarray:
    if mode in ("clip", "wrap"):
        idx = idx.astype(np.int64)      # int8 indices into an axis longer than 127
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    if mode == "wrap":
        return np.mod(idx, n)
    return idx          # "fast": no bounds handling; out-of-range raises IndexError here


@implement("take")
def take(inputs: list, attrs: Any) -> np.ndarray:
    data, idx = inputs
    if attrs.axis is None:
        return np.take(data.reshape(-1), _take_indices(idx, data.size, attrs.mode))
    axis = _axis(attrs.axis, data.ndim)
    batch = attrs.batch_dims + idx.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    idx = _take_indices(idx, data.shape[axis], attrs.mode)
    if batch == 0:
        return np.take(data, idx, axis=axis)
    nb = math.prod(data.shape[:batch])
    pre, post = math.prod(data.shape[batch:axis]), math.prod(data.shape[axis + 1:])
    d = data.reshape(nb, pre, data.shape[axis], post)
    i = idx.reshape(nb, math.prod(idx.shape[batch:]))
    out = d[np.arange(nb)[:, None, None], np.arange(pre)[None, :, None], i[:, None, :]]
    return out.reshape(data.shape[:axis] + idx.shape[batch:] + data.shape[axis + 1:])


@implement("gather")
def gather(inputs: list, attrs: Any) -> np.ndarray:
    """out[i, j, k] = data[i, indices[i, j, k], k] (axis 1); indices may be smaller than
    data on the other axes."""
    data, idx = inputs
    grid = list(np.indices(idx.shape, sparse=True))
    grid[_axis(attrs.axis, data.ndim)] = idx
    return data[tuple(grid)]


@implement("gather_nd")
def gather_nd(inputs: list, attrs: Any) -> np.ndarray:
    data, idx = inputs
    b = attrs.batch_dims
    m = idx.shape[0]
    nb, batch_shape = math.prod(data.shape[:b]), data.shape[:b]
    rest = idx.shape[1 + b:]
    d = data.reshape((nb,) + data.shape[b:])
    i = idx.reshape(m, nb, math.prod(rest))
    out = d[(np.arange(nb)[:, None], *i)]
    return out.reshape(batch_shape + rest + data.shape[b + m:])


@implement("one_hot")
def one_hot(inputs: list, attrs: Any) -> np.ndarray:
    idx, on, off = inputs
    axis = idx.ndim if attrs.axis == -1 else _axis(attrs.axis, idx.ndim + 1)
    hot = np.expand_dims(idx, axis) == np.arange(attrs.depth).reshape(
        (attrs.depth,) + (1,) * (idx.ndim - axis))
    return np.where(hot, on, off).astype(attrs.dtype or on.dtype)


# ------------------------------------------------------------ creation

@implement("zeros")
def zeros(inputs: list, attrs: Any) -> np.ndarray:
    return np.zeros(ints(attrs.shape, "shape"), dtype=attrs.dtype or "float32")


@implement("ones")
def ones(inputs: list, attrs: Any) -> np.ndarray:
    return np.ones(ints(attrs.shape, "shape"), dtype=attrs.dtype or "float32")


@implement("full")
def full(inputs: list, attrs: Any) -> np.ndarray:
    fill = inputs[0]
    return np.full(ints(attrs.shape, "shape"), fill, dtype=attrs.dtype or fill.dtype)


@implement("full_like")
def full_like(inputs: list, attrs: Any) -> np.ndarray:
    data, fill = inputs
    return np.full(data.shape, fill, dtype=data.dtype)


@implement("arange")
def arange(inputs: list, attrs: Any) -> np.ndarray:
    """start + i * step for i < ceil((stop - start) / step), as topi computes it."""
    start, stop, step = (float(v) if v.dtype.kind == "f" else int(v) for v in inputs)
    n = arange_length(start, stop, step)
    dtype = attrs.dtype or inputs[0].dtype
    return (np.asarray(start, dtype) + np.arange(n).astype(dtype) * np.asarray(step, dtype)) \
        .astype(dtype)


# ------------------------------------------------------------ scans

def _scan(accumulate: Any, identity: int, on_bool: Any) -> Any:
    """cumsum/cumprod as topi's scanop: each element cast to `dtype` (default: the input's),
    accumulated in it along `axis` (the flattened input when None); with `exclusive`, the
    result shifted by one along the axis behind the identity. Integers wrap; bool is
    TVM's 1-bit integer (`on_bool` combines 0/1 values: the sum is the parity)."""
    def kernel(inputs: list, attrs: Any) -> np.ndarray:
        x = inputs[0]
        dtype = np_dtype(attrs.dtype) if attrs.dtype else x.dtype
        axis = attrs.axis
        if axis is None:
            x, axis = x.reshape(-1), 0
        if dtype.kind == "b":
            out = on_bool(accumulate(x.astype(np.uint8), axis=axis, dtype=np.uint8))
        else:
            out = quietly(lambda v: accumulate(v.astype(dtype), axis=axis, dtype=dtype), x)
        if attrs.exclusive and out.shape[axis] > 0:
            shifted = np.empty_like(out)
            head = [slice(None)] * out.ndim
            head[axis] = slice(0, 1)
            shifted[tuple(head)] = identity
            rest, before = list(head), list(head)
            rest[axis], before[axis] = slice(1, None), slice(0, -1)
            shifted[tuple(rest)] = out[tuple(before)]
            out = shifted
        return np.asarray(out, dtype=dtype)
    return kernel


implement("cumsum")(_scan(np.cumsum, 0, lambda s: (s & 1).astype(bool)))
implement("cumprod")(_scan(np.cumprod, 1, lambda p: p.astype(bool)))


@implement("sparse_to_dense")
def sparse_to_dense(inputs: list, attrs: Any) -> np.ndarray:
    """topi.sparse_to_dense: out[i] is the value of the last sparse index equal to i (its
    leading coordinates), else default_value; an index outside the shape matches nothing."""
    indices, values, default = (np.asarray(v) for v in inputs)
    shape = tuple(int(d) for d in attrs.output_shape)
    out = np.full(shape, default, dtype=values.dtype)
    rows = indices.reshape(-1, 1) if indices.ndim < 2 else indices
    vals = np.broadcast_to(values, (rows.shape[0],))
    for row, v in zip(rows.tolist(), vals):
        if all(0 <= c < shape[k] for k, c in enumerate(row)):
            out[tuple(row)] = v
    return out
