"""NumPy reference kernels of the reduce family (registered with `@implement`).

Semantics of TVM's src/relay/op/tensor/reduce.cc computes and
include/tvm/topi/reduction.h:

- sums and products accumulate in the input dtype (integers wrap; bool is a
  1-bit integer, so its sum is the parity), except float16: every float
  reduction here computes float16 in float32 and rounds once
  (`numpy_support.float16_in_float32`), as TVM's mean and variance do;
- `mean` divides the sum by the element count converted to the input dtype
  (integer means truncate);
- max/min over zero elements give the reduction's identity (-inf/+inf or the
  dtype's limits) rather than NumPy's error;
- argmax/argmin over several axes return the row-major index within the
  reduced axes (topi's RavelIndex); ties go to the first index, or the last
  with `select_last_index`; over zero elements the index is -1;
- `variance(data, mean)` is sum((data - mean)^2) / (count - unbiased).
"""
from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import quietly
from ..numpy_support import implement
from .relations import reduce_axes, reduced_shape

Array = np.ndarray
Kernel = Callable[[list, Any], Array]


def _count(x: Array, axes: tuple[int, ...]) -> int:
    return math.prod(x.shape[a] for a in axes)


def _divide(total: Array, count: int, dtype: np.dtype) -> Array:
    """`total / count` with the count converted to `dtype` (TVM's cast(dtype, count));
    integers divide toward zero."""
    with np.errstate(all="ignore"):
        divisor = np.asarray(count).astype(dtype)
        if dtype.kind in "iu":
            return (total - np.fmod(total, divisor)) // divisor
        return total / divisor


def _reduction(fn: Callable[[Array, tuple[int, ...], bool], Any]) -> Kernel:
    def kernel(inputs: list, attrs: Any) -> Array:
        x = inputs[0]
        axes = reduce_axes(x.ndim, attrs)
        return np.asarray(quietly(fn, x, axes, attrs.keepdims), dtype=x.dtype)
    return kernel


def _sum(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    if x.dtype == bool:
        return np.sum(x, axis=axes, keepdims=keepdims, dtype=np.int64) & 1
    return np.sum(x, axis=axes, keepdims=keepdims, dtype=x.dtype)


def _extreme(fn: Callable[..., Array], largest: bool) -> Callable[..., Array]:
    """max/min with the identity TVM starts from, so empty reductions are defined."""
    def reduce(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
        if x.dtype == bool:
            identity: Any = not largest
        elif x.dtype.kind == "f":
            identity = -np.inf if largest else np.inf
        else:
            info = np.iinfo(x.dtype)
            identity = info.min if largest else info.max
        return fn(x, axis=axes, keepdims=keepdims, initial=identity)
    return reduce


def _mean(x: Array, axes: tuple[int, ...], keepdims: bool) -> Array:
    data = x.astype(np.float32) if x.dtype == np.float16 else x
    total = np.sum(data, axis=axes, keepdims=keepdims, dtype=data.dtype)
    return _divide(total, _count(x, axes), data.dtype)


def _arg_reduction(pick: Callable[..., Array]) -> Kernel:
    """argmax/argmin: move the reduced axes last, flatten them, pick along them."""
    def kernel(inputs: list, attrs: Any) -> Array:
        x = inputs[0]
        axes = reduce_axes(x.ndim, attrs)
        kept = [i for i in range(x.ndim) if i not in axes]
        n = _count(x, axes)
        flat = np.transpose(x, kept + list(axes)).reshape([x.shape[i] for i in kept] + [n])
        if n == 0:
            index = np.full(flat.shape[:-1], -1)
        elif attrs.select_last_index:
            index = n - 1 - pick(flat[..., ::-1], axis=-1)
        else:
            index = pick(flat, axis=-1)
        shape = reduced_shape(x.shape, axes, attrs.keepdims)
        return np.asarray(index, dtype=np.int32).reshape(shape)     # 0-d stays an array
    return kernel


@implement("variance", float16=IN_FLOAT32)
def variance(inputs: list, attrs: Any) -> Array:
    data, mean = inputs
    axes = reduce_axes(data.ndim, attrs)
    count = _count(data, axes) - (1 if attrs.unbiased else 0)
    with np.errstate(all="ignore"):
        diff = data - mean
        squares = diff * diff
        if data.dtype == np.float16:
            squares = squares.astype(np.float32)
        total = np.sum(squares, axis=axes, keepdims=attrs.keepdims, dtype=squares.dtype)
        return np.asarray(_divide(total, count, squares.dtype), dtype=data.dtype)


implement("sum", float16=IN_FLOAT32)(_reduction(_sum))
implement("mean", float16=IN_FLOAT32)(_reduction(_mean))
implement("max", float16=IN_FLOAT32)(_reduction(_extreme(np.max, largest=True)))
implement("min", float16=IN_FLOAT32)(_reduction(_extreme(np.min, largest=False)))
implement("prod", float16=IN_FLOAT32)(_reduction(lambda x, axes, keepdims: np.prod(x, axis=axes, keepdims=keepdims,
                                                               dtype=x.dtype)))
implement("all")(_reduction(lambda x, axes, keepdims: np.all(x, axis=axes, keepdims=keepdims)))
implement("any")(_reduction(lambda x, axes, keepdims: np.any(x, axis=axes, keepdims=keepdims)))
implement("argmax")(_arg_reduction(np.argmax))
implement("argmin")(_arg_reduction(np.argmin))
