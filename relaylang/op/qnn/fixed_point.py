"""TVM's requantization arithmetic (src/relay/qnn/op/requantize.cc, src/relay/qnn/utils.cc),
shared by the NumPy kernels and the QnnCanonicalize pass, so both compute the same values.

A requantization multiplies (data - input_zero_point) by input_scale / output_scale (a
double, from the float32 scales) and adds output_zero_point:

- compute_dtype "int64" (TVM's default, also "None"): the multiplier as a fixed-point
  number, `fixed_point_multiplier_shift` (frexp; the significand times 2^31 rounded half
  away from zero), applied in int64: `(x << left_shift) * significand`, plus the rounding
  term, shifted right by 31 + right_shift; "UPWARD" (also "None") adds 2^(s-1),
  "TONEAREST" adds 2^(s-1) for non-negative products and 2^(s-1) - 1 for negative ones.
  Every int32 and int64 step wraps as TVM's ops do. A multiplier below 2^-32 (a right
  shift of 63 bits or more, undefined in TVM's arithmetic) scales to 0, which is what
  the exact product rounds to.
- compute_dtype "float32" / "float64": (float(data) - float(zp)) * float(multiplier) +
  float(output_zp) in that precision, rounded as TVM's Upward (floor(v + 0.5)) or
  Tonearest (half away from zero), clamped to the output dtype's range before the
  conversion to an integer (TVM's conversion of an out-of-range float is undefined).

Then the result is clipped to the output dtype (int32 results are not clipped: they
wrap, as TVM's).
"""
from __future__ import annotations

import math
from typing import Any

INT_RANGES = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767),
              "uint16": (0, 65535), "int32": (-(1 << 31), (1 << 31) - 1)}


def rounding_of(attr: Any) -> str:
    """The rounding a requantize computes with ("None" is TVM's default, UPWARD)."""
    return "UPWARD" if str(attr) == "None" else str(attr)


def compute_dtype_of(attr: Any) -> str:
    """The precision a requantize computes in ("None" is TVM's default, int64)."""
    return "int64" if str(attr) == "None" else str(attr)


def fixed_point_multiplier_shift(multiplier: float) -> tuple[int, int]:
    """TVM's GetFixedPointMultiplierShift: (significand as an int32 with 31 fraction bits,
    exponent), with the multipliers below 2^-32 (and 0) as (0, 0)."""
    if multiplier == 0.0:
        return 0, 0
    sig, exp = math.frexp(multiplier)
    scaled = sig * (1 << 31)                              # exact: a power of two
    q = math.floor(abs(scaled) + 0.5)                     # std::round: half away from zero
    q = q if scaled >= 0 else -q
    if q == 1 << 31:
        q //= 2
        exp += 1
    if 31 - exp >= 63:
        return 0, 0
    return int(q), int(exp)


def shifts(multiplier: float) -> tuple[int, int, int]:
    """(significand, left shift, total right shift) of a multiplier."""
    q, exp = fixed_point_multiplier_shift(multiplier)
    left = max(0, exp)
    right = 0 if exp > 0 else -exp
    return q, left, right + 31


def float_bounds(dtype: str, precision: str) -> tuple[float, float]:
    """The output range of `dtype` as values of the float `precision` inside it (the
    float clamp before the conversion to an integer)."""
    import numpy as np
    lo, hi = INT_RANGES[dtype]
    f = np.dtype(precision).type
    top = f(hi)
    if float(top) > hi:
        top = np.nextafter(top, f(-np.inf))
    return float(f(lo)), float(top)
