"""LLVM lowerings of the transform family: index maps over the output (each output
element reads the input elements it comes from), as `numpy_kernels.py` computes them.

Every load stays in bounds: both sides of a `b.select` are evaluated, so the input
indices of concatenate's pieces are clamped, and data-dependent indices (take, gather,
gather_nd, reverse_sequence) are wrapped or clipped as the NumPy kernel does and then
clamped into range (where NumPy raises IndexError on an out-of-range index, the native
code reads the nearest element instead).

Every op of the family has a lowering (no op here has a data-dependent shape); these
cases raise NotImplementedError (-> NoLowering: the executor runs them with NumPy):
float16 cumsum/cumprod (NumPy accumulates in float16, rounding every partial result;
reductions here accumulate float16 in float32), scans along more than `SCAN_MAX`
elements (the loop IR has no scan: a scan is written as masked reductions, O(n sqrt n)
along the axis), arange of bool, one_hot whose on/off values differ in dtype.
The strided_slice lowering follows the type (TVM's canonical indices); see the report
of the NumPy kernel's negative-stride case in tests/op/llvm/test_transform_lowering.py.
"""
from __future__ import annotations

import math
from typing import Any

from ..layouts import parse_layout, primal_sizes
from ..llvm_rules import broadcast_index, out_shape_dtype
from ..registry import implement
from .shape_relations import transpose_axes
from .slice_relations import slice_plan

SCAN_DIRECT = 64          # scans along at most this many elements: one masked reduction
SCAN_MAX = 1 << 16        # longer scans are left to NumPy


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _strides(shape: tuple[int, ...]) -> list[int]:
    out, s = [], 1
    for d in reversed(shape):
        out.append(s)
        s *= d
    return out[::-1]


def _ravel(shape: tuple[int, ...], idx: tuple) -> Any:
    """The row-major flat index of `idx` in `shape` (int64)."""
    flat: Any = 0
    for i, s, d in zip(idx, _strides(shape), shape):
        if d != 1:
            flat = i * s if isinstance(flat, int) and flat == 0 else flat + i * s
    return flat


def _unravel(shape: tuple[int, ...], flat: Any) -> tuple:
    """The index into `shape` of row-major flat index `flat` (non-negative)."""
    out: list[Any] = []
    first = True
    for s, d in zip(_strides(shape), shape):
        if d == 1:
            out.append(0)
            continue
        q = flat / s if s != 1 else flat
        out.append(q if first else q % d)
        first = False
    return tuple(out)


def _reshape_index(in_shape: tuple[int, ...], out_shape: tuple[int, ...], idx: tuple
                   ) -> tuple:
    """The index into a tensor of `in_shape` of element `idx` of its row-major reshape to
    `out_shape` (dims matched at both ends are copied; the middle goes through a flat
    index)."""
    if math.prod(in_shape) == 0:
        return (0,) * len(in_shape)
    ins = [k for k, d in enumerate(in_shape) if d != 1]
    outs = [k for k, d in enumerate(out_shape) if d != 1]
    res: list[Any] = [0] * len(in_shape)
    lo = 0
    while lo < min(len(ins), len(outs)) and in_shape[ins[lo]] == out_shape[outs[lo]]:
        res[ins[lo]] = idx[outs[lo]]
        lo += 1
    hi = 0
    while (hi < min(len(ins), len(outs)) - lo
           and in_shape[ins[-1 - hi]] == out_shape[outs[-1 - hi]]):
        res[ins[-1 - hi]] = idx[outs[-1 - hi]]
        hi += 1
    mid_in = ins[lo:len(ins) - hi]
    mid_out = outs[lo:len(outs) - hi]
    if mid_in:
        flat = _ravel(tuple(out_shape[k] for k in mid_out), tuple(idx[k] for k in mid_out))
        if isinstance(flat, int):
            flat = idx[0] * 0 if idx else 0
        for k, v in zip(mid_in, _unravel(tuple(in_shape[k] for k in mid_in), flat)):
            res[k] = v
    return tuple(res)


