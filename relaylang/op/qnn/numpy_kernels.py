"""NumPy reference kernels of qnn.quantize and qnn.dequantize (the family's docstring
gives the arithmetic; it is ONNX's reference implementation's, onnx/reference/ops/
op_quantize_linear.py and op_dequantize_linear.py). The kernels take bfloat16 carriers
themselves: the quotient is rounded to bfloat16 when that is the division's precision."""
from __future__ import annotations

from typing import Any

import numpy as np

from ...ir.dtype import canonical_dtype
from ..numpy_support import (
    BFLOAT16,
    carrier_dtype,
    from_bfloat16,
    implement,
    quietly,
    relay_dtype,
    to_bfloat16,
)
from .relations import LOWP_QUANT, division_dtype, integer_range, product_dtype


def _relay_dtype(x: np.ndarray) -> str:
    return relay_dtype(x.dtype)


def _wide(x: np.ndarray) -> np.ndarray:
    """A carrier widened exactly (bfloat16 and the float8/float4 formats to float32,
    int4/int2 to int8, uint4/uint2 to uint8); any other array as it is."""
    if x.dtype == BFLOAT16:
        return from_bfloat16(x)
    if x.dtype.kind == "V":
        from ...ir.lowp import from_lowp
        return from_lowp(x)
    return x


def largest_finite(name: str) -> float:
    """The largest finite value of a float8/float4 format."""
    from ...ir.lowp import from_lowp, from_lowp_bits, lowp_bits_of
    values = from_lowp(from_lowp_bits(np.arange(1 << lowp_bits_of(name)), name))
    return float(np.max(values[np.isfinite(values)]))


def expand(value: np.ndarray, shape: tuple[int, ...], axis: int, block: int) -> np.ndarray:
    """A scale or zero point as an array that broadcasts against data of `shape`: per
    tensor (a scalar or one entry), per axis (a vector along `axis`) or per block (each
    entry repeated `block` times along `axis`, cut to the data's length)."""
    rank = len(shape)
    if block:
        axis = axis + rank if axis < 0 else axis
        if value.ndim == 0 or value.size == 1 and value.ndim != rank:
            return value.reshape(())
        out = np.repeat(value, block, axis=axis)
        return out.take(np.arange(shape[axis]), axis=axis)
    if value.ndim == 0 or value.size == 1:
        return value.reshape(())
    axis = axis + rank if axis < 0 else axis
    dims = [1] * rank
    dims[axis] = value.size
    return value.reshape(dims)


def _rounded_quotient(x: np.ndarray, scale: np.ndarray, precision: str) -> np.ndarray:
    """x / scale in `precision` (float16 and bfloat16 divide in float32 and round once,
    exactly as a division in their own precision rounds), returned in float64 (exact)."""
    if precision in ("float16", "bfloat16"):
        q = x.astype(np.float32) / scale.astype(np.float32)
        q = q.astype(np.float16) if precision == "float16" else from_bfloat16(to_bfloat16(q))
    else:
        q = x.astype(precision) / scale.astype(precision)
    return np.asarray(q, np.float64)


def _to_float_format(q: np.ndarray, z: np.ndarray, precision: str, name: str,
                     saturate: bool) -> np.ndarray:
    """data / scale (+ a nonzero zero point, added in the division's precision) rounded to
    the float8/float4 format `name`, clamped to its finite range first when saturating."""
    from ...ir.lowp import to_lowp
    wide = "float64" if precision == "float64" else "float32"
    v = q.astype(wide)
    if np.any(z != 0):
        v = v + z.astype(wide)
    if saturate or name == "float4_e2m1fn":
        big = largest_finite(name)
        v = np.clip(v, -big, big)
    return to_lowp(v.astype(np.float32), name)


def _handles_carriers(fn: Any) -> Any:
    """Mark a kernel that widens bfloat16 and the low-precision carriers itself (`_wide`)
    and rounds once to its output (numpy_support's registry check reads the mark)."""
    fn.handles_bfloat16 = True
    return fn


