"""What the NumPy kernels of every family share: the floating-point error policy
(`quietly`, `fp_errors_ignored`), Relay dtype -> NumPy dtype, an exact `erf`, and
float16 computed in float32 (`float16_in_float32`, applied by the registry to the
kernels registered with `@implement(..., float16=float16_in_float32)`).

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

from ..ir.dtype import canonical_dtype

Array = np.ndarray

_NUMPY_DTYPES = {"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64"}


def np_dtype(dtype: str) -> np.dtype:
    """The NumPy dtype of a Relay dtype; NotImplementedError when NumPy has none."""
    name = canonical_dtype(dtype) or dtype
    if name not in _NUMPY_DTYPES:
        raise NotImplementedError(f"dtype {dtype} has no NumPy equivalent")
    return np.dtype(name)


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
    """
    def compute(inputs: list, attrs: Any) -> Any:
        for x in inputs:
            if getattr(x, "dtype", None) == HALF:
                break
        else:
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
