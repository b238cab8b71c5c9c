"""NumPy reference kernels of the tensor family (registered with `@implement`).

Semantics follow TVM's lowering: include/tvm/topi/{elemwise,broadcast}.h and
src/tir/op/op.cc. The points where NumPy differs from TVM and which are
handled here:

- integer `divide` truncates toward zero (tir `Div` is C division) and `mod`
  is C's `%` (`truncmod`); `floor_divide`/`floor_mod` floor; on floats
  `floor_mod` is `a - floor(a / b) * b` and `mod` is `fmod`;
- `round` rounds half away from zero (LLVM's `llvm.round`), not to even;
- `clip` converts its bounds to the tensor's dtype first (integer bounds
  truncate) and computes `max(min(x, a_max), a_min)`;
- floor/ceil/round/trunc are the identity on integers; math functions on
  integer tensors compute in float64 and convert back;
- every result has exactly the dtype the type relation promises: NumPy's
  upcasts (and its 0-d results that are scalars, not arrays) are undone;
- floating-point errors never warn (numpy_support.py says how);
- float16 math functions, comparisons, maximum/minimum and power compute in
  float32 and round once (`float16=IN_FLOAT32`, numpy_support.float16_in_float32);
  +, -, *, / run in NumPy's float16 loops, which are correctly rounded already;
- bfloat16 (bit patterns in numpy_support's BFLOAT16 carrier) is computed in float32
  and rounded once by every kernel (numpy_support.implement); casts go through float32;
- `power` with one constant exponent in {0, ±1, ±2, 3, 4, ±0.5} multiplies,
  divides or takes sqrt (`float_power`), with C's pow at special values.

Each kernel is `kernel(inputs, attrs) -> numpy.ndarray`.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..fast_math_kernels import fast_erf, fast_exp, fast_tanh
from ..numpy_support import (
    BFLOAT16,
    IGNORING,
    bfloat16_call,
    carrier_dtype,
    erf,
    from_bfloat16,
    implement,
    quietly,
    to_bfloat16,
)
from ..numpy_support import float16_in_float32 as IN_FLOAT32

Kernel = Callable[[list, Any], Any]
Array = np.ndarray


def _is_float(a: Array) -> bool:
    return a.dtype.kind == "f"


def _is_int(a: Array) -> bool:
    return a.dtype.kind in "iu"


def _out(value: Any, dtype: np.dtype) -> Array:
    return np.asarray(value, dtype=dtype)


# ---------------------------------------------------------------- unary

def _float_math(fn: Callable[[Array], Array]) -> Kernel:
    """A math function: computed in the tensor's float dtype, or in float64 for others."""
    def compute(x: Array) -> Array:
        return _out(fn(x if _is_float(x) else x.astype(np.float64)), x.dtype)

    def kernel(inputs: list, attrs: Any) -> Array:
        return quietly(compute, inputs[0])       # the cast back to x.dtype included
    return kernel


def _rounding(fn: Callable[[Array], Array]) -> Kernel:
    """floor/ceil/trunc/round: the identity on integer and bool tensors."""
    def kernel(inputs: list, attrs: Any) -> Array:
        x = inputs[0]
        return _out(fn(x), x.dtype) if _is_float(x) else x.copy()
    return kernel


def _exact(fn: Callable[[Array], Array]) -> Kernel:
    def compute(x: Array) -> Array:
        return _out(fn(x), x.dtype)

    def kernel(inputs: list, attrs: Any) -> Array:
        return quietly(compute, inputs[0])
    return kernel


def _classify(fn: Callable[[Array], Array], on_non_float: bool) -> Kernel:
    """isnan/isinf/isfinite: integers are never NaN or infinite (tir isnan)."""
    def kernel(inputs: list, attrs: Any) -> Array:
        x = inputs[0]
        if _is_float(x):
            return _out(fn(x), np.dtype(bool))
        return np.full(x.shape, on_non_float, dtype=bool)
    return kernel


def round_half_away(x: Array) -> Array:
    """Round to nearest, ties away from zero. `x - trunc(x)` is exact, so no
    `floor(x + 0.5)` error just below one half."""
    t = np.trunc(x)
    return t + np.where(np.abs(x - t) >= 0.5, np.sign(x), 0).astype(x.dtype)


def _negative(x: Array) -> Array:
    # bool is 1-bit unsigned in TVM: 0 - x wraps back to x.
    return x.copy() if x.dtype == bool else np.negative(x)


def _sign(x: Array) -> Array:
    return x.copy() if x.dtype == bool else np.sign(x)


