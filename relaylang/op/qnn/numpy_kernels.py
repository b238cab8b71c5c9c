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
