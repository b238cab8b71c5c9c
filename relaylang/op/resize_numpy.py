"""Resampling in NumPy, shared by the kernels of image.resize1d, image.resize2d,
nn.upsampling and nn.upsampling3d (`resize_axes`: any axes, one after the other).

resize2d follows python/tvm/topi/image/resize.py: output coordinates map back
to input ones by the coordinate transformation mode (in float32), nearest picks
by the rounding method (default: round for align_corners, floor otherwise;
`round` is half away from zero, as llvm.round), linear and cubic interpolate
along W and then H with indices clamped to the edge. Interpolation is separable:
each axis is a table of taps (input index and weight per output position, `axis_taps`)
that the kernel gathers with and the LLVM lowering bakes in. ONNX's Resize extends
this: the given scale (not out/in) in the coordinate mapping, the
half_pixel_symmetric and tf_crop_and_resize modes (the latter with an extrapolation
value outside the box), and antialiasing (a filter widened by 1/scale when
downscaling), computed as onnx's reference does (float64 coordinates). upsampling is resize2d with
align_corners or asymmetric coordinates (topi nn/upsampling.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True)
class Resampling:
    """How one resize resamples (the attributes of image.resize2d that apply per axis)."""
    method: str                      # nearest_neighbor, linear, cubic
    mode: str                        # the coordinate transformation mode
    rounding: str = ""
    alpha: float = -0.5
    exclude: bool = False
    antialias: bool = False
    extrapolation: float = 0.0


def resampling(attrs: Any) -> Resampling:
    """The Resampling of image.resize2d's attributes."""
    return Resampling(attrs.method, attrs.coordinate_transformation_mode,
                      attrs.rounding_method, float(attrs.cubic_alpha),
                      bool(attrs.cubic_exclude), bool(attrs.antialias),
                      float(attrs.extrapolation_value))


# Modes computed as TVM's topi computes them (float32, the scale out/in); the others, and
# any resize given ONNX's scale or antialias, follow ONNX's Resize (float64 coordinates).
TVM_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
             "tf_half_pixel_for_nn")

Taps = list[tuple[np.ndarray, "np.ndarray | None"]]


def axis_taps(n: int, out_len: int, how: Resampling, scale: float | None = None,
              roi: tuple[float, float] = (0.0, 1.0)) -> tuple[Taps, np.ndarray | None]:
    """One axis of a resize as tables: [(input index per output position, float32 weight
    or None for nearest), ...] (indices clamped to the edge) and, for tf_crop_and_resize,
    the output positions whose source lies inside the input (else None). The kernel and
    the LLVM lowering both read these tables, so they pick the same taps."""
    if scale is None and not how.antialias and how.mode in TVM_MODES:
        return _tvm_taps(n, out_len, how), None
    return _onnx_taps(n, out_len, how, scale, roi)


def _tvm_taps(n: int, out_len: int, how: Resampling) -> Taps:
    if how.method == "nearest_neighbor":
        if how.mode == "asymmetric" and out_len % n == 0:
            idx = np.arange(out_len) // (out_len // n)       # topi's exact integer division
        else:
            rounding = how.rounding or ("round" if how.mode == "align_corners" else "floor")
            idx = nearest_index(source_coords(out_len, n, how.mode), rounding)
        return [(np.clip(idx, 0, n - 1).astype(np.int64), None)]
    coords = source_coords(out_len, n, how.mode)
    base = np.floor(coords)
    t = coords - base
    base = base.astype(np.int64)
    if how.method == "linear":
        return [(np.clip(base, 0, n - 1), (F32(1) - t).astype(F32)),
                (np.clip(base + 1, 0, n - 1), t.astype(F32))]
    weights = _cubic_weights(t, how.alpha)
    if how.exclude:
        weights = [np.where((base - 1 + k < 0) | (base + k > n), F32(0), w)
                   for k, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [(np.clip(base - 1 + k, 0, n - 1), np.asarray(w, F32))
            for k, w in enumerate(weights)]


def _onnx_coords(n: int, out_len: int, mode: str, scale: float,
                 roi: tuple[float, float]) -> np.ndarray:
    """ONNX Resize's source coordinate of each output position (float64)."""
    x = np.arange(out_len, dtype=np.float64)
    width = scale * n                                  # the output width before flooring
    if mode == "align_corners":
        return x * 0.0 if width == 1 else x * (n - 1) / (width - 1)
    if mode == "asymmetric":
        return x / scale
    if mode == "tf_crop_and_resize":
        start, end = roi
        if width == 1:
            return np.full(out_len, (end - start) * (n - 1) / 2 + start * (n - 1))
        return x * (end - start) * (n - 1) / (width - 1) + start * (n - 1)
    if mode == "pytorch_half_pixel":
        # the spec's 0 for a length-1 output, as onnxruntime (onnx's reference says -0.5)
        return x * 0.0 if out_len <= 1 else (x + 0.5) / scale - 0.5
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) / scale
    if mode == "half_pixel_symmetric":
        offset = n / 2 * (1 - out_len / width)
        return offset + (x + 0.5) / scale - 0.5
    return (x + 0.5) / scale - 0.5                      # half_pixel


