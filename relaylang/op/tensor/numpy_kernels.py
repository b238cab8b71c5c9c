"""NumPy reference kernels of the elementwise family (`elemwise.py` registers them).

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
- floating-point errors never warn (TVM does not trap). Entering `np.errstate`
  costs more than a small op, so inside `fp_errors_ignored()` (the interpreter
  runs a whole program in one) the kernels skip their own.

Each kernel is `kernel(inputs, attrs) -> numpy.ndarray`; `KERNELS` maps the
name `elemwise.numpy_kernel` asks for to the kernel.
"""
from __future__ import annotations

import contextvars
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .elemwise import canonical_dtype
from .fast_math_kernels import fast_erf, fast_exp, fast_tanh

Kernel = Callable[[list, Any], Any]
Array = np.ndarray

_NUMPY_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"}


def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a Relay dtype; NotImplementedError when NumPy has none."""
    name = canonical_dtype(dtype) or dtype
    if name not in _NUMPY_DTYPES:
        raise NotImplementedError(f"dtype {dtype} has no NumPy equivalent")
    return np.dtype(name)


def _is_float(a: Array) -> bool:
    return a.dtype.kind == "f"


def _is_int(a: Array) -> bool:
    return a.dtype.kind in "iu"


def _out(value: Any, dtype: np.dtype) -> Array:
    return np.asarray(value, dtype=dtype)


# True inside `fp_errors_ignored`. A context variable, as NumPy's own error state is one:
# another thread (or context) calling a kernel still gets the kernel's own errstate.
_IGNORING = contextvars.ContextVar("relaylang_fp_errors_ignored", default=False)


class fp_errors_ignored:
    """`with fp_errors_ignored():` NumPy floating-point errors are ignored until the block
    ends, and the kernels called inside skip their own `np.errstate` (nestable)."""

    __slots__ = ("_state", "_token")

    def __enter__(self) -> None:
        self._token = None
        if not _IGNORING.get():
            self._state = np.errstate(all="ignore")
            self._state.__enter__()
            self._token = _IGNORING.set(True)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _IGNORING.reset(self._token)
            self._state.__exit__(*exc)


def quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` inside `fp_errors_ignored()` (cheaper than the `with` statement: the
    interpreter runs each program this way)."""
    if _IGNORING.get():
        return fn(*args)
    token = _IGNORING.set(True)
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    finally:
        _IGNORING.reset(token)


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


_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)


def erf(x: Array) -> Array:
    """The error function in float64, accurate to about 1e-15: the Maclaurin
    series for |x| <= 2 and Laplace's continued fraction for erfc beyond."""
    x = np.asarray(x, dtype=np.float64)
    ax = np.abs(x)
    small = np.where(ax <= 2.0, x, 0.0)
    term, total = small.copy(), small.copy()
    for n in range(1, 40):                      # terms fall below 1e-19 by n = 35
        term = term * (-small * small) / n
        total += term / (2 * n + 1)
    series = _TWO_OVER_SQRT_PI * total
    z = np.where(ax > 2.0, ax, 3.0)
    frac = z.copy()
    for k in range(60, 0, -1):                  # converged to 4e-15 relative at z = 2
        frac = z + (k / 2.0) / frac
    erfc = np.exp(-z * z) / (math.sqrt(math.pi) * frac)
    tail = np.copysign(1.0 - erfc, x)
    return np.where(ax <= 2.0, series, np.where(np.isnan(x), x, tail))


def _negative(x: Array) -> Array:
    # bool is 1-bit unsigned in TVM: 0 - x wraps back to x.
    return x.copy() if x.dtype == bool else np.negative(x)


def _sign(x: Array) -> Array:
    return x.copy() if x.dtype == bool else np.sign(x)