def _reshape_to(b: Any, x: Any, out_type: Any, name: str) -> Any:
    shape, _ = out_shape_dtype(out_type)
    if shape == x.shape:
        return b.compute(shape, lambda *i: x[i], name=name)
    return b.compute(shape, lambda *i: x[_reshape_index(x.shape, shape, i)], name=name)


for _name in ("reshape", "reshape_like", "squeeze", "expand_dims"):
    implement(_name, target="llvm")(
        lambda b, inputs, attrs, out_type, _n=_name: _reshape_to(b, inputs[0], out_type, _n))


@implement("transpose", target="llvm")
def transpose(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    perm = transpose_axes(x.ndim, attrs.axes)
    shape, _ = out_shape_dtype(out_type)

    def fcompute(*i: Any) -> Any:
        src: list[Any] = [0] * x.ndim
        for k, p in enumerate(perm):
            src[p] = i[k]
        return x[tuple(src)]
    return b.compute(shape, fcompute, name="transpose")


# ------------------------------------------------------------ join and cut

def _clamp(b: Any, e: Any, lo: int, hi: int) -> Any:
    """e clamped into [lo, hi] (ints)."""
    if hi <= lo:
        return b.const(lo, "int64")
    return b.min(b.max(e, b.const(lo, "int64")), b.const(hi, "int64"))


@implement("concatenate", target="llvm")
def concatenate(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    parts = list(inputs[0])
    shape, _ = out_shape_dtype(out_type)
    axis = _axis(attrs.axis, len(shape))
    pieces, off = [], 0
    for t in parts:
        if t.shape[axis] > 0:
            pieces.append((t, off))
        off += t.shape[axis]

    def fcompute(*i: Any) -> Any:
        if not pieces:
            return b.const(0, parts[0].dtype)
        value = None
        for k, (t, o) in reversed(list(enumerate(pieces))):
            n = t.shape[axis]
            j = i[axis] - o
            if k > 0:                       # clamp the index into piece k
                j = b.max(j, b.const(0, "int64"))
            if k < len(pieces) - 1:
                j = b.min(j, b.const(n - 1, "int64"))
            load = t[i[:axis] + (j,) + i[axis + 1:]]
            value = load if value is None else b.select(b.lt(i[axis], o + n), load, value)
        return value
    return b.compute(shape, fcompute, name="concatenate")


@implement("stack", target="llvm")
def stack(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    parts = list(inputs[0])
    shape, _ = out_shape_dtype(out_type)
    axis = _axis(attrs.axis, len(shape))

    def fcompute(*i: Any) -> Any:
        rest = i[:axis] + i[axis + 1:]
        value = parts[-1][rest]
        for j in range(len(parts) - 2, -1, -1):
            value = b.select(b.eq(i[axis], j), parts[j][rest], value)
        return value
    return b.compute(shape, fcompute, name="stack")


@implement("split", target="llvm")
def split(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    axis = _axis(attrs.axis, x.ndim)
    outs, off = [], 0
    for field in out_type.fields:
        shape, _ = out_shape_dtype(field)
        outs.append(b.compute(
            shape, lambda *i, _o=off: x[i[:axis] + (i[axis] + _o,) + i[axis + 1:]],
            name="split"))
        off += shape[axis]
    return tuple(outs)


@implement("strided_slice", target="llvm")
def strided_slice(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, _ = out_shape_dtype(out_type)
    plan = {axis: (begin, stride) for axis, begin, _, stride in slice_plan(x.shape, attrs)}

    def fcompute(*i: Any) -> Any:
        src = list(i)
        for axis, (begin, stride) in plan.items():
            src[axis] = i[axis] * stride + begin
        return x[tuple(src)]
    return b.compute(shape, fcompute, name="strided_slice")


@implement("slice_like", target="llvm")
def slice_like(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x = inputs[0]
    shape, _ = out_shape_dtype(out_type)
    return b.compute(shape, lambda *i: x[i], name="slice_like")


# ------------------------------------------------------------ broadcasting, repetition

def _broadcast_to(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x = inputs[0]
    shape, _ = out_shape_dtype(out_type)
    return b.compute(shape, lambda *i: x[broadcast_index(x, shape, i)], name="broadcast_to")


implement("broadcast_to", target="llvm")(_broadcast_to)
implement("broadcast_to_like", target="llvm")(_broadcast_to)


@implement("collapse_sum_like", target="llvm")
def collapse_sum_like(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """x.sum(axes).astype(like.dtype): integers and bools summed in (u)int64, float16 in
    float32."""
    x = inputs[0]
    shape, dtype = out_shape_dtype(out_type)
    lead = x.ndim - len(shape)
    axes = [k for k in range(x.ndim)
            if k < lead or (shape[k - lead] == 1 and x.shape[k] != 1)]
    if x.dtype.startswith("float"):
        acc = "float32" if x.dtype == "float16" else x.dtype
    else:
        acc = "uint64" if x.dtype.startswith("uint") else "int64"
    if not axes:
        return b.compute(shape, lambda *i: b.cast(b.cast(x[i], acc), dtype), name="collapse")

    def fcompute(*i: Any) -> Any:
        r = {k: b.reduce_axis(x.shape[k], "k") for k in axes}
        src = tuple(r[k] if k in r else i[k - lead] for k in range(x.ndim))
        return b.reduce_sum(b.cast(x[src], acc), list(r.values()))
    total = b.compute(shape, fcompute, dtype=acc, name="collapse_sum")
    if acc == dtype:
        return total
    return b.compute(shape, lambda *i: b.cast(total[i], dtype), name="collapse")


@implement("tile", target="llvm")
def tile(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, _ = out_shape_dtype(out_type)
    lead = len(shape) - x.ndim

    def fcompute(*i: Any) -> Any:
        return x[tuple(0 if d == 1 else i[lead + k] % d for k, d in enumerate(x.shape))]
    if x.size == 0:
        return b.compute(shape, lambda *i: b.const(0, x.dtype), name="tile")
    return b.compute(shape, fcompute, name="tile")


@implement("repeat", target="llvm")
def repeat(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, _ = out_shape_dtype(out_type)
    r = int(attrs.repeats)
    if attrs.axis is None:
        return b.compute(shape, lambda i: x[_unravel(x.shape, i / r)], name="repeat")
    axis = _axis(attrs.axis, x.ndim)
    return b.compute(shape, lambda *i: x[i[:axis] + (i[axis] / r,) + i[axis + 1:]],
                     name="repeat")


@implement("reverse", target="llvm")
def reverse(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    axes = set(range(x.ndim)) if attrs.axis is None else {_axis(attrs.axis, x.ndim)}
    return b.compute(x.shape, lambda *i: x[tuple(
        x.shape[k] - 1 - v if k in axes else v for k, v in enumerate(i))], name="reverse")


@implement("reverse_sequence", target="llvm")
def reverse_sequence(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, lengths = inputs
    seq, batch = _axis(attrs.seq_axis, x.ndim), _axis(attrs.batch_axis, x.ndim)
    d = x.shape[seq]

    def fcompute(*i: Any) -> Any:
        t = i[seq]
        n = b.min(b.cast(lengths[i[batch]], "int64"), b.const(d, "int64"))
        src = b.select(b.lt(t, n), n - 1 - t, t)
        return x[i[:seq] + (src,) + i[seq + 1:]]
    return b.compute(x.shape, fcompute, name="reverse_sequence")


def _unblock(b: Any, x: Any, src: tuple, dst: tuple, shape: tuple[int, ...]) -> Any:
    """A channel-blocked layout to the plain one (`NCHW64c` -> `NCHW`: `src` is `dst`
    with one sub-axis appended, split off an axis X of `dst` that is not its last), as a
    tiled transpose: each row of the input (all but X and the last two dims fixed: a
    `W x 64` tile, contiguous) is copied into a local stage, and the output is written
    from it in the stage's order with the output's contiguous dim innermost (the
    scheduler's `_relaid` output: one parallel loop over (N, X-block, H), contiguous
    stores of W, the strided reads from the L1-resident row). The plain index map
    instead vectorised over W with reads of stride 64 elements through the whole
    X-block for every channel: 1x64x112x112 NCHW64c -> NCHW took 5.0 ms (1.3 GB/s), this
    form 0.33 ms (19 GB/s); MobileNet's 256x28x28 (NCHW64c) 0.069 ms standalone (one
    thread). The reverse (plain -> blocked) is left to the index map: it measured 19-25
    GB/s already and slower through a row stage. None when the layouts are not of this
    form.

    Limit: only an output of the primitive function (elementwise consumers fused in
    included) is written in the stage's order. A consumer that reads it in another
    order (a fused reduction or reshape) reads the whole stage, copied serially first:
    `mean(layout_transform(1x8x28x28x64 NCHW64c -> NCHW), axis=[2, 3])` took 0.053 ms
    through the index map, 0.18 ms this way. The lowering cannot see its consumers;
    the scheduler could write such an output in its input's order instead (no stage)."""
    if len(src) != len(dst) + 1 or len(dst) < 2:
        return None
    sub, f = src[-1]
    if not sub.islower() or f is None:
        return None
    if [a for a, _ in src[:-1]] != [a for a, _ in dst] or any(g is not None for _, g in dst):
        return None
    k = [a for a, _ in dst].index(sub.upper())
    if (k == len(dst) - 1 or shape[k] != x.shape[k] * f or math.prod(shape[k + 1:]) == 1
            or math.prod(x.shape[:-2]) < 2):
        # the index map's reads are contiguous (X last, or only extent-1 dims after it:
        # ResNet-50's 1x2048x1x1), or there is one row (no parallel loop over rows)
        return None
    # the stage holds the X blocks first (`rows[xo, n, h, w, xi]`): the output's load of
    # it then shares no leading dim with the output's own loop (a batch > 1 would
    # otherwise be the parallel loop, with the output looped in its own order)
    rows = b.materialize(b.compute(
        (x.shape[k],) + x.shape[:k] + x.shape[k + 1:],
        lambda *j: x[j[1:k + 1] + (j[0],) + j[k + 1:]], name="layout_transform_rows"))
    return b.compute(shape, lambda *i: rows[(i[k] / f,) + i[:k] + i[k + 1:] + (i[k] % f,)],
                     name="layout_transform")


@implement("layout_transform", target="llvm")
def layout_transform(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """Each output element: its primal coordinates (outer * factor + inner of a split
    axis), zero where they fall in the padding of a split the factor does not divide,
    else the input element at those coordinates in the source layout."""
    (x,) = inputs
    shape, _ = out_shape_dtype(out_type)
    src = parse_layout(attrs.src_layout)
    dst = parse_layout(attrs.dst_layout)
    sizes = primal_sizes(x.shape, src)
    src_f = {a.upper(): f for a, f in src if f is not None}
    dst_f = {a.upper(): f for a, f in dst if f is not None}
    dst_pos = {a: k for k, (a, _) in enumerate(dst)}
    if x.size == 0:
        return b.compute(shape, lambda *i: b.const(0, x.dtype), name="layout_transform")
    unblocked = _unblock(b, x, src, dst, shape)
    if unblocked is not None:
        return unblocked

    def fcompute(*i: Any) -> Any:
        coord: dict[str, Any] = {}
        valid = None
        for a, size in sizes.items():
            c = i[dst_pos[a]]
            if a in dst_f:
                c = c * dst_f[a] + i[dst_pos[a.lower()]]
                if size % dst_f[a]:
                    ok = b.lt(c, size)
                    valid = ok if valid is None else b.logical_and(valid, ok)
                    c = b.min(c, b.const(size - 1, "int64"))
            coord[a] = c
        index = []
        for a, f in src:
            if a.isupper():
                index.append(coord[a] / src_f[a] if a in src_f else coord[a])
            else:
                index.append(coord[a.upper()] % f)
        value = x[tuple(index)]
        return value if valid is None else b.select(valid, value, b.const(0, x.dtype))
    return b.compute(shape, fcompute, name="layout_transform")


@implement("shape_of", target="llvm")
def shape_of(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x = inputs[0]
    shape, dtype = out_shape_dtype(out_type)
    if not x.shape:
        return b.compute(shape, lambda *i: b.const(0, dtype), name="shape_of")

    def fcompute(i: Any) -> Any:
        value = b.const(x.shape[-1], dtype)
        for k in range(x.ndim - 2, -1, -1):
            value = b.select(b.eq(i, k), b.const(x.shape[k], dtype), value)
        return value
    return b.compute(shape, fcompute, name="shape_of")


# ------------------------------------------------------------ indexing

def _wrap_once(b: Any, j: Any, n: int) -> Any:
    """NumPy's indexing: a negative index counts from the end (once); then clamped
    into range so the load stays in bounds."""
    j = b.select(b.lt(j, 0), j + n, j)
    return _clamp(b, j, 0, n - 1)


@implement("take", target="llvm")
def take(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, idx = inputs
    shape, _ = out_shape_dtype(out_type)

    def pick(j: Any, n: int) -> Any:
        j = b.cast(j, "int64")
        if attrs.mode == "clip":
            return _clamp(b, j, 0, n - 1)
        if attrs.mode == "wrap":
            return b.floormod(j, b.const(n, "int64"))
        return _wrap_once(b, j, n)

    if attrs.axis is None:
        if data.size == 0:
            return b.compute(shape, lambda *i: b.const(0, data.dtype), name="take")
        return b.compute(shape, lambda *i: data[_unravel(data.shape, pick(idx[i], data.size))],
                         name="take")
    axis = _axis(attrs.axis, data.ndim)
    batch = attrs.batch_dims + idx.ndim if attrs.batch_dims < 0 else attrs.batch_dims
    n = data.shape[axis]
    width = idx.ndim - batch
    if n == 0:
        return b.compute(shape, lambda *i: b.const(0, data.dtype), name="take")

    def fcompute(*i: Any) -> Any:
        j = pick(idx[i[:batch] + i[axis:axis + width]], n)
        return data[i[:axis] + (j,) + i[axis + width:]]
    return b.compute(shape, fcompute, name="take")


@implement("gather", target="llvm")
def gather(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, idx = inputs
    axis = _axis(attrs.axis, data.ndim)
    n = data.shape[axis]
    if n == 0:
        return b.compute(idx.shape, lambda *i: b.const(0, data.dtype), name="gather")

    def fcompute(*i: Any) -> Any:
        j = _wrap_once(b, b.cast(idx[i], "int64"), n)
        return data[i[:axis] + (j,) + i[axis + 1:]]
    return b.compute(idx.shape, fcompute, name="gather")


@implement("gather_nd", target="llvm")
def gather_nd(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data, idx = inputs
    shape, _ = out_shape_dtype(out_type)
    bd = attrs.batch_dims
    m = idx.shape[0]
    k = idx.ndim - 1                   # output dims that index `idx` (batch dims included)
    if data.size == 0:
        return b.compute(shape, lambda *i: b.const(0, data.dtype), name="gather_nd")

    def fcompute(*i: Any) -> Any:
        picked = tuple(_wrap_once(b, b.cast(idx[(p,) + i[:k]], "int64"), data.shape[bd + p])
                       for p in range(m))
        return data[i[:bd] + picked + i[k:]]
    return b.compute(shape, fcompute, name="gather_nd")


@implement("one_hot", target="llvm")
def one_hot(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    idx, on, off = inputs
    shape, dtype = out_shape_dtype(out_type)
    if on.dtype != off.dtype:
        raise NotImplementedError("one_hot with on_value and off_value of different dtypes")
    axis = idx.ndim if attrs.axis == -1 else _axis(attrs.axis, idx.ndim + 1)

    def fcompute(*i: Any) -> Any:
        hot = b.eq(b.cast(idx[i[:axis] + i[axis + 1:]], "int64"), i[axis])
        return b.cast(b.select(hot, on[()], off[()]), dtype)
    return b.compute(shape, fcompute, dtype=dtype, name="one_hot")


# ------------------------------------------------------------ creation

def _constant(value: Any):
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        shape, dtype = out_shape_dtype(out_type)
        return b.compute(shape, lambda *i: b.const(value, dtype), dtype=dtype, name="init")
    return lower


implement("zeros", target="llvm")(_constant(0))
implement("ones", target="llvm")(_constant(1))


@implement("full", target="llvm")
def full(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    fill = inputs[0]
    shape, dtype = out_shape_dtype(out_type)
    return b.compute(shape, lambda *i: b.cast(fill[()], dtype), dtype=dtype, name="full")


@implement("full_like", target="llvm")
def full_like(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    fill = inputs[1]
    shape, dtype = out_shape_dtype(out_type)
    return b.compute(shape, lambda *i: b.cast(fill[()], dtype), dtype=dtype, name="full_like")


def _round(b: Any, e: Any) -> Any:
    """A float16 result rounded to float16 (NumPy rounds each float16 operation)."""
    return b.cast(b.cast(e, "float32"), "float16") if e.dtype == "float16" else e


@implement("arange", target="llvm")
def arange(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """start + i * step in the dtype (topi's arange, as the NumPy kernel computes it)."""
    start, _, step = inputs
    shape, dtype = out_shape_dtype(out_type)
    if dtype == "bool":
        raise NotImplementedError("arange of bool")

    def fcompute(i: Any) -> Any:
        s0, st = b.cast(start[()], dtype), b.cast(step[()], dtype)
        return _round(b, s0 + _round(b, b.cast(i, dtype) * st))
    return b.compute(shape, fcompute, dtype=dtype, name="arange")


# ------------------------------------------------------------ scans

def _scan(op: str):
    """cumsum/cumprod: out[..., i, ...] = op over k <= i (k < i when exclusive) of the
    elements cast to the dtype. The loop IR has no scan, so this is a masked reduction
    per output element: over the whole axis when it has at most `SCAN_DIRECT` elements,
    else in blocks of B ~ sqrt(n) (block totals, their exclusive prefix, and a masked
    reduction within the element's block: O(n * sqrt(n)) per line). Floats are summed
    in another order than NumPy's sequential scan (rounding differs in the last bits)."""
    reduce_name = "reduce_sum" if op == "cumsum" else "reduce_prod"
    identity = 0 if op == "cumsum" else 1

    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        (x,) = inputs
        shape, dtype = out_shape_dtype(out_type)
        if dtype == "float16":
            raise NotImplementedError(f"float16 {op} (NumPy rounds every partial result)")
        if attrs.axis is None:
            axis, length = 0, x.size

            def load(i: tuple, k: Any) -> Any:
                return x[_unravel(x.shape, k)]
        else:
            axis = _axis(attrs.axis, x.ndim)
            length = x.shape[axis]

            def load(i: tuple, k: Any) -> Any:
                return x[i[:axis] + (k,) + i[axis + 1:]]
        if length > SCAN_MAX:
            raise NotImplementedError(f"{op} along an axis of {length} > {SCAN_MAX} elements "
                                      "(the loop IR has no scan)")
        if math.prod(shape) == 0:
            return b.compute(shape, lambda *i: b.const(0, dtype), dtype=dtype, name=op)
        exclusive = bool(attrs.exclusive)
        # bool: TVM's 1-bit integer; NumPy's kernel scans the elements as uint8 (wrapping)
        # and takes the parity of a sum, the truth of a product
        acc = "uint8" if dtype == "bool" else dtype
        ident = b.const(identity, acc)

        def masked(i: tuple, pos: Any, inside: Any) -> Any:
            return b.select(inside, b.cast(load(i, pos), acc), ident)

        def at(i: tuple, j: Any) -> tuple:
            return i[:axis] + (j,) + i[axis + 1:]

        if length <= SCAN_DIRECT:
            def fcompute(*i: Any) -> Any:
                k = b.reduce_axis(length, "k")
                inside = b.lt(k, i[axis]) if exclusive else b.le(k, i[axis])
                return getattr(b, reduce_name)(masked(i, k, inside), [k])
            total = b.compute(shape, fcompute, dtype=acc, name=op)
        else:
            B = math.isqrt(length - 1) + 1
            nb = -(-length // B)
            bshape = at(shape, nb)

            def fblock(*j: Any) -> Any:             # the total of each block
                k = b.reduce_axis(B, "k")
                pos = j[axis] * B + k
                clamped = b.min(pos, b.const(length - 1, "int64"))
                return getattr(b, reduce_name)(masked(j, clamped, b.lt(pos, length)), [k])
            blocks = b.compute(bshape, fblock, dtype=acc, name=op + "_blocks")

            def fprefix(*j: Any) -> Any:            # the total of the blocks before
                k = b.reduce_axis(nb, "kb")
                value = b.select(b.lt(k, j[axis]), blocks[at(j, k)], ident)
                return getattr(b, reduce_name)(value, [k])
            prefix = b.compute(bshape, fprefix, dtype=acc, name=op + "_prefix")

            def fwithin(*i: Any) -> Any:            # the part of the element's block
                k = b.reduce_axis(B, "k")
                pos = (i[axis] / B) * B + k
                inside = b.lt(pos, i[axis]) if exclusive else b.le(pos, i[axis])
                clamped = b.min(pos, b.const(length - 1, "int64"))
                return getattr(b, reduce_name)(masked(i, clamped, inside), [k])
            within = b.compute(shape, fwithin, dtype=acc, name=op + "_within")

            def fcombine(*i: Any) -> Any:
                before = prefix[at(i, i[axis] / B)]
                return before + within[i] if op == "cumsum" else before * within[i]
            total = b.compute(shape, fcombine, dtype=acc, name=op)
        if acc == dtype:
            return total
        if op == "cumsum":
            return b.compute(shape, lambda *i: b.cast(
                b.call("bitwise_and", total[i], b.const(1, acc)), dtype), name=op + "_bool")
        return b.compute(shape, lambda *i: b.ne(total[i], b.const(0, acc)), name=op + "_bool")
    lower.__name__ = op
    return lower


implement("cumsum", target="llvm")(_scan("cumsum"))
implement("cumprod", target="llvm")(_scan("cumprod"))


# ------------------------------------------------------------ sparse_to_dense

SPARSE_TO_DENSE_MAX_INDICES = 64      # beyond: one select per index per element is too long


@implement("sparse_to_dense", target="llvm")
def sparse_to_dense(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """topi.sparse_to_dense: each element is the value of the last sparse index whose
    coordinates equal its leading ones (an index outside the shape equals none), else
    the default value: a chain of selects over the n indices (n static and small; more
    run the NumPy kernel)."""
    idx, values, default = inputs
    shape, dtype = out_shape_dtype(out_type)
    n = 1 if idx.ndim == 0 else idx.shape[0]
    k = idx.shape[1] if idx.ndim == 2 else 1
    if n > SPARSE_TO_DENSE_MAX_INDICES:
        raise NotImplementedError(f"sparse_to_dense of {n} indices")
    if default.dtype.startswith(("float", "bfloat")) and not dtype.startswith("float"):
        raise NotImplementedError("sparse_to_dense of a float default into integers")

    def fcompute(*i: Any) -> Any:
        out = b.cast(default[()], dtype)
        for j in range(n):
            cond = None
            for c in range(k):
                at = () if idx.ndim == 0 else ((j,) if idx.ndim == 1 else (j, c))
                hit = b.eq(b.cast(idx[at], "int64"), i[c])
                cond = hit if cond is None else b.logical_and(cond, hit)
            value = values[()] if values.ndim == 0 else values[(j,)]
            out = b.select(cond, b.cast(value, dtype), out)
        return out
    return b.compute(shape, fcompute, dtype=dtype, name="sparse_to_dense")
