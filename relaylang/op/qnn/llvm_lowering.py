"""LLVM lowerings of qnn.quantize and qnn.dequantize: one elementwise compute each, the
scale and zero point read at the element's per-tensor / per-axis / per-block index.
The arithmetic is the NumPy kernels' (`numpy_kernels.py`) step for step:

- quantize: data / scale in float32 (float64 when that is the division's precision),
  rounded to float16 when float16 is; round half to even as floor plus a comparison of
  the remainder with 1/2 (the loop IR's `round` rounds half away from zero; x - floor(x)
  is exact); the zero point added, NaN sent to the low end, clamped to the output range
  and converted (in float64 when the output or the zero point has 32 bits, so the sum is
  exact there too).
- dequantize: (float32(data) - zero_point) * scale in float32 (float64 for 32-bit
  integers or a float64 scale), every step exact but float32(data) for 32-bit integers and
  the product, rounded once to the output dtype.

bfloat16 and the float8/float4/int4/int2 carriers are not in the loop IR: such calls run
the NumPy kernel (NotImplementedError is the lowering's "no lowering here").
"""
from __future__ import annotations

from typing import Any

from ...ir.dtype import CARRIED
from ..registry import implement
from .relations import division_dtype, integer_range, product_dtype


def _check_dtypes(*dtypes: str) -> None:
    for d in dtypes:
        if d in CARRIED:
            raise NotImplementedError(f"{d} is not in the loop IR")


def _param_index(b: Any, t: Any, idx: tuple, rank: int, axis: int, block: int) -> tuple:
    """The index into scale / zero point `t` of data element `idx`."""
    if t.ndim == 0:
        return ()
    if block:
        if t.ndim != rank:                    # a one-element zero point: per tensor
            return (0,) * t.ndim
        out = list(idx)
        out[axis] = b.floordiv(idx[axis], block)
        return tuple(out)
    if t.shape[0] == 1:
        return (0,)
    return (idx[axis],)


def _axis(attrs: Any, rank: int) -> int:
    axis = int(attrs.axis)
    return axis + rank if axis < 0 and rank else axis


def round_half_even(b: Any, q: Any) -> Any:
    """rint(q) for a float expression: floor(q), plus one when the remainder is above 1/2
    or exactly 1/2 with an odd floor (NaN and infinities come out as themselves)."""
    dt = q.dtype
    f = b.call("floor", q)
    d = q - f
    half = b.const(0.5, dt)
    up = f + b.const(1.0, dt)
    even = b.eq(f - b.const(2.0, dt) * b.call("floor", f * half), b.const(0.0, dt))
    return b.select(b.gt(d, half), up, b.select(b.lt(d, half), f, b.select(even, f, up)))


@implement("qnn.quantize", target="llvm")
def quantize(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, scale, zero = inputs
    out = str(out_type.dtype)
    _check_dtypes(x.dtype, scale.dtype, zero.dtype, out)
    bounds = integer_range(out)
    if bounds is None:
        raise NotImplementedError(f"qnn.quantize to {out}")
    lo, hi = bounds
    precision = division_dtype(x.dtype, scale.dtype)
    wide = "float64" if precision == "float64" else "float32"
    acc = "float64" if max(_bits(out), _bits(zero.dtype)) >= 32 or wide == "float64" \
        else "float32"
    shape = tuple(int(d) for d in out_type.shape)
    rank, block = len(shape), int(attrs.block_size)
    axis = _axis(attrs, rank)

    def f(*idx: Any) -> Any:
        s = scale[_param_index(b, scale, idx, rank, axis, block)]
        z = zero[_param_index(b, zero, idx, rank, axis, block)]
        q = b.cast(x[idx], wide) / b.cast(s, wide)
        if precision in ("float16",):
            q = b.cast(b.cast(q, "float16"), wide)
        r = b.cast(round_half_even(b, q), acc) + b.cast(z, acc)
        clamped = b.max(b.min(r, b.const(float(hi), acc)), b.const(float(lo), acc))
        r = b.select(b.call("isnan", r), b.const(float(lo), acc), clamped)
        return b.cast(r, out)
    return b.compute(shape, f, dtype=out, name="quantize")


def _bits(dtype: str) -> int:
    from ...ir.dtype import dtype_bits
    return dtype_bits(dtype)


@implement("qnn.dequantize", target="llvm")
def dequantize(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, scale, zero = inputs
    out = str(out_type.dtype)
    _check_dtypes(x.dtype, scale.dtype, zero.dtype, out)
    wide = product_dtype(x.dtype, zero.dtype, scale.dtype)
    shape = tuple(int(d) for d in out_type.shape)
    rank, block = len(shape), int(attrs.block_size)
    axis = _axis(attrs, rank)

    def f(*idx: Any) -> Any:
        s = scale[_param_index(b, scale, idx, rank, axis, block)]
        z = zero[_param_index(b, zero, idx, rank, axis, block)]
        y = (b.cast(b.cast(x[idx], "float32"), wide) - b.cast(z, wide)) * b.cast(s, wide)
        return b.cast(y, out)
    return b.compute(shape, f, dtype=out, name="dequantize")
