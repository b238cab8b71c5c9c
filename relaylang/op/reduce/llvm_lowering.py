"""LLVM lowerings of the reduce family. Semantics follow `numpy_kernels.py`:

- sum/prod accumulate in the input dtype (integers wrap; a bool sum is the parity, a
  bool prod the conjunction); float16 accumulates in float32 and rounds once;
- max/min propagate NaN and start from the identity (so empty reductions are defined);
  on bool they are or/and (`any`/`all`);
- mean divides the sum by the count converted to the dtype (integers truncate toward
  zero; float16 sums and divides in float32, then rounds once); a bool mean is NumPy's
  (`any` over a non-empty reduction, True over an empty one);
- argmax/argmin: the row-major index within the reduced axes of the first extremum
  (a NaN is the extremum), the last with `select_last_index`, -1 over no elements;
  int32 results;
- variance(data, mean): sum((data - mean)^2) / (count - unbiased), float16 in float32.

Deviation: integer mean/variance over a count that is 0 in the dtype gives 0 (NumPy's
kernel also gives 0 there, through its warnings). bool variance is left to NumPy (its
kernel raises: NumPy has no boolean subtract).
"""
from __future__ import annotations

import math
from typing import Any

from ..llvm_rules import broadcast_index, out_shape_dtype
from ..registry import implement
from .relations import reduce_axes


def _plan(b: Any, x: Any, attrs: Any) -> tuple[tuple[int, ...], list[int], Any]:
    """(reduced axes, kept axes, index builder): `index(out_idx, raxes)` -> x's index."""
    axes = reduce_axes(x.ndim, attrs)
    kept = [k for k in range(x.ndim) if k not in axes]

    def index(out_idx: tuple, rvars: list) -> tuple:
        out: list[Any] = []
        r = iter(rvars)
        if attrs.keepdims:
            for k in range(x.ndim):
                out.append(next(r) if k in axes else out_idx[k])
        else:
            o = iter(out_idx)
            for k in range(x.ndim):
                out.append(next(r) if k in axes else next(o))
        return tuple(out)
    return axes, kept, index


def _reduction(b: Any, x: Any, attrs: Any, out_type: Any, source: Any, op: str,
               dtype: str | None = None, name: str = "red") -> Any:
    """compute(out_shape): op over the reduced axes of source(x_index), in `dtype`."""
    shape, _ = out_shape_dtype(out_type)
    axes, _, index = _plan(b, x, attrs)

    def fcompute(*idx: Any) -> Any:
        rvars = [b.reduce_axis(x.shape[k], "k") for k in axes]
        value = source(index(idx, rvars))
        if not rvars:
            return value
        return getattr(b, "reduce_" + op)(value, rvars)
    return b.compute(shape, fcompute, dtype=dtype, name=name)


def _count(x: Any, attrs: Any) -> int:
    return math.prod(x.shape[k] for k in reduce_axes(x.ndim, attrs))


def _simple(op: str):
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        (x,) = inputs
        shape, _ = out_shape_dtype(out_type)
        if x.dtype == "bool" and op == "sum":       # the parity: xor of the bits
            red = _reduction(b, x, attrs, out_type, lambda i: b.cast(x[i], "int8"), "sum",
                             dtype="int8", name=op)
            return b.compute(shape, lambda *i: b.cast(
                b.call("bitwise_and", red[i], b.const(1, "int8")), "bool"), name=op + "_bool")
        if x.dtype == "bool":
            rop = {"prod": "min", "max": "max", "min": "min"}[op]
            return _reduction(b, x, attrs, out_type, lambda i: x[i], rop, name=op)
        return _reduction(b, x, attrs, out_type, lambda i: x[i], op, name=op)
    lower.__name__ = op
    return lower


for _op in ("sum", "prod", "max", "min"):
    implement(_op, target="llvm")(_simple(_op))


@implement("all", target="llvm")
def all_(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    return _reduction(b, x, attrs, out_type, lambda i: b.cast(x[i], "bool"), "min",
                      name="all")


@implement("any", target="llvm")
def any_(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    return _reduction(b, x, attrs, out_type, lambda i: b.cast(x[i], "bool"), "max",
                      name="any")


def _bits(dtype: str) -> int:
    return 1 if dtype == "bool" else int("".join(ch for ch in dtype if ch.isdigit()))


def _divide(b: Any, total: Any, count: int, dtype: str) -> Any:
    """total / count with the count converted to `dtype` (integers: C division; a
    count that is 0 in the dtype gives 0, as NumPy's kernel does through its warnings)."""
    if not dtype.startswith("float") and count % (1 << _bits(dtype)) == 0:
        return b.const(0, dtype)
    return total / b.cast(b.const(count, "int64"), dtype)


@implement("mean", target="llvm")
def mean(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, dtype = out_shape_dtype(out_type)
    n = _count(x, attrs)
    if dtype == "bool":             # NumPy: logical-or sum, divided as floats, cast back
        if n == 0:
            return b.compute(shape, lambda *i: b.const(True, "bool"), name="mean")
        return _reduction(b, x, attrs, out_type, lambda i: x[i], "max", name="mean")
    acc = "float32" if dtype == "float16" else dtype
    total = _reduction(b, x, attrs, out_type, lambda i: b.cast(x[i], acc), "sum",
                       dtype=acc, name="mean_sum")
    return b.compute(shape, lambda *i: b.cast(_divide(b, total[i], n, acc), dtype),
                     dtype=dtype, name="mean")


@implement("variance", target="llvm")
def variance(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, m = inputs
    shape, dtype = out_shape_dtype(out_type)
    if dtype == "bool":
        raise NotImplementedError("bool variance (NumPy has no boolean subtract)")
    acc = "float32" if dtype == "float16" else dtype

    def square(i: tuple) -> Any:
        d = b.cast(data[i], acc) - b.cast(m[broadcast_index(m, data.shape, i)], acc)
        return d * d
    total = _reduction(b, data, attrs, out_type, square, "sum", dtype=acc,
                       name="variance_sum")
    n = _count(data, attrs) - (1 if attrs.unbiased else 0)
    return b.compute(shape, lambda *i: b.cast(_divide(b, total[i], n, acc), dtype),
                     dtype=dtype, name="variance")


def _arg(op: str):
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        (x,) = inputs
        shape, dtype = out_shape_dtype(out_type)
        n = _count(x, attrs)
        if n == 0:
            return b.compute(shape, lambda *i: b.const(-1, dtype), dtype=dtype, name=op)
        axes = reduce_axes(x.ndim, attrs)
        if not axes:                # exclude=True listing every axis: one element each
            return b.compute(shape, lambda *i: b.const(0, dtype), dtype=dtype, name=op)
        last = bool(attrs.select_last_index)

        def source(i: tuple) -> Any:
            if last:        # reversing every reduced axis reverses the flat order
                i = tuple(x.shape[k] - 1 - v if k in axes else v for k, v in enumerate(i))
            return x[i]
        reducer = "argmax" if op == "argmax" else "argmin"
        if not last:
            return _reduction(b, x, attrs, out_type, source, reducer, dtype=dtype, name=op)
        r = _reduction(b, x, attrs, out_type, source, reducer, dtype="int64", name=op)
        return b.compute(shape, lambda *i: b.cast(n - 1 - r[i], dtype), dtype=dtype,
                         name=op + "_last")
    lower.__name__ = op
    return lower


implement("argmax", target="llvm")(_arg("argmax"))
implement("argmin", target="llvm")(_arg("argmin"))