@implement("qnn.quantize", bfloat16=False)
@_handles_carriers
def quantize(inputs: list, attrs: Any) -> np.ndarray:
    x, scale, zero = inputs
    out = canonical_dtype(str(attrs.out_dtype)) or str(attrs.out_dtype)
    precision = division_dtype(_relay_dtype(x), _relay_dtype(scale))
    axis, block = int(attrs.axis), int(attrs.block_size)
    s = expand(_wide(scale), x.shape, axis, block)
    z = expand(_wide(zero), x.shape, axis, block).astype(np.float64)
    if out in LOWP_QUANT:
        return quietly(lambda: _to_float_format(
            _rounded_quotient(_wide(x), s, precision), z, precision, out,
            bool(attrs.saturate)))
    bounds = integer_range(out)
    if bounds is None:
        raise ValueError(f"qnn.quantize cannot produce {out}")
    lo, hi = bounds

    def compute() -> np.ndarray:
        r = np.rint(_rounded_quotient(_wide(x), s, precision)) + z
        r = np.where(np.isnan(r), lo, np.clip(r, lo, hi))
        if out in ("int4", "uint4", "int2", "uint2"):
            from ...ir.lowp import to_lowp
            return to_lowp(r.astype(np.int64), out)
        return r.astype(carrier_dtype(out))
    return quietly(compute)


@implement("qnn.dequantize", bfloat16=False)
@_handles_carriers
def dequantize(inputs: list, attrs: Any) -> np.ndarray:
    x, scale, zero = inputs
    out = str(attrs.out_dtype) or "float32"
    wide = product_dtype(_relay_dtype(x), _relay_dtype(zero), _relay_dtype(scale))
    axis, block = int(attrs.axis), int(attrs.block_size)
    s = expand(_wide(scale), x.shape, axis, block).astype(wide)
    z = expand(_wide(zero), x.shape, axis, block).astype(wide)

    def compute() -> np.ndarray:
        y = (_wide(x).astype(np.float32).astype(wide) - z) * s
        if canonical_dtype(out) == "bfloat16":
            return to_bfloat16(y.astype(np.float32) if wide == "float32" else y)
        return y.astype(carrier_dtype(out))
    return quietly(compute)


# ---------------------------------------------------------------- TVM's qnn compute ops
# The arithmetic of TVM's canonical forms (fixed_point.py and the family's docstring).


def _wrap32(v: np.ndarray) -> np.ndarray:
    return np.asarray(v).astype(np.int64).astype(np.int32).astype(np.int64)


