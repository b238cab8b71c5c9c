"""What the NumPy kernels of every family share: the floating-point error policy
(`quietly`, `fp_errors_ignored`), Relay dtype -> NumPy dtype, an exact `erf`,
float16 computed in float32 (`float16_in_float32`, applied by the registry to the
kernels registered with `@implement(..., float16=float16_in_float32)`), and bfloat16:
its carrier dtype `BFLOAT16`, the conversions `to_bfloat16`/`from_bfloat16`, and every
kernel computing it in float32 (`implement`, the numpy kernels' registration).

Imported only by `numpy_kernels` modules and by the code that runs them (the
interpreter, FoldConstant): it imports NumPy.

Floating-point errors never warn (TVM does not trap). Entering `np.errstate` costs
more than a small op, so inside `fp_errors_ignored()` (the interpreter runs a whole
program in one) the kernels skip their own; `IGNORING` says whether they may.
"""
from __future__ import annotations

import contextvars
import dataclasses
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..ir.bfloat16 import (  # noqa: F401 - the kernels' bfloat16 helpers, re-exported
    BFLOAT16,
    bfloat16_bits,
    from_bfloat16,
    is_bfloat16,
    relay_dtype,
    to_bfloat16,
)
from ..ir.dtype import CARRIED, canonical_dtype

Array = np.ndarray

_NUMPY_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"}


def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a Relay dtype; NotImplementedError when NumPy has none (bfloat16
    included: `carrier_dtype` gives the dtype that holds its bits)."""
    name = canonical_dtype(dtype) or dtype
    if name not in _NUMPY_DTYPES:
        raise NotImplementedError(f"dtype {dtype} has no NumPy equivalent")
    return np.dtype(name)


def carrier_dtype(dtype: str) -> np.dtype:
    """The dtype of the arrays that hold a Relay dtype's values in the kernels: `np_dtype`,
    `BFLOAT16` (bit patterns) for bfloat16, `ir.lowp.CARRIERS[name]` for the float8,
    float4, 4- and 2-bit integer dtypes. Not for `np.asarray(value, dtype=...)`: a number
    converted to a carrier becomes a bit pattern, not its value (`to_bfloat16`,
    `ir.lowp.to_lowp`)."""
    name = canonical_dtype(dtype) or dtype
    if name == "bfloat16":
        return BFLOAT16
    if name in CARRIED:
        from ..ir.lowp import CARRIERS
        return CARRIERS[name]
    return np_dtype(name)


# True inside `fp_errors_ignored`. A context variable, as NumPy's own error state is one:
# another thread (or context) calling a kernel still gets the kernel's own errstate.
IGNORING = contextvars.ContextVar("relaylang_fp_errors_ignored", default=False)


class fp_errors_ignored:
    """`with fp_errors_ignored():` NumPy floating-point errors are ignored until the block
    ends, and the kernels called inside skip their own `np.errstate` (nestable)."""

    __slots__ = ("_state", "_token")

    def __enter__(self) -> None:
        self._token = None
        if not IGNORING.get():
            self._state = np.errstate(all="ignore")
            self._state.__enter__()
            self._token = IGNORING.set(True)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            IGNORING.reset(self._token)
            self._state.__exit__(*exc)


def quietly(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` inside `fp_errors_ignored()` (cheaper than the `with` statement: the
    interpreter runs each program this way)."""
    if IGNORING.get():
        return fn(*args)
    token = IGNORING.set(True)
    try:
        with np.errstate(all="ignore"):
            return fn(*args)
    finally:
        IGNORING.reset(token)


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


# ------------------------------------------------------------------ float16

HALF = np.dtype(np.float16)
SINGLE = np.dtype(np.float32)


