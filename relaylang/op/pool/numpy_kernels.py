"""NumPy reference kernels of the pool family (registered with `@implement`).

max/avg pools follow topi's pool_impl_nd (include/tvm/topi/nn/pooling.h): the
input is padded (max: with the dtype's lowest value; avg: with zeros), and
under ceil_mode the tail gets stride - 1 more; a window's maximum or sum is
folded from one strided slice per offset in the window (`window_reduce`). An
average divides by the window positions inside the padded input
(count_include_pad, not counting the ceil_mode extra) or inside the data
itself, at least 1; integer averages truncate, as TVM's div. Adaptive pools
take window [floor(i * in / out), ceil((i + 1) * in / out)) per axis,
separably, each axis one gather. Float16 pools compute in float32 and round once
(numpy_support.float16_in_float32): max pools exactly, averages with a float32 sum.
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from .relations import adaptive_output_size, pool_geometry, pooled_axes

Kernel = Callable[[list, Any], Any]


def lowest(dtype: np.dtype) -> Any:
    """tvm::min_value: the lowest finite value of the dtype."""
    if dtype.kind == "f":
        return np.finfo(dtype).min
    if dtype.kind in "iu":
        return np.iinfo(dtype).min
    return False


def _accumulator(dtype: np.dtype) -> np.dtype:
    return np.dtype(np.int64) if dtype.kind in "iub" else dtype


def divide(total: np.ndarray, count: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """TVM's div: true division for floats, truncation toward zero for integers."""
    if dtype.kind in "iub":
        return (np.sign(total) * (np.abs(total) // count)).astype(dtype)
    return (total / count).astype(dtype)


def window_counts(size: int, out: int, k: int, s: int, d: int, pads: tuple[int, int],
                  include_pad: bool) -> np.ndarray:
    """How many of each output's window positions count for its average."""
    pos = (np.arange(out) * s - pads[0])[:, None] + np.arange(k)[None, :] * d
    lo, hi = (-pads[0], size + pads[1]) if include_pad else (0, size)
    return ((pos >= lo) & (pos < hi)).sum(axis=1)


def window_reduce(v: np.ndarray, nd: int, pool_size: tuple, strides: tuple,
                  dilation: tuple, kind: str) -> np.ndarray:
    """Max (kind "max") or sum over every pooling window of the last `nd` axes of the
    padded `v`: one strided slice per offset in the window, folded in place. A reduction
    over a `sliding_window_view` is many times slower (ResNet-50's 3x3 max pool: 20 ms
    against 1 ms); a window of many offsets still uses it."""
    spans = [(k - 1) * d + 1 for k, d in zip(pool_size, dilation)]
    outs = [(p - w) // s + 1 for p, w, s in zip(v.shape[v.ndim - nd:], spans, strides)]
    if math.prod(pool_size) > 64 or min(outs) <= 0:
        w = sliding_window_view(v, spans, axis=tuple(range(-nd, 0)))
        w = w[(Ellipsis,) + tuple(slice(None, None, s) for s in strides)
              + tuple(slice(None, None, d) for d in dilation)]
        window_axes = tuple(range(-nd, 0))
        return w.max(axis=window_axes) if kind == "max" else w.sum(axis=window_axes)
    out: np.ndarray | None = None
    for offset in itertools.product(*(range(k) for k in pool_size)):
        piece = v[(Ellipsis,) + tuple(slice(o * d, o * d + (n - 1) * s + 1, s)
                                      for o, d, n, s in zip(offset, dilation, outs, strides))]
        if out is None:
            out = piece.copy()
        elif kind == "max":
            np.maximum(out, piece, out=out)
        else:
            np.add(out, piece, out=out)
    assert out is not None
    return out


def pool_kernel(nd: int, kind: str) -> Kernel:
    def kernel(inputs: list, attrs: Any) -> np.ndarray:
        x = inputs[0]
        g = pool_geometry(attrs, nd)
        tail = list(range(-nd, 0))
        v = np.moveaxis(x, g.axes, tail)
        extra = [s - 1 if attrs.ceil_mode else 0 for s in g.strides]
        widths = [(0, 0)] * (x.ndim - nd) + [(b, a + e) for (b, a), e in zip(g.pads, extra)]
        acc = x.dtype if kind == "max" else _accumulator(x.dtype)
        fill = lowest(x.dtype) if kind == "max" else 0
        v = v.astype(acc, copy=False)
        if any(b or a for b, a in widths):
            v = np.pad(v, widths, constant_values=fill)
        reduced = window_reduce(v, nd, g.pool_size, g.strides, g.dilation, kind)
        if kind == "max":
            return np.asarray(np.moveaxis(reduced, tail, g.axes), order="C")
        total = reduced
        count = np.ones((), dtype=np.int64)
        for j in range(nd):
            c = window_counts(x.shape[g.axes[j]], total.shape[x.ndim - nd + j],
                              g.pool_size[j], g.strides[j], g.dilation[j], g.pads[j],
                              attrs.count_include_pad)
            count = count[..., None] * c if count.ndim else c
        out = divide(total, np.maximum(count, 1), x.dtype)
        return np.asarray(np.moveaxis(out, tail, g.axes), order="C")
    kernel.__name__ = kernel.__qualname__ = f"{kind}_pool{nd}d"
    return kernel


def _adaptive_axis(v: np.ndarray, axis: int, out: int, kind: str) -> tuple[np.ndarray, np.ndarray]:
    """Reduce `axis` of v to `out` adaptive windows: (max or sum, window lengths)."""
    n = v.shape[axis]
    i = np.arange(out)
    start, end = (i * n) // out, -((-(i + 1) * n) // out)
    length = end - start
    idx = start[:, None] + np.arange(length.max())[None, :]
    valid = idx < end[:, None]
    picked = np.take(v, np.minimum(idx, end[:, None] - 1), axis=axis)   # (..., out, L, ...)
    shape = [1] * picked.ndim
    shape[axis], shape[axis + 1] = out, valid.shape[1]
    if kind == "max":
        return picked.max(axis=axis + 1), length
    return np.where(valid.reshape(shape), picked, 0).sum(axis=axis + 1), length


def adaptive_kernel(nd: int, kind: str, global_pool: bool = False) -> Kernel:
    def kernel(inputs: list, attrs: Any) -> np.ndarray:
        x = inputs[0]
        axes = pooled_axes(attrs.layout, nd)
        sizes = [1] * nd if global_pool else adaptive_output_size(
            attrs, nd, [x.shape[a] for a in axes])
        v = x.astype(_accumulator(x.dtype), copy=False)
        count = 1
        for axis, out in zip(axes, sizes):
            v, length = _adaptive_axis(v, axis, out, kind)
            shape = [1] * x.ndim
            shape[axis] = out
            count = count * length.reshape(shape)
        if kind == "max":
            return np.asarray(v.astype(x.dtype), order="C")
        return divide(v, np.asarray(count), x.dtype)
    kernel.__name__ = kernel.__qualname__ = f"adaptive_{kind}_pool{nd}d"
    return kernel


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        implement(f"nn.{_kind}_pool{_nd}d", float16=IN_FLOAT32)(pool_kernel(_nd, _kind))
        implement(f"nn.adaptive_{_kind}_pool{_nd}d", float16=IN_FLOAT32)(
            adaptive_kernel(_nd, _kind))
implement("nn.global_max_pool2d", float16=IN_FLOAT32)(
    adaptive_kernel(2, "max", global_pool=True))
implement("nn.global_avg_pool2d", float16=IN_FLOAT32)(
    adaptive_kernel(2, "avg", global_pool=True))
