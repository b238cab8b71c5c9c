"""LLVM lowering of vision.roi_align (vision.all_class_non_max_suppression has none: its
selection is sequential and data-dependent, and it runs its NumPy kernel).

For a fixed sample_ratio (> 0) every bin has the same g x g samples, so a bin is a
reduction over two axes of static extent: the roi's geometry is computed from its row
(loads of `rois`) in float32 (float64 for float64 data), as in the kernel, and each
sample reads its four corners with the kernel's clamping; sums are divided by g * g afterwards. An adaptive
sample_ratio (<= 0) makes the sample count depend on the roi's values: that case is
refused here (NotImplementedError) and runs the NumPy kernel. A batch index outside
the data is clamped into it here (the kernel reports it).
"""
from __future__ import annotations

from typing import Any

from ..registry import implement


def _index(b: Any, p: Any, n: int) -> Any:
    """A float position as an int64 index in [0, n - 1] (NaN -> 0)."""
    p = b.select(b.ge(p, 0.0), p, b.const(0, p.dtype))
    p = b.select(b.le(p, float(n - 1)), p, b.const(n - 1, p.dtype))
    return b.cast(p, "int64")


def _axis(b: Any, c: Any, size: int) -> tuple[Any, Any, Any, Any, Any]:
    F = c.dtype
    valid = b.logical_and(b.ge(c, -1.0), b.le(c, float(size)))
    c = b.max(c, 0.0)
    lo = b.call("trunc", c)
    last = b.ge(lo, float(size - 1))
    lo = b.select(last, b.const(size - 1, F), lo)
    hi = b.select(last, b.const(size - 1, F), lo + 1.0)
    c = b.select(last, lo, c)
    frac = c - lo
    return _index(b, lo, size), _index(b, hi, size), b.const(1, F) - frac, frac, valid


@implement("vision.roi_align", target="llvm")
def roi_align(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, rois = inputs
    ratio = int(attrs.sample_ratio)
    if ratio <= 0:
        raise NotImplementedError("roi_align with an adaptive sample_ratio (the sample "
                                  "count depends on the rois' values)")
    nhwc = attrs.layout == "NHWC"
    if nhwc:
        batch, height, width, _ = data.shape
    else:
        batch, _, height, width = data.shape
    pooled = tuple(int(p) for p in attrs.pooled_size)
    if len(pooled) == 1:
        pooled = pooled * 2
    ph, pw = pooled
    dtype = str(out_type.dtype)
    F = "float64" if dtype == "float64" else "float32"
    shape = tuple(int(d) for d in out_type.shape)
    if 0 in shape or height == 0 or width == 0:
        return b.compute(shape, lambda *i: b.const(0, dtype), name="roi_align")
    scale = float(attrs.spatial_scale)
    offset = 0.5 if attrs.aligned else 0.0
    mode = attrs.mode

    def sample(r: Any, c: Any, i: Any, j: Any, sy: Any, sx: Any) -> Any:
        def coord(k: int) -> Any:
            return b.cast(rois[r, k], F) * scale - offset
        x1, y1, x2, y2 = coord(1), coord(2), coord(3), coord(4)
        rw, rh = x2 - x1, y2 - y1
        if not attrs.aligned:
            rw, rh = b.max(rw, 1.0), b.max(rh, 1.0)
        bh, bw = rh / float(ph), rw / float(pw)
        y = y1 + b.cast(i, F) * bh + (b.cast(sy, F) + 0.5) * bh / float(ratio)
        x = x1 + b.cast(j, F) * bw + (b.cast(sx, F) + 0.5) * bw / float(ratio)
        ylo, yhi, hy, ly, vy = _axis(b, y, height)
        xlo, xhi, hx, lx, vx = _axis(b, x, width)
        valid = b.logical_and(vy, vx)
        n = _index(b, b.cast(rois[r, 0], F), batch)

        def at(yy: Any, xx: Any) -> Any:
            return b.cast(data[(n, yy, xx, c) if nhwc else (n, c, yy, xx)], F)

        zero = b.const(0, F)
        terms = [b.select(valid, hy * hx, zero) * at(ylo, xlo),
                 b.select(valid, hy * lx, zero) * at(ylo, xhi),
                 b.select(valid, ly * hx, zero) * at(yhi, xlo),
                 b.select(valid, ly * lx, zero) * at(yhi, xhi)]
        if mode == "onnx_max":
            return b.max(b.max(terms[0], terms[1]), b.max(terms[2], terms[3]))
        return terms[0] + terms[1] + terms[2] + terms[3]

    def pooled_bin(*o: Any) -> Any:
        r, c, i, j = (o[0], o[3], o[1], o[2]) if nhwc else o
        sy, sx = b.reduce_axis(ratio, "sy"), b.reduce_axis(ratio, "sx")
        v = sample(r, c, i, j, sy, sx)
        return b.reduce_sum(v, [sy, sx]) if mode == "avg" else b.reduce_max(v, [sy, sx])
    acc = b.compute(shape, pooled_bin, dtype=F, name="roi_bins")
    if mode == "avg":
        return b.compute(shape, lambda *o: b.cast(acc[o] / float(ratio * ratio), dtype),
                         dtype=dtype, name="roi_align")
    return b.compute(shape, lambda *o: b.cast(acc[o], dtype), dtype=dtype, name="roi_align")
