"""LLVM lowering of nn.contrib_depthwise_conv2d_NCHWc (channel-blocked depthwise 2-D
convolution, channel multiplier 1):

    out[n, cb, h, w, c] = sum over (kh, kw) of
                          in[n, cb, h*s + kh*d, w*s + kw*d, c] * W[cb, 0, kh, kw, 0, c]

The data arrives blocked (NCHW{c}c) and the weight pre-laid out at build time
(OIHW1i{c}o, folded by FoldConstant after AlterOpLayout), so the kernel re-lays out
nothing (the NCHW depthwise kernel, conv_lowering.py, regroups its whole input into
blocks of channels on every call): the output is written in the same blocked layout,
which the next convolution reads as it is. The scheduler (backend/llvm/schedule.py)
makes the block of `c` channels the vector tile (16 float32 are one zmm; a block of 64
four), a row of output pixels (`w`) shares each weight vector (its `_row_block` with
ROW_BLOCK_ELEMENTWISE: up to 8 pixels of 16 channels, 6 of 64, independent accumulator
chains, each weight vector loaded once per tap for all of them), and the leading dims
(n, cb, h) are the parallel loop. Elementwise followers (the folded batch norm's add,
relu, clip) are fused by FuseOps and applied to each row of the result as it is stored.

Padding, without any padded copy: a tap outside the input multiplies a clamped (valid)
input pixel by a zero weight, `select(inside, W, 0)` on the weight vector. Outside rows
depend on the output row only, so the select is one per tap for a whole row block. For
the columns the output row is split: the interior columns [x0, x1], whose windows lie
inside the input's width, are one stage that reads the input in place with no column
test; the border columns (pad / stride of them on the left, a few on the right) are a
small stage with the per-column selects; the output picks one of the two per column.
Measured (one thread, 3x3 + bias + clip, blocks of 16, ms): padding rows per parallel
iteration (kh rows copied per output row, as conv_nchwc_lowering does) 0.267 / 0.255 /
0.256 / 0.095 / 0.097 against 0.200 / 0.169 / 0.162 / 0.061 / 0.096 split, for
32x112x112, 64x112x112 /2, 128x56x56, 128x56x56 /2, 256x28x28 (the NCHW kernel: 0.338
/ 0.309 / 0.303 / 0.155 / 0.152): the row copy's per-pixel index clamps cost more than
the convolution's FMAs.
"""
from __future__ import annotations

from typing import Any

from ..registry import implement
from .lowering_support import _acc, _conv_window, _finish, _out, _product


