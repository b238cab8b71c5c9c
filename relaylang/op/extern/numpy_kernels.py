"""Calling an external function in destination-passing style."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.types import TensorType
from ..registry import implement
from .functions import get_global_func


class ExternalCallError(RuntimeError):
    """An external function failed, or gave back something other than its output."""


def value_type(v: Any) -> TensorType:
    return TensorType(tuple(int(d) for d in np.shape(v)), str(np.asarray(v).dtype))


def call_dps(name: str, func: Callable[..., Any], inputs: list, out_shape: tuple[int, ...],
             out_dtype: str) -> np.ndarray:
    """`func(*inputs, out)` with read-only views of the inputs (no copies) and a fresh
    `out`; a function that returns its result instead is accepted when the result has
    the output's shape (it is cast to the output's dtype)."""
    views = []
    for v in inputs:
        a = np.asarray(v).view()
        a.flags.writeable = False       # values are never mutated in place
        views.append(a)
    out = np.zeros(out_shape, dtype=out_dtype)
    try:
        result = func(*views, out)
    except Exception as e:  # noqa: BLE001 -- any failure of user code is reported by name
        raise ExternalCallError(f"external function {name} failed: {type(e).__name__}: {e}") \
            from e
    if result is not None and result is not out:
        got = np.asarray(result)
        if got.shape != out.shape:
            raise ExternalCallError(f"external function {name} returned shape "
                                    f"{list(got.shape)}, expected {list(out_shape)}")
        out[...] = got
    return out


@implement("call_dps_packed")
def call_dps_packed(inputs: list, attrs: Any) -> np.ndarray:
    return call_dps(attrs.func, get_global_func(attrs.func), inputs,
                    tuple(int(d) for d in attrs.out_shape), attrs.out_dtype)
