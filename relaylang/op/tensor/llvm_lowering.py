"""LLVM lowerings of the tensor family (elementwise and broadcast ops), by the shared
rules of `op/llvm_rules.py`. Semantics follow `numpy_kernels.py` (see its docstring):
C division on integers, `fmod` for `mod`, floor variants on floats as `floor(a / b)`,
`round` half away from zero, math functions on integer tensors in float64, bool
arithmetic modulo 2, NaN-propagating maximum/minimum, the constant-exponent table of
`power`. Integer division or remainder by zero gives 0 and sets the kernel's status,
which the caller raises as the NumPy kernel's ZeroDivisionError (`jit.status_error`).

`reinterpret` lowers to the loop IR's bit cast (`b.bitcast`, LLVM's `bitcast`), or to
the value cast where that keeps the bits (signed <-> unsigned integers of one width).
"""
from __future__ import annotations

import math
from typing import Any

from ..llvm_rules import broadcast, elementwise
from ..registry import implement


def _is_float(e: Any) -> bool:
    return e.dtype.startswith("float")


def _is_int(e: Any) -> bool:
    return e.dtype.startswith("int") or e.dtype.startswith("uint")


def _math(name: str):
    def fn(b: Any, x: Any) -> Any:
        if _is_float(x):
            return b.call(name, x)
        return b.cast(b.call(name, b.cast(x, "float64")), x.dtype)
    fn.__name__ = name
    return fn


for _name in ("exp", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "erf", "sin", "cos",
              "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh"):
    implement(_name, target="llvm")(elementwise(_math(_name)))


def _odd_rational(b: Any, x: Any, bound: float, alpha: tuple, beta: tuple) -> Any:
    """fast_math_kernels._odd_rational: x * P(x^2) / Q(x^2) on x clamped to
    [-bound, bound], each step in x's dtype (float16 rounds after every operation)."""
    dt = x.dtype

    def rnd(e: Any) -> Any:
        return b.cast(b.cast(e, "float32"), "float16") if dt == "float16" else e

    def c_(v: float) -> Any:
        return b.const(v, dt)
    c = b.max(b.min(x, c_(bound)), c_(-bound))
    x2 = rnd(c * c)
    p = rnd(rnd(x2 * c_(alpha[0])) + c_(alpha[1]))
    for a in alpha[2:]:
        p = rnd(rnd(x2 * p) + c_(a))
    q = rnd(rnd(x2 * c_(beta[0])) + c_(beta[1]))
    for be in beta[2:]:
        q = rnd(rnd(x2 * q) + c_(be))
    return rnd(c * p) / q


def _fast_tanh(b: Any, x: Any) -> Any:
    from ..fast_math_kernels import _TANH_ALPHA, _TANH_BETA
    if x.dtype != "float32":
        return _math("tanh")(b, x)
    return _odd_rational(b, x, 9.0, _TANH_ALPHA, _TANH_BETA)


def _fast_erf(b: Any, x: Any) -> Any:
    from ..fast_math_kernels import _ERF_ALPHA, _ERF_BETA
    if x.dtype not in ("float32", "float16"):
        return _math("erf")(b, x)
    return _odd_rational(b, x, 4.0, _ERF_ALPHA, _ERF_BETA)


# TVM's fast_exp is within ~5e-6 (relative) of exp; this uses the exact function (its
# bit-level 2^n needs a reinterpret the loop IR lacks yet).
implement("fast_exp", target="llvm")(elementwise(_math("exp")))
implement("fast_tanh", target="llvm")(elementwise(_fast_tanh))
implement("fast_erf", target="llvm")(elementwise(_fast_erf))


def _sigmoid(b: Any, x: Any) -> Any:
    if not _is_float(x):
        return b.cast(_sigmoid(b, b.cast(x, "float64")), x.dtype)
    return 1 / (1 + b.call("exp", -x))


implement("sigmoid", target="llvm")(elementwise(_sigmoid))


def _rounding(name: str):
    def fn(b: Any, x: Any) -> Any:
        return b.call(name, x) if _is_float(x) else x
    return fn


for _name in ("floor", "ceil", "round", "trunc"):
    implement(_name, target="llvm")(elementwise(_rounding(_name)))


def _negative(b: Any, x: Any) -> Any:
    return x if x.dtype == "bool" else -x


def _abs(b: Any, x: Any) -> Any:
    if _is_float(x):
        return b.call("fabs", x)
    if x.dtype == "bool" or x.dtype.startswith("uint"):
        return x
    return b.select(b.lt(x, 0), -x, x)


