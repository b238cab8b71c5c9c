"""LLVM lowerings of the nn family (see /work/llvm_spec.md, "The lowering API").

Semantics follow `numpy_kernels.py` and `conv_kernels.py`: dense, matmul,
batch_matmul and the convolutions compute in the output dtype (inputs cast to it
first, so int8 x int8 with out_dtype int32 accumulates in int32); float16 computes in
float32 with a float32 accumulator and is rounded once, as `float16_in_float32` does
(softmax, log_softmax, layer_norm and batch_norm too). nn.pad supports the constant,
edge and reflect modes; nn.dropout is the inference identity (and a mask of ones).

Loop shapes (what `backend/llvm/schedule.py` makes of them):
- convolutions whose output channels per group are a multiple of 4 (or depthwise ones
  with a multiple of 4 channels): blocked, T[n, o // B, *sp, o % B] with the weight
  re-laid out as Wb[o // B, c, *k, o % B] (B = 64, 32, 16, 8 or 4): the innermost loop is a
  register tile of B output channels fed by one broadcast input value, and the
  weights one output position reads (C * K * B) stay in cache; depthwise re-lays the
  padded input in blocks of B channels too. The result is copied to the output layout
  by the (inlined) epilogue. Measured on one core (AVX-512): 1x64x56x56 3x3 -> 64
  ~70 GFLOPS, 14x14 layers ~69, 7x7 layers ~36-45 (since then, with the scheduler's
  row blocks: 56x56 ~190, 14x14 ~190, 7x7 ~135-150). Outputs at most
  `FLAT_PIXELS_MAX_WIDTH` (16) wide flatten their pixels, T[n, o // B, h * W + w, o % B],
  so that a row block of 6 pixels runs across image rows (a 7-wide row was 4 + 3):
  512x7x7 3x3 134 -> 150 GFLOPS, 512x14x14 3x3 stride 2 109 -> 139, 512->2048 1x1 7x7
  140 -> 157 (one core; 28-wide outputs measured 0-10% slower flattened).
- depthwise convolutions (multiplier 1) with unit strides and an output at least
  `DEPTHWISE_DIRECT_MIN_WIDTH` (48) wide: the direct form below (a tile of output
  columns per channel plane; each parallel iteration pads its own channel), which
  splits over threads without re-laying out the input: 128x56x56 3x3 0.29 ms on one
  core blocked, 0.35 direct, but 0.31-0.46 blocked on two against 0.19 direct. Narrower
  or strided ones stay blocked (256x28x28: 0.16 ms blocked, 0.35 direct);
- other convolutions (few or odd output channels): T[n, *sp, o] with o innermost
  (groups == 1), else the direct NCHW-style reduction;
- padding is a materialised padded copy of the input (no bounds checks in the
  reduction);
- dense, matmul and batch_matmul with 4+ rows and a reduction of 16+ (dense: any
  reduction when a block divides the columns): a blocked GEMM (`_blocked_gemm`), the
  right-hand side re-laid out in panels of 64/32/16/8 columns (K x 64 floats, reused
  from cache by every row; zero columns pad N when no block divides it and at most 1/8
  or the least is wasted: 1000 -> 1024), packed once at build time when it is a
  constant; the scheduler's register tile is 6 rows x 64 columns (24 zmm accumulators,
  broadcast FMAs) and the panels (and the batch) run in parallel; with fewer than 4
  panels the rows are split into chunks as well (`_row_chunk`). Measured on one core
  (packed weight, AVX-512): 1024^3 dense / matmul 11.0 ms (195 GFLOPS; OpenBLAS 11.4),
  matmul went from 35 ms (4 KiB-strided b[k, j] rows per tile), 4x256x256x256
  batch_matmul with transpose_b from 4.1 to 0.8 ms, 512x512x64 dense from 0.37 to 0.16.
  Otherwise (GEMV, few or odd columns, short K) a dot product per output element,
  contiguous in both operands (transpose_b, dense), or the row update out[i, :] +=
  a[i, k] * b[k, :] (a tile of output columns), which the scheduler runs in parallel.
- convolutions (groups == 1) with a short reduction, input channels per group times
  the window at most `_DIRECT_REDUCTION` (32; MNIST's first layer: 1 x 5 x 5), and an
  output at least 8 wide: the direct form out[n, o, h, w] = sum x[n, c, h*s + kh, w*s +
  kw] * W[o, c, kh, kw], whose innermost loop is a tile of output columns (the window
  read contiguously) with no re-laid weight and no epilogue: MNIST's 1x1x28x28 * 20x1x5x5
  went from 106 us (5 GFLOPS; blocks of 4 channels over a 25-long reduction) to 28 us
  (21 GFLOPS) on one core. Depthwise convolutions stay blocked (the direct form measured
  2x slower on narrow outputs; wide stride-1 ones use it, see above) and longer
  reductions too (MNIST's 20x5x5 one: 176 us direct, 112 blocked).
- the channels-last form pads a count of output channels above 16 to a multiple of 16
  (zero weights; the epilogue reads the real ones): MNIST's 1x20x12x12 * 50x20x5x5
  went from 113 us (28 GFLOPS; 50 = 3 vectors and a scalar remainder) to 57 us (56).
Kernels with stages of different shapes (a padded input, a re-laid weight, the blocked
result) are parallel: the scheduler has every call compute the cheap stages (the
prologue) itself and splits the blocked result with its epilogue (`schedule.py`).
"""
from __future__ import annotations

import math
from typing import Any

from ..registry import implement

# Output channel (dense: column) blocks, the widest first: a block is the scheduler's
# register tile (64 float32 = 4 AVX-512 accumulators: enough independent FMAs in flight).
_BLOCKS = (64, 32, 16, 8)


def _acc(dtype: str) -> str:
    """The dtype arithmetic runs in: float16 is computed in float32."""
    return "float32" if dtype == "float16" else dtype


def _widen(b: Any, e: Any, dtype: str) -> Any:
    return b.cast(e, dtype)


def _out(out_type: Any) -> tuple[tuple[int, ...], str]:
    return tuple(int(d) for d in out_type.shape), str(out_type.dtype)


def _finish(b: Any, t: Any, dtype: str, name: str) -> Any:
    """`t` (computed in _acc(dtype)) as a tensor of `dtype`."""
    if t.dtype == dtype:
        return t
    return b.compute(t.shape, lambda *i: b.cast(t[i], dtype), dtype=dtype, name=name)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


# ---------------------------------------------------------------- activations

