"""Low-precision dtypes without a NumPy dtype: float8, float4, 4- and 2-bit integers.

    float8_e4m3fn  float8_e4m3fnuz  float8_e5m2  float8_e5m2fnuz  float8_e8m0fnu
    float4_e2m1fn  int4  uint4  int2  uint2

(the names of TVM and ml_dtypes). They are carried as bfloat16 is (ir/bfloat16.py): in a
one-field structured dtype named after the Relay dtype, one element a byte, so that
arithmetic on a carrier fails loudly and a uint8 tensor stays a uint8 tensor:

- the float formats hold their bit pattern in the low bits of a uint8 field
  (`lowp_bits` gives it; float4_e2m1fn uses the low 4 bits);
- the integer formats hold their value in an int8 (int4, int2) or uint8 (uint4, uint2)
  field: one value a byte, not packed.

`from_lowp` widens a carrier exactly (float formats to float32, integer formats to
int8/uint8); `to_lowp` converts numbers. The conversions are our own and exact, and agree
with ml_dtypes' `astype` (tests/ir/test_lowp_dtypes.py checks every bit pattern):

- floats -> a float format: the value as float32 (other dtypes are converted to float32
  first, as bfloat16's are), rounded to nearest even. Not saturating: past the largest
  finite value (after rounding) e5m2 gives inf, the fn formats NaN, the fnuz formats
  their one NaN (0x80); float4_e2m1fn, which has neither, gives its largest value.
  Infinities likewise. fnuz formats have no -0 (it becomes +0). NaN becomes the format's
  NaN with the same sign (0x7F/0xFF for e4m3fn, 0x7E/0xFE for e5m2, 0x80 for fnuz);
  float4_e2m1fn, without NaN, gives -0 for a NaN of positive sign and +0 otherwise
  (ml_dtypes' choice).
- float8_e8m0fnu is an exponent alone (2**(bits - 127), 0xFF NaN, no sign, no zero):
  a positive value rounds to the nearest power of two, ties upwards; float32's
  subnormals give 2**-127 up to 2**-127 and 2**-126 above it (as ml_dtypes does);
  2**127 * 1.5 and above, zero, negatives, inf and NaN give NaN.
- widening gives NaN as float32's quiet NaN with the format's sign bit (negative for
  the fnuz formats' one NaN, positive for e8m0's), as ml_dtypes does.
- numbers -> an integer format: floats truncated toward zero (NaN and inf give 0), then
  wrapped modulo 2**bits, as an integer conversion to a narrower integer wraps.

NumPy is imported with this module (not by `import relaylang`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

Array = np.ndarray
SINGLE = np.dtype(np.float32)


@dataclass(frozen=True)
class FloatFormat:
    """A sign-exponent-mantissa format of `bits` bits: `special` says how it spells
    infinities and NaN: "ieee" (all-ones exponent: inf, NaNs), "fn" (no inf; all ones
    is NaN), "fnuz" (no inf, no -0; the pattern of -0 is the one NaN), "none"."""
    ebits: int
    mbits: int
    bias: int
    special: str

    @property
    def bits(self) -> int:
        return 1 + self.ebits + self.mbits


FLOAT_FORMATS: dict[str, FloatFormat] = {
    "float8_e4m3fn": FloatFormat(4, 3, 7, "fn"),
    "float8_e4m3fnuz": FloatFormat(4, 3, 8, "fnuz"),
    "float8_e5m2": FloatFormat(5, 2, 15, "ieee"),
    "float8_e5m2fnuz": FloatFormat(5, 2, 16, "fnuz"),
    "float4_e2m1fn": FloatFormat(2, 1, 1, "none"),
}
E8M0 = "float8_e8m0fnu"
# name -> (bits, signed)
INT_FORMATS: dict[str, tuple[int, bool]] = {
    "int4": (4, True), "uint4": (4, False), "int2": (2, True), "uint2": (2, False),
}
LOWP_DTYPES: tuple[str, ...] = (*FLOAT_FORMATS, E8M0, *INT_FORMATS)
FLOAT_LOWP: tuple[str, ...] = (*FLOAT_FORMATS, E8M0)

CARRIERS: dict[str, np.dtype] = {
    name: np.dtype([(name, "i1" if INT_FORMATS.get(name, (0, False))[1] else "u1")])
    for name in LOWP_DTYPES
}
_BY_CARRIER: dict[np.dtype, str] = {dtype: name for name, dtype in CARRIERS.items()}


def lowp_bits_of(name: str) -> int:
    """Bits of one element of a low-precision dtype."""
    if name in FLOAT_FORMATS:
        return FLOAT_FORMATS[name].bits
    if name == E8M0:
        return 8
    return INT_FORMATS[name][0]


def lowp_name(dtype: Any) -> str | None:
    """The Relay dtype a carrier dtype holds, or None for any other dtype."""
    if getattr(dtype, "kind", None) != "V":
        return None
    return _BY_CARRIER.get(dtype)


def is_lowp(x: Any) -> bool:
    """Whether `x` is an array (or NumPy scalar) in one of this module's carriers."""
    return lowp_name(getattr(x, "dtype", None)) is not None


