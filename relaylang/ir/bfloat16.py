"""bfloat16 values without a NumPy dtype: bit patterns in a one-field structured dtype.

The IR's constants, the reference kernels, the parser's metadata blobs and the
executors all hold a bfloat16 tensor as `BFLOAT16` arrays: arithmetic on them fails
loudly (a kernel that forgot bfloat16 cannot compute on the integers), and a uint16
tensor stays distinguishable from a bfloat16 one. `to_bfloat16` / `from_bfloat16`
convert exactly as described below; `relaylang.op.numpy_support` builds the kernels'
compute-in-float32 rule on them. NumPy is imported with this module (not by
`import relaylang`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

SINGLE = np.dtype(np.float32)
Array = np.ndarray


# Values: every kernel computes bfloat16 in float32 and rounds each result once, to
# nearest even (`to_bfloat16`); float32 -> bfloat16 -> float32 is exact (`from_bfloat16`).
# bfloat16 has float32's exponent range, so rounding keeps subnormals (no flush) and
# overflows to inf only past bfloat16's largest value plus half an ulp. A NaN stays a NaN
# of the same sign with the top 7 payload bits; if those are all zero the quiet bit is set
# (truncating would give inf). So bfloat16 -> float32 -> bfloat16 is the identity on all
# 65536 bit patterns, signalling NaNs included, and ops that only move values are exact.

BFLOAT16 = np.dtype([("bfloat16", "<u2")])
_BITS16 = np.dtype("<u2")


def is_bfloat16(x: Any) -> bool:
    """Whether `x` is an array (or NumPy scalar) carrying bfloat16."""
    return getattr(x, "dtype", None) == BFLOAT16


def bfloat16_bits(x: Array) -> Array:
    """The uint16 bit patterns of a bfloat16 array (a view)."""
    return np.asarray(x).view(_BITS16)


def from_bfloat16(x: Array) -> Array:
    """bfloat16 -> float32, exactly (the bits shifted into float32's upper half)."""
    bits = bfloat16_bits(x).astype(np.uint32)
    return (bits << np.uint32(16)).view(SINGLE)


def _round_to_bfloat16_bits(x: Array) -> Array:
    """float32 -> bfloat16 bit patterns: round to nearest even, NaN kept (module notes)."""
    u = np.ascontiguousarray(x, dtype=SINGLE).view(np.uint32)
    rounded = ((u + (np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))))
               >> np.uint32(16)).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        top = (u >> np.uint32(16)).astype(np.uint16)
        top |= np.where((top & np.uint16(0x7F)) == 0, np.uint16(0x40), np.uint16(0))
        rounded = np.where(nan, top, rounded)
    return rounded


def to_bfloat16(x: Any) -> Array:
    """An array (or scalar, or nested lists) of numbers as bfloat16: float32 values rounded
    to nearest even; other dtypes are converted to float32 first, as TVM's legalisation
    casts them (so a float64 or a large int64 can round twice). bfloat16 stays as it is."""
    a = np.asarray(x)
    if a.dtype == BFLOAT16:
        return a
    if a.dtype != SINGLE:
        with np.errstate(over="ignore", invalid="ignore"):
            a = a.astype(SINGLE)
    return _round_to_bfloat16_bits(a).view(BFLOAT16).reshape(a.shape)


def relay_dtype(dtype: np.dtype) -> str:
    """The Relay dtype of a kernel array's dtype: `str(dtype)`, `bfloat16` for BFLOAT16,
    the field's name for ir/lowp.py's carriers (the inverse of `carrier_dtype`)."""
    if dtype.kind == "V" and dtype.names:
        return dtype.names[0]
    return str(dtype)
