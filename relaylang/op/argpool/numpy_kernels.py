"""NumPy reference kernel of nn.max_pool2d_with_argmax: one pass per window position,
keeping the first strict maximum among the positions inside the data."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import implement
from ..shape_rules import padding_pairs


def geometry(attrs: Any, h: int, w: int) -> tuple[tuple[int, int], tuple[int, int],
                                                   tuple[int, int], list[tuple[int, int]],
                                                   tuple[int, int]]:
    """(pool_size, strides, dilation, [(pad_before, pad_after)] per axis, output size)."""
    k = tuple(int(v) for v in attrs.pool_size)
    k = k * 2 if len(k) == 1 else k
    s = tuple(int(v) for v in attrs.strides)
    s = s * 2 if len(s) == 1 else s
    d = tuple(int(v) for v in attrs.dilation)
    d = d * 2 if len(d) == 1 else d
    pads = [(int(a), int(b)) for a, b in padding_pairs(attrs.padding, 2)]
    out = []
    for n, kk, ss, dd, (pb, pa) in zip((h, w), k, s, d, pads):
        span = n + pb + pa - (kk - 1) * dd - 1
        out.append((span + (ss - 1 if attrs.ceil_mode else 0)) // ss + 1)
    return k, s, d, pads, (out[0], out[1])


@implement("nn.max_pool2d_with_argmax")
def max_pool2d_with_argmax(inputs: list, attrs: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(inputs[0])
    n, c, h, w = x.shape
    k, s, d, pads, (oh, ow) = geometry(attrs, h, w)
    best = np.zeros((n, c, oh, ow), x.dtype)
    index = np.full((n, c, oh, ow), -1, np.int64)
    plane = (np.arange(n)[:, None] * c + np.arange(c)[None, :]).reshape(n, c, 1, 1) * (h * w)
    ys0 = np.arange(oh) * s[0] - pads[0][0]
    xs0 = np.arange(ow) * s[1] - pads[1][0]
    for a in range(k[0]):
        ys = ys0 + a * d[0]
        for b in range(k[1]):
            xs = xs0 + b * d[1]
            inside = ((ys >= 0) & (ys < h))[:, None] & ((xs >= 0) & (xs < w))[None, :]
            if not inside.any():
                continue
            yc, xc = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
            v = x[:, :, yc[:, None], xc[None, :]]
            take = inside & ((index < 0) | (v > best))
            best = np.where(take, v, best)
            flat = (yc[:, None] * w + xc[None, :]) if attrs.storage_order == 0 else \
                (yc[:, None] + xc[None, :] * h)
            index = np.where(take, plane + flat, index)
    return best, index
