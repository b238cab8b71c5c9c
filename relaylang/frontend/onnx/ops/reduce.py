"""Reductions: ReduceSum/Mean/Max/Min/Prod, ReduceL1/L2, ReduceLogSum, ReduceLogSumExp,
ReduceSumSquare, and ArgMax/ArgMin.

Opset ranges: the axes are an attribute until ReduceSum-13 and the others' opset 18,
an optional (constant) input from then on, together with `noop_with_empty_axes`.
`keepdims` defaults to 1. No axes (absent, or an empty list) reduce every axis, except
with `noop_with_empty_axes=1`, where they reduce none: every output element is then the
reduction over the one element at its place, as onnxruntime and ONNX's reference
compute it (so ReduceL1 gives |x|, ReduceSumSquare x*x, ReduceLogSum log(x), and the
plain reductions the input itself).

Relaylang's reduce ops take `axis=None` (or an empty tuple) as "every axis", so a
reduction over no axes is built without one. Integer ReduceL2 and ReduceLogSum compute
in float64 and convert back (truncating), as onnxruntime does; integer ReduceLogSumExp
is refused (ONNX drops integer types from it in opset 28, and onnxruntime's integer
result is not the truncated log-sum-exp). ReduceLogSumExp is the max-shifted form
m + log(sum(exp(x - m))), m the max over the reduced axes (0 where that is not finite),
equal to log(sum(exp(x))) in exact arithmetic and without its overflow.
ArgMax/ArgMin give relaylang's int32 indices converted to ONNX's int64.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....op import make as op
from ..registry import converter

Build = Callable[[Any, Any, tuple[int, ...], bool, str], Any]


# ---------------------------------------------------------------- axes

def _normalize(node: Any, axes: Any, rank: int) -> tuple[int, ...]:
    """`axes` (ints, possibly negative) as sorted non-negative axes of a rank-`rank`
    tensor; an error for an axis out of range or listed twice."""
    out: list[int] = []
    for a in axes:
        a = int(a)
        if not -rank <= a < rank:
            raise node.error(f"axis {a} is out of range for an input of rank {rank}")
        a = a + rank if a < 0 else a
        if a in out:
            raise node.error(f"axis {a} is listed twice in axes={list(map(int, axes))}")
        out.append(a)
    return tuple(sorted(out))


def _rank(ctx: Any, node: Any) -> int:
    return len(ctx.shape(node.inputs[0]))


def _axes_from_attr(ctx: Any, node: Any) -> tuple[int, ...]:
    """The reduced axes when they are the `axes` attribute (absent or empty: all)."""
    rank = _rank(ctx, node)
    axes = node.attr("axes", None)
    if not axes:
        return tuple(range(rank))
    return _normalize(node, axes, rank)


def _axes_from_input(ctx: Any, node: Any) -> tuple[int, ...]:
    """The reduced axes when they are input 1 (absent or empty: all, or none with
    `noop_with_empty_axes=1`)."""
    rank = _rank(ctx, node)
    given = node.input(1)
    axes: list[int] = []
    if given is not None:
        value = ctx.constant(given, node, "the axes input")
        axes = [int(a) for a in value.reshape(-1)]
    if not axes:
        if int(node.attr("noop_with_empty_axes", 0)):
            return ()
        return tuple(range(rank))
    return _normalize(node, axes, rank)


# ---------------------------------------------------------------- building blocks

def _reduce(fn: Any, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
    """`fn` over `axes` of `x`; over no axes, `x` itself (each element alone)."""
    if not axes:
        return x
    return fn(x, axis=axes, keepdims=keepdims)


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def _plain(fn: Any) -> Build:
    def build(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
        return _reduce(fn, x, axes, keepdims)
    return build


def _l1(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
    return _reduce(op.sum, op.abs(x), axes, keepdims)


def _sum_square(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
    return _reduce(op.sum, op.multiply(x, x), axes, keepdims)


def _in_float64(dtype: str, x: Any, compute: Callable[[Any], Any]) -> Any:
    """compute(x); for an integer dtype, in float64 and truncated back to `dtype`."""
    if not _is_int(dtype):
        return compute(x)
    return op.cast(compute(op.cast(x, dtype="float64")), dtype=dtype)


def _l2(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
    return _in_float64(dtype, x, lambda v: op.sqrt(
        _reduce(op.sum, op.multiply(v, v), axes, keepdims)))


def _log_sum(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
    return _in_float64(dtype, x, lambda v: op.log(_reduce(op.sum, v, axes, keepdims)))


def _log_sum_exp(ctx: Any, x: Any, axes: tuple[int, ...], keepdims: bool, dtype: str) -> Any:
    # m + log(sum(exp(x - m))), m = max over the axes, 0 where that max is +-inf or NaN
    # (all -inf: log(0) = -inf; a +inf: +inf; a NaN: NaN; no elements: -inf).
    m = _reduce(op.max, x, axes, True)
    m = op.where(op.isfinite(m), m, op.zeros_like(m))
    total = _reduce(op.sum, op.exp(op.subtract(x, m)), axes, keepdims)
    if axes and not keepdims:
        m = op.squeeze(m, axis=axes)
    return op.add(op.log(total), m)


# ---------------------------------------------------------------- converters

def _convert(build: Build, axes_of: Callable[[Any, Any], tuple[int, ...]],
             ints: bool = True) -> Callable[[Any, Any], Any]:
    def convert(ctx: Any, node: Any) -> Any:
        x = node.inputs[0]
        dtype = ctx.dtype(x)
        if not ints and _is_int(dtype):
            raise node.error(f"{dtype} input is not supported (log-sum-exp is defined for "
                             "floating-point types)")
        axes = axes_of(ctx, node)
        keepdims = bool(int(node.attr("keepdims", 1)))
        return build(ctx, x, axes, keepdims, dtype)
    return convert


_REDUCTIONS: dict[str, tuple[Build, int, bool]] = {
    # op type -> (build, opset whose axes are an input, integer inputs accepted)
    "ReduceSum": (_plain(op.sum), 13, True),
    "ReduceMean": (_plain(op.mean), 18, True),
    "ReduceMax": (_plain(op.max), 18, True),
    "ReduceMin": (_plain(op.min), 18, True),
    "ReduceProd": (_plain(op.prod), 18, True),
    "ReduceL1": (_l1, 18, True),
    "ReduceL2": (_l2, 18, True),
    "ReduceLogSum": (_log_sum, 18, True),
    "ReduceLogSumExp": (_log_sum_exp, 18, False),
    "ReduceSumSquare": (_sum_square, 18, True),
}

for _op_type, (_build, _input_since, _ints) in _REDUCTIONS.items():
    converter(_op_type, since=1)(_convert(_build, _axes_from_attr, _ints))
    converter(_op_type, since=_input_since)(_convert(_build, _axes_from_input, _ints))


def _arg(fn: Any) -> Callable[[Any, Any], Any]:
    def convert(ctx: Any, node: Any) -> Any:
        x = node.inputs[0]
        rank = _rank(ctx, node)
        if rank == 0:
            raise node.error("the input must have rank at least 1")
        (axis,) = _normalize(node, [node.attr("axis", 0)], rank)
        out = fn(x, axis=(axis,), keepdims=bool(int(node.attr("keepdims", 1))),
                 select_last_index=bool(int(node.attr("select_last_index", 0))))
        return op.cast(out, dtype="int64")
    return convert


# ArgMax/ArgMin: opset 11 allows negative axes, 12 adds select_last_index (default 0:
# the earlier behaviour), 13 only types; one converter covers them all.
converter("ArgMax", since=1)(_arg(op.argmax))
converter("ArgMin", since=1)(_arg(op.argmin))
