"""NumPy reference kernels of the algorithm family (see the family's docstring for the
order: stable, NaN largest, equal values lower position first in both directions)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import implement


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def stable_order(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """The positions along `axis` that order `x` (int64): stable, NaN largest; descending
    keeps equal values lower position first (argsort of the reversed axis, reversed)."""
    if ascend:
        return np.argsort(x, axis=axis, kind="stable")
    n = x.shape[axis]
    flipped = np.argsort(np.flip(x, axis), axis=axis, kind="stable")
    return (n - 1) - np.flip(flipped, axis)


@implement("argsort")
def argsort(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    order = stable_order(x, _axis(attrs.axis, x.ndim), bool(attrs.is_ascend))
    return order.astype(attrs.dtype or "int32")


@implement("sort")
def sort(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    axis = _axis(attrs.axis, x.ndim)
    order = stable_order(x, axis, bool(attrs.is_ascend))
    return np.ascontiguousarray(np.take_along_axis(x, order, axis))


@implement("topk")
def topk(inputs: list, attrs: Any) -> Any:
    x = inputs[0]
    axis = _axis(attrs.axis, x.ndim)
    n = x.shape[axis]
    k = n if attrs.k is None or attrs.k < 1 else int(attrs.k)
    if k > n:
        raise ValueError(f"topk: k = {k} is larger than the axis ({n} elements)")
    order = stable_order(x, axis, bool(attrs.is_ascend))
    order = np.take(order, np.arange(k), axis=axis)
    values = np.ascontiguousarray(np.take_along_axis(x, order, axis))
    indices = np.ascontiguousarray(order.astype(attrs.dtype or "int32"))
    if attrs.ret_type == "values":
        return values
    if attrs.ret_type == "indices":
        return indices
    return values, indices


@implement("unique")
def unique(inputs: list, attrs: Any) -> tuple:
    x = inputs[0]
    if attrs.axis is None:
        flat = x.reshape(-1)
        values, first, inverse, counts = np.unique(flat, return_index=True,
                                                   return_inverse=True, return_counts=True)
        inverse = inverse.reshape(-1)
        axis = 0
    else:
        axis = _axis(attrs.axis, x.ndim)
        values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                                   return_counts=True, axis=axis)
        inverse = inverse.reshape(-1)
    if not attrs.sorted:
        # order of first occurrence: renumber the sorted uniques by their first position
        by_first = np.argsort(first, kind="stable")
        rank = np.empty_like(by_first)
        rank[by_first] = np.arange(by_first.size)
        values = np.take(values, by_first, axis=axis)
        first, counts = first[by_first], counts[by_first]
        inverse = rank[inverse]
    out = [np.ascontiguousarray(values), first.astype("int32"), inverse.astype("int32"),
           np.array([first.size], "int32")]
    if attrs.return_counts:
        out.append(counts.astype("int32"))
    return tuple(out)


@implement("argwhere")
def argwhere(inputs: list, attrs: Any) -> np.ndarray:
    return np.ascontiguousarray(np.argwhere(inputs[0]).astype("int32"))
