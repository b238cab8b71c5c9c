"""LLVM lowerings of the grid family: image.affine_grid and image.grid_sample.

affine_grid: the base coordinates of each axis are computed with the kernel's NumPy
function at lowering time and baked as constant tables; the lowered code is
theta[n, c, 0] * x + theta[n, c, 1] * y (+ theta[n, c, 2] * z) + theta[n, c, nd].

grid_sample: a first stage holds, per output position and spatial axis, the
unnormalised coordinate after rounding (nearest) and the coordinate padding (border,
reflection); the result reads the taps of each axis from it (floor, weights, the tap
positions as floats), moves every tap into range by the padding mode and loads the data
there. Tap positions are clamped into range before they become indices (a NaN one
becomes 0), so every load is in bounds; zeros padding multiplies by 0 through a select.
Computed in float32 (float64 for float64 data), as the kernel.
"""
from __future__ import annotations

from typing import Any

from ..registry import implement

CUBIC_ALPHA = -0.75


def _table(b: Any, data: Any, name: str) -> Any:
    import numpy as np
    data = np.ascontiguousarray(data)
    return b.placeholder(data.shape, str(data.dtype), name, scope="constant", data=data)


@implement("image.affine_grid", target="llvm")
def affine_grid(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from .numpy_kernels import base_coords
    (theta,) = inputs
    target = tuple(int(d) for d in attrs.target_shape)
    nd = len(target)
    dtype = str(out_type.dtype)
    ct = "float32" if dtype == "float16" else dtype
    tables = [_table(b, base_coords(n, bool(attrs.align_corners)).astype(ct), f"affine_{k}")
              for k, n in enumerate(target)]

    def f(n: Any, c: Any, *s: Any) -> Any:
        # channel j of the homogeneous point: x (innermost axis) first
        total = b.cast(theta[n, c, nd], ct)
        for j in range(nd):
            k = nd - 1 - j
            total = b.cast(theta[n, c, j], ct) * tables[k][s[k]] + total
        return b.cast(total, dtype)
    return b.compute((theta.shape[0], nd, *target), f, dtype=dtype, name="affine_grid")


def _rint(b: Any, x: Any) -> Any:
    """x rounded half to even (NumPy's rint, PyTorch's nearbyint)."""
    f = b.call("floor", x)
    d = x - f
    up = f + 1.0
    odd = b.ne(f - b.call("floor", f * 0.5) * 2.0, 0.0)
    return b.select(b.gt(d, 0.5), up, b.select(b.lt(d, 0.5), f, b.select(odd, up, f)))


def _reflect(b: Any, x: Any, lo: float, hi: float) -> Any:
    span = hi - lo
    if span <= 0:
        return b.const(lo, x.dtype)
    below, above = b.lt(x, lo), b.gt(x, hi)
    dx = b.select(below, b.const(lo, x.dtype) - x, b.select(above, x - hi, b.const(0, x.dtype)))
    k = b.call("trunc", dx / span)
    r = dx - k * span
    even = b.eq(k - b.call("floor", k * 0.5) * 2.0, 0.0)
    low_side = b.select(even, r + lo, b.const(hi, x.dtype) - r)
    high_side = b.select(even, b.const(hi, x.dtype) - r, r + lo)
    return b.select(below, low_side, b.select(above, high_side, x))


def _clamp_index(b: Any, p: Any, n: int) -> Any:
    """A float tap position as an in-range int64 index (NaN -> 0)."""
    p = b.select(b.ge(p, 0.0), p, b.const(0, p.dtype))
    p = b.select(b.le(p, float(n - 1)), p, b.const(n - 1, p.dtype))
    return b.cast(p, "int64")


def _cubic(b: Any, t: Any) -> list[Any]:
    a = CUBIC_ALPHA
    x1, y0 = t + 1.0, b.const(1, t.dtype) - t
    y1 = b.const(2, t.dtype) - t
    return [((x1 * a - 5 * a) * x1 + 8 * a) * x1 - 4 * a,
            ((t * (a + 2) - (a + 3)) * t) * t + 1.0,
            ((y0 * (a + 2) - (a + 3)) * y0) * y0 + 1.0,
            ((y1 * a - 5 * a) * y1 + 8 * a) * y1 - 4 * a]


@implement("image.grid_sample", target="llvm")
def grid_sample(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, grid = inputs
    dtype = str(out_type.dtype)
    ct = "float64" if dtype == "float64" else "float32"
    dims = data.shape[2:]
    nd = len(dims)
    align = bool(attrs.align_corners)
    method, padding = attrs.method, attrs.padding_mode
    out_shape = tuple(int(d) for d in out_type.shape)
    if 0 in out_shape or 0 in dims:
        return b.compute(out_shape, lambda *i: b.const(0, dtype), name="grid_sample")
    bounds = [(0.0, n - 1.0) if align else (-0.5, n - 0.5) for n in dims]

    def coord(n: Any, k: Any, *o: Any) -> Any:
        # spatial axis k reads grid channel nd - 1 - k (channel 0 is x, the innermost)
        best = None
        for axis in range(nd):
            g = b.cast(grid[(n, b.const(nd - 1 - axis, "int64"), *o)], ct)
            size = dims[axis]
            if align:
                x = (g + 1.0) / 2.0 * float(size - 1)
            else:
                x = ((g + 1.0) * float(size) - 1.0) / 2.0
            if method == "nearest":
                x = _rint(b, x)
            lo, hi = bounds[axis]
            outside = b.logical_or(b.lt(x, lo), b.gt(x, hi))
            if method == "bicubic":
                pass        # bicubic pads only its taps (as the kernel)
            elif padding == "border":
                clamped = b.min(b.max(x, 0.0), float(size - 1))
                x = b.select(outside, clamped, x)
            elif padding == "reflection":
                x = b.select(outside, _reflect(b, x, lo, hi), x)
            best = x if best is None else b.select(b.eq(k, axis), x, best)
        return best
    coords = b.materialize(b.compute((grid.shape[0], nd, *grid.shape[2:]), coord, dtype=ct,
                                     name="grid_coords"))

    def fetch(n: Any, c: Any, positions: list[Any]) -> Any:
        index, valid = [n, c], None
        for axis, p in enumerate(positions):
            size = dims[axis]
            if padding == "zeros":
                ok = b.logical_and(b.ge(p, 0.0), b.le(p, float(size - 1)))
                valid = ok if valid is None else b.logical_and(valid, ok)
            elif padding == "reflection":
                p = b.call("trunc", _reflect(b, p, *bounds[axis]))
            index.append(_clamp_index(b, p, size))
        v = b.cast(data[tuple(index)], ct)
        return v if valid is None else b.select(valid, v, b.const(0, ct))

    def f(n: Any, c: Any, *o: Any) -> Any:
        taps = []
        for axis in range(nd):
            x = coords[(n, b.const(axis, "int64"), *o)]
            if method == "nearest":
                taps.append([(b.call("trunc", x), None)])
                continue
            base = b.call("floor", x)
            t = x - base
            if method == "bilinear":
                taps.append([(base, b.const(1, ct) - t), (base + 1.0, t)])
            else:
                taps.append([(base + float(j - 1), w) for j, w in enumerate(_cubic(b, t))])

        def interp(axis: int, positions: list[Any]) -> Any:
            if axis == nd:
                return fetch(n, c, positions)
            total = None
            for p, w in taps[axis]:
                v = interp(axis + 1, positions + [p])
                if w is not None:
                    v = v * w
                total = v if total is None else total + v
            return total
        return b.cast(interp(0, []), dtype)
    return b.compute(out_shape, f, dtype=dtype, name="grid_sample")
