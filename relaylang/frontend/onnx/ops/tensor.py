"""Tensor and shape ONNX operators: constants, shape queries, reshapes, joins and cuts,
indexing, padding, tiling, scans and tensor creation.

Inputs that are semantically static (Reshape's shape, Slice's starts, Pad's pads, ...)
must be known at import (`ctx.value`); shape queries of statically shaped tensors
return constants, so shape arithmetic folds into static shapes. Index inputs keep
ONNX's meaning of negative values (counted from the end of the axis).
"""
from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ....ir.expr import Tuple, TupleGetItem
from ....op import make as op
from ..importer import elem_dtype
from ..registry import converter

_INT64_MAX = 2**63 - 1


# ---------------------------------------------------------------- helpers

def _known(ctx: Any, node: Any, i: int, what: str) -> np.ndarray | None:
    """The value of optional input `i` (None when omitted); an error when it is given
    but not known at import."""
    expr = node.input(i)
    if expr is None:
        return None
    return ctx.constant(expr, node, f"input {i} ({what})")


def _shape_tensor(ctx: Any, node: Any, i: int, what: str) -> Any:
    """Input `i` as a run-time 1-D int64 shape tensor of static length (the `dyn.*`
    forms, for shapes known only when the program runs)."""
    expr = node.inputs[i]
    shape = ctx.shape(expr)
    if len(shape) != 1 or not isinstance(shape[0], int):
        raise node.error(f"input {i} ({what}) must be a 1-D tensor of known length, got "
                         f"shape {tuple(shape)}")
    return expr if ctx.dtype(expr) == "int64" else op.cast(expr, dtype="int64")