def _along_axis(value: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scalar, or a vector laid along `axis` of a rank-`rank` tensor."""
    value = np.asarray(value)
    if value.ndim == 0 or rank == 0:
        return value.reshape(()) if value.size == 1 else value
    dims = [1] * rank
    dims[axis] = value.size
    return value.reshape(dims)


def _norm_axis(axis: int, rank: int) -> int:
    if rank <= 1:
        return 0
    return axis + rank if axis < 0 else axis


def requantize_values(x: np.ndarray, in_scale: np.ndarray, in_zp: np.ndarray,
                      out_scale: np.ndarray, out_zp: np.ndarray, axis: int, rounding: str,
                      compute: str, out_dtype: str) -> np.ndarray:
    """TVM's RequantizeLower on values (fixed_point.py), `axis` already non-negative."""
    from .fixed_point import INT_RANGES, float_bounds, shifts
    rank = x.ndim
    out_s = float(np.float32(np.asarray(out_scale).reshape(())))
    if out_s == 0.0:
        raise ValueError("qnn.requantize: output_scale is 0")
    scales = np.asarray(in_scale, np.float32).reshape(-1)
    multipliers = [float(s) / out_s for s in scales]
    zp = _along_axis(np.asarray(in_zp).astype(np.int64), rank, axis)
    ozp = np.int64(np.asarray(out_zp).reshape(()))
    with np.errstate(over="ignore"):
        if compute == "int64":
            t = _wrap32(_wrap32(x.astype(np.int64)) - zp)
            sig, left, total = (np.array(v, np.int64) for v in zip(*map(shifts, multipliers)))
            sig, left, total = (_along_axis(v, rank, axis) for v in (sig, left, total))
            v = np.left_shift(t, left) * sig
            half = np.left_shift(np.int64(1), total - 1)
            v = v + (half if rounding == "UPWARD" else np.where(v >= 0, half, half - 1))
            t = _wrap32(np.right_shift(v, total))
            t = _wrap32(t + ozp)
            if out_dtype == "int32":
                return t.astype(np.int32)
        else:
            f = np.dtype(compute).type
            t = x.astype(f)
            t = t - zp.astype(f)
            m = _along_axis(np.array(multipliers, dtype=f), rank, axis)
            t = t * m if m.ndim else f(m) * t
            t = t + f(ozp)
            half = f(0.5)
            if rounding == "UPWARD":
                t = np.floor(t + half)
            else:
                t = np.where(t < f(0), -np.floor(-t + half), np.floor(t + half))
            lo, hi = float_bounds(out_dtype, compute)
            t = np.clip(t, f(lo), f(hi)).astype(np.int64)
        lo, hi = INT_RANGES[out_dtype]
        return np.clip(t, lo, hi).astype(out_dtype)


@implement("qnn.requantize")
def requantize(inputs: list, attrs: Any) -> np.ndarray:
    from .fixed_point import compute_dtype_of, rounding_of
    x, in_scale, in_zp, out_scale, out_zp = inputs
    rank = x.ndim
    axis = int(attrs.axis)
    axis = (axis + rank if axis < 0 else axis) if rank else 0
    return requantize_values(x, in_scale, in_zp, out_scale, out_zp, axis,
                             rounding_of(attrs.rounding), compute_dtype_of(attrs.compute_dtype),
                             str(attrs.out_dtype))


def _exact_products(a: np.ndarray, b: np.ndarray, terms: int) -> str:
    """float64 when every sum of `terms` products of a and b is exact there (BLAS),
    else int64 (wrapping, which the truncation to the output dtype does anyway)."""
    big = (int(np.max(np.abs(a), initial=0)) * int(np.max(np.abs(b), initial=0))
           * max(terms, 1))
    return "float64" if big < (1 << 53) else "int64"


def _to_int_dtype(v: np.ndarray, dtype: str) -> np.ndarray:
    if v.dtype == np.float64:
        v = v.astype(np.int64)
    return v.astype(np.int64).astype(dtype)


@implement("qnn.conv2d")
def conv2d(inputs: list, attrs: Any) -> np.ndarray:
    import dataclasses

    from ..nn.conv_kernels import conv_kernel
    from .relations import qnn_out_dtype
    data, weight, izp, kzp, _, _ = inputs
    out = qnn_out_dtype(attrs)
    x = data.astype(np.int64) - np.int64(np.asarray(izp).reshape(()))
    o_axis = str(attrs.kernel_layout).find("O")
    w = weight.astype(np.int64) - _along_axis(np.asarray(kzp).astype(np.int64), weight.ndim,
                                              o_axis)
    terms = weight.size // max(weight.shape[o_axis], 1)
    acc = _exact_products(x, w, terms)
    y = conv_kernel(2)([x.astype(acc), w.astype(acc)],
                       dataclasses.replace(attrs, out_dtype=acc))
    return _to_int_dtype(y, out)


@implement("qnn.dense")
def dense(inputs: list, attrs: Any) -> np.ndarray:
    from .relations import qnn_out_dtype
    data, weight, izp, kzp, _, _ = inputs
    out = qnn_out_dtype(attrs)
    x = data.astype(np.int64) - np.int64(np.asarray(izp).reshape(()))
    w = weight.astype(np.int64) - np.asarray(kzp).astype(np.int64).reshape(-1, 1) \
        if np.asarray(kzp).ndim else weight.astype(np.int64) - np.int64(kzp)
    acc = _exact_products(x, w, weight.shape[1])
    with np.errstate(over="ignore"):
        y = np.matmul(x.astype(acc), w.astype(acc).T)
    return _to_int_dtype(y, out)


def _requantize_operand(x: np.ndarray, scale: np.ndarray, zp: np.ndarray, out_scale: Any,
                        out_zp: Any, axis: int) -> np.ndarray:
    """TVM's RequantizeOrUpcast: the operand in the output's parameters, int32 (as
    int64 values)."""
    r = requantize_values(x, scale, zp, out_scale, out_zp, _norm_axis(axis, x.ndim),
                          "UPWARD", "int64", "int32")
    return r.astype(np.int64)


def _saturate(v: np.ndarray, dtype: str) -> np.ndarray:
    from .fixed_point import INT_RANGES
    lo, hi = INT_RANGES[dtype]
    return np.clip(_wrap32(v), lo, hi).astype(dtype)


@implement("qnn.add")
def add(inputs: list, attrs: Any) -> np.ndarray:
    lhs, rhs, ls, lzp, rs, rzp, os, ozp = inputs
    a = _requantize_operand(lhs, ls, lzp, os, ozp, int(attrs.lhs_axis))
    b = _requantize_operand(rhs, rs, rzp, os, ozp, int(attrs.rhs_axis))
    return _saturate(_wrap32(a + b) - np.int64(np.asarray(ozp).reshape(())), str(lhs.dtype))


@implement("qnn.subtract")
def subtract(inputs: list, attrs: Any) -> np.ndarray:
    lhs, rhs, ls, lzp, rs, rzp, os, ozp = inputs
    a = _requantize_operand(lhs, ls, lzp, os, ozp, int(attrs.lhs_axis))
    b = _requantize_operand(rhs, rs, rzp, os, ozp, int(attrs.rhs_axis))
    return _saturate(_wrap32(a - b) + np.int64(np.asarray(ozp).reshape(())), str(lhs.dtype))


def mul_scale(ls: np.ndarray, rs: np.ndarray) -> np.ndarray:
    """The product's scale: float32(lhs_scale * rhs_scale), per channel when either is
    a vector (a scalar one repeated)."""
    a = np.asarray(ls, np.float32).astype(np.float64)
    b = np.asarray(rs, np.float32).astype(np.float64)
    return (a * b).astype(np.float32)


def mul_axis(lhs_rank: int, out_rank: int, lhs_axis: int) -> int:
    """The quantized axis of qnn.mul's product: lhs_axis, counted in the broadcast
    result."""
    return _norm_axis(lhs_axis, lhs_rank) + (out_rank - lhs_rank) if lhs_rank > 1 \
        else max(out_rank - 1, 0)


@implement("qnn.mul")
def mul(inputs: list, attrs: Any) -> np.ndarray:
    lhs, rhs, ls, lzp, rs, rzp, os, ozp = inputs
    la, ra = _norm_axis(int(attrs.lhs_axis), lhs.ndim), _norm_axis(int(attrs.rhs_axis), rhs.ndim)
    a = _wrap32(lhs.astype(np.int64) - _along_axis(np.asarray(lzp).astype(np.int64),
                                                   lhs.ndim, la))
    b = _wrap32(rhs.astype(np.int64) - _along_axis(np.asarray(rzp).astype(np.int64),
                                                   rhs.ndim, ra))
    with np.errstate(over="ignore"):
        p = _wrap32(a * b)
    scale = mul_scale(ls, rs)
    axis = mul_axis(lhs.ndim, p.ndim, int(attrs.lhs_axis)) if scale.ndim else p.ndim - 1
    return requantize_values(p, scale, np.int32(0), os, ozp, max(axis, 0), "UPWARD", "int64",
                             str(lhs.dtype))


@implement("qnn.concatenate")
def concatenate(inputs: list, attrs: Any) -> np.ndarray:
    data, scales, zps, os, ozp = inputs
    parts = []
    for x, s, z in zip(data, scales, zps):
        same = (np.float32(s) == np.float32(os)) and (np.int64(z) == np.int64(ozp))
        parts.append(x if same else requantize_values(
            x, s, z, os, ozp, max(x.ndim - 1, 0), "UPWARD", "int64", str(x.dtype)))
    return np.concatenate(parts, axis=int(attrs.axis))


@implement("qnn.conv2d_transpose")
def conv2d_transpose(inputs: list, attrs: Any) -> np.ndarray:
    import dataclasses

    from ..nn.conv_kernels import conv_kernel
    from .relations import qnn_out_dtype
    data, weight, izp, kzp, _, _ = inputs
    out = qnn_out_dtype(attrs)
    x = data.astype(np.int64) - np.int64(np.asarray(izp).reshape(-1)[0])
    o_axis = str(attrs.kernel_layout).find("O")
    w = weight.astype(np.int64) - _along_axis(np.asarray(kzp).astype(np.int64), weight.ndim,
                                              o_axis)
    terms = weight.size // max(weight.shape[o_axis], 1)
    acc = _exact_products(x, w, terms)
    y = conv_kernel(2, transposed=True)([x.astype(acc), w.astype(acc)],
                                        dataclasses.replace(attrs, out_dtype=acc))
    return _to_int_dtype(y, out)


@implement("qnn.avg_pool2d")
def avg_pool2d(inputs: list, attrs: Any) -> np.ndarray:
    from ..registry import get_op_def
    data, scale, zp, os, ozp = inputs
    q = requantize_values(data, scale, zp, os, ozp, max(data.ndim - 1, 0), "UPWARD", "int64",
                          "int32")
    pool = get_op_def("nn.avg_pool2d")
    assert pool is not None and pool.kernel is not None
    return _saturate(np.asarray(pool.kernel([q], attrs)).astype(np.int64), str(data.dtype))
