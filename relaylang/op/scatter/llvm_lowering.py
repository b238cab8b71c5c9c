"""LLVM lowerings of scatter_elements and scatter_nd, written as gathers: each output
element reduces over the updates aimed at it (a reduction over the scattered axis of
`indices`, or over all of indices' Y positions for scatter_nd), so nothing is written
through an index and no load leaves its buffer (coordinates are clamped; an index out of
range matches no output element, where the NumPy kernel raises).

"update" takes the last matching update in row-major order (a max over the matching
positions, then a load); "add"/"mul"/"min"/"max" reduce the matching updates and combine
the result with the data. Float sums and products of several updates at one place may
round differently from the NumPy kernel's sequential order. bool data with a reduction
other than "update" raises NotImplementedError (the executor runs the NumPy kernel).
"""
from __future__ import annotations

import math
from typing import Any

from ..llvm_rules import out_shape_dtype
from ..registry import implement

_IDENTITY = {"add": 0, "mul": 1}


def _clamp(b: Any, e: Any, n: int) -> Any:
    if n <= 1:
        return b.const(0, "int64")
    return b.min(b.max(e, b.const(0, "int64")), b.const(n - 1, "int64"))


def _wrap(b: Any, j: Any, n: int) -> Any:
    """A negative index counted from the end (once); other values unchanged."""
    j = b.cast(j, "int64")
    return b.select(b.lt(j, 0), j + n, j)


def _identity(b: Any, reduction: str, dtype: str) -> Any:
    if reduction == "min":
        return b.max_value(dtype)
    if reduction == "max":
        return b.min_value(dtype)
    return b.const(_IDENTITY[reduction], dtype)


def _reduce(b: Any, reduction: str, expr: Any, axes: Any) -> Any:
    return {"add": b.reduce_sum, "mul": b.reduce_prod, "min": b.reduce_min,
            "max": b.reduce_max}[reduction](expr, axes)


def _combine(b: Any, reduction: str, x: Any, y: Any) -> Any:
    if reduction == "add":
        return x + y
    if reduction == "mul":
        return x * y
    return b.min(x, y) if reduction == "min" else b.max(x, y)


def _check(reduction: str, dtype: str) -> None:
    if reduction != "update" and dtype == "bool":
        raise NotImplementedError(f"scatter with reduction {reduction!r} on bool data")


def _unravel(b: Any, shape: tuple[int, ...], flat: Any) -> tuple:
    out: list[Any] = []
    for k, d in enumerate(shape):
        stride = math.prod(shape[k + 1:])
        q = b.floordiv(flat, b.const(stride, "int64")) if stride > 1 else flat
        out.append(b.floormod(q, b.const(d, "int64")) if k > 0 else q)
    return tuple(_clamp(b, e, d) for e, d in zip(out, shape))


@implement("scatter_elements", target="llvm")
def scatter_elements(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, idx, upd = inputs
    shape, dtype = out_shape_dtype(out_type)
    reduction = attrs.reduction
    _check(reduction, dtype)
    axis = attrs.axis + data.ndim if attrs.axis < 0 else attrs.axis
    n, kk = data.shape[axis], idx.shape[axis]
    if data.size == 0 or idx.size == 0:
        return b.compute(shape, lambda *i: data[i], name="scatter_elements")

    def source(i: tuple, k: Any) -> tuple[Any, tuple]:
        """(whether output i lies inside indices' extent off the axis, the clamped
        coordinates of indices/updates at axis position k)."""
        inside = None
        at: list[Any] = []
        for d, e in enumerate(i):
            if d == axis:
                at.append(k)
                continue
            if idx.shape[d] < data.shape[d]:
                ok = b.lt(e, idx.shape[d])
                inside = ok if inside is None else b.logical_and(inside, ok)
                at.append(_clamp(b, e, idx.shape[d]))
            else:
                at.append(e)
        return inside, tuple(at)

    def match(i: tuple, k: Any) -> tuple[Any, tuple]:
        inside, at = source(i, k)
        hit = b.eq(_wrap(b, idx[at], n), b.cast(i[axis], "int64"))
        return (hit if inside is None else b.logical_and(inside, hit)), at

    if reduction == "update":
        def flast(*i: Any) -> Any:
            k = b.reduce_axis(kk, "k")
            hit, _ = match(i, k)
            return b.reduce_max(b.select(hit, b.cast(k, "int64"), b.const(-1, "int64")), k)
        last = b.compute(shape, flast, name="scatter_last")

        def fout(*i: Any) -> Any:
            _, at = source(i, _clamp(b, last[i], kk))
            return b.select(b.ge(last[i], 0), upd[at], data[i])
        return b.compute(shape, fout, name="scatter_elements")

    def freduce(*i: Any) -> Any:
        k = b.reduce_axis(kk, "k")
        hit, at = match(i, k)
        return _reduce(b, reduction, b.select(hit, upd[at], _identity(b, reduction, dtype)), k)
    total = b.compute(shape, freduce, name="scatter_total")
    return b.compute(shape, lambda *i: _combine(b, reduction, data[i], total[i]),
                     name="scatter_elements")


@implement("scatter_nd", target="llvm")
def scatter_nd(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, idx, upd = inputs
    shape, dtype = out_shape_dtype(out_type)
    mode = attrs.mode
    _check(mode, dtype)
    m = idx.shape[0]
    ys = idx.shape[1:]
    count = math.prod(ys)
    if data.size == 0 or count == 0:
        return b.compute(shape, lambda *i: data[i], name="scatter_nd")
    if m == 0:
        raise NotImplementedError("scatter_nd with indices of shape (0, ...)")

    def match(i: tuple, y: tuple) -> Any:
        hit = None
        for p in range(m):
            e = b.eq(_wrap(b, idx[(p,) + y], data.shape[p]), b.cast(i[p], "int64"))
            hit = e if hit is None else b.logical_and(hit, e)
        return hit

    if mode == "update":
        def flast(*i: Any) -> Any:
            y = tuple(b.reduce_axis(d, "y") for d in ys)
            flat: Any = b.const(0, "int64")
            for k, v in enumerate(y):
                flat = flat + b.cast(v, "int64") * math.prod(ys[k + 1:])
            return b.reduce_max(b.select(match(i, y), flat, b.const(-1, "int64")), list(y))
        last = b.compute(shape, flast, name="scatter_last")

        def fout(*i: Any) -> Any:
            y = _unravel(b, ys, b.max(last[i], b.const(0, "int64")))
            return b.select(b.ge(last[i], 0), upd[y + i[m:]], data[i])
        return b.compute(shape, fout, name="scatter_nd")

    def freduce(*i: Any) -> Any:
        y = tuple(b.reduce_axis(d, "y") for d in ys)
        value = b.select(match(i, y), upd[y + i[m:]], _identity(b, mode, dtype))
        return _reduce(b, mode, value, list(y))
    total = b.compute(shape, freduce, name="scatter_total")
    return b.compute(shape, lambda *i: _combine(b, mode, data[i], total[i]), name="scatter_nd")
