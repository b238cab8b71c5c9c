"""NumPy reference kernels of the deform family: the bilinear samples of every kernel tap
at every output position ("columns", (N, C, kh, kw, oh, ow)), each neighbour outside the
data reading 0, optionally multiplied by the mask, then contracted with the weight per
group. Computed in float32 (float64 for float64 data; float16 widened)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from ..shape_rules import padding_pairs


def geometry(attrs: Any, data_shape: tuple[int, ...], weight_shape: tuple[int, ...]
             ) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int], tuple[int, int]]:
    """(strides, dilation, (pad_top, pad_left), (oh, ow))."""
    s = tuple(int(v) for v in attrs.strides)
    s = s * 2 if len(s) == 1 else s
    d = tuple(int(v) for v in attrs.dilation)
    d = d * 2 if len(d) == 1 else d
    pads = [(int(a), int(b)) for a, b in padding_pairs(attrs.padding, 2)]
    kh, kw = weight_shape[2:]
    out = [(n + pb + pa - (k - 1) * dd - 1) // ss + 1
           for n, k, ss, dd, (pb, pa) in zip(data_shape[2:], (kh, kw), s, d, pads)]
    return (s[0], s[1]), (d[0], d[1]), (pads[0][0], pads[1][0]), (out[0], out[1])


def columns(x: np.ndarray, offset: np.ndarray, mask: np.ndarray | None, kernel: tuple[int, int],
            strides: tuple[int, int], dilation: tuple[int, int], pads: tuple[int, int],
            out: tuple[int, int], dgroups: int) -> np.ndarray:
    n, c, h, w = x.shape
    kh, kw = kernel
    oh, ow = out
    ct = x.dtype.type
    off = offset.reshape(n, dgroups, kh, kw, 2, oh, ow)
    base_y = (np.arange(oh) * strides[0] - pads[0])[None, :, None] + \
        (np.arange(kh) * dilation[0])[:, None, None]                  # (kh, oh, 1)
    base_x = (np.arange(ow) * strides[1] - pads[1])[None, None, :] + \
        (np.arange(kw) * dilation[1])[:, None, None]                  # (kw, 1, ow)
    y = base_y[None, None, :, None].astype(ct) + off[:, :, :, :, 0]   # (n, g, kh, kw, oh, ow)
    xx = base_x[None, None, None].astype(ct) + off[:, :, :, :, 1]
    y0, x0 = np.floor(y), np.floor(xx)
    ly, lx = y - y0, xx - x0
    cpg = c // dgroups
    group = np.arange(c) // cpg
    batch = np.arange(n)[:, None, None, None, None, None]
    chan = np.arange(c)[None, :, None, None, None, None]
    cols = np.zeros((n, c, kh, kw, oh, ow), ct)
    for dy, wy in ((0, ct(1) - ly), (1, ly)):
        for dx, wx in ((0, ct(1) - lx), (1, lx)):
            yy, xc = y0 + dy, x0 + dx
            ok = (yy >= 0) & (yy <= h - 1) & (xc >= 0) & (xc <= w - 1)
            yi = np.clip(np.nan_to_num(yy), 0, h - 1).astype(np.int64)
            xi = np.clip(np.nan_to_num(xc), 0, w - 1).astype(np.int64)
            v = x[batch, chan, yi[:, group], xi[:, group]]            # (n, c, kh, kw, oh, ow)
            cols += np.where(ok[:, group], v, ct(0)) * (wy * wx)[:, group]
    if mask is not None:
        cols = cols * mask.reshape(n, dgroups, kh, kw, oh, ow)[:, group]
    return cols


def deformable_conv2d(inputs: list, attrs: Any, mask: np.ndarray | None) -> np.ndarray:
    data, offset, weight = (np.asarray(v) for v in inputs[:3])
    ct = np.float64 if data.dtype == np.float64 else np.float32
    strides, dilation, pads, out = geometry(attrs, data.shape, weight.shape)
    n, c = data.shape[:2]
    o, ci, kh, kw = weight.shape
    groups = int(attrs.groups)
    result_dtype = attrs.out_dtype or data.dtype
    if 0 in (n, o, *out) or c == 0:
        return np.zeros((n, o, *out), result_dtype)
    cols = columns(data.astype(ct), offset.astype(ct), None if mask is None else mask.astype(ct),
                   (kh, kw), strides, dilation, pads, out, int(attrs.deformable_groups))
    res = np.zeros((n, o, *out), ct)
    opg = o // groups
    for g in range(groups):
        part = cols[:, g * ci:(g + 1) * ci]                           # (n, ci, kh, kw, oh, ow)
        wg = weight[g * opg:(g + 1) * opg].astype(ct)                 # (opg, ci, kh, kw)
        res[:, g * opg:(g + 1) * opg] = np.einsum("ncabij,ocab->noij", part, wg)
    return res.astype(result_dtype)


@implement("nn.deformable_conv2d", float16=IN_FLOAT32)
def deformable_conv2d_kernel(inputs: list, attrs: Any) -> np.ndarray:
    return deformable_conv2d(inputs, attrs, None)


@implement("nn.modulated_deformable_conv2d", float16=IN_FLOAT32)
def modulated_deformable_conv2d_kernel(inputs: list, attrs: Any) -> np.ndarray:
    return deformable_conv2d(inputs, attrs, np.asarray(inputs[3]))