def float16_in_float32(kernel: Callable[[list, Any], Any]) -> Callable[[list, Any], Any]:
    """`kernel` with float16 computed in float32: the registry wraps the numpy kernels
    registered with `@implement(name, float16=float16_in_float32)` in this.

    When an input (a top-level array argument) is float16, every float16 input is
    converted to float32 (exactly), the kernel runs, and each float32 array it returns
    (alone or in a tuple) is rounded to float16 (round to nearest even): the result is
    bit for bit the kernel's float32 result on the widened inputs, rounded once. Other
    outputs (bool comparisons, int32 argmax, an explicit wider `out_dtype`) keep their
    dtype. An op whose attributes name `out_dtype="float16"` computes in float32 too (the
    kernel sees out_dtype="float32") and is rounded the same way; an empty `out_dtype`
    means the input's. Inputs of any other dtype go straight to the kernel.

    Why: NumPy's float16 has no BLAS and slow loops (a float16 matmul is hundreds of
    times slower than float32; max, comparisons and reductions several times), and its
    transcendental functions differ between CPUs (native AVX512-FP16 code on some,
    float32 code rounded on others); float32 plus one rounding is fast and the same
    everywhere. The widening and the rounding cost about 4 and 7 ns an element, so ops
    that NumPy runs well in float16 and whose float16 result is already the correctly
    rounded one are not wrapped: add, subtract, multiply, divide (NumPy's float16 loops
    round each exact result), and the ops that only move or select values.

    What it means for the result:
    - +, -, *, / and sqrt of float16 values are correctly rounded, wrapped or not:
      float32 has 24 >= 2 * 11 + 2 bits, so rounding the float32 result to float16 is
      rounding the exact one. Comparisons, max/min, relu and max pooling are exact;
    - matmul, dense, batch_matmul and convolutions accumulate in float32 and round the
      sum once, as cuBLAS/CUTLASS float16 GEMMs with a float32 accumulator and TVM's
      ToMixedPrecision (accumulation_dtype="float32", then a cast) do. TVM's plain topi
      dense/conv on LLVM with out_dtype float16 accumulates in float16, which is less
      accurate; the reference interpreter chooses the float32 accumulator;
    - sum, prod, mean, variance, softmax, the normalisations and average pools
      accumulate in float32 and round once (TVM's mean and variance cast float16 to
      float32 too; its sum and prod accumulate in float16);
    - transcendental functions (exp, tanh, erf, log, ...) are float32's, rounded: within
      one float16 ulp of the exact value, nearly always correctly rounded.
    Not wrapped, on purpose: the fast_* approximations (TVM defines their float16
    steps), floor_divide/floor_mod/trunc_* (TVM rounds the quotient to float16 before
    flooring), clip (its bounds are converted to float16), casts.

    bfloat16 inputs (or `out_dtype="bfloat16"`) are computed in float32 the same way,
    by `bfloat16_in_float32`'s rules (which every numpy kernel gets, wrapped here or not).
    """
    def compute(inputs: list, attrs: Any) -> Any:
        for x in inputs:
            # dtype.char: 'e' float16, 'V' a carrier: bfloat16's, ir/lowp.py's (cheaper
            # than dtype ==)
            char = getattr(getattr(x, "dtype", None), "char", None)
            if char == "e":
                break
            if char == "V":
                return bfloat16_call(kernel, inputs, attrs)
        else:
            if attrs is not None and _names_bfloat16(attrs):
                return bfloat16_call(kernel, inputs, attrs)
            return kernel(inputs, attrs)
        wide = [x.astype(SINGLE) if getattr(x, "dtype", None) == HALF else x for x in inputs]
        out_dtype = getattr(attrs, "out_dtype", None)
        if out_dtype:
            name = canonical_dtype(out_dtype)
            if name != "float16":              # an explicit output dtype: the kernel's own
                return kernel(wide, attrs)
            attrs = dataclasses.replace(attrs, out_dtype="float32")
        if IGNORING.get():
            return _to_half(kernel(wide, attrs))
        return quietly(lambda: _to_half(kernel(wide, attrs)))  # overflow to inf: no warning
    compute.__name__ = getattr(kernel, "__name__", "kernel")
    compute.__qualname__ = getattr(kernel, "__qualname__", compute.__name__)
    compute.__module__ = getattr(kernel, "__module__", __name__)
    compute.__doc__ = getattr(kernel, "__doc__", None)
    compute.__wrapped__ = kernel             # type: ignore[attr-defined]
    compute.float16 = "float32"              # type: ignore[attr-defined]
    return compute