def _keys(d: np.ndarray, a: float) -> np.ndarray:
    """The cubic convolution kernel at distances `d` >= 0."""
    d2, d3 = d * d, d * d * d
    return np.where(d <= 1, (a + 2) * d3 - (a + 3) * d2 + 1,
                    np.where(d < 2, a * d3 - 5 * a * d2 + 8 * a * d - 4 * a, 0.0))


def _onnx_taps(n: int, out_len: int, how: Resampling, scale: float | None,
               roi: tuple[float, float]) -> tuple[Taps, np.ndarray | None]:
    scale = float(scale) if scale is not None else out_len / n
    coords = _onnx_coords(n, out_len, how.mode, scale, roi)
    valid = None
    if how.mode == "tf_crop_and_resize":
        valid = (coords >= 0) & (coords <= n - 1)
    if how.method == "nearest_neighbor":
        rounding = how.rounding or "round_prefer_floor"
        pick = {"round_prefer_floor": lambda c: np.ceil(c - 0.5),
                "round_prefer_ceil": lambda c: np.floor(c + 0.5),
                "floor": np.floor, "ceil": np.ceil,
                "round": lambda c: np.sign(c) * np.floor(np.abs(c) + 0.5)}[rounding]
        idx = np.where(coords == np.floor(coords), coords, pick(coords))
        return [(np.clip(idx, 0, n - 1).astype(np.int64), None)], valid
    # the left neighbour and the distance from it, in (0, 1] (ONNX prefers the left)
    base = np.floor(coords)
    ratio = coords - base
    on_grid = ratio == 0
    base = np.where(on_grid, base - 1, base).astype(np.int64)
    ratio = np.where(on_grid, 1.0, ratio)
    # the filter's support in input pixels widens by 1/scale when antialiasing a downscale
    s = min(scale, 1.0) if how.antialias else 1.0
    reach = 1 if how.method == "linear" else 2
    first = int(np.floor(-reach / s) + 1)
    offsets = range(first, 2 - first) if how.method == "cubic" or how.antialias \
        else range(0, 2)
    weights = []
    for i in offsets:
        d = np.abs((i - ratio) * s)
        weights.append(np.clip(1 - d, 0, 1) if how.method == "linear" else _keys(d, how.alpha))
    if how.antialias:
        total = sum(weights)
        weights = [w / total for w in weights]
    idxs = [base + i for i in offsets]
    if how.exclude:
        weights = [np.where((i < 0) | (i >= n), 0.0, w) for i, w in zip(idxs, weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [(np.clip(i, 0, n - 1), np.asarray(w, F32)) for i, w in zip(idxs, weights)], valid


def resize_axis(x: np.ndarray, axis: int, out_len: int, how: Resampling,
                scale: float | None = None, roi: tuple[float, float] = (0.0, 1.0)
                ) -> np.ndarray:
    """Resample `x` (float32) along `axis` to `out_len` entries."""
    taps, valid = axis_taps(x.shape[axis], out_len, how, scale, roi)
    shape = [1] * x.ndim
    shape[axis] = out_len
    out = None
    for idx, w in taps:
        v = np.take(x, idx, axis=axis)
        if w is not None:
            v = v * w.reshape(shape)
        out = v if out is None else out + v
    if valid is not None:
        out = np.where(valid.reshape(shape), out, F32(how.extrapolation))
    return out


def resize_hw(x: np.ndarray, layout: str, size: tuple[int, int], how: Resampling,
              out_dtype: str, scales: tuple[float, float] | None = None,
              roi: tuple[float, ...] | None = None) -> np.ndarray:
    """Resample the H and W axes of `x` (W first) to `size`; `scales` (H, W) are ONNX's
    given scales, `roi` (start_h, start_w, end_h, end_w) tf_crop_and_resize's box."""
    h, w = axis_positions(layout, "HW", "layout")
    box = tuple(roi) if roi else (0.0, 0.0, 1.0, 1.0)
    sh, sw = scales if scales else (None, None)
    v = np.moveaxis(x.astype(F32), (h, w), (-2, -1))
    v = resize_axis(v, -1, size[1], how, sw, (box[1], box[3]))
    v = resize_axis(v, -2, size[0], how, sh, (box[0], box[2]))
    return np.asarray(np.moveaxis(v, (-2, -1), (h, w)), order="C").astype(out_dtype)


def resampling_of(attrs: Any, method: str | None = None, mode: str | None = None) -> Resampling:
    """The Resampling of a resize's attributes that has no ONNX additions (image.resize1d,
    nn.upsampling3d: no `antialias`); `method`/`mode` override the attributes'."""
    return Resampling(method or attrs.method, mode or attrs.coordinate_transformation_mode,
                      getattr(attrs, "rounding_method", ""),
                      float(getattr(attrs, "cubic_alpha", -0.5)),
                      bool(getattr(attrs, "cubic_exclude", 0)), False,
                      float(getattr(attrs, "extrapolation_value", 0.0)))


def resize_axes(x: np.ndarray, axes: list[tuple[int, int, tuple[float, float]]],
                how: Resampling, out_dtype: str) -> np.ndarray:
    """Resample `x` along each (axis, out_len, roi span) of `axes`, last one first, in
    float32 (image.resize1d: one axis; nn.upsampling3d: D, H and W)."""
    v = x.astype(F32)
    for axis, out_len, span in reversed(axes):
        v = resize_axis(v, axis, out_len, how, None, span)
    return np.ascontiguousarray(v).astype(out_dtype)
