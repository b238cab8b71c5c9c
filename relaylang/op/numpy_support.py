"""What the NumPy kernels of every family share: the floating-point error policy
(`quietly`, `fp_errors_ignored`), Relay dtype -> NumPy dtype, and an exact `erf`.

Imported only by `numpy_kernels` modules and by the code that runs them (the
interpreter, FoldConstant): it imports NumPy.

Floating-point errors never warn (TVM does not trap). Entering `np.errstate` costs
more than a small op, so inside `fp_errors_ignored()` (the interpreter runs a whole
program in one) the kernels skip their own; `IGNORING` says whether they may.
"""
from __future__ import annotations

import contextvars
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