def _sign(b: Any, x: Any) -> Any:
    if x.dtype == "bool":
        return x
    one, zero = b.const(1, x.dtype), b.const(0, x.dtype)
    if x.dtype.startswith("uint"):
        return b.select(b.gt(x, 0), one, zero)
    rest = x if _is_float(x) else zero          # 0, -0 and NaN stay themselves
    return b.select(b.gt(x, 0), one, b.select(b.lt(x, 0), b.const(-1, x.dtype), rest))


implement("negative", target="llvm")(elementwise(_negative))
implement("abs", target="llvm")(elementwise(_abs))
implement("sign", target="llvm")(elementwise(_sign))
implement("copy", target="llvm")(elementwise(lambda b, x: x))
implement("zeros_like", target="llvm")(elementwise(lambda b, x: b.const(0, x.dtype)))
implement("ones_like", target="llvm")(elementwise(lambda b, x: b.const(1, x.dtype)))
implement("logical_not", target="llvm")(elementwise(lambda b, x: b.logical_not(x)))
implement("bitwise_not", target="llvm")(elementwise(lambda b, x: b.call("bitwise_not", x)))
for _name in ("isnan", "isinf", "isfinite"):
    implement(_name, target="llvm")(elementwise(
        lambda b, x, _n=_name: b.call(_n, x)))


# ---------------------------------------------------------------- binary

def _via_float64(fn):
    """bool operands: NumPy's float path (the kernels upcast bools to float)."""
    def wrapped(b: Any, x: Any, y: Any) -> Any:
        if x.dtype == "bool":
            return b.cast(fn(b, b.cast(x, "float64"), b.cast(y, "float64")), "bool")
        return fn(b, x, y)
    return wrapped


def _divide(b: Any, x: Any, y: Any) -> Any:
    return x / y                     # C division on integers, IEEE on floats


def _floor_divide(b: Any, x: Any, y: Any) -> Any:
    return b.floordiv(x, y)          # floor(x / y) on floats


def _trunc_divide(b: Any, x: Any, y: Any) -> Any:
    return x / y if _is_int(x) else b.call("trunc", x / y)


def _mod(b: Any, x: Any, y: Any) -> Any:
    if x.dtype == "bool":            # NumPy's fmod on bools: x % 1 = 0 and x % 0 = 0
        return b.const(False, "bool")
    return x % y                     # C % on integers, fmod on floats


def _floor_mod(b: Any, x: Any, y: Any) -> Any:
    return b.floormod(x, y)          # x - floor(x / y) * y on floats


def _trunc_mod(b: Any, x: Any, y: Any) -> Any:
    return x % y if _is_int(x) else x - b.call("trunc", x / y) * y


def _int_power(b: Any, x: Any, y: Any) -> Any:
    """x ** y wrapping, by squaring over the exponent's bits; a negative exponent gives
    C's truncated 1 / x ** -y (1, -1 or 0)."""
    dt = x.dtype
    nbits = int("".join(c for c in dt if c.isdigit()))
    one, zero = b.const(1, dt), b.const(0, dt)
    result, base = one, x
    for k in range(nbits - 1 if not dt.startswith("uint") else nbits):
        bit = b.ne(b.call("bitwise_and", b.call("right_shift", y, b.const(k, dt)),
                          one), zero)
        result = b.select(bit, result * base, result)
        base = base * base
    if dt.startswith("uint"):
        return result
    odd = b.ne(b.call("bitwise_and", y, one), zero)
    inverse = b.select(b.eq(x, 1), one,
                       b.select(b.eq(x, -1), b.select(odd, b.const(-1, dt), one), zero))
    return b.select(b.lt(y, 0), inverse, result)


def _sqrt_pow(b: Any, x: Any) -> Any:
    root = b.call("sqrt", x + 0)                       # -0 + 0 = +0
    return b.select(b.eq(x, -math.inf), b.const(math.inf, x.dtype), root)


_CONSTANT_POWERS = {
    0.0: lambda b, x: b.const(1, x.dtype),
    1.0: lambda b, x: x,
    2.0: lambda b, x: x * x,
    3.0: lambda b, x: x * x * x,
    4.0: lambda b, x: (x * x) * (x * x),
    -1.0: lambda b, x: 1 / x,
    -2.0: lambda b, x: 1 / (x * x),
    0.5: _sqrt_pow,
    -0.5: lambda b, x: 1 / _sqrt_pow(b, x),
}


def _power(b: Any, x: Any, y: Any) -> Any:
    if x.dtype == "bool":
        return b.logical_or(x, b.logical_not(y))       # 0 ** 0 = 1, 0 ** 1 = 0, 1 ** y = 1
    if _is_int(x):
        return _int_power(b, x, y)
    value = b.const_value(y)
    if value is not None and float(value) in _CONSTANT_POWERS:
        return _CONSTANT_POWERS[float(value)](b, x)
    return b.call("pow", x, y)


