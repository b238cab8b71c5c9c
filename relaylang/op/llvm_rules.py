"""Shared LLVM lowering rules for elementwise and broadcasting ops.

    implement("exp", target="llvm")(elementwise(lambda b, x: b.call("exp", x)))
    implement("add", target="llvm")(broadcast(lambda b, x, y: x + y))

`scalar_fn(b, *scalars)` gets one scalar expression per input (already broadcast) and
returns the output element; the result is cast to the dtype of the call's type. With
`attrs=True`, `scalar_fn(b, attrs, *scalars)`. Layer 2: nothing here imports the
backend; `b` and the tensor handles are duck-typed (see /work/llvm_spec.md).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

Lowering = Callable[[Any, list, Any, Any], Any]


def out_shape_dtype(out_type: Any) -> tuple[tuple[int, ...], str]:
    return tuple(int(d) for d in out_type.shape), str(out_type.dtype)


def broadcast_index(t: Any, out_shape: tuple[int, ...], idx: tuple[Any, ...]) -> tuple:
    """The index into `t` of output element `idx` (NumPy broadcasting: dims aligned on
    the right, size-1 dims of `t` read at 0)."""
    lead = len(out_shape) - t.ndim
    out = []
    for k, d in enumerate(t.shape):
        out.append(0 if d == 1 and out_shape[lead + k] != 1 else idx[lead + k])
    return tuple(out)


def elementwise(scalar_fn: Callable[..., Any], attrs: bool = False, name: str | None = None
                ) -> Lowering:
    """A lowering for an op whose inputs all have the output's shape (or broadcast)."""
    return broadcast(scalar_fn, attrs=attrs, name=name)


def broadcast(scalar_fn: Callable[..., Any], attrs: bool = False, name: str | None = None
              ) -> Lowering:
    """A lowering for an n-ary op with NumPy broadcasting of its inputs."""

    def lower(b: Any, inputs: list, call_attrs: Any, out_type: Any) -> Any:
        shape, dtype = out_shape_dtype(out_type)

        def fcompute(*idx: Any) -> Any:
            scalars = [t[broadcast_index(t, shape, idx)] for t in inputs]
            value = (scalar_fn(b, call_attrs, *scalars) if attrs
                     else scalar_fn(b, *scalars))
            return b.cast(value, dtype)
        return b.compute(shape, fcompute, dtype=dtype, name=name or "T")

    lower.__name__ = getattr(scalar_fn, "__name__", "lower")
    return lower
