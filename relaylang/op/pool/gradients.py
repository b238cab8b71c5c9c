"""Gradient rules of the pool family (TVM's nn.max_pool2d / nn.avg_pool2d /
nn.global_avg_pool2d gradients, python/tvm/relay/op/_tensor_grad.py), as the nn family's
(`op/nn/gradients.py` says the contract), written with existing ops instead of TVM's
nn.max_pool2d_grad / nn.avg_pool2d_grad helpers:

- every layout is first transposed and reshaped to (1, P, spatial..): the pooled axes
  last, every other axis (N, C, a channel block) folded into P channels;
- average pools: the adjoint divided by each window's count (a constant, from the
  kernel's own `window_counts`) and scattered back through its window by a depthwise
  transposed convolution with a kernel of ones (strides, dilation, padding, ceil_mode
  kept; the part that lands in padding is cut);
- max pools 1-d and 2-d: nn.max_pool2d_with_argmax finds each window's first maximum (as
  the max pool's kernel), and scatter_elements adds the adjoint there;
- max pool 3-d, adaptive and global pools: a window membership mask (a constant) of every
  (output, input) pair, compared with the maximum (max: the adjoint shared among equal
  maxima) or weighted by 1 / window length (avg), summed over the outputs.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...ir import builder
from ...ir.expr import Expr
from .. import make
from ..nn.gradients import GradientNotSupported, dtype_of, inverse_perm, shape_of
from ..registry import implement
from .relations import pool_geometry, pooled_axes


class _Canon:
    """x's layout as (1, P, spatial..) and back."""

    def __init__(self, x: Expr, axes: list[int]):
        self.shape = shape_of(x)
        self.axes = list(axes)
        self.others = [a for a in range(len(self.shape)) if a not in self.axes]
        self.perm = self.others + self.axes
        self.p = math.prod(self.shape[a] for a in self.others)

    def to(self, e: Expr, spatial: tuple[int, ...]) -> Expr:
        moved = e if self.perm == list(range(len(self.perm))) else \
            make.transpose(e, axes=tuple(self.perm))
        return make.reshape(moved, newshape=(1, self.p) + tuple(spatial))

    def back(self, e: Expr) -> Expr:
        dims = tuple(self.shape[a] for a in self.others) + tuple(self.shape[a]
                                                                 for a in self.axes)
        e = make.reshape(e, newshape=dims)
        if self.perm == list(range(len(self.perm))):
            return e
        return make.transpose(e, axes=tuple(inverse_perm(self.perm)))


def _spatial(shape: tuple[int, ...], axes: list[int]) -> tuple[int, ...]:
    return tuple(shape[a] for a in axes)


# ------------------------------------------------------------------ average pools


def avg_pool_grad(nd: int) -> Any:
    def rule(orig: Any, grad: Any) -> list[Any]:
        from .numpy_kernels import window_counts
        x = orig.args[0]
        attrs = orig.attrs
        g = pool_geometry(attrs, nd)
        k = [int(v) for v in g.pool_size]
        s = [int(v) for v in g.strides]
        d = [int(v) for v in g.dilation]
        pads = [(int(b), int(a)) for b, a in g.pads]
        c = _Canon(x, g.axes)
        in_sp = _spatial(c.shape, g.axes)
        out_sp = _spatial(shape_of(orig), g.axes)
        dtype = dtype_of(x)
        count = np.ones((), np.int64)
        for j in range(nd):
            cj = window_counts(in_sp[j], out_sp[j], k[j], s[j], d[j], pads[j],
                               attrs.count_include_pad)
            count = np.multiply.outer(count, cj) if count.ndim else cj
        scale = builder.const((1.0 / np.maximum(count, 1)).astype(dtype), dtype)
        gc = make.multiply(c.to(grad, out_sp), scale)
        before, after, extra = [], [], []
        for j in range(nd):
            made = s[j] * (out_sp[j] - 1) + d[j] * (k[j] - 1) + 1 - pads[j][0]
            need = made - in_sp[j]
            if need >= 0:
                after.append(need)
                extra.append(0)
            else:
                after.append(0)
                extra.append(-need)
                if -need >= s[j]:
                    raise GradientNotSupported(f"avg_pool{nd}d: windows miss {-need} "
                                               "trailing input positions")
            before.append(pads[j][0])
        ones = make.ones(shape=(c.p, 1) + tuple(k), dtype=dtype)
        sp = "DHW"[3 - nd:]
        conv_t = getattr(make.nn, f"conv{nd}d_transpose")
        dx = conv_t(gc, ones, strides=tuple(s), padding=tuple(before) + tuple(after),
                    dilation=tuple(d), groups=c.p, output_padding=tuple(extra),
                    data_layout="NC" + sp, kernel_layout="IO" + sp, out_dtype=dtype)
        return [c.back(dx)]
    rule.__name__ = rule.__qualname__ = f"avg_pool{nd}d_grad"
    return rule