implement("negative")(_exact(_negative))
implement("abs")(_exact(np.abs))
implement("sign")(_exact(_sign))
implement("exp", float16=IN_FLOAT32)(_float_math(np.exp))
# bfloat16: TVM approximates float32 only (and float16 for fast_erf); bfloat16 is exact.
implement("fast_exp", bfloat16=_float_math(np.exp))(_float_math(fast_exp))
implement("log", float16=IN_FLOAT32)(_float_math(np.log))
implement("log2", float16=IN_FLOAT32)(_float_math(np.log2))
implement("log10", float16=IN_FLOAT32)(_float_math(np.log10))
implement("sqrt", float16=IN_FLOAT32)(_float_math(np.sqrt))
implement("rsqrt", float16=IN_FLOAT32)(_float_math(lambda x: 1 / np.sqrt(x)))
implement("sigmoid", float16=IN_FLOAT32)(_float_math(lambda x: 1 / (1 + np.exp(-x))))
implement("tanh", float16=IN_FLOAT32)(_float_math(np.tanh))
implement("fast_tanh", bfloat16=_float_math(np.tanh))(_float_math(fast_tanh))
implement("erf", float16=IN_FLOAT32)(_float_math(erf))
implement("fast_erf", bfloat16=_float_math(erf))(_float_math(fast_erf))
implement("floor")(_rounding(np.floor))
implement("ceil")(_rounding(np.ceil))
implement("round")(_rounding(round_half_away))
implement("trunc")(_rounding(np.trunc))
implement("sin", float16=IN_FLOAT32)(_float_math(np.sin))
implement("cos", float16=IN_FLOAT32)(_float_math(np.cos))
implement("tan", float16=IN_FLOAT32)(_float_math(np.tan))
implement("sinh", float16=IN_FLOAT32)(_float_math(np.sinh))
implement("cosh", float16=IN_FLOAT32)(_float_math(np.cosh))
implement("asin", float16=IN_FLOAT32)(_float_math(np.arcsin))
implement("acos", float16=IN_FLOAT32)(_float_math(np.arccos))
implement("atan", float16=IN_FLOAT32)(_float_math(np.arctan))
implement("asinh", float16=IN_FLOAT32)(_float_math(np.arcsinh))
implement("acosh", float16=IN_FLOAT32)(_float_math(np.arccosh))
implement("atanh", float16=IN_FLOAT32)(_float_math(np.arctanh))
implement("logical_not")(_exact(np.logical_not))
implement("bitwise_not")(_exact(np.invert))
implement("copy")(_exact(np.copy))
implement("zeros_like")(_exact(np.zeros_like))
implement("ones_like")(_exact(np.ones_like))
implement("isnan")(_classify(np.isnan, False))
implement("isinf")(_classify(np.isinf, False))
implement("isfinite")(_classify(np.isfinite, True))


# ---------------------------------------------------------------- binary

def trunc_div(a: Array, b: Array) -> Array:
    """C integer division (toward zero); `a - fmod(a, b)` is an exact multiple of b."""
    return (a - np.fmod(a, b)) // b


def _nonzero(fn: Callable[[Array, Array], Array]) -> Callable[[Array, Array], Array]:
    """Integer division and remainder by zero have no value: an error, not a made-up 0."""
    def checked(a: Array, b: Array) -> Array:
        if not np.all(b):
            raise ZeroDivisionError("integer division by zero")
        return fn(a, b)
    return checked


def int_power(a: Array, b: Array) -> Array:
    """Integer power (wrapping); a negative exponent gives C's truncated 1 / a**-b."""
    negative = b < 0
    raised = np.power(a, np.where(negative, 0, b).astype(b.dtype))
    odd = np.fmod(b, 2) != 0
    inverse = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0))
    return np.where(negative, inverse, raised)


def _sqrt_pow(x: Array) -> Array:
    """x ** 0.5 as C's pow: sqrt, but pow(-0, 0.5) = +0 and pow(-inf, 0.5) = +inf."""
    root = np.sqrt(x + x.dtype.type(0))            # -0 + 0 = +0
    if root.size and np.isneginf(x).any():
        root = np.where(np.isneginf(x), x.dtype.type(np.inf), root)
    return root


