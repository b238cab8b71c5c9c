"""NumPy reference kernels of the convolutions (nn.conv1d/2d/3d and transposes),
registered with `@implement` when `numpy_kernels.py` imports this module.

Vectorised im2col: the padded input is viewed as sliding windows
(`sliding_window_view`, no copy), strided and dilated by slicing the view, laid
out as columns (N, groups, C / groups * K, output positions) — one copy; for a
1x1 kernel the strided input already is the columns — and multiplied by the
weight, (groups, O / groups, C / groups * K), in one batched `matmul` whose
result is already in (N, O, *output) order. That is what a convolution written
directly in NumPy does, at BLAS speed (an `einsum` over the window view took
nearly twice as long on ResNet-50). A transposed convolution is the plain one on
the input dilated by the strides, padded by dilation * (k - 1) - padding
(+ output_padding at the end), with the kernel flipped and its in/out axes
swapped, as in topi's conv2d_transpose_nchw. Arithmetic runs in the output
dtype, as TVM computes it, except float16: computed in float32 (a float32
accumulator) and rounded once (numpy_support.float16_in_float32).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..registry import implement
from .conv_layouts import (
    depthwise_multiplier,
    is_blocked,
    numpy_relayout,
    out_layout_of,
    plain_attrs,
    plain_layout,
)
from .conv_relations import conv_geometry

Kernel = Callable[[list, Any], Any]


def pad_or_crop(x: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """Pad the trailing axes by (before, after) pairs with zeros; negative amounts crop."""
    if not any(b or a for b, a in pairs):
        return x
    lead = x.ndim - len(pairs)
    x = np.pad(x, [(0, 0)] * lead + [(max(b, 0), max(a, 0)) for b, a in pairs])
    crop = tuple(slice(max(-b, 0), x.shape[lead + j] - max(-a, 0))
                 for j, (b, a) in enumerate(pairs))
    return x[(slice(None),) * lead + crop]


def conv_ncs(x: np.ndarray, w: np.ndarray, strides: tuple, dilation: tuple,
             pads: list[tuple[int, int]], groups: int) -> np.ndarray:
    """Convolution of x (N, C, *S) with w (O, C / groups, *K), in x's dtype."""
    nd = x.ndim - 2
    x = pad_or_crop(x, pads)
    (n, c), o, ksize = x.shape[:2], w.shape[0], w.shape[2:]
    steps = tuple(slice(None, None, s) for s in strides)
    if all(k == 1 for k in ksize):
        cols = x[(slice(None),) * 2 + steps]                              # (N, C, *O)
        out_sp = cols.shape[2:]
    else:
        span = [d * (k - 1) + 1 for k, d in zip(ksize, dilation)]
        v = sliding_window_view(x, span, axis=tuple(range(2, 2 + nd)))    # (N, C, *P, *span)
        v = v[(slice(None),) * 2 + steps + tuple(slice(None, None, d) for d in dilation)]
        out_sp = v.shape[2:2 + nd]                                        # (N, C, *O, *K)
        cols = v.transpose((0, 1) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd)))
    cols = cols.reshape(n, groups, (c // groups) * math.prod(ksize), math.prod(out_sp))
    out = np.matmul(w.reshape(groups, o // groups, -1), cols)            # (N, G, O / G, P)
    return out.reshape((n, o) + out_sp)


def conv_transpose_ncs(x: np.ndarray, w: np.ndarray, strides: tuple, dilation: tuple,
                       pads: list[tuple[int, int]], output_padding: tuple,
                       groups: int) -> np.ndarray:
    """Transposed convolution of x (N, C, *S) with w (C, O / groups, *K)."""
    nd = x.ndim - 2
    n, c = x.shape[:2]
    up = np.zeros((n, c) + tuple((s - 1) * st + 1 for s, st in zip(x.shape[2:], strides)),
                  dtype=x.dtype)
    up[(slice(None),) * 2 + tuple(slice(None, None, st) for st in strides)] = x
    ksize = w.shape[2:]
    edges = [(d * (k - 1) - b, d * (k - 1) - a + extra)
             for k, d, (b, a), extra in zip(ksize, dilation, pads, output_padding)]
    opg = w.shape[1]
    wg = w.reshape((groups, c // groups, opg) + ksize).swapaxes(1, 2)
    wg = np.flip(wg, axis=tuple(range(3, 3 + nd))).reshape((groups * opg, c // groups) + ksize)
    return conv_ncs(pad_or_crop(up, edges), wg, (1,) * nd, dilation, [(0, 0)] * nd, groups)


def _to_ncs(x: np.ndarray, pos: list[int]) -> np.ndarray:
    return np.transpose(x, pos)


def _from_ncs(y: np.ndarray, pos: list[int]) -> np.ndarray:
    return np.asarray(np.transpose(y, np.argsort(pos)), order="C")


def conv_kernel(nd: int, transposed: bool = False) -> Kernel:
    """The kernel of nn.conv{nd}d (or its transpose) for any plain layouts, and for the
    convolutions blocked ones too (`conv_layouts`: re-laid to the plain forms, the
    result back to out_layout)."""
    def kernel(inputs: list, attrs: Any) -> np.ndarray:
        data, weight = inputs
        if not transposed and is_blocked(attrs):
            plain = plain_attrs(attrs)
            y = kernel([numpy_relayout(data, attrs.data_layout, plain.data_layout),
                        numpy_relayout(weight, attrs.kernel_layout, plain.kernel_layout)],
                       plain)
            return numpy_relayout(y, plain_layout(out_layout_of(attrs)),
                                  out_layout_of(attrs))
        g = conv_geometry(attrs, nd, transposed)
        dtype = np.dtype(attrs.out_dtype or data.dtype)
        x = _to_ncs(data, g.data_pos).astype(dtype, copy=False)
        w = _to_ncs(weight, g.weight_pos).astype(dtype, copy=False)
        if not transposed and depthwise_multiplier(x.shape[1], w.shape[0], w.shape[1],
                                                   attrs.groups):
            w = w.reshape((w.shape[0] * w.shape[1], 1) + w.shape[2:])
        if transposed:       # the kernel layout's I axis is the data's channels: (I, O, k...)
            w = w.swapaxes(0, 1)
            y = conv_transpose_ncs(x, w, g.strides, g.dilation, g.pads, g.output_padding,
                                   attrs.groups)
        else:
            y = conv_ncs(x, w, g.strides, g.dilation, g.pads, attrs.groups)
        return _from_ncs(y.astype(dtype, copy=False), g.out_pos)
    kernel.__name__ = kernel.__qualname__ = f"conv{nd}d{'_transpose' if transposed else ''}"
    return kernel


for _nd in (1, 2, 3):
    implement(f"nn.conv{_nd}d", float16=IN_FLOAT32)(conv_kernel(_nd))
    implement(f"nn.conv{_nd}d_transpose", float16=IN_FLOAT32)(conv_kernel(_nd, transposed=True))


_CONV2D = conv_kernel(2)


def conv2d_nchwc(inputs: list, attrs: Any) -> np.ndarray:
    """nn.contrib_conv2d_NCHWc: after the op's own checks of its blocks, nn.conv2d's
    kernel in the same blocked layouts (data NCHW{ic}c, kernel OIHW{ic}i{oc}o, output
    NCHW{oc}c: the plain convolution between layout transforms, `conv_layouts`)."""
    from .conv_relations import nchwc_geometry
    nchwc_geometry(attrs)
    return _CONV2D(inputs, attrs)


implement("nn.contrib_conv2d_NCHWc", float16=IN_FLOAT32)(conv2d_nchwc)


def depthwise_conv2d_nchwc(inputs: list, attrs: Any) -> np.ndarray:
    """nn.contrib_depthwise_conv2d_NCHWc: after the op's own checks, nn.conv2d's kernel
    in the same blocked layouts (data NCHW{c}c, kernel OIHW1i{c}o: the plain weight
    (C, 1, KH, KW), groups = C)."""
    from .conv_relations import depthwise_nchwc_geometry
    depthwise_nchwc_geometry(attrs)
    return _CONV2D(inputs, attrs)


implement("nn.contrib_depthwise_conv2d_NCHWc", float16=IN_FLOAT32)(depthwise_conv2d_nchwc)