for _nd in (1, 2, 3):
    implement(f"nn.avg_pool{_nd}d", target="gradient")(avg_pool_grad(_nd))


# ------------------------------------------------------------------ max pools 1-d, 2-d


def max_pool_grad(nd: int) -> Any:
    def rule(orig: Any, grad: Any) -> list[Any]:
        x = orig.args[0]
        attrs = orig.attrs
        g = pool_geometry(attrs, nd)
        c = _Canon(x, g.axes)
        in_sp = _spatial(c.shape, g.axes)
        out_sp = _spatial(shape_of(orig), g.axes)
        k = tuple(int(v) for v in g.pool_size)
        s = tuple(int(v) for v in g.strides)
        d = tuple(int(v) for v in g.dilation)
        pads = [(int(b), int(a)) for b, a in g.pads]
        if nd == 1:             # as a 2-d pool over (1, W)
            in_sp, out_sp, k, s, d = (1,) + in_sp, (1,) + out_sp, (1,) + k, (1,) + s, (1,) + d
            pads = [(0, 0)] + pads
        xc = c.to(x, in_sp)
        pooled = make.nn.max_pool2d_with_argmax(
            xc, pool_size=k, strides=s, dilation=d,
            padding=tuple(b for b, _ in pads) + tuple(a for _, a in pads),
            ceil_mode=attrs.ceil_mode, layout="NCHW")
        index = make.reshape(builder.TupleGetItem(pooled, 1), newshape=(-1,))
        gflat = make.reshape(c.to(grad, out_sp), newshape=(-1,))
        inside = make.greater_equal(index, builder.const(0, "int64"))
        gflat = make.where(inside, gflat, make.zeros_like(gflat))
        index = make.maximum(index, builder.const(0, "int64"))
        size = c.p * math.prod(in_sp)
        flat = make.scatter_elements(make.zeros(shape=(size,), dtype=dtype_of(x)), index,
                                     gflat, axis=0, reduction="add")
        return [c.back(flat)]
    rule.__name__ = rule.__qualname__ = f"max_pool{nd}d_grad"
    return rule


for _nd in (1, 2):
    implement(f"nn.max_pool{_nd}d", target="gradient")(max_pool_grad(_nd))


# ------------------------------------------------------------------ window masks


def _membership(windows: list[tuple[list[tuple[int, ...]], int]]) -> np.ndarray:
    """(out.., in..) 0/1: whether an input position lies in an output position's window,
    from each axis's (window positions per output, input length)."""
    per_axis = []
    for axis_windows, n in windows:
        m = np.zeros((len(axis_windows), n))
        for o, positions in enumerate(axis_windows):
            for p in positions:
                if 0 <= p < n:
                    m[o, p] = 1.0
        per_axis.append(m)
    nd = len(per_axis)
    total = np.ones(())
    for j, m in enumerate(per_axis):
        total = np.multiply.outer(total, m)          # (o0, i0, o1, i1, ..)
    order = [2 * j for j in range(nd)] + [2 * j + 1 for j in range(nd)]
    return total.transpose(order) if nd else total