def _to_half(value: Any) -> Any:
    if isinstance(value, tuple):
        return tuple(_to_half(v) for v in value)
    if getattr(value, "dtype", None) == SINGLE:
        return np.asarray(value).astype(HALF)
    return value


# ------------------------------------------------------------------ bfloat16
#
# NumPy has no bfloat16, and ml_dtypes (which adds one) is not a dependency. A bfloat16
# tensor is carried as its bit patterns in a one-field structured dtype, `BFLOAT16`
# (`[("bfloat16", "<u2")]`), not as plain uint16: the kernels see arrays, not Relay types,
# and a uint16 tensor must stay a uint16 tensor. A structured dtype also cannot take part
# in arithmetic, so a kernel that forgot bfloat16 fails loudly instead of computing on the
# integers. `carrier_dtype("bfloat16")` is the carrier and `relay_dtype` maps it back;
# `np_dtype("bfloat16")` still raises (NumPy has no such dtype: `np.asarray(0.5, BFLOAT16)`
# would store the bit pattern 0, not the value, so callers must mean the carrier).
#
# The float8/float4 dtypes and the 4- and 2-bit integers (ir/lowp.py) are carried the
# same way and computed the same way: `bfloat16_call` widens every carrier exactly (the
# floats to float32, int4/int2 to int8, uint4/uint2 to uint8) and rounds the results
# (float32 ones; int8/uint8 ones for the integers, wrapped) to the carrier's dtype.
#
_SEQUENCES = (list, tuple)


def _names_bfloat16(attrs: Any) -> bool:
    """Whether the op's attributes ask for a carried result (`out_dtype`/`dtype`):
    bfloat16 or one of ir/lowp.py's dtypes (canonical spellings)."""
    out = getattr(attrs, "out_dtype", None) or getattr(attrs, "dtype", None)
    return isinstance(out, str) and out in CARRIED


def _widen(x: Any) -> Any:
    dtype = getattr(x, "dtype", None)
    if dtype is not None and dtype.kind == "V":
        if dtype == BFLOAT16:
            return from_bfloat16(x)
        from ..ir.lowp import from_lowp
        return from_lowp(x)
    if dtype is None and isinstance(x, _SEQUENCES):
        return type(x)(_widen(v) for v in x)
    return x


def widen(x: Array) -> Array:
    """A carrier array's values (bfloat16 and the float8/float4 formats as float32, the
    4- and 2-bit integers as int8/uint8); any other array as it is."""
    return _widen(x)


def _wide_dtype(carrier: np.dtype) -> np.dtype:
    """The dtype a carrier is computed in: float32, or int8/uint8 for the integers."""
    if carrier == BFLOAT16:
        return SINGLE
    from ..ir.lowp import INT_FORMATS, lowp_name
    name = lowp_name(carrier)
    if name in INT_FORMATS:
        return np.dtype(np.int8 if INT_FORMATS[name][1] else np.uint8)
    return SINGLE


def _narrow(value: Any, carrier: np.dtype = BFLOAT16) -> Any:
    if isinstance(value, tuple):
        return tuple(_narrow(v, carrier) for v in value)
    if getattr(value, "dtype", None) == _wide_dtype(carrier):
        if carrier == BFLOAT16:
            return to_bfloat16(value)
        from ..ir.lowp import lowp_name, to_lowp
        return to_lowp(value, lowp_name(carrier))
    return value


def _first_float(inputs: list) -> np.dtype | None:
    """The dtype of the first floating-point (or bfloat16) array among the inputs, looking
    into tuple arguments (concatenate, stack)."""
    for x in inputs:
        dtype = getattr(x, "dtype", None)
        if dtype is None and isinstance(x, _SEQUENCES):
            found = _first_float(list(x))
            if found is not None:
                return found
        elif dtype is not None and (dtype.kind == "f" or dtype.kind == "V"):
            return dtype
    return None