def _name_of(x: Array) -> str:
    name = lowp_name(x.dtype)
    if name is None:
        raise TypeError(f"not a low-precision carrier: {x.dtype}")
    return name


# ---------------------------------------------------------------- decoding

def _float_table(fmt: FloatFormat) -> Array:
    """float32 value of every bit pattern of `fmt`."""
    codes = np.arange(1 << fmt.bits)
    sign = np.where(codes >> (fmt.bits - 1), -1.0, 1.0)
    exp = (codes >> fmt.mbits) & ((1 << fmt.ebits) - 1)
    mant = codes & ((1 << fmt.mbits) - 1)
    emin = 1 - fmt.bias
    sub = np.ldexp(mant.astype(np.float64), emin - fmt.mbits)
    normal = np.ldexp(1.0 + mant / (1 << fmt.mbits), exp - fmt.bias)
    values = sign * np.where(exp == 0, sub, normal)
    top = (1 << fmt.ebits) - 1
    if fmt.special == "ieee":
        values = np.where((exp == top) & (mant == 0), sign * np.inf, values)
        values = np.where((exp == top) & (mant != 0), sign * np.nan, values)
    elif fmt.special == "fn":
        values = np.where((exp == top) & (mant == (1 << fmt.mbits) - 1), sign * np.nan, values)
    elif fmt.special == "fnuz":
        values = np.where(codes == 1 << (fmt.bits - 1), np.nan, values)
    return _quiet_nans(values, codes >> (fmt.bits - 1) if fmt.special != "fnuz" else 1)


def _quiet_nans(values: Array, negative: Any) -> Array:
    """float64 values as float32, each NaN the quiet NaN 0x7FC00000 with the sign bit
    `negative` (ml_dtypes' widening: the fnuz formats' one NaN is negative)."""
    nan = np.isnan(values)
    out = np.where(nan, 0.0, values).astype(SINGLE)
    bits = np.where(np.asarray(negative) != 0, np.uint32(0xFFC00000), np.uint32(0x7FC00000))
    return np.where(nan, bits, out.view(np.uint32)).astype(np.uint32).view(SINGLE)


_TABLES: dict[str, Array] = {}


def _table(name: str) -> Array:
    table = _TABLES.get(name)
    if table is None:
        if name == E8M0:
            values = np.ldexp(1.0, np.arange(256) - 127)
            values[255] = np.nan
            table = _quiet_nans(values, 0)
        else:
            table = _float_table(FLOAT_FORMATS[name])
        table.flags.writeable = False
        _TABLES[name] = table
    return table


def lowp_bits(x: Array) -> Array:
    """The bit patterns of a carrier array as uint8 (low `bits` bits; a copy for the
    integer formats, whose carriers hold values)."""
    x = np.asarray(x)
    name = _name_of(x)
    if name in INT_FORMATS:
        bits = INT_FORMATS[name][0]
        return x.view(np.int8 if INT_FORMATS[name][1] else np.uint8).astype(np.uint8) \
            & np.uint8((1 << bits) - 1)
    return x.view(np.uint8)


def from_lowp_bits(bits: Any, name: str) -> Array:
    """Bit patterns (integers; the low bits of the format count) as a carrier array."""
    b = np.asarray(bits).astype(np.uint8) & np.uint8((1 << lowp_bits_of(name)) - 1)
    if name in INT_FORMATS:
        width, signed = INT_FORMATS[name]
        if signed:
            v = b.astype(np.int8)
            v = np.where(v >= (1 << (width - 1)), v - (1 << width), v).astype(np.int8)
            return v.view(CARRIERS[name])
    return np.ascontiguousarray(b).view(CARRIERS[name])


def from_lowp(x: Array) -> Array:
    """A carrier array widened exactly: float formats to float32, int4/int2 to int8,
    uint4/uint2 to uint8."""
    x = np.asarray(x)
    name = _name_of(x)
    if name in INT_FORMATS:
        return x.view(np.int8 if INT_FORMATS[name][1] else np.uint8).copy()
    return _table(name)[x.view(np.uint8)]


# ---------------------------------------------------------------- encoding