def _mask_grad(x: Expr, y: Expr, grad: Expr, axes: list[int], member: np.ndarray,
               kind: str) -> Expr:
    """The gradient through windows given by `member` (out.., in..): max (the adjoint to
    the elements equal to their window's maximum, shared among ties) or avg (each window
    weighted by 1 / its length)."""
    c = _Canon(x, axes)
    nd = len(axes)
    in_sp = _spatial(c.shape, axes)
    out_sp = tuple(member.shape[:nd])
    dtype = dtype_of(x)
    gc = make.reshape(c.to(grad, out_sp), newshape=(1, c.p) + out_sp + (1,) * nd)
    mem = builder.const(member.reshape((1, 1) + member.shape).astype(dtype), dtype)
    in_axes = tuple(range(2 + nd, 2 + 2 * nd))
    out_axes = tuple(range(2, 2 + nd))
    if kind == "avg":
        length = member.sum(axis=tuple(range(nd, 2 * nd)), keepdims=True)
        weights = builder.const((member / np.maximum(length, 1))
                                .reshape((1, 1) + member.shape).astype(dtype), dtype)
        dx = make.sum(make.multiply(gc, weights), axis=out_axes)
    else:
        xe = make.reshape(c.to(x, in_sp), newshape=(1, c.p) + (1,) * nd + in_sp)
        ye = make.reshape(c.to(y, out_sp), newshape=(1, c.p) + out_sp + (1,) * nd)
        hit = make.multiply(make.cast(make.equal(xe, ye), dtype=dtype), mem)
        count = make.maximum(make.sum(hit, axis=in_axes, keepdims=True),
                             builder.const(1, dtype))
        dx = make.sum(make.multiply(hit, make.divide(gc, count)), axis=out_axes)
    return c.back(dx)


def _adaptive_windows(n: int, out: int) -> list[tuple[int, ...]]:
    return [tuple(range((i * n) // out, -((-(i + 1) * n) // out))) for i in range(out)]


def adaptive_grad(nd: int, kind: str, global_pool: bool = False) -> Any:
    def rule(orig: Any, grad: Any) -> list[Any]:
        x = orig.args[0]
        axes = pooled_axes(orig.attrs.layout, nd)
        in_sp = _spatial(shape_of(x), axes)
        out_sp = _spatial(shape_of(orig), axes)
        member = _membership([(_adaptive_windows(n, o), n) for n, o in zip(in_sp, out_sp)])
        return [_mask_grad(x, orig, grad, axes, member, kind)]
    rule.__name__ = rule.__qualname__ = (f"global_{kind}_pool{nd}d_grad" if global_pool
                                         else f"adaptive_{kind}_pool{nd}d_grad")
    return rule


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        implement(f"nn.adaptive_{_kind}_pool{_nd}d", target="gradient")(
            adaptive_grad(_nd, _kind))


@implement("nn.global_avg_pool2d", target="gradient")
def global_avg_pool2d_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    axes = pooled_axes(orig.attrs.layout, 2)
    n = math.prod(_spatial(shape_of(x), axes))
    scaled = make.divide(grad, builder.const(float(n), dtype_of(x)))
    return [make.broadcast_to_like(scaled, x)]


@implement("nn.global_max_pool2d", target="gradient")
def global_max_pool2d_grad(orig: Any, grad: Any) -> list[Any]:
    """The adjoint to the elements equal to the maximum, shared among ties."""
    x = orig.args[0]
    axes = tuple(pooled_axes(orig.attrs.layout, 2))
    hit = make.cast_like(make.equal(x, orig), x)
    count = make.sum(hit, axis=axes, keepdims=True)
    return [make.multiply(hit, make.divide(grad, count))]


def max_pool3d_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    attrs = orig.attrs
    g = pool_geometry(attrs, 3)
    in_sp = _spatial(shape_of(x), g.axes)
    out_sp = _spatial(shape_of(orig), g.axes)
    windows = []
    for j in range(3):
        k, s, d, pb = int(g.pool_size[j]), int(g.strides[j]), int(g.dilation[j]), int(g.pads[j][0])
        windows.append(([tuple(o * s - pb + t * d for t in range(k)) for o in range(out_sp[j])],
                        in_sp[j]))
    return [_mask_grad(x, orig, grad, g.axes, _membership(windows), "max")]


implement("nn.max_pool3d", target="gradient")(max_pool3d_grad)