# x ** n for the constant exponents that multiplication, division or sqrt compute
# directly; np.power's general loop is ~50x slower than a multiplication (GPT-2's
# gelu `power(%x, 3f)` on 1600x3072). 0, 1 and 2 give np.power's result exactly; -1 and
# 0.5 are one correctly rounded operation (within np.power's own 0.5 ulp of it); 3, 4,
# -2 and -0.5 round twice (within 2 ulp). Special values are C's pow (TVM's), also where
# NumPy's sqrt shortcut is not: pow(-0, 0.5) = +0, pow(-inf, 0.5) = +inf. For float16
# (computed in float32, rounded once) every exponent here gives the correctly rounded
# result, for every float16 value (tests/op/test_fp16.py checks them all).
_CONSTANT_POWERS: dict[float, Callable[[Array], Array]] = {
    0.0: lambda x: np.ones_like(x),                  # pow(x, 0) = 1, NaN included
    1.0: lambda x: x.copy(),
    2.0: lambda x: x * x,
    3.0: lambda x: x * x * x,
    4.0: lambda x: np.square(x * x),
    -1.0: lambda x: x.dtype.type(1) / x,
    -2.0: lambda x: x.dtype.type(1) / (x * x),
    0.5: _sqrt_pow,
    -0.5: lambda x: x.dtype.type(1) / _sqrt_pow(x),
}


def float_power(a: Array, b: Array) -> Array:
    """np.power(a, b), by `_CONSTANT_POWERS` when b is one value (a constant exponent)."""
    if b.size == 1 and b.ndim <= a.ndim:          # the result has a's shape
        fn = _CONSTANT_POWERS.get(float(b.reshape(())))
        if fn is not None:
            return fn(a)
    return np.power(a, b)


def _by_kind(on_int: Callable[[Array, Array], Array],
             on_float: Callable[[Array, Array], Array]) -> Callable[[Array, Array], Array]:
    return lambda a, b: on_int(a, b) if _is_int(a) else on_float(a, b)