@implement("nn.relu", target="llvm")
def relu(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    if x.dtype == "bool" or x.dtype.startswith("uint"):
        return b.compute(x.shape, lambda *i: x[i], name="relu")
    return b.compute(x.shape, lambda *i: b.max(x[i], b.const(0, x.dtype)), name="relu")


@implement("nn.leaky_relu", target="llvm")
def leaky_relu(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    dt = x.dtype
    alpha = float(attrs.alpha)

    def f(*i: Any) -> Any:
        v = x[i]
        if _is_float(dt):
            w = _widen(b, v, _acc(dt))
            neg = b.cast(w * b.const(alpha, w.dtype), dt)
        else:               # NumPy: x * alpha in float64, truncated back
            neg = b.cast(b.cast(v, "float64") * b.const(alpha, "float64"), dt)
        return b.select(b.gt(v, b.const(0, dt)), v, neg)
    return b.compute(x.shape, f, dtype=dt, name="leaky_relu")


@implement("nn.prelu", target="llvm")
def prelu(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, alpha = inputs
    dt = x.dtype
    ax = _axis(attrs.axis, x.ndim)

    def f(*i: Any) -> Any:
        v = x[i]
        a = alpha[i[ax]]
        if _is_float(dt):
            neg = b.cast(_widen(b, v, _acc(dt)) * _widen(b, a, _acc(dt)), dt)
        else:
            neg = v * b.cast(a, dt)
        return b.select(b.gt(v, b.const(0, dt)), v, neg)
    return b.compute(x.shape, f, dtype=dt, name="prelu")


@implement("nn.bias_add", target="llvm")
def bias_add(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, bias = inputs
    dt = x.dtype
    ax = _axis(attrs.axis, x.ndim)

    def f(*i: Any) -> Any:
        v, c = x[i], bias[i[ax]]
        if c.dtype != dt:           # NumPy promotes, adds, and casts back
            wide = "float64" if _is_float(dt) or _is_float(c.dtype) else "int64"
            return b.cast(b.cast(v, wide) + b.cast(c, wide), dt)
        if dt == "bool":
            return b.logical_or(v, c)
        return v + c
    return b.compute(x.shape, f, dtype=dt, name="bias_add")


@implement("nn.dropout", target="llvm")
def dropout(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    return (b.compute(x.shape, lambda *i: x[i], name="dropout"),
            b.compute(x.shape, lambda *i: b.const(1, x.dtype), dtype=x.dtype,
                      name="dropout_mask"))


@implement("nn.batch_flatten", target="llvm")
def batch_flatten(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    shape, _ = _out(out_type)
    inner = tuple(x.shape[1:])
    return b.compute(shape, lambda i, j: x[(i,) + _row_index(inner, j)],
                     name="batch_flatten")


# ---------------------------------------------------------------- softmax

def _softmax(b: Any, x: Any, axis: int, log: bool) -> Any:
    dt = x.dtype
    acc = _acc(dt)
    ax = _axis(axis, x.ndim)
    n = x.shape[ax]
    rshape = x.shape[:ax] + x.shape[ax + 1:]

    def at(i: tuple, k: Any) -> tuple:
        return tuple(i[:ax]) + (k,) + tuple(i[ax:])

    def xv(idx: tuple) -> Any:
        return _widen(b, x[idx], acc)

    k1 = b.reduce_axis(n, "k")
    m = b.compute(rshape, lambda *i: b.reduce_max(xv(at(i, k1)), [k1]), dtype=acc,
                  name="softmax_max")
    k2 = b.reduce_axis(n, "k")
    s = b.compute(rshape, lambda *i: b.reduce_sum(
        b.call("exp", xv(at(i, k2)) - m[i]), [k2]), dtype=acc, name="softmax_sum")

    def f(*i: Any) -> Any:
        r = tuple(i[:ax]) + tuple(i[ax + 1:])
        shifted = xv(i) - m[r]
        if log:
            return b.cast(shifted - b.call("log", s[r]), dt)
        return b.cast(b.call("exp", shifted) / s[r], dt)
    return b.compute(x.shape, f, dtype=dt, name="log_softmax" if log else "softmax")


@implement("nn.softmax", target="llvm")
def softmax(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    if not _is_float(inputs[0].dtype):
        raise NotImplementedError("softmax of a non-float tensor")
    return _softmax(b, inputs[0], attrs.axis, log=False)


@implement("nn.log_softmax", target="llvm")
def log_softmax(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    if not _is_float(inputs[0].dtype):
        raise NotImplementedError("log_softmax of a non-float tensor")
    return _softmax(b, inputs[0], attrs.axis, log=True)


# ---------------------------------------------------------------- normalisation

@implement("nn.batch_norm", target="llvm")
def batch_norm(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, gamma, beta, mean, var = inputs
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("batch_norm of a non-float tensor")
    acc = _acc(dt)
    ax = _axis(attrs.axis, x.ndim)

    def scale_of(c: Any) -> Any:
        v = _widen(b, var[c], acc)
        s = b.const(1, acc) / b.call("sqrt", v + b.const(float(attrs.epsilon), acc))
        if attrs.scale:
            s = s * _widen(b, gamma[c], acc)
        return s

    def f(*i: Any) -> Any:
        c = i[ax]
        s = scale_of(c)
        shift = -_widen(b, mean[c], acc) * s
        if attrs.center:
            shift = shift + _widen(b, beta[c], acc)
        return b.cast(_widen(b, x[i], acc) * s + shift, dt)
    out = b.compute(x.shape, f, dtype=dt, name="batch_norm")
    return (out, b.compute(mean.shape, lambda *i: mean[i], name="bn_mean"),
            b.compute(var.shape, lambda *i: var[i], name="bn_var"))


@implement("nn.layer_norm", target="llvm")
def layer_norm(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, gamma, beta = inputs
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("layer_norm of a non-float tensor")
    acc = _acc(dt)
    ax = _axis(attrs.axis, x.ndim)
    n = x.shape[ax]
    rshape = x.shape[:ax] + x.shape[ax + 1:]

    def at(i: tuple, k: Any) -> tuple:
        return tuple(i[:ax]) + (k,) + tuple(i[ax:])

    def xv(idx: tuple) -> Any:
        return _widen(b, x[idx], acc)

    k1 = b.reduce_axis(n, "k")
    total = b.compute(rshape, lambda *i: b.reduce_sum(xv(at(i, k1)), [k1]), dtype=acc,
                      name="ln_sum")
    mean = b.compute(rshape, lambda *i: total[i] / b.const(float(n), acc), dtype=acc,
                     name="ln_mean")
    mean = b.materialize(mean)
    k2 = b.reduce_axis(n, "k")

    def sq(*i: Any) -> Any:
        d = xv(at(i, k2)) - mean[i]
        return b.reduce_sum(d * d, [k2])
    ss = b.compute(rshape, sq, dtype=acc, name="ln_ss")

    def f(*i: Any) -> Any:
        r = tuple(i[:ax]) + tuple(i[ax + 1:])
        var = ss[r] / b.const(float(n), acc)
        out = (xv(i) - mean[r]) / b.call("sqrt", var + b.const(float(attrs.epsilon), acc))
        if attrs.scale:
            out = out * _widen(b, gamma[i[ax]], acc)
        if attrs.center:
            out = out + _widen(b, beta[i[ax]], acc)
        return b.cast(out, dt)
    return b.compute(x.shape, f, dtype=dt, name="layer_norm")


# ---------------------------------------------------------------- padding

@implement("nn.pad", target="llvm")
def pad(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, value = inputs
    shape, dt = _out(out_type)
    widths = [(int(p[0]), int(p[1])) for p in attrs.pad_width]
    mode = attrs.pad_mode
    if x.size == 0 and mode != "constant":
        raise NotImplementedError("edge/reflect padding of an empty tensor")

    def f(*i: Any) -> Any:
        src = []
        inside = None
        for k, (lo, _) in enumerate(widths):
            n = x.shape[k]
            p = i[k] - lo if lo else i[k]
            if mode == "constant":
                if widths[k] != (0, 0):
                    ok = b.logical_and(b.ge(p, 0), b.lt(p, n))
                    inside = ok if inside is None else b.logical_and(inside, ok)
                    p = b.min(b.max(p, 0), max(n - 1, 0))
            elif mode == "edge":
                if widths[k] != (0, 0):
                    p = b.min(b.max(p, 0), n - 1)
            else:                                       # reflect (no edge repeat)
                if widths[k] != (0, 0):
                    p = b.select(b.lt(p, 0), -p, p)
                    p = b.select(b.ge(p, n), 2 * (n - 1) - p, p)
            src.append(p)
        v = x[tuple(src)] if x.size else b.const(0, dt)
        if inside is None:
            return v
        pv = b.cast(value[()], dt)
        return b.select(inside, v, pv)
    return b.compute(shape, f, dtype=dt, name="pad")


# ---------------------------------------------------------------- dense layers

def _product(b: Any, a: Any, c: Any, dtype: str) -> Any:
    return _widen(b, a, dtype) * _widen(b, c, dtype)


def _product_sum(b: Any, shape: tuple, dtype: str, fsrc: Any, k_extent: int,
                 name: str) -> Any:
    """sum over k of fsrc(idx, k) (in _acc(dtype)), as a tensor of `dtype`."""
    acc = _acc(dtype)
    k = b.reduce_axis(k_extent, "k")
    if dtype == "bool":
        raise NotImplementedError(f"{name} of bool tensors")
    t = b.compute(shape, lambda *i: b.reduce_sum(fsrc(i, k, acc), [k]), dtype=acc, name=name)
    return _finish(b, t, dtype, name + "_cast")


def _gemm_block(n: int) -> int:
    """The column block (register tile width) of a blocked GEMM with `n` output
    columns, 0 for none: the widest of `_BLOCKS` dividing `n`; else, from 16 columns
    up, the widest of 64/32/16 padding `n` by at most 1/8, else the one padding it
    least (the widest on a tie; the re-laid weight
    has zero columns there and the epilogue reads only the real ones: 1000 -> 1024)."""
    exact = next((k for k in _BLOCKS if n % k == 0), 0)
    if exact >= 16 or n < 16:
        return exact
    for k in (64, 32, 16):
        if -(-n // k) * k * 8 <= n * 9:     # at most 1/8 padding: the widest tile
            return k
    return -min((-(-n // k) * k, -k) for k in (64, 32, 16))[1]


def _blocked_gemm(b: Any, shape: tuple, dt: str, ob: int, kext: int, nbatch: int,
                  a_at: Any, w_at: Any, wbatch: int, name: str) -> Any:
    """out[*batch, *rows, j] = sum_k a[.., m, k] * w[.., k, j] as a blocked GEMM:
    T[(n,) jb, m, jj] = sum_k a_at(n, m, k) * Wb[(n,) jb, k, jj], the right-hand side
    re-laid out in blocks of `ob` columns (Wb[jb, k, :]: a K x ob panel, contiguous,
    reused from cache by every row; packed once at build time when it is a constant),
    the innermost loop a register tile of `ob` columns fed by one broadcast `a` value
    per row; the scheduler blocks rows (`_row_block`: 6 rows x 64 columns = 24 zmm
    accumulators) and runs the panels (or the batch) in parallel. `nbatch` leading
    dims of `shape` are a batch (batch_matmul: 1, else 0); the rows between them and
    the last dim are flattened (dense of a 3-D x). `a_at(n, m, k)` / `w_at(n, j, k)`
    give the operands' values (n: the batch index or None; m: the flat row); `wbatch`:
    the batch of the weight panels (1: shared by every batch). Columns past the last
    real one (`ob` not dividing N) are zero weights, never read back."""
    acc = _acc(dt)
    batch = shape[:nbatch]
    lead = shape[nbatch:-1]
    rows = math.prod(lead)
    ncols = shape[-1]
    nblk = -(-ncols // ob)
    padded = nblk * ob != ncols

    def fwb(*i: Any) -> Any:
        n = i[0] if nbatch else None
        jb, k, jj = i[nbatch:]
        j = jb * ob + jj
        if not padded:
            return w_at(n, j, k)
        v = w_at(n, b.min(j, ncols - 1), k)
        return b.select(b.lt(j, ncols), v, b.const(0, v.dtype))
    wshape = ((wbatch,) if nbatch else ()) + (nblk, kext, ob)
    wb = b.materialize(b.compute(wshape, fwb, name=f"{name}_weight_b"))
    k = b.reduce_axis(kext, "k")

    def fred(*i: Any) -> Any:
        n = i[0] if nbatch else None
        jb, m, jj = i[nbatch:]
        wn = () if not nbatch else ((0,) if wbatch == 1 else (n,))
        return b.reduce_sum(_product(b, a_at(n, m, k), wb[wn + (jb, k, jj)], acc), [k])
    mb = _row_chunk(rows, ob, nblk * math.prod(batch))
    if mb:
        # few panels: the rows in chunks of `mb` too (T[.., jb, mo, mi, jj], rows past
        # the last one read the last row and are never read back), so that the
        # parallel loop covers (panel, row chunk) and each iteration keeps the
        # scheduler's row-blocked register tiles
        mo_n = -(-rows // mb)
        clamp = mo_n * mb != rows

        def fred_split(*i: Any) -> Any:
            mo, mi = i[nbatch + 1], i[nbatch + 2]
            m = mo * mb + mi
            if clamp:
                m = b.min(m, rows - 1)
            return fred(*(i[:nbatch + 1] + (m, i[-1])))
        t = b.compute(batch + (nblk, mo_n, mb, ob), fred_split, dtype=acc, name=name)
    else:
        t = b.compute(batch + (nblk, rows, ob), fred, dtype=acc, name=name)

    def fout(*i: Any) -> Any:
        m: Any = 0
        for pos, d in enumerate(lead):
            m = i[nbatch + pos] if pos == 0 else m * d + i[nbatch + pos]
        j = i[-1]
        mi = (m / mb, m % mb) if mb else (m,)
        return b.cast(t[tuple(i[:nbatch]) + (j / ob,) + mi + (j % ob,)], dt)
    return b.compute(shape, fout, dtype=dt, name=f"{name}_out")


# Fewer (batch x) panels than this: the rows are split into chunks too (`_row_chunk`).
_FEW_PANELS = 4


def _row_chunk(rows: int, ob: int, panels: int) -> int:
    """Rows per chunk of a blocked GEMM with only `panels` (batch x column) panels, 0
    for no split: about 8 chunks, each a multiple of the scheduler's row block (6 rows
    of 64 columns, else 8), when there are at least two such blocks of rows. Without
    it the scheduler runs single rows in parallel (no register blocking of rows):
    512x512x64 dense took 0.37 ms on one core against OpenBLAS's 0.22."""
    block = 6 if ob >= 64 else 8
    if panels >= _FEW_PANELS or rows < 2 * block:
        return 0
    if panels >= 2 and rows < 256:
        # two panels already give each of two threads a panel of all the rows, whose
        # panel reads the chunks would repeat (MLP 64x784x128: 61 us -> 65 us split)
        return 0
    chunks = min(8, rows // block)
    per = -(-rows // chunks)
    return block * -(-per // block)


def _row_index(lead: tuple, m: Any) -> tuple:
    """The multi-index over `lead` of the flat row `m`."""
    idx = []
    rest = m
    for pos, d in enumerate(reversed(lead)):
        if pos == len(lead) - 1:
            idx.append(rest)
        else:
            idx.append(rest % d)
            rest = rest / d
    return tuple(reversed(idx))


# A reduction shorter than this is bound by the output's stores, not the FMAs: the
# blocked form's extra pass (the local result copied to the output) costs more than it
# saves (matmul 1000x1x1000: 0.19 ms direct, 0.5-0.6 blocked and padded).
_BLOCKED_MIN_K = 16


def _use_blocked(shape: tuple, nbatch: int, kext: int, dt: str, short: bool = False) -> int:
    """The column block of a blocked GEMM for this product (0: the other form): 4 or
    more rows, a column block, a reduction of at least `_BLOCKED_MIN_K` (shorter ones:
    only with `short`, dense's earlier rule, and a block dividing the columns)."""
    rows = math.prod(shape[nbatch:-1])
    if rows < 4 or kext <= 0 or dt == "bool" or 0 in shape:
        return 0
    if kext < _BLOCKED_MIN_K:
        return next((k for k in _BLOCKS if shape[-1] % k == 0), 0) if short else 0
    return _gemm_block(shape[-1])


@implement("nn.dense", target="llvm")
def dense(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, w = inputs
    shape, dt = _out(out_type)
    ob = _use_blocked(shape, 0, x.shape[-1], dt, short=True)
    if ob:
        lead = shape[:-1]
        return _blocked_gemm(b, shape, dt, ob, x.shape[-1], 0,
                             lambda n, m, k: x[_row_index(lead, m) + (k,)],
                             lambda n, j, k: w[j, k], 1, "dense")
    return _product_sum(
        b, shape, dt, lambda i, k, acc: _product(b, x[tuple(i[:-1]) + (k,)], w[i[-1], k], acc),
        x.shape[-1], "dense")


@implement("nn.matmul", target="llvm")
def matmul(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    a, c = inputs
    shape, dt = _out(out_type)
    ta, tb = bool(attrs.transpose_a), bool(attrs.transpose_b)
    kext = a.shape[-2] if ta else a.shape[-1]
    ob = _use_blocked(shape, 0, kext, dt) if a.ndim >= 2 and c.ndim == 2 else 0
    if ob:
        lead = shape[:-1]

        def a_at(n: Any, m: Any, k: Any) -> Any:
            i = _row_index(lead, m)
            return a[i[:-1] + (k, i[-1])] if ta else a[i + (k,)]
        return _blocked_gemm(b, shape, dt, ob, kext, 0, a_at,
                             lambda n, j, k: c[j, k] if tb else c[k, j], 1, "matmul")

    def src(i: tuple, k: Any, acc: str) -> Any:
        i = tuple(i)
        if a.ndim == 1:
            av = a[k]
        elif ta:
            av = a[i[:-2] + (k, i[-2])]
        else:
            av = a[i[:-1] + (k,)]
        cv = c[i[-1], k] if tb else c[k, i[-1]]
        return _product(b, av, cv, acc)
    return _product_sum(b, shape, dt, src, kext, "matmul")


@implement("nn.batch_matmul", target="llvm")
def batch_matmul(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, y = inputs
    shape, dt = _out(out_type)
    ta, tb = bool(attrs.transpose_a), bool(attrs.transpose_b)
    kext = x.shape[1] if ta else x.shape[2]
    ob = _use_blocked(shape, 1, kext, dt)
    if ob:
        def a_at(n: Any, m: Any, k: Any) -> Any:
            xn = 0 if x.shape[0] == 1 else n
            return x[xn, k, m] if ta else x[xn, m, k]

        def w_at(n: Any, j: Any, k: Any) -> Any:
            yn = 0 if y.shape[0] == 1 else n
            return y[yn, j, k] if tb else y[yn, k, j]
        return _blocked_gemm(b, shape, dt, ob, kext, 1, a_at, w_at,
                             1 if y.shape[0] == 1 else shape[0], "batch_matmul")

    def src(i: tuple, k: Any, acc: str) -> Any:
        n, r, col = i
        xn = 0 if x.shape[0] == 1 else n
        yn = 0 if y.shape[0] == 1 else n
        xv = x[xn, k, r] if ta else x[xn, r, k]
        yv = y[yn, col, k] if tb else y[yn, k, col]
        return _product(b, xv, yv, acc)
    return _product_sum(b, shape, dt, src, kext, "batch_matmul")


# ---------------------------------------------------------------- convolutions

# Depthwise convolutions (one input channel per group, multiplier 1) with unit strides
# and an output at least this wide use the direct form, the innermost loop a tile of
# output columns read contiguously from one channel's padded plane (each parallel
# iteration pads its own channel); others use blocks of channels (`_blocked_conv`).
# Measured (one 3x3 layer, 1 / 2 threads, ms): 128x56x56 blocked 0.29-0.32 / 0.31-0.46,
# direct 0.35 / 0.19; 32x112x112 0.29-0.35 / 0.34-0.77 against 0.26 / 0.26; but
# 256x28x28 blocked 0.16 / 0.09 against 0.35 / 0.18, 1024x7x7 0.05 / 0.03 against
# 0.22 / 0.12, and stride 2 blocked everywhere (64x112x112 /2: 0.29 / 0.28 against 0.39).
DEPTHWISE_DIRECT_MIN_WIDTH = 48


def _depthwise_direct(cin: int, opg: int, groups: int, strides: list, width: int) -> bool:
    return (cin == 1 and opg == 1 and groups > 1 and all(s == 1 for s in strides)
            and width >= DEPTHWISE_DIRECT_MIN_WIDTH)


def _block(ocount: int, opg: int, cin: int, groups: int) -> int:
    """The output channel block of the blocked convolution (0: not blocked). A block lies
    in one group; depthwise (one input channel per group and output) blocks channels."""
    if cin == 1 and opg == 1 and groups > 1:
        return next((k for k in (16, 8, 4) if ocount % k == 0), 0)
    return next((k for k in _BLOCKS + (4,) if opg % k == 0), 0)


# A reduction at most this long (input channels per group times the window) is too
# short to keep a block of output channels busy: the direct NCHW form is used instead,
# its innermost loop a tile of output columns (the window read contiguously).
_DIRECT_REDUCTION = 32
_DIRECT_MIN_WIDTH = 8


def _direct(cin: int, ksize: list, width: int, groups: int) -> bool:
    return (groups == 1 and cin * math.prod(ksize) <= _DIRECT_REDUCTION
            and width >= _DIRECT_MIN_WIDTH)


def _padded_channels(ocount: int) -> int:
    """The channels-last form's output channel count, rounded up to a multiple of 16
    above 16 (zero weights): whole vectors in the tile (MNIST's 50 -> 64)."""
    if ocount <= 16 or ocount % 16 == 0:
        return ocount
    return -(-ocount // 16) * 16


# Blocked 2-D convolutions whose output is at most this wide flatten the output pixels
# (`_blocked_conv`): the register tile's rows then run across image rows.
FLAT_PIXELS_MAX_WIDTH = 16
FLAT_PIXELS_MIN_BLOCKS = 4


def _blocked_conv(b: Any, nd: int, src: Any, weight: Any, shape: tuple, dt: str, acc: str,
                  ob: int, dpos: list, wpos: list, opos: list, strides: list, dil: list,
                  cin: int, opg: int, rc: Any, rk: list, data_at: Any) -> Any:
    """T[n, o // ob, *sp, o % ob] = sum in[n, c, *win] * Wb[o // ob, c, *k, o % ob]: the
    innermost loop is a block of `ob` output channels (a few vector registers), the weight
    re-laid out once as Wb (blocks of `ob` output channels innermost), so the weights one
    output position reads stay in cache. Depthwise: the (padded) input is re-laid out in
    blocks of `ob` channels too, and the window is read a vector of channels at a time."""
    ocount = weight.shape[wpos[0]]
    ksize = [weight.shape[wpos[2 + j]] for j in range(nd)]
    depthwise = cin == 1 and opg == 1 and ocount > 1 and ob > 1

    def fwb(blk: Any, c: Any, *r: Any) -> Any:
        widx: list[Any] = [0] * (nd + 2)
        widx[wpos[0]], widx[wpos[1]] = blk * ob + r[-1], c
        for j in range(nd):
            widx[wpos[2 + j]] = r[j]
        return weight[tuple(widx)]
    wb = b.materialize(b.compute((ocount // ob, cin) + tuple(ksize) + (ob,), fwb,
                                 name="conv_weight_b"))
    osp = tuple(shape[opos[2 + j]] for j in range(nd))
    nb = shape[opos[0]]
    if depthwise:
        psp = tuple(src.shape[dpos[2 + j]] for j in range(nd))

        def fpb(n: Any, blk: Any, *rest: Any) -> Any:
            didx: list[Any] = [0] * (nd + 2)
            didx[dpos[0]], didx[dpos[1]] = n, blk * ob + rest[-1]
            for j in range(nd):
                didx[dpos[2 + j]] = rest[j]
            return src[tuple(didx)]
        pb = b.materialize(b.compute((src.shape[dpos[0]], ocount // ob) + psp + (ob,), fpb,
                                     name="conv_input_b"))

        def fdw(n: Any, blk: Any, *rest: Any) -> Any:
            sp, oi = list(rest[:-1]), rest[-1]
            pidx = [sp[j] * strides[j] + rk[j] * dil[j] for j in range(nd)]
            return b.reduce_sum(_product(b, pb[(n, blk) + tuple(pidx) + (oi,)],
                                         wb[(blk, 0) + tuple(rk) + (oi,)], acc), rk)
        t = b.compute((nb, ocount // ob) + osp + (ob,), fdw, dtype=acc, name=f"conv{nd}d")
    elif (nd == 2 and 2 <= osp[1] <= FLAT_PIXELS_MAX_WIDTH and osp[0] > 1
          and nb * (ocount // ob) >= FLAT_PIXELS_MIN_BLOCKS):
        # narrow outputs (7x7, 14x14): the pixels flattened, so that the scheduler's row
        # blocks (up to 6 pixels sharing each weight vector) run across image rows
        # instead of splitting a 7-wide row into 4 + 3 (the parallel loop is then over
        # the batch and the channel blocks only: at least FLAT_PIXELS_MIN_BLOCKS)
        oh, ow = osp

        def ff(n: Any, blk: Any, hw: Any, oi: Any) -> Any:
            c = rc if opg == ocount else ((blk * ob) / opg) * cin + rc
            return b.reduce_sum(_product(b, data_at(n, c, [hw / ow, hw % ow]),
                                         wb[(blk, rc) + tuple(rk) + (oi,)], acc), [rc] + rk)
        t = b.compute((nb, ocount // ob, oh * ow, ob), ff, dtype=acc, name=f"conv{nd}d")

        def fflat(*i: Any) -> Any:
            o = i[opos[1]]
            return b.cast(t[(i[opos[0]], o / ob, i[opos[2]] * ow + i[opos[3]], o % ob)], dt)
        return b.compute(shape, fflat, dtype=dt, name=f"conv{nd}d_out")
    else:
        def fb(n: Any, blk: Any, *rest: Any) -> Any:
            sp, oi = list(rest[:-1]), rest[-1]
            c = rc if opg == ocount else ((blk * ob) / opg) * cin + rc
            return b.reduce_sum(_product(b, data_at(n, c, sp),
                                         wb[(blk, rc) + tuple(rk) + (oi,)], acc), [rc] + rk)
        t = b.compute((nb, ocount // ob) + osp + (ob,), fb, dtype=acc, name=f"conv{nd}d")

    def fout(*i: Any) -> Any:
        o = i[opos[1]]
        return b.cast(t[(i[opos[0]], o / ob) + tuple(i[opos[2 + j]] for j in range(nd))
                        + (o % ob,)], dt)
    return b.compute(shape, fout, dtype=dt, name=f"conv{nd}d_out")


def _conv(nd: int) -> Any:
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        from .conv_relations import conv_geometry
        g = conv_geometry(attrs, nd)
        data, weight = inputs
        shape, dt = _out(out_type)
        if dt == "bool":
            raise NotImplementedError("convolution of bool tensors")
        acc = _acc(dt)
        dpos, wpos, opos = g.data_pos, g.weight_pos, g.out_pos
        strides = [int(s) for s in g.strides]
        dil = [int(d) for d in g.dilation]
        pads = [(int(p), int(q)) for p, q in g.pads]
        if any(p < 0 or q < 0 for p, q in pads):
            raise NotImplementedError("negative convolution padding")
        groups = int(attrs.groups)
        cin = weight.shape[wpos[1]]                     # input channels per group
        ocount = weight.shape[wpos[0]]
        opg = ocount // groups
        ksize = [weight.shape[wpos[2 + j]] for j in range(nd)]
        sizes = [data.shape[dpos[2 + j]] for j in range(nd)]

        src = data
        if any(p or q for p, q in pads):
            pshape = list(data.shape)
            for j, (p, q) in enumerate(pads):
                pshape[dpos[2 + j]] += p + q

            def fpad(*i: Any) -> Any:
                idx = list(i)
                inside = None
                for j, (p, q) in enumerate(pads):
                    if not (p or q):
                        continue
                    ax, n = dpos[2 + j], sizes[j]
                    v = i[ax] - p
                    ok = b.logical_and(b.ge(v, 0), b.lt(v, n))
                    inside = ok if inside is None else b.logical_and(inside, ok)
                    idx[ax] = b.min(b.max(v, 0), max(n - 1, 0))
                if data.size == 0:
                    return b.const(0, data.dtype)
                return b.select(inside, data[tuple(idx)], b.const(0, data.dtype))
            src = b.compute(tuple(pshape), fpad, dtype=data.dtype, name="conv_pad")
            ob = _block(ocount, opg, cin, groups)
            if (_direct(cin, ksize, shape[opos[-1]] if nd else 0, groups)
                    or _depthwise_direct(cin, opg, groups, strides, shape[opos[-1]])):
                ob = 0
            if not (ob and cin == 1 and opg == 1 and groups > 1):
                src = b.materialize(src)    # depthwise re-lays it out (padding included)

        rc = b.reduce_axis(cin, "rc")
        rk = [b.reduce_axis(k, f"rk{j}") for j, k in enumerate(ksize)]

        def data_at(n: Any, c: Any, sp: list) -> Any:
            didx: list[Any] = [0] * (nd + 2)
            didx[dpos[0]], didx[dpos[1]] = n, c
            for j in range(nd):
                pos = sp[j] * strides[j] if strides[j] != 1 else sp[j]
                off = rk[j] * dil[j] if dil[j] != 1 else rk[j]
                didx[dpos[2 + j]] = pos + off
            return src[tuple(didx)]

        ob = _block(ocount, opg, cin, groups)
        direct = _direct(cin, ksize, shape[opos[-1]] if nd else 0, groups)
        if direct or _depthwise_direct(cin, opg, groups, strides, shape[opos[-1]]):
            ob = 0
        if ob:
            return _blocked_conv(b, nd, src, weight, shape, dt, acc, ob, dpos, wpos, opos,
                                 strides, dil, cin, opg, rc, rk, data_at)
        opad = ocount
        if groups == 1 and not direct:
            # channels last: T[n, *sp, o] += in[n, c, ...] * W[c, *k, o], the vectorised
            # loop over the output channels (a weight with O innermost is read as it is)
            if wpos[0] == nd + 1:
                def w_at(o: Any) -> Any:
                    widx: list[Any] = [0] * (nd + 2)
                    widx[wpos[0]], widx[wpos[1]] = o, rc
                    for j in range(nd):
                        widx[wpos[2 + j]] = rk[j]
                    return weight[tuple(widx)]
            else:
                opad = _padded_channels(ocount)

                def fwt(c: Any, *r: Any) -> Any:
                    widx: list[Any] = [0] * (nd + 2)
                    o = r[-1] if opad == ocount else b.min(r[-1], ocount - 1)
                    widx[wpos[0]], widx[wpos[1]] = o, c
                    for j in range(nd):
                        widx[wpos[2 + j]] = r[j]
                    if opad == ocount:
                        return weight[tuple(widx)]
                    return b.select(b.lt(r[-1], ocount), weight[tuple(widx)],
                                    b.const(0, weight.dtype))
                wt = b.materialize(b.compute((cin,) + tuple(ksize) + (opad,), fwt,
                                             name="conv_weight_t"))

                def w_at(o: Any) -> Any:
                    return wt[(rc,) + tuple(rk) + (o,)]
            osp = tuple(shape[opos[2 + j]] for j in range(nd))
            tshape = (shape[opos[0]],) + osp + (opad,)

            def ft(n: Any, *rest: Any) -> Any:
                sp, o = list(rest[:-1]), rest[-1]
                return b.reduce_sum(_product(b, data_at(n, rc, sp), w_at(o), acc), [rc] + rk)
            t = b.compute(tshape, ft, dtype=acc, name=f"conv{nd}d")
            if (list(opos) == [0, nd + 1] + list(range(1, nd + 1)) and acc == dt
                    and opad == ocount):
                return t                                # the output layout is NHWC-like

            def fout(*i: Any) -> Any:
                return b.cast(t[(i[opos[0]],) + tuple(i[opos[2 + j]] for j in range(nd))
                                + (i[opos[1]],)], dt)
            return b.compute(shape, fout, dtype=dt, name=f"conv{nd}d_out")

        def f(*i: Any) -> Any:
            n, o = i[opos[0]], i[opos[1]]
            sp = [i[opos[2 + j]] for j in range(nd)]
            # depthwise: the input channel is o / opg (o itself with multiplier 1: the
            # padded input is then read with the output's own axis, so the scheduler
            # pads one channel per parallel iteration)
            c = o if cin == 1 and opg == 1 else (o / opg if cin == 1 else (o / opg) * cin + rc)
            widx: list[Any] = [0] * (nd + 2)
            widx[wpos[0]], widx[wpos[1]] = o, rc
            for j in range(nd):
                widx[wpos[2 + j]] = rk[j]
            return b.reduce_sum(_product(b, data_at(n, c, sp), weight[tuple(widx)], acc),
                                [rc] + rk)
        t = b.compute(shape, f, dtype=acc, name=f"conv{nd}d")
        return _finish(b, t, dt, f"conv{nd}d_cast")
    lower.__name__ = f"conv{nd}d"
    return lower


for _nd in (1, 2, 3):
    implement(f"nn.conv{_nd}d", target="llvm")(_conv(_nd))


# ---------------------------------------------------------------- resampling

@implement("nn.upsampling", target="llvm")
def upsampling(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from ..image.llvm_lowering import resize_lowering
    from ..layouts import axis_positions
    from ..resize_numpy import Resampling
    (x,) = inputs
    shape, dt = _out(out_type)
    h, w = axis_positions(attrs.layout, "HW", "layout")
    mode = "align_corners" if attrs.align_corners else "asymmetric"
    return resize_lowering(b, x, attrs.layout, (shape[h], shape[w]),
                           Resampling(attrs.method.removeprefix("bi"), mode), dt)


def _conv_transpose(nd: int) -> Any:
    """out[n, o, *y] = sum over the group's channels c and window r of
    x[n, c, (y + pad - r * d) / s] * w[c, o % (O / groups), *r], the terms where that
    position is a whole in-range input index (the NumPy kernel's dilate-pad-flip
    formulation, read backwards). A direct reduction (correct, not fast)."""
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        from .conv_relations import conv_geometry
        g = conv_geometry(attrs, nd, transposed=True)
        data, weight = inputs
        shape, dt = _out(out_type)
        if dt == "bool":
            raise NotImplementedError("transposed convolution of bool tensors")
        acc = _acc(dt)
        dpos, wpos, opos = g.data_pos, g.weight_pos, g.out_pos
        strides = [int(s) for s in g.strides]
        dil = [int(d) for d in g.dilation]
        pads = [int(p) for p, _ in g.pads]
        groups = int(attrs.groups)
        channels = data.shape[dpos[1]]
        cpg = channels // groups                     # data channels per group
        opg = weight.shape[wpos[0]]                  # outputs per group (layout letter O)
        ksize = [weight.shape[wpos[2 + j]] for j in range(nd)]
        sizes = [data.shape[dpos[2 + j]] for j in range(nd)]
        if data.size == 0 or cpg == 0:
            raise NotImplementedError("transposed convolution of an empty tensor")
        rc = b.reduce_axis(cpg, "rc")
        rk = [b.reduce_axis(k, f"rk{j}") for j, k in enumerate(ksize)]

        def f(*i: Any) -> Any:
            n, o = i[opos[0]], i[opos[1]]
            c = rc if groups == 1 else (o / opg) * cpg + rc
            oi = o if groups == 1 else o % opg
            didx: list[Any] = [0] * (nd + 2)
            didx[dpos[0]], didx[dpos[1]] = n, c
            widx: list[Any] = [0] * (nd + 2)
            widx[wpos[0]], widx[wpos[1]] = oi, c
            valid = None
            for j in range(nd):
                t = i[opos[2 + j]] + pads[j] - (rk[j] * dil[j] if dil[j] != 1 else rk[j])
                ok = b.ge(t, 0)
                q = t
                if strides[j] != 1:
                    ok = b.logical_and(ok, b.eq(t % strides[j], 0))
                    q = t / strides[j]
                ok = b.logical_and(ok, b.lt(q, sizes[j]))
                valid = ok if valid is None else b.logical_and(valid, ok)
                didx[dpos[2 + j]] = b.min(b.max(q, 0), sizes[j] - 1)
                widx[wpos[2 + j]] = rk[j]
            term = _product(b, data[tuple(didx)], weight[tuple(widx)], acc)
            return b.reduce_sum(b.select(valid, term, b.const(0, acc)), [rc] + rk)
        t = b.compute(shape, f, dtype=acc, name=f"conv{nd}d_transpose")
        return _finish(b, t, dt, f"conv{nd}d_transpose_cast")
    lower.__name__ = f"conv{nd}d_transpose"
    return lower


for _nd in (1, 2, 3):
    implement(f"nn.conv{_nd}d_transpose", target="llvm")(_conv_transpose(_nd))


@implement("nn.depth_to_space", target="llvm")
def depth_to_space(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """DCR: input channel (by * bs + bx) * C' + c; CRD: c * bs^2 + by * bs + bx."""
    (x,) = inputs
    shape, _ = _out(out_type)
    bs = int(attrs.block_size)
    nhwc = attrs.layout == "NHWC"
    cout = shape[3] if nhwc else shape[1]

    def f(*i: Any) -> Any:
        n, c, y, xx = (i[0], i[3], i[1], i[2]) if nhwc else i
        by, bx = y % bs, xx % bs
        if attrs.mode == "DCR":
            ch = (by * bs + bx) * cout + c
        else:
            ch = c * (bs * bs) + by * bs + bx
        return x[(n, y / bs, xx / bs, ch) if nhwc else (n, ch, y / bs, xx / bs)]
    return b.compute(shape, f, name="depth_to_space")


@implement("nn.space_to_depth", target="llvm")
def space_to_depth(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """Output channel (by * bs + bx) * C + c."""
    (x,) = inputs
    shape, _ = _out(out_type)
    bs = int(attrs.block_size)
    nhwc = attrs.layout == "NHWC"
    cin = x.shape[3] if nhwc else x.shape[1]

    def f(*i: Any) -> Any:
        n, ch, y, xx = (i[0], i[3], i[1], i[2]) if nhwc else i
        blk, c = ch / cin, ch % cin
        by, bx = blk / bs, blk % bs
        sy, sx = y * bs + by, xx * bs + bx
        return x[(n, sy, sx, c) if nhwc else (n, c, sy, sx)]
    return b.compute(shape, f, name="space_to_depth")


@implement("nn.l2_normalize", target="llvm")
def l2_normalize(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """x / sqrt(max(sum(x * x over axis), eps)); no axis: over every axis."""
    (x,) = inputs
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("l2_normalize of a non-float tensor")
    acc = _acc(dt)
    axes = sorted({_axis(a, x.ndim) for a in attrs.axis} if attrs.axis
                  else set(range(x.ndim)))
    keep = [k for k in range(x.ndim) if k not in axes]
    red = [b.reduce_axis(x.shape[a], "k") for a in axes]

    def full(kept: tuple, reds: list) -> tuple:
        idx: list[Any] = [0] * x.ndim
        for k, v in zip(keep, kept):
            idx[k] = v
        for a, v in zip(axes, reds):
            idx[a] = v
        return tuple(idx)

    def fsum(*i: Any) -> Any:
        v = _widen(b, x[full(i, red)], acc)
        return b.reduce_sum(v * v, red)
    ss = b.compute(tuple(x.shape[k] for k in keep), fsum, dtype=acc, name="l2_sum")

    def f(*i: Any) -> Any:
        norm = b.call("sqrt", b.max(ss[tuple(i[k] for k in keep)],
                                    b.const(float(attrs.eps), acc)))
        return b.cast(_widen(b, x[i], acc) / norm, dt)
    return b.compute(x.shape, f, dtype=dt, name="l2_normalize")


def _group_normalize(b: Any, x: Any, gamma: Any, beta: Any, attrs: Any, axis: int,
                     red_axes: list[int], group: int = 0) -> Any:
    """(x - mean) / sqrt(var + eps) over `red_axes` (with `group` > 0: the channels of
    `axis` in blocks of `group` are reduced too), then gamma / beta along `axis`."""
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("normalisation of a non-float tensor")
    acc = _acc(dt)
    keep = [k for k in range(x.ndim) if k not in red_axes]
    count = math.prod(x.shape[a] for a in red_axes) * (group or 1)
    kshape = tuple(x.shape[k] // group if (group and k == axis) else x.shape[k] for k in keep)

    def full(kept: tuple, reds: list, gi: Any) -> tuple:
        idx: list[Any] = [0] * x.ndim
        for k, v in zip(keep, kept):
            idx[k] = v * group + gi if (group and k == axis) else v
        for a, v in zip(red_axes, reds):
            idx[a] = v
        return tuple(idx)

    def kept_of(i: tuple) -> tuple:
        return tuple(i[k] / group if (group and k == axis) else i[k] for k in keep)

    def axes() -> tuple[list, Any]:
        red = [b.reduce_axis(x.shape[a], "k") for a in red_axes]
        gi = b.reduce_axis(group, "g") if group else 0
        return red, gi

    r1, g1 = axes()
    total = b.compute(kshape, lambda *i: b.reduce_sum(
        _widen(b, x[full(i, r1, g1)], acc), r1 + ([g1] if group else [])),
        dtype=acc, name="norm_sum")
    mean = b.materialize(b.compute(kshape, lambda *i: total[i] / b.const(float(count), acc),
                                   dtype=acc, name="norm_mean"))
    r2, g2 = axes()

    def fss(*i: Any) -> Any:
        d = _widen(b, x[full(i, r2, g2)], acc) - mean[i]
        return b.reduce_sum(d * d, r2 + ([g2] if group else []))
    ss = b.compute(kshape, fss, dtype=acc, name="norm_ss")

    def f(*i: Any) -> Any:
        r = kept_of(i)
        var = ss[r] / b.const(float(count), acc)
        out = (_widen(b, x[i], acc) - mean[r]) / b.call(
            "sqrt", var + b.const(float(attrs.epsilon), acc))
        if attrs.scale:
            out = out * _widen(b, gamma[i[axis]], acc)
        if attrs.center:
            out = out + _widen(b, beta[i[axis]], acc)
        return b.cast(out, dt)
    return b.compute(x.shape, f, dtype=dt, name="normalize")


@implement("nn.instance_norm", target="llvm")
def instance_norm(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, gamma, beta = inputs
    axis = _axis(attrs.axis, x.ndim)
    return _group_normalize(b, x, gamma, beta, attrs, axis,
                            [k for k in range(1, x.ndim) if k != axis])


@implement("nn.group_norm", target="llvm")
def group_norm(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, gamma, beta = inputs
    axis = _axis(attrs.axis, x.ndim)
    group = x.shape[axis] // int(attrs.num_groups)
    return _group_normalize(b, x, gamma, beta, attrs, axis, list(range(axis + 1, x.ndim)),
                            group=group)


# ---------------------------------------------------------------- lrn, fast_softmax

@implement("nn.lrn", target="llvm")
def lrn(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """numpy_kernels.lrn: x / (bias + alpha * sum(x^2 over the window) / size) ^ beta,
    the window of `size` entries along `axis` starting size // 2 before each position,
    zero outside (float16 in float32, rounded once)."""
    (x,) = inputs
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("lrn of a non-float tensor")
    acc = _acc(dt)
    ax = _axis(attrs.axis, x.ndim)
    n = x.shape[ax]
    size = int(attrs.size)
    before = size // 2

    def window_sq(i: tuple, k: Any) -> Any:
        j = i[ax] + k - before
        valid = b.logical_and(b.ge(j, 0), b.lt(j, n))
        # both sides of a select are evaluated: keep the load in bounds
        jc = b.min(b.max(j, b.const(0, "int64")), b.const(max(n - 1, 0), "int64"))
        v = _widen(b, x[tuple(i[:ax]) + (jc,) + tuple(i[ax + 1:])], acc)
        return b.select(valid, v * v, b.const(0, acc))

    k = b.reduce_axis(size, "k")
    sq = b.compute(x.shape, lambda *i: b.reduce_sum(window_sq(i, k), [k]), dtype=acc,
                   name="lrn_sqr_sum")

    def f(*i: Any) -> Any:
        scaled = b.const(float(attrs.alpha), acc) * sq[i] / b.const(float(size), acc)
        base = b.const(float(attrs.bias), acc) + scaled
        return b.cast(_widen(b, x[i], acc) / b.call("pow", base,
                                                    b.const(float(attrs.beta), acc)), dt)
    return b.compute(x.shape, f, dtype=dt, name="lrn")


def _fast_exp_f32(b: Any, x: Any) -> Any:
    """fast_math_kernels.fast_exp (TVM's fast_exp_float32) step by step in float32:
    2^n * exp(f), n = floor(x * log2(e) + 1/2), f = x - n * ln2, exp(f) by TVM's
    polynomial. TVM builds 2^n from the exponent bits ((n + 127) << 23); the loop IR
    has no bit cast, so 2^n is pow(2, n), exact for the n in [-126, 127] the clamp
    allows, and the two ends are written out: n = -127 gives 0 (exponent field 0, the
    flush), n = 128 gives inf (exponent field 255).

    Float ops carry `contract`, so a product feeding an add would become an FMA (one
    rounding, not NumPy's two; for f = x - n * ln2 that is the kernel's main error, up
    to 4e-6 near -87). Each product therefore passes through a select on isnan(x) that
    the compiler cannot fold (a NaN x gives NaN anyway), which keeps it rounded on its
    own, as in NumPy."""
    import numpy as np

    from ..fast_math_kernels import _EXP_P

    def c(v: float) -> Any:
        # the float32 value itself (a float32 constant keeps its Python value until codegen)
        return b.const(float(np.float32(v)), "float32")
    nan = b.call("isnan", x)

    def mul(a: Any, e: Any) -> Any:
        return b.select(nan, x, a * e)
    clamped = b.max(b.min(x, c(88.3762626647950)), c(-88.3762626647949))
    n = b.call("floor", mul(clamped, c(1.44269504088896341)) + c(0.5))
    f = clamped - mul(n, c(0.6931471805599453))
    p = c(_EXP_P[0])
    for coeff in _EXP_P[1:]:
        p = mul(p, f) + c(coeff)
    y = mul(mul(p, f), f) + f + c(1.0)
    two_n = b.select(b.le(n, c(-127.0)), c(0.0),
                     b.select(b.ge(n, c(128.0)), c(math.inf), b.call("pow", c(2.0), n)))
    out = b.max(two_n * y, x)
    return b.select(nan, x, out)


@implement("nn.fast_softmax", target="llvm")
def fast_softmax(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """numpy_kernels.fast_softmax: softmax with TVM's fast_exp for float32 (exactly the
    kernel's steps, see `_fast_exp_f32`); other float dtypes use exp, as the kernel does
    (float16 computed in float32 and rounded once: the kernel computes float16 in float16,
    within float16's tolerance)."""
    (x,) = inputs
    dt = x.dtype
    if not _is_float(dt):
        raise NotImplementedError("fast_softmax of a non-float tensor")
    acc = _acc(dt)
    ax = _axis(attrs.axis, x.ndim)
    n = x.shape[ax]
    rshape = x.shape[:ax] + x.shape[ax + 1:]

    def fexp(e: Any) -> Any:
        return _fast_exp_f32(b, e) if dt == "float32" else b.call("exp", e)

    def at(i: tuple, k: Any) -> tuple:
        return tuple(i[:ax]) + (k,) + tuple(i[ax:])

    def xv(idx: tuple) -> Any:
        return _widen(b, x[idx], acc)

    k1 = b.reduce_axis(n, "k")
    m = b.compute(rshape, lambda *i: b.reduce_max(xv(at(i, k1)), [k1]), dtype=acc,
                  name="fast_softmax_max")
    k2 = b.reduce_axis(n, "k")
    s = b.compute(rshape, lambda *i: b.reduce_sum(fexp(xv(at(i, k2)) - m[i]), [k2]),
                  dtype=acc, name="fast_softmax_sum")

    def f(*i: Any) -> Any:
        r = tuple(i[:ax]) + tuple(i[ax + 1:])
        return b.cast(fexp(xv(i) - m[r]) / s[r], dt)
    return b.compute(x.shape, f, dtype=dt, name="fast_softmax")
