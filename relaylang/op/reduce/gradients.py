"""Gradient rules of the reduce family (TVM's python/tvm/relay/op/_tensor_grad.py).

The contract is the tensor family's (relaylang/op/tensor/gradients.py). The
adjoint of a reduction has the reduced shape; it is given its reduced axes back
(`expand_dims`, when `keepdims` dropped them) and broadcast to the input's shape.
`max`/`min` send it to the positions that hold the extremum, shared equally
between ties; `prod` uses `prod / x` (inputs that are zero are not supported);
arg-reductions and `all`/`any` are piecewise constant: zeros.
"""
from __future__ import annotations

from typing import Any

from .. import make
from ..registry import implement
from ..tensor.gradients import scalar
from .relations import reduce_axes


def _axes(orig: Any) -> tuple[int, ...]:
    x = orig.args[0]
    return reduce_axes(len(x.checked_type.shape), orig.attrs)


def _unreduce(orig: Any, value: Any) -> Any:
    """`value` (of the reduction's output shape) with the reduced axes back as 1s."""
    if not orig.attrs.keepdims:
        for axis in _axes(orig):            # ascending: each lands at its own position
            value = make.expand_dims(value, axis=axis)
    return value


def _count(orig: Any) -> int:
    shape = orig.args[0].checked_type.shape
    n = 1
    for axis in _axes(orig):
        if not isinstance(shape[axis], int):
            raise TypeError(f"{orig.op.name}: the gradient needs static reduced dimensions")
        n *= shape[axis]
    return n


def _spread(orig: Any, grad: Any) -> Any:
    """The adjoint broadcast over the input's shape."""
    return make.broadcast_to_like(_unreduce(orig, grad), orig.args[0])


@implement("sum", target="gradient")
def sum_grad(orig: Any, grad: Any) -> list[Any]:
    return [_spread(orig, grad)]


@implement("mean", target="gradient")
def mean_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.divide(_spread(orig, grad), scalar(max(_count(orig), 1), x))]


@implement("max", "min", target="gradient")
def extremum_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    hit = make.cast_like(make.equal(x, _unreduce(orig, orig)), x)
    ties = make.sum(hit, axis=_axes(orig), keepdims=True)
    return [make.divide(make.multiply(hit, _unreduce(orig, grad)), ties)]


@implement("prod", target="gradient")
def prod_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.divide(make.multiply(_spread(orig, grad), _unreduce(orig, orig)), x)]


@implement("argmax", "argmin", "all", "any", target="gradient")
def zero_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.zeros_like(orig.args[0])]


@implement("variance", target="gradient")
def variance_grad(orig: Any, grad: Any) -> list[Any]:
    # variance = sum((x - m)^2) / N'  (N' = N - 1 when unbiased)
    x, m = orig.args
    n = _count(orig) - (1 if orig.attrs.unbiased else 0)
    centred = make.subtract(x, m)
    dx = make.multiply(_spread(orig, grad),
                       make.multiply(centred, scalar(2.0 / max(n, 1), x)))
    return [dx, make.collapse_sum_like(make.negative(dx), m)]
