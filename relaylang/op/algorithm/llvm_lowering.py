"""LLVM lowerings of argsort, sort and topk: ranks by counting, as the loop IR has no
sort. The rank of position i along the axis is the number of positions j before it in
the order (`precedes(j, i)`: a strictly earlier value, or an equal one at a lower
position -- the stable order of `numpy_kernels.stable_order`, NaN largest), a reduction
over the axis; the index at output position p is the one position whose rank is p (a
sum over the axis of `j if rank[j] == p`), and values are loads at that index (clamped
into range, so no load leaves the buffer). O(n^2) per row: axes longer than `SORT_MAX`
raise NotImplementedError (the executor runs the NumPy kernel).

unique and argwhere have no lowering: their result shapes depend on the values.
"""
from __future__ import annotations

from typing import Any

from ..llvm_rules import out_shape_dtype
from ..registry import implement

SORT_MAX = 4096


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _positions(b: Any, x: Any, axis: int, ascend: bool, k: int) -> Any:
    """A stage of shape x.shape with `k` along `axis`: the positions (int64) of the
    first k elements of the stable order."""
    n = x.shape[axis]
    if n > SORT_MAX:
        raise NotImplementedError(f"sorting {n} elements (more than {SORT_MAX})")
    is_float = x.dtype.startswith(("float", "bfloat"))

    def precedes(xj: Any, xi: Any, j: Any, i: Any) -> Any:
        strictly = b.lt(xj, xi) if ascend else b.gt(xj, xi)
        equal = b.eq(xj, xi)
        if is_float:
            nan_j, nan_i = b.call("isnan", xj), b.call("isnan", xi)
            big = b.logical_and(nan_i, b.logical_not(nan_j)) if ascend else \
                b.logical_and(nan_j, b.logical_not(nan_i))
            strictly = b.logical_or(strictly, big)
            equal = b.logical_or(equal, b.logical_and(nan_i, nan_j))
        return b.logical_or(strictly, b.logical_and(equal, b.lt(j, i)))

    def frank(*i: Any) -> Any:
        j = b.reduce_axis(n, "j")
        at_j = i[:axis] + (j,) + i[axis + 1:]
        before = precedes(x[at_j], x[i], j, i[axis])
        return b.reduce_sum(b.cast(before, "int64"), j)
    rank = b.compute(x.shape, frank, name="rank")

    def fpos(*p: Any) -> Any:
        j = b.reduce_axis(n, "j")
        at_j = p[:axis] + (j,) + p[axis + 1:]
        hit = b.eq(rank[at_j], b.cast(p[axis], "int64"))
        return b.reduce_sum(b.select(hit, b.cast(j, "int64"), b.const(0, "int64")), j)
    shape = x.shape[:axis] + (k,) + x.shape[axis + 1:]
    return b.compute(shape, fpos, name="order")


def _gather(b: Any, x: Any, pos: Any, axis: int, name: str) -> Any:
    n = x.shape[axis]

    def fcompute(*i: Any) -> Any:
        j = b.min(b.max(pos[i], b.const(0, "int64")), b.const(n - 1, "int64"))
        return x[i[:axis] + (j,) + i[axis + 1:]]
    return b.compute(pos.shape, fcompute, name=name)


def _empty(b: Any, shape: tuple, dtype: str, name: str) -> Any:
    return b.compute(shape, lambda *i: b.const(0, dtype), name=name)


@implement("argsort", target="llvm")
def argsort(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, dtype = out_shape_dtype(out_type)
    axis = _axis(attrs.axis, x.ndim)
    if x.size == 0:
        return _empty(b, shape, dtype, "argsort")
    pos = _positions(b, x, axis, bool(attrs.is_ascend), x.shape[axis])
    return b.compute(shape, lambda *i: b.cast(pos[i], dtype), dtype=dtype, name="argsort")


@implement("sort", target="llvm")
def sort(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, dtype = out_shape_dtype(out_type)
    axis = _axis(attrs.axis, x.ndim)
    if x.size == 0:
        return _empty(b, shape, dtype, "sort")
    pos = _positions(b, x, axis, bool(attrs.is_ascend), x.shape[axis])
    return _gather(b, x, pos, axis, "sort")


@implement("topk", target="llvm")
def topk(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    fields = out_type.fields if attrs.ret_type == "both" else (out_type,)
    axis = _axis(attrs.axis, x.ndim)
    shape, _ = out_shape_dtype(fields[0])
    k = shape[axis]
    index_dtype = str(fields[-1].dtype) if attrs.ret_type != "values" else "int32"
    if x.size == 0 or k == 0:
        values = _empty(b, shape, x.dtype, "topk_values")
        indices = _empty(b, shape, index_dtype, "topk_indices")
    else:
        pos = _positions(b, x, axis, bool(attrs.is_ascend), k)
        values = _gather(b, x, pos, axis, "topk_values")
        indices = b.compute(shape, lambda *i: b.cast(pos[i], index_dtype), dtype=index_dtype,
                            name="topk_indices")
    if attrs.ret_type == "values":
        return values
    if attrs.ret_type == "indices":
        return indices
    return values, indices