def bfloat16_call(kernel: Callable[[list, Any], Any], inputs: list, attrs: Any) -> Any:
    """`kernel` on bfloat16 inputs (or attributes naming bfloat16), computed in float32.

    Which float32 results are rounded to bfloat16: an `out_dtype`/`dtype` attribute that
    names a dtype decides (bfloat16: rounded, and the kernel sees float32; any other: the
    kernel's own); without one, they are rounded when the first floating-point input is
    bfloat16, the input whose dtype a Relay op's result takes (`x` of `where(c, x, y)`,
    the data of `reshape_like(data, like)`, of `full_like`, of `bias_add`)."""
    first = _first_float(inputs)
    target = first if first is not None and first.kind == "V" else None
    for name in ("out_dtype", "dtype"):
        value = getattr(attrs, name, None)
        if isinstance(value, str) and value:
            canonical = canonical_dtype(value)
            target = carrier_dtype(canonical) if canonical in CARRIED else None
            if target is not None:
                attrs = dataclasses.replace(attrs, **{name: str(_wide_dtype(target))})
            break
    wide = [_widen(x) for x in inputs]
    if target is not None:
        return quietly(lambda: _narrow(kernel(wide, attrs), target))
    return quietly(kernel, wide, attrs)


Kernel = Callable[[list, Any], Any]


def bfloat16_in_float32(kernel: Kernel, on_bfloat16: Kernel | None = None) -> Kernel:
    """`kernel` computing bfloat16 in float32 and rounding each result once (module notes;
    `bfloat16_call` says which results); other inputs go straight to `kernel`. With
    `on_bfloat16`, bfloat16 runs that kernel instead (in float32): the fast_* ops, which TVM
    approximates for float32 only and computes exactly for bfloat16."""
    target = kernel if on_bfloat16 is None else on_bfloat16

    def compute(inputs: list, attrs: Any) -> Any:
        for x in inputs:
            try:
                bits = x.dtype.char == "V"  # a carrier (bfloat16's, ir/lowp.py's): cheap
            except AttributeError:          # a tuple argument (concatenate, stack)
                bits = isinstance(x, _SEQUENCES) and getattr(
                    _first_float(list(x)), "kind", None) == "V"
            if bits:
                return bfloat16_call(target, inputs, attrs)
        if attrs is not None and _names_bfloat16(attrs):
            return bfloat16_call(target, inputs, attrs)
        return kernel(inputs, attrs)
    compute.__name__ = getattr(kernel, "__name__", "kernel")
    compute.__qualname__ = getattr(kernel, "__qualname__", compute.__name__)
    compute.__module__ = getattr(kernel, "__module__", __name__)
    compute.__doc__ = getattr(kernel, "__doc__", None)
    compute.__wrapped__ = kernel             # type: ignore[attr-defined]
    return compute


def implement(*names: str, float16: Callable[[Kernel], Kernel] | None = None,
              bfloat16: bool | Kernel = True) -> Callable[[Kernel], Kernel]:
    """`registry.implement` for the numpy kernels, with bfloat16 support:

        @implement("nn.dense", float16=float16_in_float32)

    `float16`: as in `registry.implement` (`float16_in_float32` computes bfloat16 too).
    `bfloat16`: True (the default), bfloat16 computed in float32 by
    `bfloat16_in_float32`; a kernel, that kernel computes bfloat16 (in float32) instead;
    False, the kernel takes the carrier itself (casts, reinterpret), as does a kernel whose
    attribute `handles_bfloat16` is true (the binary kernels: they test for the carrier
    themselves and call `bfloat16_call`, cheaper than a wrapper's extra call). The
    decorator returns the function itself, unwrapped."""
    from .registry import implement as register

    def adapt(fn: Kernel) -> Kernel:
        inner = float16(fn) if float16 is not None else fn
        if (bfloat16 is False or getattr(fn, "handles_bfloat16", False)
                or (float16 is float16_in_float32 and bfloat16 is True)):
            return inner
        outer = bfloat16_in_float32(inner, None if bfloat16 is True else bfloat16)
        outer.__wrapped__ = fn               # type: ignore[attr-defined]
        return outer

    needs_adapter = float16 is not None or bfloat16 is not False
    return register(*names, target="numpy", float16=adapt if needs_adapter else None)
