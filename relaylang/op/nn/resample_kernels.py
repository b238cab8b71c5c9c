"""NumPy reference kernels of padding and resampling: nn.pad, nn.upsampling,
nn.depth_to_space, nn.space_to_depth (registered with `@implement` when
`numpy_kernels.py` imports this module). upsampling is resize2d with align_corners
or asymmetric coordinates (topi nn/upsampling.py): `op/resize_numpy.py`.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..layouts import axis_positions
from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from ..resize_numpy import Resampling, resize_axes, resize_hw
from ..shape_rules import scaled

# ------------------------------------------------------------ pad

@implement("nn.pad")
def pad(inputs: list, attrs: Any) -> np.ndarray:
    x, value = inputs
    widths = [tuple(p) for p in attrs.pad_width]
    if attrs.pad_mode == "constant":
        return np.pad(x, widths, mode="constant", constant_values=value.item())
    return np.pad(x, widths, mode=attrs.pad_mode)


@implement("nn.upsampling", float16=IN_FLOAT32)
def upsampling(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    h, w = axis_positions(attrs.layout, "HW", "layout")
    size = (scaled(x.shape[h], attrs.scale_h), scaled(x.shape[w], attrs.scale_w))
    method = attrs.method.removeprefix("bi")
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    return resize_hw(x, attrs.layout, size, Resampling(method, mode), x.dtype)


def upsampling3d_axes(shape: tuple, attrs: Any) -> list[tuple[int, int, tuple[float, float]]]:
    """(axis, output length, roi span) of D, H and W: topi's sizes, round(n * scale)."""
    d, h, w = axis_positions(attrs.layout, "DHW", "layout")
    return [(ax, scaled(shape[ax], s), (0.0, 1.0))
            for ax, s in ((d, attrs.scale_d), (h, attrs.scale_h), (w, attrs.scale_w))]


def upsampling3d_resampling(attrs: Any) -> Resampling:
    """topi.nn.upsampling3d: resize3d with "tri" dropped from the method, the default
    rounding (floor, round for align_corners)."""
    return Resampling(attrs.method.removeprefix("tri"), attrs.coordinate_transformation_mode)


@implement("nn.upsampling3d", float16=IN_FLOAT32)
def upsampling3d(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return resize_axes(x, upsampling3d_axes(x.shape, attrs), upsampling3d_resampling(attrs),
                       x.dtype)


# ------------------------------------------------------------ sub-pixel moves

@implement("nn.depth_to_space")
def depth_to_space(inputs: list, attrs: Any) -> np.ndarray:
    """DCR: channel (by * bs + bx) * C' + c; CRD: c * bs^2 + by * bs + bx."""
    x, bs = inputs[0], attrs.block_size
    if attrs.layout == "NHWC":
        n, h, w, c = x.shape
        if attrs.mode == "DCR":
            v = x.reshape(n, h, w, bs, bs, c // bs**2).transpose(0, 1, 3, 2, 4, 5)
        else:
            v = x.reshape(n, h, w, c // bs**2, bs, bs).transpose(0, 1, 4, 2, 5, 3)
        return v.reshape(n, h * bs, w * bs, c // bs**2)
    n, c, h, w = x.shape
    if attrs.mode == "DCR":
        v = x.reshape(n, bs, bs, c // bs**2, h, w).transpose(0, 3, 4, 1, 5, 2)
    else:
        v = x.reshape(n, c // bs**2, bs, bs, h, w).transpose(0, 1, 4, 2, 5, 3)
    return v.reshape(n, c // bs**2, h * bs, w * bs)


@implement("nn.space_to_depth")
def space_to_depth(inputs: list, attrs: Any) -> np.ndarray:
    """The inverse of DCR depth_to_space: out channel (by * bs + bx) * C + c."""
    x, bs = inputs[0], attrs.block_size
    if attrs.layout == "NHWC":
        n, h, w, c = x.shape
        v = x.reshape(n, h // bs, bs, w // bs, bs, c).transpose(0, 1, 3, 2, 4, 5)
        return v.reshape(n, h // bs, w // bs, c * bs * bs)
    n, c, h, w = x.shape
    v = x.reshape(n, c, h // bs, bs, w // bs, bs).transpose(0, 3, 5, 1, 2, 4)
    return v.reshape(n, c * bs * bs, h // bs, w // bs)
