"""LLVM lowerings of nn.deformable_conv2d and nn.modulated_deformable_conv2d: a first
stage holds the columns (N, C, kh, kw, oh, ow), each the bilinear sample of its input
channel at the offset position (the four neighbours read through a select, indices
clamped into the data so every load is in bounds; NaN positions read neighbour 0),
times the mask; the result is a sum over (C / groups, kh, kw) of columns times weight,
as conv2d. Computed in float32 (float64 for float64 data), as the kernel."""
from __future__ import annotations

from typing import Any

from ..registry import implement
from .numpy_kernels import geometry


def _index(b: Any, p: Any, n: int) -> Any:
    p = b.select(b.ge(p, 0.0), p, b.const(0, p.dtype))
    p = b.select(b.le(p, float(n - 1)), p, b.const(n - 1, p.dtype))
    return b.cast(p, "int64")


def _lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, offset, weight = inputs[:3]
    mask = inputs[3] if len(inputs) > 3 else None
    dtype = str(out_type.dtype)
    ct = "float64" if data.dtype == "float64" else "float32"
    strides, dilation, pads, (oh, ow) = geometry(attrs, data.shape, weight.shape)
    n, c, h, w = data.shape
    o, ci, kh, kw = weight.shape
    shape = (n, o, oh, ow)
    if 0 in shape or c == 0 or ci == 0:
        return b.compute(shape, lambda *i: b.const(0, dtype), dtype=dtype, name="deform_conv")
    cpg = c // int(attrs.deformable_groups)

    def fcol(nn: Any, cc: Any, a: Any, e: Any, i: Any, j: Any) -> Any:
        g = b.floordiv(cc, cpg)
        tap = (g * kh + a) * kw + e
        y = b.cast(i * strides[0] - pads[0] + a * dilation[0], ct) + \
            b.cast(offset[nn, tap * 2, i, j], ct)
        x = b.cast(j * strides[1] - pads[1] + e * dilation[1], ct) + \
            b.cast(offset[nn, tap * 2 + 1, i, j], ct)
        y0, x0 = b.call("floor", y), b.call("floor", x)
        ly, lx = y - y0, x - x0
        total = None
        for dy, wy in ((0.0, b.const(1, ct) - ly), (1.0, ly)):
            for dx, wx in ((0.0, b.const(1, ct) - lx), (1.0, lx)):
                yy, xx = y0 + dy, x0 + dx
                ok = b.logical_and(b.logical_and(b.ge(yy, 0.0), b.le(yy, float(h - 1))),
                                   b.logical_and(b.ge(xx, 0.0), b.le(xx, float(w - 1))))
                v = b.cast(data[nn, cc, _index(b, yy, h), _index(b, xx, w)], ct)
                term = b.select(ok, v, b.const(0, ct)) * (wy * wx)
                total = term if total is None else total + term
        if mask is not None:
            total = total * b.cast(mask[nn, tap, i, j], ct)
        return total
    cols = b.materialize(b.compute((n, c, kh, kw, oh, ow), fcol, dtype=ct, name="deform_cols"))
    opg = o // int(attrs.groups)

    def fout(nn: Any, oo: Any, i: Any, j: Any) -> Any:
        r, a, e = b.reduce_axis(ci, "rc"), b.reduce_axis(kh, "ra"), b.reduce_axis(kw, "re")
        cc = b.floordiv(oo, opg) * ci + r
        return b.reduce_sum(cols[nn, cc, a, e, i, j] * b.cast(weight[oo, r, a, e], ct),
                            [r, a, e])
    acc = b.compute(shape, fout, dtype=ct, name="deform_sum")
    return b.compute(shape, lambda *i: b.cast(acc[i], dtype), dtype=dtype, name="deform_conv")


@implement("nn.deformable_conv2d", target="llvm")
def deformable_conv2d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return _lower(b, inputs, attrs, out_type)


@implement("nn.modulated_deformable_conv2d", target="llvm")
def modulated_deformable_conv2d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return _lower(b, inputs, attrs, out_type)