def _ints(value: np.ndarray | None) -> list[int] | None:
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def _axis(node: Any, axis: int, rank: int, what: str = "axis") -> int:
    if not -rank <= axis < rank:
        raise node.error(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def _rank(ctx: Any, expr: Any) -> int:
    return len(ctx.shape(expr))


# ---------------------------------------------------------------- run-time index values
# Inputs such as Slice's starts or Pad's pads may be graph inputs: their values are then
# computed with int64 tensor arithmetic (on shape_of for the dimensions) and fed to the
# dyn.* ops; DynamicToStatic makes the calls static where the values fold to constants.

def _i64(ctx: Any, expr: Any) -> Any:
    return expr if ctx.dtype(expr) == "int64" else op.cast(expr, dtype="int64")


def _c64(ctx: Any, value: Any) -> Any:
    return ctx.const(np.asarray(value, np.int64))


def _dims(ctx: Any, x: Any) -> Any:
    """The shape of `x` as a 1-D int64 tensor (a constant when static)."""
    static = ctx.static_shape(x)
    if static is not None:
        return _c64(ctx, np.asarray(static, np.int64).reshape(-1))
    return op.shape_of(x, dtype="int64")


def _vector(ctx: Any, node: Any, i: int, what: str) -> tuple[Any, int]:
    """Input `i` as a run-time 1-D int64 tensor and its static length."""
    expr = node.inputs[i]
    shape = ctx.shape(expr)
    if len(shape) != 1 or not isinstance(shape[0], int):
        raise node.error(f"input {i} ({what}) must be a 1-D tensor of known length, got "
                         f"shape {tuple(shape)}")
    return _i64(ctx, expr), shape[0]


def _scalar_i64(ctx: Any, node: Any, expr: Any, what: str) -> Any:
    """A one-element run-time integer (or float, truncated) tensor as an int64 scalar."""
    shape = ctx.shape(expr)
    if any(not isinstance(d, int) for d in shape) or math.prod(shape) != 1:
        raise node.error(f"{what} must hold one element, got shape {tuple(shape)}")
    expr = _i64(ctx, expr)
    return op.reshape(expr, newshape=()) if shape else expr


def _element(vec: Any, k: int) -> Any:
    """vec[k:k+1] of a 1-D tensor."""
    return op.strided_slice(vec, begin=(k,), end=(k + 1,), strides=(1,))


def _norm_axes(ctx: Any, axes: Any, rank: int) -> Any:
    """Run-time axes with negatives counted from the end of `rank` axes."""
    return op.where(op.less(axes, _c64(ctx, 0)), op.add(axes, _c64(ctx, rank)), axes)


def _axis_index(ctx: Any, node: Any, axes: Any, n: int, length: int) -> Any:
    """For each of the first `length` dimensions, the position in `axes` (n entries:
    a list of normalised ints, or a run-time int64 tensor of normalised axes) of the
    entry naming it, or n when none does (index of a default appended to a vector)."""
    if isinstance(axes, list):
        return _c64(ctx, [axes.index(k) if k in axes else n for k in range(length)])
    hit = op.equal(op.reshape(axes, newshape=(n, 1)),
                   _c64(ctx, np.arange(length).reshape(1, length)))
    pos = op.sum(op.where(hit, _c64(ctx, np.arange(n).reshape(n, 1)), _c64(ctx, 0)), axis=(0,))
    count = op.sum(op.cast(hit, dtype="int64"), axis=(0,))
    return op.where(op.equal(count, _c64(ctx, 0)), _c64(ctx, n), pos)


def _per_dim(ctx: Any, vec: Any, index: Any, default: int) -> Any:
    """vec's entries moved to the dimensions they name (`_axis_index`), `default` on the
    others."""
    return op.take(op.concatenate([vec, _c64(ctx, [default])], axis=0), index, axis=0)


# ---------------------------------------------------------------- constants

@converter("Constant", since=1)
def constant(ctx: Any, node: Any) -> Any:
    attrs = node.attrs
    if "sparse_value" in attrs:
        raise node.error("sparse_value constants are not supported")
    if "value_string" in attrs or "value_strings" in attrs:
        raise node.error("string constants are not supported")
    if "value" in attrs:
        value = np.asarray(attrs["value"])
        if value.dtype == np.dtype("O") or value.dtype.kind in "SU":
            raise node.error("string constants are not supported")
        return ctx.const(value)
    if "value_float" in attrs:
        return ctx.const(np.float32(attrs["value_float"]))
    if "value_floats" in attrs:
        return ctx.const(np.asarray(attrs["value_floats"], np.float32))
    if "value_int" in attrs:
        return ctx.const(np.int64(attrs["value_int"]))
    if "value_ints" in attrs:
        return ctx.const(np.asarray(attrs["value_ints"], np.int64))
    raise node.error("no value attribute")


@converter("ConstantOfShape", since=9)
def constant_of_shape(ctx: Any, node: Any) -> Any:
    value = node.attr("value", None)
    fill = np.zeros((1,), np.float32) if value is None else np.asarray(value)
    if fill.size != 1:
        raise node.error(f"value must hold one element, got {fill.size}")
    if ctx.value(node.inputs[0]) is None:       # a shape known when the program runs
        shape_t = _shape_tensor(ctx, node, 0, "shape")
        return op.dyn.full(ctx.const(fill.reshape(())), shape_t, dtype=str(fill.dtype))
    shape = _ints(_known(ctx, node, 0, "shape"))
    assert shape is not None
    if any(d < 0 for d in shape):
        raise node.error(f"shape {shape} has a negative dimension")
    return ctx.const(np.full(shape, fill.reshape(()), dtype=fill.dtype))


@converter("EyeLike", since=9)
def eye_like(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    shape = ctx.static_shape(x)
    if shape is None or len(shape) != 2:
        raise node.error(f"the input must be a 2-D tensor of static shape, got "
                         f"{ctx.shape(x)}")
    code = node.attr("dtype", None)
    dtype = ctx.dtype(x) if code is None else elem_dtype(code, node.describe())
    return ctx.const(np.eye(shape[0], shape[1], int(node.attr("k", 0)), dtype=dtype))


@converter("Range", since=11)
def range_(ctx: Any, node: Any) -> Any:
    if any(ctx.value(node.inputs[i]) is None for i in range(3)):
        return _range_dynamic(ctx, node)
    start, limit, delta = (_known(ctx, node, i, name)
                           for i, name in enumerate(("start", "limit", "delta")))
    if start is None or limit is None or delta is None:
        raise node.error("start, limit and delta are required")
    dtype = np.asarray(start).dtype
    if ctx.dtype(node.inputs[0]) == "bfloat16":
        raise node.error("bfloat16 ranges are not supported")
    start, limit, delta = (np.asarray(v, dtype).reshape(()) for v in (start, limit, delta))
    if delta == 0:
        raise node.error("delta must be non-zero")
    if dtype.kind == "f":
        # onnxruntime: ceil(double(limit - start) / delta), the difference in the dtype
        with np.errstate(all="ignore"):
            span_f = float((limit - start).astype(dtype))
        n = max(math.ceil(span_f / float(delta)), 0)
    else:
        span, step = int(limit) - int(start), int(delta)
        n = max(-(-span // step), 0)
    # ONNX's definition (and onnxruntime) accumulate: out[i] = out[i - 1] + delta
    out = np.empty((n,), dtype)
    acc = start
    with np.errstate(all="ignore"):
        for i in range(n):
            out[i] = acc
            acc = (acc + delta).astype(dtype)
    return ctx.const(out)


def _range_dynamic(ctx: Any, node: Any) -> Any:
    """Range with start, limit or delta known only at run time, as ONNX (and
    onnxruntime) define it: n = max(ceil((limit - start) / delta), 0) elements, each the
    previous plus delta (an accumulation in the dtype, which rounds as ONNX's loop does:
    a cumsum of [start, delta, delta, ...]; relaylang's arange computes start + i * delta
    instead)."""
    dtype = ctx.dtype(node.inputs[0])
    for i, name in enumerate(("start", "limit", "delta")):
        if ctx.shape(node.inputs[i]) not in ((), (1,)):
            raise node.error(f"{name} must be a scalar, got shape {ctx.shape(node.inputs[i])}")
        if ctx.dtype(node.inputs[i]) != dtype:
            raise node.error("start, limit and delta must have one dtype")
    if dtype == "bfloat16":
        raise node.error("bfloat16 ranges are not supported")
    start, limit, delta = (op.reshape(e, newshape=()) if ctx.shape(e) else e
                           for e in node.inputs[:3])
    if dtype.startswith(("float",)):
        # onnxruntime: ceil(double(limit - start) / double(delta)), the difference in the dtype
        span = op.cast(op.subtract(limit, start), dtype="float64")
        n = op.cast(op.ceil(op.divide(span, op.cast(delta, dtype="float64"))), dtype="int64")
    else:
        span = op.subtract(_i64(ctx, limit), _i64(ctx, start))
        n = op.negative(op.floor_divide(op.negative(span), _i64(ctx, delta)))
    zero = _c64(ctx, 0)
    n = op.maximum(n, zero)
    rest = op.dyn.full(delta, op.reshape(op.maximum(op.subtract(n, _c64(ctx, 1)), zero),
                                         newshape=(1,)), dtype=dtype)
    steps = op.concatenate([op.reshape(start, newshape=(1,)), rest], axis=0)
    return op.dyn.strided_slice(op.cumsum(steps, axis=0), _c64(ctx, [0]),
                                op.reshape(n, newshape=(1,)), _c64(ctx, [1]))


# ---------------------------------------------------------------- shape queries

@converter("Shape", since=1)
def shape_1(ctx: Any, node: Any) -> Any:
    return _shape(ctx, node, 0, None)


@converter("Shape", since=15)
def shape_15(ctx: Any, node: Any) -> Any:
    return _shape(ctx, node, int(node.attr("start", 0)), node.attr("end", None))


def _shape(ctx: Any, node: Any, start: int, end: Any) -> Any:
    x = node.inputs[0]
    rank = _rank(ctx, x)
    end = rank if end is None else int(end)
    start, end = (min(max(v + rank if v < 0 else v, 0), rank) for v in (start, end))
    end = max(end, start)
    dims = ctx.shape(x)[start:end]
    if all(isinstance(d, int) for d in dims):
        return ctx.const(np.asarray(dims, np.int64).reshape(-1))
    shape = op.shape_of(x, dtype="int64")
    if (start, end) == (0, rank):
        return shape
    return op.strided_slice(shape, begin=(start,), end=(end,), strides=(1,))


@converter("Size", since=1)
def size(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    static = ctx.static_shape(x)
    if static is not None:
        return ctx.const(np.int64(math.prod(static)))
    return op.prod(op.shape_of(x, dtype="int64"))


# ---------------------------------------------------------------- reshapes

@converter("Reshape", since=1)
def reshape_1(ctx: Any, node: Any) -> Any:
    return _reshape(ctx, node, _ints(np.asarray(node.attr("shape"))), False)


@converter("Reshape", since=5)
def reshape_5(ctx: Any, node: Any) -> Any:
    allowzero = bool(node.attr("allowzero", 0))
    if ctx.value(node.inputs[1]) is None:
        # ONNX's 0 (copy) and -1 (infer) are Relay's: dyn.reshape takes the values as
        # they are (DynamicToStatic makes it static once they are known)
        return op.dyn.reshape(node.inputs[0], _shape_tensor(ctx, node, 1, "shape"),
                              allowzero=allowzero)
    return _reshape(ctx, node, _ints(_known(ctx, node, 1, "shape")), allowzero)


def _reshape(ctx: Any, node: Any, shape: list[int] | None, allowzero: bool) -> Any:
    x = node.inputs[0]
    if shape is None:
        raise node.error("the shape is required")
    if shape.count(-1) > 1 or any(d < -1 for d in shape):
        raise node.error(f"invalid shape {shape}")
    if allowzero and 0 in shape and -1 in shape:
        raise node.error(f"shape {shape} has both 0 and -1 with allowzero=1")
    in_shape = ctx.shape(x)
    static = ctx.static_shape(x)
    if static is None:
        if not allowzero and any(d == 0 and k >= len(in_shape) for k, d in enumerate(shape)):
            raise node.error(f"shape {shape} copies a dimension the input does not have")
        return op.reshape(x, newshape=tuple(shape), allowzero=allowzero)
    out = []
    for k, d in enumerate(shape):
        if d == 0 and not allowzero:
            if k >= len(static):
                raise node.error(f"shape {shape} copies dimension {k}, which the input of "
                                 f"rank {len(static)} does not have")
            d = static[k]
        out.append(d)
    total = math.prod(static)
    if -1 in out:
        rest = math.prod(d for d in out if d != -1)
        if rest == 0 or total % rest:
            raise node.error(f"cannot reshape {static} to {shape}")
        out[out.index(-1)] = total // rest
    if math.prod(out) != total:
        raise node.error(f"cannot reshape {static} to {shape}")
    # every dimension explicit: a 0 is a zero-sized dimension
    return op.reshape(x, newshape=tuple(out), allowzero=0 in out)


@converter("Transpose", since=1)
def transpose(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    rank = _rank(ctx, x)
    perm = node.attr("perm", None)
    perm = tuple(reversed(range(rank))) if perm is None else tuple(int(p) for p in perm)
    if sorted(perm) != list(range(rank)):
        raise node.error(f"perm {list(perm)} is not a permutation of the {rank} axes")
    if perm == tuple(range(rank)):
        return x
    return op.transpose(x, axes=perm)


def _squeeze(ctx: Any, node: Any, axes: list[int] | None) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    rank = len(shape)
    if axes is None:
        if any(not isinstance(d, int) for d in shape):
            raise node.error("squeezing every size-1 axis needs a static input shape")
        axes = [k for k, d in enumerate(shape) if d == 1]
    else:
        axes = sorted({_axis(node, a, rank, "axes entry") for a in axes})
        for a in axes:
            if isinstance(shape[a], int) and shape[a] != 1:
                raise node.error(f"cannot squeeze axis {a} of size {shape[a]}")
    if not axes:
        return x
    return op.squeeze(x, axis=tuple(axes))


@converter("Squeeze", since=1)
def squeeze_1(ctx: Any, node: Any) -> Any:
    return _squeeze(ctx, node, node.attr("axes", None))


@converter("Squeeze", since=13)
def squeeze_13(ctx: Any, node: Any) -> Any:
    if node.input(1) is not None and ctx.value(node.inputs[1]) is None:
        # axes known at run time: the result's rank is the input's less their count
        axes, n = _vector(ctx, node, 1, "axes")
        if n > _rank(ctx, node.inputs[0]):
            raise node.error(f"{n} axes to squeeze from a tensor of rank "
                             f"{_rank(ctx, node.inputs[0])}")
        return op.dyn.squeeze(node.inputs[0], axes) if n else node.inputs[0]
    return _squeeze(ctx, node, _ints(_known(ctx, node, 1, "axes")))


def _unsqueeze(ctx: Any, node: Any, axes: list[int] | None) -> Any:
    x = node.inputs[0]
    if axes is None:
        raise node.error("axes are required")
    out_rank = _rank(ctx, x) + len(axes)
    norm = sorted(_axis(node, a, out_rank, "axes entry") for a in axes)
    if len(set(norm)) != len(norm):
        raise node.error(f"axes {axes} repeat an axis")
    for a in norm:              # ascending: each lands at its final position
        x = op.expand_dims(x, axis=a)
    return x


@converter("Unsqueeze", since=1)
def unsqueeze_1(ctx: Any, node: Any) -> Any:
    return _unsqueeze(ctx, node, node.attr("axes", None))


@converter("Unsqueeze", since=13)
def unsqueeze_13(ctx: Any, node: Any) -> Any:
    if ctx.value(node.inputs[1]) is None:
        return _unsqueeze_dynamic(ctx, node)
    return _unsqueeze(ctx, node, _ints(_known(ctx, node, 1, "axes")))


def _unsqueeze_dynamic(ctx: Any, node: Any) -> Any:
    """Axes known at run time (their count is static, so is the result's rank): output
    dimension k is 1 where an axis names it, else input dimension k - #{axes <= k};
    dyn.reshape to that shape (allowzero: a 0 is a zero-sized dimension)."""
    x = node.inputs[0]
    axes, n = _vector(ctx, node, 1, "axes")
    rank = _rank(ctx, x)
    out_rank = rank + n
    if n == 0:
        return x
    if rank == 0:
        return op.reshape(x, newshape=(1,) * n)
    axes = op.reshape(_norm_axes(ctx, axes, out_rank), newshape=(n, 1))
    k = _c64(ctx, np.arange(out_rank).reshape(1, out_rank))
    new = op.greater(op.sum(op.cast(op.equal(axes, k), dtype="int64"), axis=(0,)),
                     _c64(ctx, 0))
    before = op.sum(op.cast(op.less_equal(axes, k), dtype="int64"), axis=(0,))
    src = op.subtract(_c64(ctx, np.arange(out_rank)), before)
    shape = op.where(new, _c64(ctx, 1), op.take(_dims(ctx, x), src, axis=0, mode="clip"))
    return op.dyn.reshape(x, shape, allowzero=True)


@converter("Identity", since=1)
def identity(ctx: Any, node: Any) -> Any:
    return node.inputs[0]


# ---------------------------------------------------------------- join and cut

@converter("Concat", since=1)
def concat(ctx: Any, node: Any) -> Any:
    inputs = [e for e in node.inputs if e is not None]
    rank = _rank(ctx, inputs[0])
    axis = _axis(node, int(node.attr("axis", 1) if ctx.opset < 4 else node.attr("axis")),
                 rank)     # Concat-1: axis 1 by default; from opset 4 it is required
    return op.concatenate(Tuple(tuple(inputs)), axis=axis)


def _split(ctx: Any, node: Any, sizes: list[int] | None, num_outputs: int | None) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    axis = _axis(node, int(node.attr("axis", 0)), len(shape))
    dim = shape[axis]
    n = len(node.outputs)
    if sizes is None:
        if not isinstance(dim, int):
            if num_outputs is not None and num_outputs != n:
                raise node.error(f"num_outputs {num_outputs} but {n} outputs")
            return [x] if n == 1 else _split_dynamic(ctx, node, num_outputs)
        if num_outputs is not None:          # opset 18: ceil-sized chunks, a smaller last
            if num_outputs != n:
                raise node.error(f"num_outputs {num_outputs} but {n} outputs")
            chunk = -(-dim // n)
            last = dim - (n - 1) * chunk
            if last < 0:
                raise node.error(f"num_outputs {n} leaves a negative last chunk of axis "
                                 f"{axis} of size {dim}")
            sizes = [chunk] * (n - 1) + [last]
        else:
            if dim % n:
                raise node.error(f"axis {axis} of size {dim} does not split into {n} equal "
                                 "parts")
            sizes = [dim // n] * n
    if len(sizes) != n:
        raise node.error(f"split has {len(sizes)} sizes but the node has {n} outputs")
    if any(s < 0 for s in sizes) or (isinstance(dim, int) and sum(sizes) != dim):
        raise node.error(f"split sizes {sizes} do not add up to the size {dim} of axis {axis}")
    if n == 1:
        return [x]
    bounds = list(np.cumsum([0] + sizes))
    if all(s > 0 for s in sizes):
        parts = op.split(x, indices_or_sections=tuple(int(b) for b in bounds[1:-1]),
                         axis=axis)
        return [TupleGetItem(parts, k) for k in range(n)]
    return [op.strided_slice(x, begin=(int(b),), end=(int(e),), strides=(1,), axes=(axis,))
            for b, e in itertools.pairwise(bounds)]


@converter("Split", since=1)
def split_1(ctx: Any, node: Any) -> Any:
    sizes = _ints(_known(ctx, node, 1, "split"))
    return _split(ctx, node, sizes if sizes is not None else node.attr("split", None), None)


@converter("Split", since=2)
def split_2(ctx: Any, node: Any) -> Any:
    return _split(ctx, node, node.attr("split", None), None)


def _split_dynamic(ctx: Any, node: Any, num_outputs: int | None = None) -> list[Any]:
    """Split sizes known only at run time (their count is the node's outputs), or an axis
    of a size known only at run time split in equal parts (num_outputs: ceil-sized
    parts, a smaller last): output k is dyn.strided_slice [sum(sizes[:k]),
    sum(sizes[:k + 1])) of the axis."""
    x = node.inputs[0]
    axis = _axis(node, int(node.attr("axis", 0)), _rank(ctx, x))
    n = len(node.outputs)
    if node.input(1) is not None:
        sizes, count = _vector(ctx, node, 1, "split")
        if count != n:
            raise node.error(f"split has {count} sizes but the node has {n} outputs")
    else:
        dim = op.take(_dims(ctx, x), _c64(ctx, axis), axis=0)
        if num_outputs is None:     # equal parts (a size not divisible fails in onnxruntime)
            chunk = op.floor_divide(dim, _c64(ctx, n))
            sizes = op.full(chunk, shape=(n,), dtype="int64")
        else:
            chunk = op.negative(op.floor_divide(op.negative(dim), _c64(ctx, n)))
            last = op.subtract(dim, op.multiply(chunk, _c64(ctx, n - 1)))
            sizes = op.concatenate([op.full(chunk, shape=(n - 1,), dtype="int64"),
                                    op.reshape(last, newshape=(1,))], axis=0)
    ends = op.cumsum(sizes, axis=0)
    lead_b = _c64(ctx, np.zeros(axis, np.int64))
    lead_e = _c64(ctx, np.full(axis, _INT64_MAX, np.int64))
    strides = _c64(ctx, np.ones(axis + 1, np.int64))
    out = []
    for k in range(n):
        end = _element(ends, k)
        begin = op.subtract(end, _element(sizes, k))
        out.append(op.dyn.strided_slice(x, op.concatenate([lead_b, begin], axis=0),
                                        op.concatenate([lead_e, end], axis=0), strides))
    return out


@converter("Split", since=13)
def split_13(ctx: Any, node: Any) -> Any:
    if node.input(1) is not None and ctx.value(node.inputs[1]) is None:
        return _split_dynamic(ctx, node)
    return _split(ctx, node, _ints(_known(ctx, node, 1, "split")), None)


@converter("Split", since=18)
def split_18(ctx: Any, node: Any) -> Any:
    if node.input(1) is not None and ctx.value(node.inputs[1]) is None:
        if node.attr("num_outputs", None) is not None:
            raise node.error("exactly one of the `split` input and `num_outputs` is required")
        return _split_dynamic(ctx, node)
    sizes = _ints(_known(ctx, node, 1, "split"))
    num = node.attr("num_outputs", None)
    if (sizes is None) == (num is None):
        raise node.error("exactly one of the `split` input and `num_outputs` is required")
    return _split(ctx, node, sizes, None if num is None else int(num))


def _slice(ctx: Any, node: Any, starts: list[int], ends: list[int], axes: list[int] | None,
           steps: list[int] | None) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    rank = len(shape)
    if axes is None:
        axes = list(range(len(starts)))
    if steps is None:
        steps = [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise node.error("starts, ends, axes and steps must have one length")
    axes = [_axis(node, a, rank, "axes entry") for a in axes]
    if len(set(axes)) != len(axes):
        raise node.error(f"axes {axes} repeat an axis")
    begin, end, strides = [], [], []
    for a, b, e, s in zip(axes, starts, ends, steps):
        if s == 0:
            raise node.error("steps must be non-zero")
        dim = shape[a]
        if not isinstance(dim, int):
            # topi's canonicalisation is ONNX's except for a backward slice starting
            # before the axis (ONNX clamps it to 0, topi selects nothing)
            if s < 0 and b < -1:
                if ctx.opset >= 10:       # the same values as run-time tensors
                    return _slice_dynamic(ctx, node)
                raise node.error(f"a negative step from start {b} on axis {a} of unknown "
                                 "size is not supported")
            begin.append(b)
            end.append(e)
            strides.append(s)
            continue
        # ONNX: negatives count from the end; starts clamp to [0, dim] ([0, dim-1] for a
        # negative step), ends to [0, dim] ([-1, dim-1] for a negative step)
        b = b + dim if b < 0 else b
        e = e + dim if e < 0 else e
        if s > 0:
            b, e = min(max(b, 0), dim), min(max(e, 0), dim)
            count = max(-(-(e - b) // s), 0)
        else:
            b, e = min(max(b, 0), dim - 1), min(max(e, -1), dim - 1)
            count = max(-(-(b - e) // -s), 0) if dim > 0 else 0
        if count == 0:
            begin.append(0)
            end.append(0)
            strides.append(1)
        elif s > 0:
            begin.append(b)
            end.append(b + (count - 1) * s + 1)
            strides.append(s)
        else:
            last = b + (count - 1) * s
            begin.append(b)
            # an end of -1 would count from the back: -(dim + 1) means before index 0
            end.append(last - 1 if last >= 1 else -(dim + 1))
            strides.append(s)
    if not axes:
        return x
    return op.strided_slice(x, begin=tuple(begin), end=tuple(end), strides=tuple(strides),
                            axes=tuple(axes))


@converter("Slice", since=1)
def slice_1(ctx: Any, node: Any) -> Any:
    axes = node.attr("axes", None)
    return _slice(ctx, node, [int(v) for v in node.attr("starts")],
                  [int(v) for v in node.attr("ends")],
                  None if axes is None else [int(v) for v in axes], None)


def _slice_dynamic(ctx: Any, node: Any) -> Any:
    """Slice-10+ with starts/ends/axes/steps known only at run time: ONNX's clamping per
    sliced axis in int64 arithmetic on the dimensions, then dyn.strided_slice over the
    leading axes up to the last sliced one (every axis when the axes are run-time
    values). The begin/end given are canonical for topi (non-negative, end on the right
    side of begin), except an end before index 0 of a backward slice, written -(dim + 1)
    (topi wraps negatives once)."""
    x = node.inputs[0]
    rank = _rank(ctx, x)
    if node.input(1) is None or node.input(2) is None:
        raise node.error("starts and ends are required")
    starts, n = _vector(ctx, node, 1, "starts")
    ends, n_end = _vector(ctx, node, 2, "ends")
    if n_end != n:
        raise node.error("starts, ends, axes and steps must have one length")
    if node.input(4) is None:
        steps = _c64(ctx, np.ones(n, np.int64))
    else:
        steps, n_steps = _vector(ctx, node, 4, "steps")
        if n_steps != n:
            raise node.error("starts, ends, axes and steps must have one length")
        known = ctx.value(node.inputs[4])
        if known is not None and 0 in _ints(known):
            raise node.error("steps must be non-zero")
    axes_v = None if node.input(3) is None else ctx.value(node.inputs[3])
    if node.input(3) is None or axes_v is not None:
        axes: Any = list(range(n)) if axes_v is None else \
            [_axis(node, a, rank, "axes entry") for a in _ints(axes_v)]
        if len(axes) != n:
            raise node.error("starts, ends, axes and steps must have one length")
        if len(set(axes)) != n:
            raise node.error(f"axes {axes} repeat an axis")
        if n == 0:
            return x
        length = max(axes) + 1
        dims = op.take(_dims(ctx, x), _c64(ctx, axes), axis=0)
    else:
        axes_t, n_axes = _vector(ctx, node, 3, "axes")
        if n_axes != n:
            raise node.error("starts, ends, axes and steps must have one length")
        if n == 0:
            return x
        # which axes are sliced is known when the program runs: every axis is covered
        # (an axis no entry names: the whole axis)
        axes = _norm_axes(ctx, axes_t, rank)
        length = rank
        dims = op.take(_dims(ctx, x), axes, axis=0, mode="clip")
    zero, one = _c64(ctx, 0), _c64(ctx, 1)
    forward = op.greater(steps, zero)
    b = op.where(op.less(starts, zero), op.add(starts, dims), starts)
    e = op.where(op.less(ends, zero), op.add(ends, dims), ends)
    last = op.subtract(dims, one)
    # starts clamp to [0, dim] ([0, dim - 1] backwards), ends to [0, dim] ([-1, dim - 1])
    b = op.where(forward, op.minimum(op.maximum(b, zero), dims),
                 op.minimum(op.maximum(b, zero), last))
    e = op.where(forward, op.minimum(op.maximum(e, zero), dims),
                 op.minimum(op.maximum(e, _c64(ctx, -1)), last))
    # an empty selection: end = begin
    e = op.where(forward, op.maximum(e, b), op.minimum(e, b))
    e = op.where(op.less(e, zero), op.subtract(e, dims), e)
    index = _axis_index(ctx, node, axes, n, length)
    return op.dyn.strided_slice(x, _per_dim(ctx, b, index, 0),
                                _per_dim(ctx, e, index, _INT64_MAX),
                                _per_dim(ctx, steps, index, 1))


@converter("Slice", since=10)
def slice_10(ctx: Any, node: Any) -> Any:
    if any(node.input(i) is not None and ctx.value(node.inputs[i]) is None
           for i in range(1, 5)):
        return _slice_dynamic(ctx, node)
    starts = _ints(_known(ctx, node, 1, "starts"))
    ends = _ints(_known(ctx, node, 2, "ends"))
    if starts is None or ends is None:
        raise node.error("starts and ends are required")
    return _slice(ctx, node, starts, ends, _ints(_known(ctx, node, 3, "axes")),
                  _ints(_known(ctx, node, 4, "steps")))


# ---------------------------------------------------------------- indexing

@converter("Gather", since=1)
def gather(ctx: Any, node: Any) -> Any:
    x, idx = node.inputs[0], node.inputs[1]
    axis = _axis(node, int(node.attr("axis", 0)), _rank(ctx, x))
    # ONNX indices lie in [-n, n-1], negatives counting from the end: take's "wrap"
    # (a floor modulo) is exactly that ("clip" sends negatives to 0, "fast" promises
    # in-range non-negative indices)
    return op.take(x, idx, axis=axis, mode="wrap")


@converter("GatherElements", since=11)
def gather_elements(ctx: Any, node: Any) -> Any:
    x, idx = node.inputs[0], node.inputs[1]
    xs, ishape = ctx.shape(x), ctx.shape(idx)
    if len(xs) != len(ishape):
        raise node.error("data and indices must have one rank")
    axis = _axis(node, int(node.attr("axis", 0)), len(xs))
    # relaylang's gather counts negative indices from the end, as ONNX does
    return op.gather(x, idx, axis=axis)


def _gather_nd(ctx: Any, node: Any, batch_dims: int) -> Any:
    x, idx = node.inputs[0], node.inputs[1]
    ishape = ctx.shape(idx)
    r = len(ishape)
    m = ishape[-1] if r else None
    if r < 1 or not isinstance(m, int) or m < 1:
        raise node.error(f"indices of shape {ishape} must end in a known non-zero dimension")
    if not 0 <= batch_dims < min(r, _rank(ctx, x)):
        raise node.error(f"batch_dims {batch_dims} is out of range")
    if batch_dims + m > _rank(ctx, x):
        raise node.error(f"indices address {m} axes after batch_dims {batch_dims}, but data "
                         f"has rank {_rank(ctx, x)}")
    # ONNX puts the coordinates last, relaylang (TVM) first
    moved = op.transpose(idx, axes=(r - 1,) + tuple(range(r - 1))) if r > 1 else idx
    return op.gather_nd(x, moved, batch_dims=batch_dims)


@converter("GatherND", since=11)
def gather_nd_11(ctx: Any, node: Any) -> Any:
    return _gather_nd(ctx, node, 0)


@converter("GatherND", since=12)
def gather_nd_12(ctx: Any, node: Any) -> Any:
    return _gather_nd(ctx, node, int(node.attr("batch_dims", 0)))


# ---------------------------------------------------------------- broadcasting, tiling

def _expand_dynamic(ctx: Any, node: Any) -> Any:
    """Expand to a shape known at run time: per dimension the target, except where it is
    1 (the input's dim then), both aligned to the right (numpy's two-way broadcast),
    then dyn.broadcast_to."""
    x = node.inputs[0]
    target = _shape_tensor(ctx, node, 1, "shape")
    n = int(ctx.shape(target)[0])
    rank = len(ctx.shape(x))
    out_rank = max(n, rank)
    xs = op.shape_of(x, dtype="int64")
    if out_rank > rank:
        xs = op.concatenate([ctx.const(np.ones(out_rank - rank, np.int64)), xs], axis=0)
    if out_rank > n:
        target = op.concatenate([ctx.const(np.ones(out_rank - n, np.int64)), target], axis=0)
    shape = op.where(op.equal(target, ctx.const(np.int64(1))), xs, target)
    return op.dyn.broadcast_to(x, shape)


@converter("Expand", since=8)
def expand(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if ctx.value(node.inputs[1]) is None:
        return _expand_dynamic(ctx, node)
    target = _ints(_known(ctx, node, 1, "shape"))
    assert target is not None
    shape = ctx.shape(x)
    rank = max(len(shape), len(target))
    a = (1,) * (rank - len(shape)) + tuple(shape)
    b = (1,) * (rank - len(target)) + tuple(target)
    out = []
    for k, (p, q) in enumerate(zip(a, b)):
        if not isinstance(p, int):
            if q == 1:      # the result's dim is the input's, known when the program runs
                return _expand_dynamic(ctx, node)
            out.append(q)
        elif p == q or q == 1:
            out.append(p)
        elif p == 1:
            out.append(q)
        else:
            raise node.error(f"cannot broadcast {tuple(shape)} with {tuple(target)}")
    if tuple(out) == tuple(shape):
        return x
    return op.broadcast_to(x, shape=tuple(out))


@converter("Tile", since=1)
def tile_1(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    tiles = _ints(_known(ctx, node, 1, "tiles"))
    axis = _ints(_known(ctx, node, 2, "axis"))
    if tiles is None or axis is None or len(tiles) != 1 or len(axis) != 1:
        raise node.error("tiles and axis must be one-element constants")
    rank = _rank(ctx, x)
    reps = [1] * rank
    reps[_axis(node, axis[0], rank)] = tiles[0]
    return op.tile(x, reps=tuple(reps))


@converter("Tile", since=6)
def tile_6(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if ctx.value(node.inputs[1]) is None:
        reps_t = _shape_tensor(ctx, node, 1, "repeats")
        if ctx.shape(reps_t)[0] != _rank(ctx, x):
            raise node.error("repeats must hold one count per axis")
        return op.dyn.tile(x, reps_t)
    reps = _ints(_known(ctx, node, 1, "repeats"))
    assert reps is not None
    if len(reps) != _rank(ctx, x) or any(r < 0 for r in reps):
        raise node.error(f"repeats {reps} must hold one non-negative count per axis")
    return op.tile(x, reps=tuple(reps))


def _pad(ctx: Any, node: Any, pads: list[int] | None, value: Any, mode: str,
         axes: list[int] | None) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    rank = len(shape)
    if pads is None:
        raise node.error("pads are required")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise node.error(f"mode {mode!r} is not supported")
    axes = list(range(rank)) if axes is None else \
        [_axis(node, a, rank, "axes entry") for a in axes]
    if len(pads) != 2 * len(axes):
        raise node.error(f"{len(pads)} pads for {len(axes)} axes")
    before, after = [0] * rank, [0] * rank
    for k, a in enumerate(axes):
        before[a], after[a] = pads[k], pads[k + len(axes)]
    if any(p < 0 for p in before + after):
        # negative pads remove elements: cut first, then pad what is left
        cut = [k for k in range(rank) if before[k] < 0 or after[k] < 0]
        if mode != "constant":
            raise node.error(f"negative pads with mode {mode!r} are not supported")
        for k in cut:
            if not isinstance(shape[k], int):
                raise node.error(f"negative pads on axis {k} of unknown size")
        x = op.strided_slice(
            x, begin=tuple(max(-before[k], 0) for k in cut),
            end=tuple(shape[k] - max(-after[k], 0) for k in cut),
            strides=(1,) * len(cut), axes=tuple(cut))
        before, after = [max(p, 0) for p in before], [max(p, 0) for p in after]
    for k in range(rank):
        if mode == "reflect" and max(before[k], after[k]) > 0 and isinstance(shape[k], int) \
                and max(before[k], after[k]) >= shape[k]:
            raise node.error(f"reflect pads {before[k]}, {after[k]} on axis {k} need a "
                             f"dimension larger than both, got {shape[k]}")
        if mode == "edge" and shape[k] == 0 and max(before[k], after[k]) > 0:
            raise node.error(f"edge padding of empty axis {k}")
    if not any(before) and not any(after):
        return x
    if mode == "wrap":
        return _pad_wrap(node, x, shape, before, after)
    pad_val = _pad_value(ctx, node, value, mode)
    return op.nn.pad(x, pad_val, pad_width=tuple((b, a) for b, a in zip(before, after)),
                     pad_mode=mode)


def _pad_wrap(node: Any, x: Any, shape: tuple[Any, ...], before: list[int],
              after: list[int]) -> Any:
    """Pad mode wrap (numpy.pad's): per padded axis of size n, x tiled 2q + 1 times
    (q = ceil(max(before, after) / n)) and the window [q n - before, q n + n + after)
    cut out of it: data movement only."""
    for k, (b, a) in enumerate(zip(before, after)):
        if not b and not a:
            continue
        n = shape[k]
        if not isinstance(n, int) or n == 0:
            raise node.error(f"wrap padding of axis {k} needs a static non-empty dimension")
        q = -(-max(b, a) // n)
        reps = [1] * len(shape)
        reps[k] = 2 * q + 1
        x = op.strided_slice(op.tile(x, reps=tuple(reps)), begin=(q * n - b,),
                             end=(q * n + n + a,), strides=(1,), axes=(k,))
    return x


@converter("Pad", since=1)
def pad_1(ctx: Any, node: Any) -> Any:
    return _pad(ctx, node, node.attr("paddings", None), float(node.attr("value", 0.0)),
                node.attr("mode", "constant"), None)


@converter("Pad", since=2)
def pad_2(ctx: Any, node: Any) -> Any:
    return _pad(ctx, node, node.attr("pads", None), float(node.attr("value", 0.0)),
                node.attr("mode", "constant"), None)


def _pad_value(ctx: Any, node: Any, value: Any, mode: str) -> Any:
    """The scalar pad value in the input's dtype (zero when omitted or not constant mode)."""
    dtype = ctx.dtype(node.inputs[0])
    if value is None or mode != "constant":
        return ctx.const(np.zeros((), dtype=dtype))
    if isinstance(value, (int, float)):
        return ctx.const(np.asarray(value).astype(dtype))
    known = ctx.value(value)
    if known is not None:
        if known.size != 1:
            raise node.error("constant_value must hold one element")
        return ctx.const(np.asarray(known).reshape(()).astype(dtype))
    return op.reshape(value, newshape=()) if ctx.shape(value) else value


def _pad_dynamic(ctx: Any, node: Any, mode: str, with_axes: bool) -> Any:
    """Pad-11+ with pads (or Pad-18's axes) known only at run time: the widths per axis
    as a (rank, 2) int64 tensor for dyn.nn.pad; negative widths remove elements first
    (dyn.strided_slice), as in the static form."""
    x = node.inputs[0]
    rank = _rank(ctx, x)
    if node.input(1) is None:
        raise node.error("pads are required")
    if mode not in ("constant", "reflect", "edge"):
        raise node.error(f"mode {mode!r} is not supported")
    pads, n2 = _vector(ctx, node, 1, "pads")
    axes_expr = node.input(3) if with_axes else None
    axes: Any
    if axes_expr is None:
        axes = list(range(rank))
    elif ctx.value(axes_expr) is not None:
        axes = [_axis(node, a, rank, "axes entry") for a in _ints(ctx.value(axes_expr))]
        if len(set(axes)) != len(axes):
            raise node.error(f"axes {axes} repeat an axis")
    else:
        axes, n_axes = _vector(ctx, node, 3, "axes")
        axes = _norm_axes(ctx, axes, rank)
    n = len(axes) if isinstance(axes, list) else n_axes
    if n2 != 2 * n:
        raise node.error(f"{n2} pads for {n} axes")
    if rank == 0:
        return x
    index = _axis_index(ctx, node, axes, n, rank)
    before = _per_dim(ctx, op.strided_slice(pads, begin=(0,), end=(n,), strides=(1,)),
                      index, 0)
    after = _per_dim(ctx, op.strided_slice(pads, begin=(n,), end=(2 * n,), strides=(1,)),
                     index, 0)
    zero = _c64(ctx, np.zeros(rank, np.int64))
    x = op.dyn.strided_slice(x, op.maximum(op.negative(before), zero),
                             op.subtract(_dims(ctx, x), op.maximum(op.negative(after), zero)),
                             _c64(ctx, np.ones(rank, np.int64)))
    width = op.stack([op.maximum(before, zero), op.maximum(after, zero)], axis=1)
    return op.dyn.nn.pad(x, width, _pad_value(ctx, node, node.input(2), mode),
                         pad_mode=mode)


@converter("Pad", since=11)
def pad_11(ctx: Any, node: Any) -> Any:
    if node.input(1) is not None and ctx.value(node.inputs[1]) is None \
            and node.attr("mode", "constant") != "wrap":       # wrap needs the pads
        return _pad_dynamic(ctx, node, node.attr("mode", "constant"), False)
    return _pad(ctx, node, _ints(_known(ctx, node, 1, "pads")), node.input(2),
                node.attr("mode", "constant"), None)


@converter("Pad", since=18)
def pad_18(ctx: Any, node: Any) -> Any:
    if any(node.input(i) is not None and ctx.value(node.inputs[i]) is None for i in (1, 3)) \
            and node.attr("mode", "constant") != "wrap":       # wrap needs the pads
        return _pad_dynamic(ctx, node, node.attr("mode", "constant"), True)
    return _pad(ctx, node, _ints(_known(ctx, node, 1, "pads")), node.input(2),
                node.attr("mode", "constant"), _ints(_known(ctx, node, 3, "axes")))


# ---------------------------------------------------------------- one-hot, scans, ...

@converter("OneHot", since=9)
def one_hot(ctx: Any, node: Any) -> Any:
    """Indices in [-depth, -1] count from the end (OneHot-11's text; onnxruntime and
    ONNX's reference implementation do the same for OneHot-9), others give all off."""
    idx, values = node.inputs[0], node.inputs[2]
    if ctx.value(node.inputs[1]) is None:
        return _one_hot_dynamic(ctx, node)
    depth_v = _known(ctx, node, 1, "depth")
    assert depth_v is not None
    if depth_v.size != 1:
        raise node.error("depth must hold one element")
    depth = int(np.asarray(depth_v).reshape(()))
    if depth < 1:
        raise node.error(f"depth must be positive, got {depth}")
    if ctx.shape(values) != (2,):
        raise node.error("values must be a tensor of two elements [off, on]")
    rank = _rank(ctx, idx)
    axis = int(node.attr("axis", -1))
    axis = _axis(node, axis, rank + 1)
    if ctx.dtype(idx) != "int64":
        idx = op.cast(idx, dtype="int64")       # onnxruntime truncates float indices
    idx = op.where(op.less(idx, ctx.const(np.int64(0))),
                   op.add(idx, ctx.const(np.int64(depth))), idx)
    off = op.take(values, ctx.const(np.int64(0)), axis=0)
    on = op.take(values, ctx.const(np.int64(1)), axis=0)
    return op.one_hot(idx, on, off, depth=depth, axis=axis if axis != rank else -1)


def _one_hot_dynamic(ctx: Any, node: Any) -> Any:
    """OneHot with the depth known at run time (truncated to int64 as onnxruntime does):
    dyn.one_hot."""
    idx, values = node.inputs[0], node.inputs[2]
    depth = _scalar_i64(ctx, node, node.inputs[1], "depth")
    if ctx.shape(values) != (2,):
        raise node.error("values must be a tensor of two elements [off, on]")
    rank = _rank(ctx, idx)
    axis = _axis(node, int(node.attr("axis", -1)), rank + 1)
    idx = _i64(ctx, idx)
    idx = op.where(op.less(idx, _c64(ctx, 0)), op.add(idx, depth), idx)
    off = op.take(values, _c64(ctx, 0), axis=0)
    on = op.take(values, _c64(ctx, 1), axis=0)
    return op.dyn.one_hot(idx, on, off, depth, axis=axis if axis != rank else -1)


@converter("CumSum", since=11)
def cumsum(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    axis_v = _ints(_known(ctx, node, 1, "axis"))
    if axis_v is None or len(axis_v) != 1:
        raise node.error("axis must be a one-element constant")
    axis = _axis(node, axis_v[0], _rank(ctx, x))
    exclusive = bool(node.attr("exclusive", 0))
    if node.attr("reverse", 0):
        return op.reverse(op.cumsum(op.reverse(x, axis=axis), axis=axis, exclusive=exclusive),
                          axis=axis)
    return op.cumsum(x, axis=axis, exclusive=exclusive)


@converter("ReverseSequence", since=10)
def reverse_sequence(ctx: Any, node: Any) -> Any:
    x, lengths = node.inputs[0], node.inputs[1]
    rank = _rank(ctx, x)
    batch = _axis(node, int(node.attr("batch_axis", 1)), rank, "batch_axis")
    time = _axis(node, int(node.attr("time_axis", 0)), rank, "time_axis")
    if {batch, time} != {0, 1}:
        raise node.error("batch_axis and time_axis must be 0 and 1")
    return op.reverse_sequence(x, lengths, seq_axis=time, batch_axis=batch)


@converter("Trilu", since=14)
def trilu(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    shape = ctx.shape(x)
    if len(shape) < 2 or not all(isinstance(d, int) for d in shape[-2:]):
        raise node.error(f"the last two dimensions must be static, got {shape}")
    n, m = shape[-2], shape[-1]
    rows, cols = np.arange(n)[:, None], np.arange(m)[None, :]
    zero = ctx.const(np.zeros((), ctx.dtype(x)))
    if node.input(1) is not None and ctx.value(node.inputs[1]) is None:
        # k known at run time: the mask compares the diagonal offsets with it
        k_t = _scalar_i64(ctx, node, node.inputs[1], "k")
        offsets = _c64(ctx, (cols - rows).astype(np.int64))
        keep_t = op.greater_equal(offsets, k_t) if node.attr("upper", 1) else \
            op.less_equal(offsets, k_t)
        return op.where(keep_t, x, zero)
    k_v = _known(ctx, node, 1, "k")
    k = 0 if k_v is None else int(np.asarray(k_v).reshape(()))
    keep = cols - rows >= k if node.attr("upper", 1) else cols - rows <= k
    return op.where(ctx.const(keep), x, zero)