implement("add", target="llvm")(broadcast(lambda b, x, y: x + y))       # i1 add wraps
implement("subtract", target="llvm")(broadcast(lambda b, x, y: x - y))
implement("multiply", target="llvm")(broadcast(lambda b, x, y: x * y))
implement("divide", target="llvm")(broadcast(_via_float64(_divide)))
implement("floor_divide", target="llvm")(broadcast(_via_float64(_floor_divide)))
implement("trunc_divide", target="llvm")(broadcast(_via_float64(_trunc_divide)))
implement("mod", target="llvm")(broadcast(_mod))
implement("floor_mod", target="llvm")(broadcast(_via_float64(_floor_mod)))
implement("trunc_mod", target="llvm")(broadcast(_via_float64(_trunc_mod)))
implement("power", target="llvm")(broadcast(_power))
implement("maximum", target="llvm")(broadcast(lambda b, x, y: b.max(x, y)))
implement("minimum", target="llvm")(broadcast(lambda b, x, y: b.min(x, y)))
implement("logical_and", target="llvm")(broadcast(lambda b, x, y: b.logical_and(x, y)))
implement("logical_or", target="llvm")(broadcast(lambda b, x, y: b.logical_or(x, y)))
implement("logical_xor", target="llvm")(broadcast(lambda b, x, y: b.logical_xor(x, y)))
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"):
    implement(_name, target="llvm")(broadcast(lambda b, x, y, _n=_name: b.call(_n, x, y)))
for _name, _cmp in (("equal", "eq"), ("not_equal", "ne"), ("less", "lt"),
                    ("less_equal", "le"), ("greater", "gt"), ("greater_equal", "ge")):
    implement(_name, target="llvm")(broadcast(
        lambda b, x, y, _c=_cmp: getattr(b, _c)(x, y)))


@implement("where", target="llvm")
def where(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return broadcast(lambda b, c, x, y: b.select(b.cast(c, "bool"), x, y))(
        b, inputs, attrs, out_type)


def _clip_bound(value: float, dtype: str) -> float | int:
    """numpy_kernels.clip_bound: integers truncate toward zero and saturate."""
    if dtype.startswith(("int", "uint")):
        nbits = int("".join(c for c in dtype if c.isdigit()))
        lo, hi = ((0, (1 << nbits) - 1) if dtype.startswith("uint")
                  else (-(1 << (nbits - 1)), (1 << (nbits - 1)) - 1))
        if math.isnan(value):
            return 0
        whole = math.trunc(value) if math.isfinite(value) else (hi if value > 0 else lo)
        return min(max(whole, lo), hi)
    return value


def _clip(b: Any, attrs: Any, x: Any) -> Any:
    if x.dtype == "bool":
        lo, hi = b.cast(b.const(attrs.a_min, "float64"), "bool"), b.cast(
            b.const(attrs.a_max, "float64"), "bool")
    else:
        lo = b.cast(b.const(_clip_bound(float(attrs.a_min), x.dtype), "float64"
                            if _is_float(x) else x.dtype), x.dtype)
        hi = b.cast(b.const(_clip_bound(float(attrs.a_max), x.dtype), "float64"
                            if _is_float(x) else x.dtype), x.dtype)
    return b.max(b.min(x, hi), lo)


implement("clip", target="llvm")(elementwise(_clip, attrs=True))
implement("cast", target="llvm")(elementwise(lambda b, x: x))          # the rule casts


@implement("cast_like", target="llvm")
def cast_like(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return elementwise(lambda b, x: x)(b, inputs[:1], attrs, out_type)


# ---------------------------------------------------------------- reinterpret

def _same_bits_as_value_cast(src: str, dst: str) -> bool:
    """Whether the value cast src -> dst keeps the bit pattern: the same dtype, or two
    integer dtypes of one width (the loop IR's Cast is a no-op between those)."""
    if src == dst:
        return True
    ints = ("int", "uint")
    if src.startswith(ints) and dst.startswith(ints):
        return "".join(ch for ch in src if ch.isdigit()) == \
            "".join(ch for ch in dst if ch.isdigit())
    return False


@implement("reinterpret", target="llvm")
def reinterpret(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """numpy_kernels.reinterpret (a view of the same bits as another dtype): between
    integers of one width the value cast (a no-op on the bits), otherwise a bit cast
    (float <-> integer, float16 <-> int16/uint16; the relation has checked the widths)."""
    (x,) = inputs
    dtype = str(out_type.dtype)
    if _same_bits_as_value_cast(x.dtype, dtype):
        return elementwise(lambda b, v: v)(b, inputs, attrs, out_type)
    return elementwise(lambda b, v: b.bitcast(v, dtype))(b, inputs, attrs, out_type)
