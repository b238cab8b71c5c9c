"""Resampling in NumPy, shared by the kernels of image.resize2d and nn.upsampling.

resize2d follows python/tvm/topi/image/resize.py: output coordinates map back
to input ones by the coordinate transformation mode (in float32), nearest picks
by the rounding method (default: round for align_corners, floor otherwise;
`round` is half away from zero, as llvm.round), linear and cubic interpolate
along W and then H with indices clamped to the edge. Interpolation is separable,
so each axis is one vectorised gather. upsampling is resize2d with
align_corners or asymmetric coordinates (topi nn/upsampling.py).
"""
from __future__ import annotations

import numpy as np

from .layouts import axis_positions

F32 = np.float32


# ------------------------------------------------------------ resize

def source_coords(out_len: int, in_len: int, mode: str) -> np.ndarray:
    """get_inx: the input coordinate of each output position, in float32."""
    x = np.arange(out_len, dtype=F32)
    scale = F32(in_len) / F32(out_len)
    if mode == "align_corners":
        return x * (F32(in_len - 1) / F32(out_len - 1)) if out_len > 1 else x * F32(0)
    if mode == "asymmetric":
        return x * scale
    if mode == "tf_half_pixel_for_nn":
        return (x + F32(0.5)) * scale
    if mode == "pytorch_half_pixel" and out_len <= 1:
        return x * F32(0)
    return (x + F32(0.5)) * scale - F32(0.5)            # half_pixel, pytorch_half_pixel


def nearest_index(coords: np.ndarray, rounding: str) -> np.ndarray:
    """get_closest_index (before clamping to the image)."""
    eps = F32(1e-5)
    table = {
        "round": lambda c: np.sign(c) * np.floor(np.abs(c) + F32(0.5)),
        "round_prefer_floor": lambda c: np.ceil(c - F32(0.5)),
        "round_prefer_ceil": lambda c: np.floor(c + F32(0.5)),
        "floor": lambda c: np.floor(c + eps),
        "ceil": lambda c: np.ceil(c - eps),
    }
    return table[rounding](coords).astype(np.int64)


def _cubic_weights(t: np.ndarray, alpha: float) -> list[np.ndarray]:
    a = F32(alpha)
    t2, t3 = t * t, t * t * t
    return [a * (t3 - 2 * t2 + t),
            (a + 2) * t3 - (3 + a) * t2 + 1,
            -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t,
            -a * t3 + a * t2]


def resize_axis(x: np.ndarray, axis: int, out_len: int, method: str, mode: str,
                rounding: str, alpha: float = -0.5, exclude: bool = False) -> np.ndarray:
    """Resample `x` along `axis` to `out_len` entries."""
    n = x.shape[axis]
    if method == "nearest_neighbor":
        if mode == "asymmetric" and out_len % n == 0:
            idx = np.arange(out_len) // (out_len // n)       # topi's exact integer division
        else:
            rounding = rounding or ("round" if mode == "align_corners" else "floor")
            idx = nearest_index(source_coords(out_len, n, mode), rounding)
        return np.take(x, np.clip(idx, 0, n - 1), axis=axis)
    coords = source_coords(out_len, n, mode)
    base = np.floor(coords)
    t = coords - base
    base = base.astype(np.int64)
    shape = [1] * x.ndim
    shape[axis] = out_len
    if method == "linear":
        a = np.take(x, np.clip(base, 0, n - 1), axis=axis)
        b = np.take(x, np.clip(base + 1, 0, n - 1), axis=axis)
        t = t.reshape(shape)
        return a * (F32(1) - t) + b * t
    weights = _cubic_weights(t, alpha)
    if exclude:
        weights = [np.where((base - 1 + k < 0) | (base + k > n), F32(0), w)
                   for k, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return sum(np.take(x, np.clip(base - 1 + k, 0, n - 1), axis=axis) * w.reshape(shape)
               for k, w in enumerate(weights))


def resize_hw(x: np.ndarray, layout: str, size: tuple[int, int], method: str, mode: str,
              rounding: str, out_dtype: str, alpha: float = -0.5,
              exclude: bool = False) -> np.ndarray:
    h, w = axis_positions(layout, "HW", "layout")
    v = np.moveaxis(x.astype(F32), (h, w), (-2, -1))
    v = resize_axis(v, -1, size[1], method, mode, rounding, alpha, exclude)
    v = resize_axis(v, -2, size[0], method, mode, rounding, alpha, exclude)
    return np.asarray(np.moveaxis(v, (-2, -1), (h, w)), order="C").astype(out_dtype)