def _encode_float(a32: Array, fmt: FloatFormat) -> Array:
    """float32 -> bit patterns of `fmt` (uint8), rounded to nearest even (module notes)."""
    x = a32.astype(np.float64)
    neg = np.signbit(x)
    a = np.abs(x)
    finite = np.isfinite(a)
    a0 = np.where(finite, a, 0.0)
    emin = 1 - fmt.bias
    _, e = np.frexp(a0)                          # a0 = m * 2**e, 0.5 <= m < 1
    q = np.maximum(e - 1, emin) - fmt.mbits      # the exponent of one unit in the last place
    v = np.ldexp(np.rint(np.ldexp(a0, -q)), q)   # rounded to nearest even, exactly
    top = (1 << fmt.ebits) - 1
    if fmt.special == "ieee":
        max_exp, max_mant = top - 1, (1 << fmt.mbits) - 1
    elif fmt.special == "fn":
        max_exp, max_mant = top, (1 << fmt.mbits) - 2
    else:                                        # fnuz, none
        max_exp, max_mant = top, (1 << fmt.mbits) - 1
    largest = np.ldexp(1.0 + max_mant / (1 << fmt.mbits), max_exp - fmt.bias)
    over = v > largest
    v = np.where(over, 0.0, v)
    _, e2 = np.frexp(v)
    normal = (e2 - 1) >= emin
    exp = np.where(normal & (v > 0), e2 - 1 + fmt.bias, 0)
    mant = np.where(normal & (v > 0),
                    np.ldexp(v, fmt.mbits - (e2 - 1)) - (1 << fmt.mbits),
                    np.ldexp(v, fmt.mbits - emin))
    mag = (exp.astype(np.int64) << fmt.mbits) | mant.astype(np.int64)
    sign_bit = 1 << (fmt.bits - 1)
    max_code = (max_exp << fmt.mbits) | max_mant
    nan = np.isnan(x)
    inf = np.isinf(x)
    if fmt.special == "ieee":
        overflow_mag, nan_mag = top << fmt.mbits, (top << fmt.mbits) | (1 << (fmt.mbits - 1))
    elif fmt.special == "fn":
        overflow_mag = nan_mag = (top << fmt.mbits) | ((1 << fmt.mbits) - 1)
    elif fmt.special == "fnuz":
        overflow_mag = nan_mag = -1                 # the one NaN, unsigned: below
    else:
        overflow_mag, nan_mag = max_code, 0
    mag = np.where(over | inf, overflow_mag, mag)
    if fmt.special == "fnuz":
        out = np.where(mag == 0, 0, mag | np.where(neg, sign_bit, 0))
        out = np.where((mag == -1) | nan, sign_bit, out)
    else:
        out = mag | np.where(neg, sign_bit, 0)
        if fmt.special == "none":          # no NaN: ml_dtypes gives -0 for +NaN, +0 for -NaN
            out = np.where(nan, np.where(neg, 0, sign_bit), out)
        else:
            out = np.where(nan, nan_mag | np.where(neg, sign_bit, 0), out)
    return out.astype(np.uint8)


def _encode_e8m0(a32: Array) -> Array:
    x = a32.astype(np.float64)
    ok = np.isfinite(x) & (x > 0)
    frac, e = np.frexp(np.where(ok, x, 1.0))     # x = frac * 2**e, 0.5 <= frac < 1
    code = (e - 1) + 127 + (frac >= 0.75)        # ties (1.5 * 2**k) upwards
    # float32's subnormals (below 2**-126): ml_dtypes gives 2**-126 to all above 2**-127
    code = np.where(x < 2.0 ** -126, np.where(x > 2.0 ** -127, 1, 0), code)
    return np.where(ok & (code <= 254), code, 255).astype(np.uint8)


def _encode_int(a: Array, name: str) -> Array:
    bits, signed = INT_FORMATS[name]
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    if a.dtype.kind == "f":
        x = a.astype(np.float64)
        x = np.where(np.isfinite(x), np.trunc(x), 0.0)
        r = np.fmod(x, float(1 << bits)).astype(np.int64)      # exact
    elif a.dtype.kind in "iu":
        r = (a.astype(np.int64) if a.dtype != np.uint64
             else (a & np.uint64((1 << bits) - 1)).astype(np.int64))
    else:
        raise TypeError(f"cannot convert {a.dtype} to {name}")
    r = r & ((1 << bits) - 1)
    if signed:
        r = np.where(r >= (1 << (bits - 1)), r - (1 << bits), r)
        return r.astype(np.int8).view(CARRIERS[name])
    return r.astype(np.uint8).view(CARRIERS[name])


def to_lowp(x: Any, name: str) -> Array:
    """An array (or scalar, or nested lists) of numbers as the low-precision dtype `name`
    (module notes). A carrier of another low-precision dtype is widened first; one of
    `name` stays as it is."""
    if name not in CARRIERS:
        raise ValueError(f"{name} is not a low-precision dtype")
    a = np.asarray(x)
    src = lowp_name(a.dtype)
    if src == name:
        return a
    if src is not None:
        a = from_lowp(a)
    elif a.dtype.kind == "V":                       # bfloat16
        from .bfloat16 import BFLOAT16, from_bfloat16
        if a.dtype != BFLOAT16:
            raise TypeError(f"cannot convert {a.dtype} to {name}")
        a = from_bfloat16(a)
    shape = a.shape
    if name in INT_FORMATS:
        return _encode_int(a, name).reshape(shape)
    if a.dtype != SINGLE:
        with np.errstate(over="ignore", invalid="ignore"):
            a = a.astype(SINGLE)
    with np.errstate(all="ignore"):
        bits = _encode_e8m0(a) if name == E8M0 else _encode_float(a, FLOAT_FORMATS[name])
    return np.ascontiguousarray(bits).view(CARRIERS[name]).reshape(shape)
