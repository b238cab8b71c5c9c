"""NumPy reference kernels of the grid family (registered with `@implement`).

grid_sample follows PyTorch's grid sampler as ONNX's GridSample reference states it:
a normalised coordinate g maps to (g + 1) / 2 * (n - 1) (align_corners) or
((g + 1) * n - 1) / 2; nearest rounds it half to even; an out-of-range coordinate
(outside [0, n - 1] with align_corners, else [-0.5, n - 0.5]) is clamped to [0, n - 1]
(border) or reflected at the range's ends (reflection); then every sampled position
(the tap) is read with the padding again: 0 outside (zeros), clamped (border) or
reflected and truncated (reflection). Bicubic pads only the taps, not the coordinate
(PyTorch's and onnxruntime's bicubic, and TVM's; ONNX's Python reference pads both,
which differs for border and reflection padding). Interpolation is separable, the innermost axis
first: linear weights 1 - t, t; cubic Keys' kernel with alpha -0.75 over taps -1..2.
Computed in float32 (float64 for float64 data; float16 widened).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement

CUBIC_ALPHA = -0.75


def base_coords(n: int, align_corners: bool) -> np.ndarray:
    """The normalised coordinate of each of `n` positions, in float64: -1 + 2 i / (n - 1)
    (align_corners), else the pixel centres -1 + (2 i + 1) / n. A single position is at
    0 either way (PyTorch's affine_grid; ONNX's reference says -1 and onnxruntime 1 for
    align_corners, which the formula leaves undefined)."""
    i = np.arange(n, dtype=np.float64)
    if align_corners:
        return -1.0 + i * (2.0 / (n - 1)) if n > 1 else np.zeros(n)
    return -1.0 + (2.0 * i + 1.0) / n


@implement("image.affine_grid", float16=IN_FLOAT32)
def affine_grid(inputs: list, attrs: Any) -> np.ndarray:
    theta = np.asarray(inputs[0])
    target = tuple(int(d) for d in attrs.target_shape)
    nd = len(target)
    axes = [base_coords(n, bool(attrs.align_corners)).astype(theta.dtype) for n in target]
    mesh = np.meshgrid(*axes, indexing="ij")          # per spatial axis, outermost first
    # homogeneous base points (x, y[, z], 1): x is the innermost axis
    base = [mesh[nd - 1 - k] for k in range(nd)] + [np.ones(target, theta.dtype)]
    out = np.zeros((theta.shape[0], nd, *target), theta.dtype)
    for j in range(nd + 1):
        out += theta[:, :, j].reshape(theta.shape[0], nd, *([1] * nd)) * base[j]
    return out


def reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """x reflected at lo and hi until it lies in [lo, hi] (PyTorch's reflect_coordinates)."""
    span = hi - lo
    if span <= 0:
        return np.full_like(x, lo)
    below, above = x < lo, x > hi
    dx = np.where(below, lo - x, np.where(above, x - hi, 0))
    k = np.trunc(dx / span)
    r = dx - k * span
    even = np.fmod(k, 2) == 0
    return np.where(below, np.where(even, lo + r, hi - r),
                    np.where(above, np.where(even, hi - r, lo + r), x)).astype(x.dtype)


def unnormalize(g: np.ndarray, n: int, align_corners: bool) -> np.ndarray:
    if align_corners:
        return (g + 1) / 2 * (n - 1)
    return ((g + 1) * n - 1) / 2


def cubic_weights(t: np.ndarray) -> list[np.ndarray]:
    a = t.dtype.type(CUBIC_ALPHA)
    one, two = t.dtype.type(1), t.dtype.type(2)
    x1, x0, y0, y1 = t + one, t, one - t, two - t
    return [((a * x1 - 5 * a) * x1 + 8 * a) * x1 - 4 * a,
            ((a + 2) * x0 - (a + 3)) * x0 * x0 + 1,
            ((a + 2) * y0 - (a + 3)) * y0 * y0 + 1,
            ((a * y1 - 5 * a) * y1 + 8 * a) * y1 - 4 * a]


def _fetch_index(i: np.ndarray, n: int, padding: str, align: bool
                 ) -> tuple[np.ndarray, np.ndarray | None]:
    """Tap positions (float, integral) -> (index in range, validity mask for zeros)."""
    if padding == "zeros":
        valid = (i >= 0) & (i <= n - 1)
        return np.clip(np.nan_to_num(i), 0, n - 1).astype(np.int64), valid
    if padding == "reflection":
        lo, hi = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
        i = np.trunc(reflect(i, lo, hi))
    return np.clip(np.nan_to_num(i), 0, n - 1).astype(np.int64), None


def sample(data: np.ndarray, coords: list[np.ndarray], method: str, padding: str,
           align: bool) -> np.ndarray:
    """data (N, C, *S) sampled at the unnormalised coordinates coords[k] (N, *O) of
    spatial axis k: (N, C, *O)."""
    dims = data.shape[2:]
    nd = len(dims)
    ct = coords[0].dtype.type
    padded = []
    for k, x in enumerate(coords):
        n = dims[k]
        if method == "nearest":
            x = np.rint(x)
        lo, hi = (0.0, n - 1.0) if align else (-0.5, n - 0.5)
        out = (x < lo) | (x > hi)
        if method == "bicubic":
            pass            # PyTorch pads only the taps of bicubic (see the docstring)
        elif padding == "border":
            x = np.where(out, np.clip(x, 0, n - 1), x).astype(x.dtype)
        elif padding == "reflection":
            x = np.where(out, reflect(x, lo, hi), x).astype(x.dtype)
        padded.append(x)
    taps: list[list[tuple[np.ndarray, np.ndarray | None]]] = []
    for k, x in enumerate(padded):
        if method == "nearest":
            taps.append([(np.trunc(x), None)])
            continue
        base = np.floor(x)
        t = x - base
        if method == "bilinear":
            taps.append([(base, ct(1) - t), (base + 1, t)])
        else:
            taps.append([(base + (j - 1), w) for j, w in enumerate(cubic_weights(t))])
    moved = np.moveaxis(data, 1, -1)                      # (N, *S, C)
    batch = np.arange(data.shape[0]).reshape((-1,) + (1,) * (coords[0].ndim - 1))

    def fetch(positions: list[np.ndarray]) -> np.ndarray:
        index, valid = [batch], None
        for k, p in enumerate(positions):
            i, v = _fetch_index(p, dims[k], padding, align)
            index.append(i)
            if v is not None:
                valid = v if valid is None else valid & v
        got = moved[tuple(index)]
        return got if valid is None else np.where(valid[..., None], got, 0)

    def interp(k: int, positions: list[np.ndarray]) -> np.ndarray:
        if k == nd:
            return fetch(positions)
        total = None
        for p, w in taps[k]:
            v = interp(k + 1, positions + [p])
            if w is not None:
                v = v * w[..., None]
            total = v if total is None else total + v
        assert total is not None
        return total
    return np.moveaxis(interp(0, []), -1, 1)


@implement("image.grid_sample", float16=IN_FLOAT32)
def grid_sample(inputs: list, attrs: Any) -> np.ndarray:
    data, grid = np.asarray(inputs[0]), np.asarray(inputs[1])
    ct = np.float64 if data.dtype == np.float64 else np.float32
    dims = data.shape[2:]
    nd = len(dims)
    align = bool(attrs.align_corners)
    out_shape = (data.shape[0], data.shape[1], *grid.shape[2:])
    if 0 in out_shape or 0 in dims:
        return np.zeros(out_shape, data.dtype)
    g = grid.astype(ct)
    # grid channel 0 is x (the innermost axis): spatial axis k reads channel nd - 1 - k
    coords = [unnormalize(g[:, nd - 1 - k], dims[k], align).astype(ct) for k in range(nd)]
    out = sample(data.astype(ct), coords, attrs.method, attrs.padding_mode, align)
    return out.astype(data.dtype)