def _binary(fn: Callable[[Array, Array], Array], result: str | None = None,
            wraps_bool: bool = False) -> Kernel:
    """A binary kernel; the result in dtype `result`, else the first input's. With
    `wraps_bool`, bool arithmetic wraps modulo 2, as on TVM's 1-bit unsigned integer
    (NumPy would saturate `add` and refuse `subtract`). One function, not a wrapper per
    concern: these are the commonest kernels, and each Python call costs."""
    dtype = np.dtype(result) if result else None
    # The bound method, once: `IGNORING.get()` on a name bound by an import compiles to an
    # attribute load that builds a bound method on every call (CPython 3.11).
    ignoring = IGNORING.get

    def kernel(inputs: list, attrs: Any) -> Array:
        a, b = inputs
        if a.dtype.char == "V":     # bfloat16 (numpy_support): in float32, rounded once
            return bfloat16_call(kernel, inputs, attrs)
        if wraps_bool and a.dtype.kind == "b":
            return np.asarray(fn(a.astype(np.uint8), b.astype(np.uint8)) & 1, dtype=a.dtype)
        if ignoring():              # inlined `quietly`; the cast to the result dtype inside
            return np.asarray(fn(a, b), dtype=dtype or a.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(fn(a, b), dtype=dtype or a.dtype)
    kernel.handles_bfloat16 = True        # type: ignore[attr-defined]
    return kernel


implement("add")(_binary(np.add, wraps_bool=True))
implement("subtract")(_binary(np.subtract, wraps_bool=True))
implement("multiply")(_binary(np.multiply, wraps_bool=True))
implement("divide")(_binary(_by_kind(_nonzero(trunc_div), np.divide)))
# Several roundings in one formula: float16 computes it in float32 and rounds once.
implement("floor_divide", float16=IN_FLOAT32)(_binary(_by_kind(_nonzero(np.floor_divide),
                                                               lambda a, b: np.floor(a / b))))
implement("trunc_divide", float16=IN_FLOAT32)(_binary(_by_kind(_nonzero(trunc_div),
                                                               lambda a, b: np.trunc(a / b))))
implement("mod")(_binary(_by_kind(_nonzero(np.fmod), np.fmod)))
implement("floor_mod", float16=IN_FLOAT32)(_binary(_by_kind(_nonzero(np.mod),
                                                            lambda a, b: a - np.floor(a / b) * b)))
implement("trunc_mod", float16=IN_FLOAT32)(_binary(_by_kind(_nonzero(np.fmod),
                                                            lambda a, b: a - np.trunc(a / b) * b)))
implement("power", float16=IN_FLOAT32)(_binary(_by_kind(int_power, float_power)))
implement("maximum", float16=IN_FLOAT32)(_binary(np.maximum))
implement("minimum", float16=IN_FLOAT32)(_binary(np.minimum))
implement("logical_and")(_binary(np.logical_and))
implement("logical_or")(_binary(np.logical_or))
implement("logical_xor")(_binary(np.logical_xor))
implement("bitwise_and")(_binary(np.bitwise_and))
implement("bitwise_or")(_binary(np.bitwise_or))
implement("bitwise_xor")(_binary(np.bitwise_xor))
implement("right_shift")(_binary(np.right_shift))
implement("left_shift")(_binary(np.left_shift))
implement("equal", float16=IN_FLOAT32)(_binary(np.equal, "bool"))
implement("not_equal", float16=IN_FLOAT32)(_binary(np.not_equal, "bool"))
implement("less", float16=IN_FLOAT32)(_binary(np.less, "bool"))
implement("less_equal", float16=IN_FLOAT32)(_binary(np.less_equal, "bool"))
implement("greater", float16=IN_FLOAT32)(_binary(np.greater, "bool"))
implement("greater_equal", float16=IN_FLOAT32)(_binary(np.greater_equal, "bool"))


# ---------------------------------------------------------------- the rest

@implement("where")
def where(inputs: list, attrs: Any) -> Array:
    cond, x, y = inputs
    return _out(np.where(cond, x, y), x.dtype)


def clip_bound(value: float, dtype: np.dtype) -> Array:
    """A clip bound as TVM's `cast(dtype, bound)`: integers truncate toward zero
    (and saturate here, where C++ would be undefined)."""
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if math.isnan(value):
            value = 0.0
        whole = math.trunc(value) if math.isfinite(value) else (info.max if value > 0 else info.min)
        return np.asarray(min(max(whole, int(info.min)), int(info.max)), dtype=dtype)
    with np.errstate(over="ignore"):
        return np.asarray(value, dtype=dtype)


@implement("clip")
def clip(inputs: list, attrs: Any) -> Array:
    x = inputs[0]
    lo, hi = clip_bound(attrs.a_min, x.dtype), clip_bound(attrs.a_max, x.dtype)
    return _out(np.maximum(np.minimum(x, hi), lo), x.dtype)


def cast_to(x: Array, dtype: np.dtype) -> Array:
    """`x` converted to `dtype`. bfloat16 goes through float32, as TVM's legalisation
    casts it: from bfloat16, exactly widened then converted; to bfloat16, converted to
    float32 then rounded to nearest even (numpy_support.to_bfloat16). The float8/float4
    dtypes likewise (ir/lowp.py: widened exactly to float32; converted to float32 and
    rounded to nearest even, not saturating), and int4/uint4/int2/uint2 through int8/uint8
    (converted like a narrower integer: truncated, wrapped)."""
    if x.dtype.kind == "V":                  # a carrier: its values, widened exactly
        if x.dtype == dtype:
            return x.copy()
        if x.dtype == BFLOAT16:
            x = from_bfloat16(x)
        else:
            from ...ir.lowp import from_lowp
            x = from_lowp(x)
    if dtype.kind == "V":
        if dtype == BFLOAT16:
            return quietly(to_bfloat16, x)
        from ...ir.lowp import lowp_name, to_lowp
        return to_lowp(x, lowp_name(dtype))
    # float -> int out of range: undefined in TVM too
    return quietly(x.astype, dtype)


@implement("cast", bfloat16=False)
def cast(inputs: list, attrs: Any) -> Array:
    return cast_to(inputs[0], carrier_dtype(attrs.dtype))


@implement("cast_like", bfloat16=False)
def cast_like(inputs: list, attrs: Any) -> Array:
    return cast_to(inputs[0], inputs[1].dtype)


@implement("reinterpret", bfloat16=False)
def reinterpret(inputs: list, attrs: Any) -> Array:
    x = inputs[0] if inputs[0].flags.c_contiguous else inputs[0].copy()
    dtype = carrier_dtype(attrs.dtype)
    if (x.dtype.kind == "V" and x.dtype != BFLOAT16) or (dtype.kind == "V" and dtype != BFLOAT16):
        # ir/lowp.py's carriers (one element a byte; the integer ones hold values): by bits
        from ...ir.lowp import from_lowp_bits, lowp_bits, lowp_name
        bits = lowp_bits(x) if lowp_name(x.dtype) else x.view(f"u{x.dtype.itemsize}")
        name = lowp_name(dtype)
        if name is not None:
            return from_lowp_bits(bits, name)
        return bits.astype(f"u{dtype.itemsize}").view(dtype)
    return x.view(dtype)                         # bfloat16's carrier holds its bits