UNARY: dict[str, Kernel] = {
    "negative": _exact(_negative),
    "abs": _exact(np.abs),
    "sign": _exact(_sign),
    "exp": _float_math(np.exp),
    "fast_exp": _float_math(fast_exp),
    "log": _float_math(np.log),
    "log2": _float_math(np.log2),
    "log10": _float_math(np.log10),
    "sqrt": _float_math(np.sqrt),
    "rsqrt": _float_math(lambda x: 1 / np.sqrt(x)),
    "sigmoid": _float_math(lambda x: 1 / (1 + np.exp(-x))),
    "tanh": _float_math(np.tanh),
    "fast_tanh": _float_math(fast_tanh),
    "erf": _float_math(erf),
    "fast_erf": _float_math(fast_erf),
    "floor": _rounding(np.floor),
    "ceil": _rounding(np.ceil),
    "round": _rounding(round_half_away),
    "trunc": _rounding(np.trunc),
    "sin": _float_math(np.sin),
    "cos": _float_math(np.cos),
    "tan": _float_math(np.tan),
    "sinh": _float_math(np.sinh),
    "cosh": _float_math(np.cosh),
    "asin": _float_math(np.arcsin),
    "acos": _float_math(np.arccos),
    "atan": _float_math(np.arctan),
    "asinh": _float_math(np.arcsinh),
    "acosh": _float_math(np.arccosh),
    "atanh": _float_math(np.arctanh),
    "logical_not": _exact(np.logical_not),
    "bitwise_not": _exact(np.invert),
    "copy": _exact(np.copy),
    "zeros_like": _exact(np.zeros_like),
    "ones_like": _exact(np.ones_like),
    "isnan": _classify(np.isnan, False),
    "isinf": _classify(np.isinf, False),
    "isfinite": _classify(np.isfinite, True),
}


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

    def kernel(inputs: list, attrs: Any) -> Array:
        a, b = inputs
        if wraps_bool and a.dtype.kind == "b":
            return np.asarray(fn(a.astype(np.uint8), b.astype(np.uint8)) & 1, dtype=a.dtype)
        if _IGNORING.get():          # inlined `quietly`; the cast to the result dtype inside
            return np.asarray(fn(a, b), dtype=dtype or a.dtype)
        with np.errstate(all="ignore"):
            return np.asarray(fn(a, b), dtype=dtype or a.dtype)
    return kernel


BINARY: dict[str, Kernel] = {
    "add": _binary(np.add, wraps_bool=True),
    "subtract": _binary(np.subtract, wraps_bool=True),
    "multiply": _binary(np.multiply, wraps_bool=True),
    "divide": _binary(_by_kind(_nonzero(trunc_div), np.divide)),
    "floor_divide": _binary(_by_kind(_nonzero(np.floor_divide), lambda a, b: np.floor(a / b))),
    "trunc_divide": _binary(_by_kind(_nonzero(trunc_div), lambda a, b: np.trunc(a / b))),
    "mod": _binary(_by_kind(_nonzero(np.fmod), np.fmod)),
    "floor_mod": _binary(_by_kind(_nonzero(np.mod), lambda a, b: a - np.floor(a / b) * b)),
    "trunc_mod": _binary(_by_kind(_nonzero(np.fmod), lambda a, b: a - np.trunc(a / b) * b)),
    "power": _binary(_by_kind(int_power, np.power)),
    "maximum": _binary(np.maximum),
    "minimum": _binary(np.minimum),
    "logical_and": _binary(np.logical_and),
    "logical_or": _binary(np.logical_or),
    "logical_xor": _binary(np.logical_xor),
    "bitwise_and": _binary(np.bitwise_and),
    "bitwise_or": _binary(np.bitwise_or),
    "bitwise_xor": _binary(np.bitwise_xor),
    "right_shift": _binary(np.right_shift),
    "left_shift": _binary(np.left_shift),
    "equal": _binary(np.equal, "bool"),
    "not_equal": _binary(np.not_equal, "bool"),
    "less": _binary(np.less, "bool"),
    "less_equal": _binary(np.less_equal, "bool"),
    "greater": _binary(np.greater, "bool"),
    "greater_equal": _binary(np.greater_equal, "bool"),
}


# ---------------------------------------------------------------- the rest

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


def clip(inputs: list, attrs: Any) -> Array:
    x = inputs[0]
    lo, hi = clip_bound(attrs.a_min, x.dtype), clip_bound(attrs.a_max, x.dtype)
    return _out(np.maximum(np.minimum(x, hi), lo), x.dtype)


def cast(inputs: list, attrs: Any) -> Array:
    # float -> int out of range: undefined in TVM too
    return quietly(inputs[0].astype, np_dtype(attrs.dtype))


def cast_like(inputs: list, attrs: Any) -> Array:
    return quietly(inputs[0].astype, inputs[1].dtype)


def reinterpret(inputs: list, attrs: Any) -> Array:
    x = inputs[0] if inputs[0].flags.c_contiguous else inputs[0].copy()
    return x.view(np_dtype(attrs.dtype))


KERNELS: dict[str, Kernel] = {**UNARY, **BINARY, "where": where, "clip": clip, "cast": cast,
                              "cast_like": cast_like, "reinterpret": reinterpret}