@implement("nn.contrib_depthwise_conv2d_NCHWc", target="llvm")
def depthwise_conv2d_nchwc(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from .conv_relations import depthwise_nchwc_geometry
    g = depthwise_nchwc_geometry(attrs)
    data, weight = inputs
    shape, dt = _out(out_type)
    strides, dil, pads = _conv_window(g, dt)
    acc = _acc(dt)
    if data.size == 0:
        # no input pixel (a zero batch, or an empty width or height read only through
        # the padding): every tap is padding, so every output is zero; no load at all
        return b.compute(shape, lambda *i: b.const(0, dt), dtype=dt, name="depthwise_nchwc")
    ow = shape[3]
    kw = weight.shape[3]
    w_ = data.shape[3]
    (pl, _), s, d = pads[1], strides[1], dil[1]
    # the interior columns [x0, x1]: their windows lie inside the input's width
    x0 = min(-(-pl // s), ow)
    x1 = min((w_ - 1 + pl - (kw - 1) * d) // s, ow - 1)
    inner = max(0, x1 - x0 + 1)
    if inner == 0:
        x0, x1 = ow, ow - 1
    if inner == ow:
        return _finish(b, _stage(b, data, weight, acc, strides, dil, pads, shape, list(
            range(ow)), "depthwise_nchwc"), dt, "depthwise_nchwc_cast")
    border = list(range(x0)) + list(range(x1 + 1, ow))
    edge = _stage(b, data, weight, acc, strides, dil, pads, shape, border,
                  "depthwise_nchwc_edge")
    if inner == 0:
        def only_edge(n: Any, o: Any, y: Any, x: Any, i: Any) -> Any:
            return b.cast(edge[(n, o, y, x, i)], dt)
        return b.compute(shape, only_edge, dtype=dt, name="depthwise_nchwc_out")
    mid = _stage(b, data, weight, acc, strides, dil, pads, shape, list(range(x0, x1 + 1)),
                 "depthwise_nchwc")
    nedge = len(border)

    def out(n: Any, o: Any, y: Any, x: Any, i: Any) -> Any:
        # both sides of a select are evaluated: every index is clamped into its stage
        at_mid = b.min(b.max(x - x0, 0), inner - 1)
        at_edge = b.select(b.lt(x, x0), x, x - (x1 + 1) + x0)
        at_edge = b.min(b.max(at_edge, 0), nedge - 1)
        outside = b.logical_or(b.lt(x, x0), b.gt(x, x1))
        return b.cast(b.select(outside, edge[(n, o, y, at_edge, i)],
                               mid[(n, o, y, at_mid, i)]), dt)
    return b.compute(shape, out, dtype=dt, name="depthwise_nchwc_out")


def _stage(b: Any, data: Any, weight: Any, acc: str, strides: list, dil: list, pads: list,
           shape: tuple, columns: list, name: str) -> Any:
    """The convolution at the output columns `columns` (a contiguous range, or the
    border columns), (N, CB, OH, len(columns), c) in the accumulator dtype. Reads of
    the input are clamped into it and a tap outside (the padding) multiplies by a zero
    weight: a select on the weight vector, which a row of pixels shares (the row's
    condition depends on the output row only, the column's on the column: only the
    border columns have one)."""
    nb, cb, oh, ow, c = shape
    h_, w_ = data.shape[2], data.shape[3]
    kh, kw = weight.shape[2], weight.shape[3]
    (pt, pb), (pl, pr) = pads
    rkh, rkw = b.reduce_axis(kh, "rkh"), b.reduce_axis(kw, "rkw")
    first, count = columns[0], len(columns)
    contiguous = columns == list(range(first, first + count))
    # the columns that are not contiguous: the first `split` of them, then the rest
    split = next((k for k in range(1, count) if columns[k] != columns[k - 1] + 1), count)

    def column(x: Any) -> Any:
        if contiguous:
            return x + first if first else x
        return b.select(b.lt(x, split), x + columns[0], x - split + columns[split])

    def f(n: Any, o: Any, y: Any, x: Any, i: Any) -> Any:
        conds = []
        yy = (y * strides[0] if strides[0] != 1 else y) + (rkh * dil[0] if dil[0] != 1
                                                          else rkh)
        if pt or pb:
            yy = yy - pt
            conds += [b.ge(yy, 0), b.lt(yy, h_)]
            yy = b.min(b.max(yy, 0), h_ - 1)
        xc = column(x)
        xx = (xc * strides[1] if strides[1] != 1 else xc) + (rkw * dil[1] if dil[1] != 1
                                                             else rkw)
        if (pl or pr) and not _inside(columns, strides[1], dil[1], kw, pl, w_):
            xx = xx - pl
            conds += [b.ge(xx, 0), b.lt(xx, w_)]
            xx = b.min(b.max(xx, 0), w_ - 1)
        elif pl:
            xx = xx - pl
        wgt = weight[(o, 0, rkh, rkw, 0, i)]
        if conds:
            inside = conds[0]
            for cond in conds[1:]:
                inside = b.logical_and(inside, cond)
            wgt = b.select(inside, wgt, b.const(0, weight.dtype))
        return b.reduce_sum(_product(b, data[(n, o, yy, xx, i)], wgt, acc), [rkh, rkw])
    t = b.compute((nb, cb, oh, count, c), f, dtype=acc, name=name)
    return b.materialize(t) if count != ow else t


def _inside(columns: list, s: int, d: int, kw: int, pl: int, w_: int) -> bool:
    """Whether every window of the output `columns` lies inside the input's width."""
    return all(x * s - pl >= 0 and x * s + (kw - 1) * d - pl <= w_ - 1 for x in columns)
