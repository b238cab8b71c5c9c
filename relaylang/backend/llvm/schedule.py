"""Tensors -> loop nests.

Injective computes were already inlined by `te` (indexing a compute substitutes its
body). What is left are *stages* (reductions and materialised computes, in creation
order, which is dependency order) and the outputs. Each gets one loop nest:

- a plain stage / output: `for i0 .. for in: buf[i] = body`;
- a reduction whose last spatial axis is the contiguous dimension of the loads that move
  with the reduction (a sum over rows, a matmul's `b[k, j]`): tiles of `tile_bytes` of
  output columns, `for i..: for jo: acc[T] = init; for k..: for ji: acc[ji] += src;
  buf[i, jo*T + ji] = acc[ji]` (the tile stays in vector registers across the k loop;
  the last partial tile is the last jo iteration). When the source also reads a value
  that moves with the row axis before the columns but not with them (an input pixel,
  a row of `a`) and a vector that moves with the columns but not the row (a weight),
  R rows share one k loop: R tiles, each weight vector loaded once for all of them
  (`_row_block`: up to `accumulator_vectors` registers; this took a 3x3 convolution
  from 75 to 159 GFLOPS on one core). Those two axes then stay inside the parallel
  loop; a lone 2-D reduction runs its blocks of rows in parallel;
- otherwise (e.g. a sum over the last axis, a dense `w[j, k]`, argmax): a scalar
  accumulator, `for i..: acc = init; for k..: acc = combine(acc, src); buf[i] = acc`
  (the k loop vectorises: the combine may reassociate).

Fused epilogues (`_fuse_epilogues`): an output that is an element-wise function of one
local reduction stage (a convolution's or dense's bias, ReLU, residual add; or just the
stage in the output's layout: flattened pixels, blocked columns) is written by the
reduction itself as it stores each tile, from the accumulators: no local stage and no
second pass over it. Under K blocking the partial sums stay in a local row and a pass
after the last chunk writes the output through the epilogue. On one core: a 1x1
convolution 64->256 on 56x56 with a residual add went from 0.81 to 0.61 ms (0.51 with
no epilogue), with a bias from 0.68 to 0.51; MobileNet 6% faster, GPT-2's stack 2-6%.

Parallelism: every nest of the kernel goes inside ONE parallel loop over the leading
spatial dims they share (flattened, dims of extent 1 dropped), when iteration `p` of
each nest reads only row `p` of what earlier nests produced (every load of a produced
buffer indexes those dims with the nest's own axes). Local stages then hold one row
(`Allocate`s inside the parallel loop: stack allocas of the calling thread). The number
of dims is the fewest giving `par_min` iterations, keeping a contiguous innermost
loop where a nest has one (so a batch-1 softmax over (1, 12, 64, 64) runs 768 rows in
parallel).

Kernels with a prologue (`_with_prologue`): when the nests share no such dims, the
first stages (locals only: a padded input, a re-laid weight) may be computed whole by
every call (each `run_range` call, so each thread, into its own locals) before the
parallel loop over the remaining nests, if they cost at most 1/`prologue_share` of the
kernel's work (iterations, times the reduction's). An output that only re-lays out one
local stage (`out[n, o, h, w] = f(t[n, o / B, h, w, o % B])`, a blocked convolution's
or dense's epilogue) is then looped in `t`'s order, storing to `out[n, blk*B + oi, h,
w]`, so that it shares `t`'s leading dims (`_relaid`). When `t` is padded in a blocked
dim (a GEMM's panels of 64 columns over N = 1000, or its chunks of rows), the store is
guarded (`blk*B + oi < N`) and the padding never read back.

K blocking (`k_chunk_bytes`, off by default: it measured slower without packed
activations): a row-blocked sum over one axis can run its reduction in chunks, all the
row blocks per chunk, the partial sums kept in the result buffer between chunks.

Otherwise a kernel runs serially, except a lone column reduction with one row (a
column sum, a batch-1 matmul), whose tiles run in parallel, or with rows (a 2-D
matmul), whose blocks of rows run in parallel.
The innermost loop is `vectorized` (`unrolled` when its extent is at most `unroll_max`).

The numbers named in `backticks` above are scheduling knobs (`knobs.py`, "schedule.*"):
asked per kernel, their defaults from the host model and their choices in
`knobs.schedule_defaults`, so that a tuning database (`relay tune`) can set them.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Sequence

from . import knobs
from . import loop_ir as L
from .loop_ir import Buffer, Expr, Stmt, Var
from .te import LowerContext, Tensor

def _knob(name: str) -> int:
    return knobs.ask_schedule(f"schedule.{name}")


def _loops(axes: Sequence[Var], body: Stmt, inner_kind: str | None = None) -> Stmt:
    """for a0: for a1: ... body; the innermost marked vectorized/unrolled."""
    stmt = body
    for pos, a in enumerate(reversed(axes)):
        extent = int(a.extent or 0)
        kind = "serial"
        if pos == 0:
            kind = inner_kind or ("unrolled" if extent <= _knob("unroll_max")
                                  else "vectorized")
        stmt = L.For(a, extent, stmt, kind)
    return stmt


def _fresh_axes(shape: Sequence[int], prefix: str) -> tuple[Var, ...]:
    return tuple(Var(f"{prefix}{k}", extent=d) for k, d in enumerate(shape))


def _init_value(op: str, dtype: str) -> Expr:
    if op == "sum":
        return L.const(0, dtype)
    if op == "prod":
        return L.const(1, dtype)
    if op in ("max", "argmax"):
        return LowerContext.min_value(dtype)
    return LowerContext.max_value(dtype)


def _isnan(e: Expr) -> Expr:
    return L.Call("isnan", (e,), "bool")


def _combine(op: str, acc: Expr, v: Expr) -> Expr:
    if op == "sum":
        return L.Binary("add", acc, v, acc.dtype, True)
    if op == "prod":
        return L.Binary("mul", acc, v, acc.dtype, True)
    if op == "max":
        if acc.dtype == "bool":
            return L.Binary("or", acc, v, "bool", True)
        return L.Binary("max", acc, v, acc.dtype, True)
    if op == "min":
        if acc.dtype == "bool":
            return L.Binary("and", acc, v, "bool", True)
        return L.Binary("min", acc, v, acc.dtype, True)
    raise ValueError(op)


def _last_index_vars(e: Expr) -> set[int]:
    """ids of the Vars that appear in the last index of some Load of `e`."""
    out: set[int] = set()
    for n in L.walk(e):
        if isinstance(n, L.Load) and n.indices:
            for m in L.walk(n.indices[-1]):
                if isinstance(m, Var):
                    out.add(id(m))
    return out


def _acc_dtype(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


# knob tile_bytes: the accumulator tile (default 4 vectors: 64 float32 output columns on
# AVX-512). knob par_min: a parallel range this long is enough; shorter ones fuse more
# dims (default 64).


def _tile_width(dtype: str) -> int:
    return max(4, _knob("tile_bytes") // max(1, L.bits(dtype) // 8))


_NAMES = threading.local()     # a counter per schedule() call: names (and so the module
                               # text the kernel cache hashes) depend only on the kernel


def _tmp(prefix: str) -> str:
    n = getattr(_NAMES, "n", 0)
    _NAMES.n = n + 1
    return f"{prefix}{n}"


def _source_value(r: L.Reduce) -> tuple[Expr, str]:
    src = r.source
    acc_dt = _acc_dtype(src.dtype)
    v = src if src.dtype == acc_dt else L.Cast(src, acc_dt)
    return v, acc_dt


def _is_inner_spatial(axes: Sequence[Var], r: L.Reduce) -> bool:
    """A reduction whose last spatial axis indexes the innermost dimension of a load
    (a sum over rows, a matmul's `b[k, j]`): its tile of output columns is the contiguous
    innermost loop, the reduction loops outside it."""
    if r.op in ("argmax", "argmin") or not axes:
        return False
    rsize = math.prod(int(a.extent or 0) for a in r.axes)
    if int(axes[-1].extent or 0) <= 1 or rsize <= 0:
        return False
    j = id(axes[-1])
    red = {id(a) for a in r.axes}
    contiguous = False
    for n in L.walk(r.source):
        if not (isinstance(n, L.Load) and n.indices):
            continue
        last = {id(m) for m in L.walk(n.indices[-1]) if isinstance(m, Var)}
        every = {id(m) for i in n.indices for m in L.walk(i) if isinstance(m, Var)}
        if j in every and every & red:
            # a load moving with both the column and the reduction: the column must
            # be in its contiguous dimension (alone, or a window: x[.., j + kw])
            if j not in last:
                return False
            contiguous = True
    return contiguous


def _row_block(axes: Sequence[Var], r: L.Reduce) -> int:
    """How many rows (values of the second-to-last spatial axis `i`) one register tile
    of a column reduction covers (1: no row blocking). Blocking pays when the source
    reads a value that moves with `i` but not with the column `j` (broadcast to the
    tile: an input pixel, a row of `a`) and a vector that moves with `j` but not `i`
    (reused by every row: a weight, a column of `b`): R rows then share each weight
    vector load, and their R tiles are independent accumulator chains that keep both
    FMA units busy (one tile of 4 vectors is bound by the FMA latency)."""
    if len(axes) < 2 or r.op in ("argmax", "argmin"):
        return 1
    i, j = axes[-2], axes[-1]
    extent = int(i.extent or 0)
    if extent <= 1:
        return 1
    red = {id(a) for a in r.axes}
    broadcast = reused = both = False
    for n in L.walk(r.source):
        if not (isinstance(n, L.Load) and n.indices):
            continue
        every = {id(m) for x in n.indices for m in L.walk(x) if isinstance(m, Var)}
        if not every & red:
            continue
        if id(i) in every and id(j) not in every:
            broadcast = True
        elif id(j) in every and id(i) not in every:
            reused = True
        elif id(i) in every and id(j) in every:
            both = True
    if not (reused and (broadcast or (both and ROW_BLOCK_ELEMENTWISE))):
        return 1
    acc_dt = _acc_dtype(r.source.dtype)
    width = min(_tile_width(acc_dt), int(j.extent or 0))
    vectors = max(1, -(-width * max(1, L.bits(acc_dt) // 8) // knobs.host().vector_bytes))
    most = max(1, min(_knob("row_block_max"), _knob("accumulator_vectors") // vectors))
    blocks = -(-extent // most)
    return -(-extent // blocks)


# knob accumulator_vectors: vector registers a row-blocked tile may hold (default 24 of
# 32 zmm); knob row_block_max: rows per tile (default 8).

# Row blocking also when the rows' values are vectors moving with both `i` and `j` (no
# broadcast) times a vector moving with `j` only (a depthwise convolution in blocks of
# channels, `x[.., w + kw, c] * W[kw, c]`): the rows share each weight vector, and their
# tiles are independent accumulator chains (a 16-channel tile alone is one chain bound
# by the FMA latency). Not without such a weight (pooling, the direct depthwise form
# whose weight is a scalar: 6 rows of 4-vector tiles took 32x112x112 from 0.28 to 0.44
# ms). Measured (blocked depthwise 3x3 + bias + clip, 1 thread, ms, without / with):
# 64x112x112 /2 0.259 / 0.240, 128x56x56 /2 0.148 / 0.129, 256x28x28 0.155 / 0.131,
# 128x56x56 0.273 / 0.229.
ROW_BLOCK_ELEMENTWISE = True


# K blocking of row-blocked column reductions (knob k_chunk_bytes; 0: off, the default). Measured
# on dense with a packed weight, one core: 1024^3 with chunks of 12 / 24 / 64 KiB of
# weight panel 15.5 / 13.4 / 11.1 ms against 11.0 ms without; 2048^3 with 128 / 256 KiB
# 84.5 / 81.8 ms against 81.7: the rows of A (not packed) are then read in short
# strided pieces from L3 for every chunk, which costs more than keeping the panel's
# chunk in L1 saves.
K_CHUNK_MIN_BLOCKS = 4      # row blocks sharing a chunk for K blocking to pay


def _k_chunk(r: L.Reduce, buf: Buffer, acc_dt: str, width: int, nrows: int, rows: int,
             parallel_rows: bool) -> int:
    """The length of a K chunk for a row-blocked column reduction (0: no K blocking):
    when the panel a tile reads over the whole reduction (K x `width` accumulator
    elements) exceeds the knob `k_chunk_bytes` and at least `K_CHUNK_MIN_BLOCKS` row blocks
    reuse it, the reduction runs in chunks of `k_chunk_bytes` of panel, all the row
    blocks per chunk. Only a sum whose result buffer holds the accumulator dtype (the
    partial sums are stored there between chunks), and not when the row blocks are the
    parallel loop. A reduction over several axes is chunked along its first (a
    convolution's input channel blocks: each chunk runs the other axes whole)."""
    chunk_bytes = _knob("k_chunk_bytes")
    if (chunk_bytes <= 0 or parallel_rows or r.op != "sum" or not r.axes
            or buf.dtype != acc_dt or nrows < rows * K_CHUNK_MIN_BLOCKS):
        return 0
    kext = int(r.axes[0].extent or 0)
    elem = max(1, L.bits(acc_dt) // 8)
    inner = math.prod(int(a.extent or 0) for a in r.axes[1:])
    kc = max(16 if len(r.axes) == 1 else 1, chunk_bytes // (width * elem * max(1, inner)))
    if kext < 2 * kc:
        return 0
    nchunks = -(-kext // kc)
    return -(-kext // nchunks)      # near-equal chunks


# Software prefetch under K blocking (knob schedule.prefetch_chunks: 0 off, the
# scheduler's default; a lowering may ask it first with a default of its own, as
# conv_nchwc_lowering does): each step of a chunk's reduction in a full row block also
# prefetches (into L2, PREFETCH_LOCALITY) one cache line of the reused operand (the
# weight) that many chunks ahead, the row blocks taking turns over its lines, so that
# the next chunk's panel streams from memory while this one is computed from L1
# instead of stalling the first row block of every chunk. Measured on ResNet-50's
# late layers (one thread, weights cold as in the model): 8-15% faster, see
# conv_nchwc_lowering; every line of the tile in every row block measured the same as
# the turns, 2 chunks ahead the same as 1, into L1 (locality 3) or L3 (1) the same or
# slower, non-temporal (0) 3x slower.
PREFETCH_LOCALITY = 2
PREFETCH_CHUNK_CHOICES = (0, 1, 2)


def _prefetches(v: Expr, row: Var, j: Var, r: L.Reduce, sub: dict[int, Expr],
                col: Expr) -> list[Stmt]:
    """Prefetches of the loads of `v` that move with the column `j` and the reduction
    but not with the row axis `row` (the operand every row of a block reuses), at their
    indices under `sub` with `j` at column `col` (one statement per buffer)."""
    red = {id(a) for a in r.axes}
    out: list[Stmt] = []
    seen: set[int] = set()
    for n in L.walk(v):
        if not (isinstance(n, L.Load) and n.indices) or id(n.buffer) in seen:
            continue
        every = {id(m) for x in n.indices for m in L.walk(x) if isinstance(m, Var)}
        if id(j) not in every or id(row) in every or not every & red:
            continue
        seen.add(id(n.buffer))
        idx = tuple(L.substitute(x, {**sub, id(j): col}) for x in n.indices)
        out.append(L.Prefetch(n.buffer, idx, PREFETCH_LOCALITY))
    return out


def _tiled_reduce(axes: Sequence[Var], prefix: tuple[Expr, ...], r: L.Reduce,
                  buf: Buffer, parallel: bool = False, parallel_rows: bool = False,
                  epilogue: Epilogue | None = None) -> Stmt:
    """for outer..: for jo: acc[T] = init; for k..: for ji: acc[ji] op= src[j = jo*T+ji];
    buf[.., jo*T+ji] = acc[ji]. The tile is a local of T elements (registers after
    LLVM's SROA), the k loops run outside it; the last partial tile is the last jo
    iteration. With `parallel`, the jo loop is the parallel one (outer axes of extent 1
    become 0). When `_row_block` gives R > 1, each tile covers R rows of the axis before
    the columns (R accumulators updated in one k loop; a last block of fewer rows); with
    `parallel_rows` (leading axes of extent 1 only) the loop over row blocks is the
    parallel one. An `epilogue` is applied as the tiles are stored; under K blocking the
    partial sums then stay in a local row (`partial`), written through the epilogue by
    a pass after the last chunk."""
    v, acc_dt = _source_value(r)
    outer, j = tuple(axes[:-1]), axes[-1]
    extent = int(j.extent or 0)
    width = min(_tile_width(acc_dt), extent)
    nfull, rem = divmod(extent, width)
    ntiles = nfull + (1 if rem else 0)
    jo = Var(_tmp("jo"), extent=ntiles)
    rows = 1 if parallel else _row_block(axes, r)
    if parallel_rows:
        assert rows > 1 and all(int(a.extent or 0) == 1 for a in outer[:-1])
        zero = {id(a): L.const(0, L.INDEX) for a in outer[:-1]}
        v = L.substitute(v, zero)
        outer = tuple(L.const(0, L.INDEX) for _ in outer[:-1]) + (outer[-1],)
        outer_idx, loop_outer = outer, ()
    elif parallel:
        zero = {id(a): L.const(0, L.INDEX) for a in outer}
        v = L.substitute(v, zero)
        outer_idx: tuple[Expr, ...] = tuple(L.const(0, L.INDEX) for _ in outer)
        loop_outer: tuple[Var, ...] = ()
    else:
        outer_idx, loop_outer = outer, outer

    # a chunk of the reduction: (first k, length, whether it is the first chunk); None:
    # the whole reduction (the accumulators start from the init value)
    Chunk = tuple[Expr, int, bool] | None
    # where K blocking keeps its partial sums: `buf`, or (with an epilogue) a local row
    partial: Buffer | None = None

    def held(at: tuple[Expr, ...]) -> tuple[Buffer, tuple[Expr, ...]]:
        return (buf, at) if partial is None else (partial, at[-2:])

    def tile(w: int, row_exprs: Sequence[Expr | None], chunk: Chunk = None,
             prefetch: tuple[tuple[Expr, ...], int] | None = None) -> Stmt:
        """One tile of `w` columns for each row expression (None: the row is the loop's
        own axis, no row blocking), over the whole reduction or one `chunk` of it (the
        accumulators then start from the buffer unless it is the first). `prefetch`
        (with a chunk): (the columns of the cache lines to prefetch, relative to the
        tile, and how many chunks ahead)."""
        ji = Var(_tmp("ji"), extent=w)
        jexpr = L.binary("add", L.binary("mul", jo, L.const(width, L.INDEX)), ji)
        kind = "unrolled" if w <= _knob("unroll_max") else "vectorized"
        kk: Var | None = None
        if chunk is not None:
            kk = Var(_tmp("kk"), extent=chunk[1])
        accs, inits, updates, stores = [], [], [], []
        for row in row_exprs:
            acc = Buffer(_tmp(f"{buf.name}_tile"), (w,), acc_dt, "local")
            sub: dict[int, Expr] = {id(j): jexpr}
            idx = outer_idx
            if row is not None:
                sub[id(outer[-1])] = row
                idx = outer_idx[:-1] + (row,)
            if chunk is not None:
                assert kk is not None
                sub[id(r.axes[0])] = L.binary("add", chunk[0], kk)
            src = L.substitute(v, sub)
            accs.append(acc)
            start: Expr = _init_value(r.op, acc_dt)
            if chunk is not None and not chunk[2]:
                start = L.Load(*held(prefix + idx + (jexpr,)))
            inits.append(L.For(ji, w, L.Store(acc, (ji,), start), kind))
            updates.append(L.For(ji, w, L.Store(acc, (ji,), _combine(
                r.op, L.Load(acc, (ji,)), src)), kind))
            out: Expr = L.Load(acc, (ji,))
            if buf.dtype != acc_dt:
                out = L.Cast(out, buf.dtype)
            if chunk is None:
                store = _store_result(buf, prefix + idx + (jexpr,), out, epilogue)
            else:                       # a partial sum
                store = L.Store(*held(prefix + idx + (jexpr,)), out)
            stores.append(L.For(ji, w, store, kind))
        red: Stmt = L.seq(*updates)
        if chunk is not None and prefetch is not None and row_exprs[0] is not None:
            assert kk is not None
            kext = int(r.axes[0].extent or 0)
            k_ahead = L.binary("min", L.binary("add", L.binary("add", chunk[0], kk),
                                               L.const(prefetch[1] * chunk[1], L.INDEX)),
                               L.const(kext - 1, L.INDEX))
            pfs: list[Stmt] = []
            for off in prefetch[0]:
                col = L.binary("min", L.binary("add", L.binary(
                    "mul", jo, L.const(width, L.INDEX)), off), L.const(extent - 1, L.INDEX))
                pfs += _prefetches(v, outer[-1], j, r, {id(r.axes[0]): k_ahead}, col)
            red = L.seq(*pfs, *updates)
        if chunk is not None:
            assert kk is not None
            for a in reversed(r.axes[1:]):
                red = L.For(a, int(a.extent or 0), red, "serial")
            red = L.For(kk, chunk[1], red, "serial")
        else:
            for a in reversed(r.axes):
                red = L.For(a, int(a.extent or 0), red, "serial")
        stmt: Stmt = L.seq(*inits, red, *stores)
        for acc in reversed(accs):
            stmt = L.Allocate(acc, stmt)
        return stmt

    def tiles(row_exprs: Sequence[Expr | None], chunk: Chunk = None,
              prefetch: tuple[tuple[Expr, ...], int] | None = None) -> Stmt:
        body: Stmt = tile(width, row_exprs, chunk, prefetch)
        if rem:
            body = L.IfThenElse(L.cmp("lt", jo, L.const(nfull, L.INDEX)), body,
                                tile(rem, row_exprs, chunk))
        return L.For(jo, ntiles, body, "parallel" if parallel else "serial")

    if rows == 1:
        stmt = tiles([None])
        loops = loop_outer
    else:
        row_axis = outer[-1]
        nrows = int(row_axis.extent or 0)
        full, last = divmod(nrows, rows)
        io = Var(_tmp("io"), extent=full + (1 if last and parallel_rows else 0))
        base = L.binary("mul", io, L.const(rows, L.INDEX))
        kc_len = _k_chunk(r, buf, acc_dt, width, nrows, rows, parallel_rows)
        if kc_len and epilogue is not None:
            # the partial sums in a local row of the stage, as without the epilogue
            # (in the output they measured up to 10% slower: ResNet-50's strided 1x1
            # convolutions), which a pass after the last chunk writes through it
            partial = Buffer(_tmp(f"{buf.name}_part"), (nrows, extent), buf.dtype, "local")

        ahead = 0
        if kc_len and full:
            ahead = knobs.ask("schedule.prefetch_chunks", 0, PREFETCH_CHUNK_CHOICES)

        def row_blocks(chunk: Chunk) -> Stmt:
            prefetch = None
            if chunk is not None and ahead:
                # full row block io prefetches lines (io * per + m) % nlines of the
                # tile's columns: the blocks take turns over the lines
                line = max(1, 64 // max(1, L.bits(acc_dt) // 8))
                nlines = -(-width // line)
                per = -(-nlines // full)
                cols = tuple(L.binary("mul", L.binary("mod", L.binary(
                    "add", L.binary("mul", io, L.const(per, L.INDEX)), L.const(m, L.INDEX)),
                    L.const(nlines, L.INDEX)), L.const(line, L.INDEX)) for m in range(per))
                prefetch = (cols, ahead)
            block = tiles([L.binary("add", base, L.const(k, L.INDEX)) for k in range(rows)],
                          chunk, prefetch)
            tail = (tiles([L.const(full * rows + k, L.INDEX) for k in range(last)], chunk)
                    if last else None)
            if parallel_rows:
                # one parallel loop over the blocks, the last (shorter) one included
                if tail is not None:
                    block = L.IfThenElse(L.cmp("lt", io, L.const(full, L.INDEX)), block, tail)
                return L.For(io, int(io.extent or 0), block, "parallel")
            blocks: list[Stmt] = [L.For(io, full, block, "serial")] if full else []
            if tail is not None:
                blocks.append(tail)
            return L.seq(*blocks)
        if kc_len:
            # K blocking: every row block runs over one chunk of the reduction before
            # the next chunk, so the chunk's panel of the reused operand (kc_len x the
            # tile's columns) stays in L1 across the row blocks; the accumulators go
            # through the (L2-resident) result between chunks
            kext = int(r.axes[0].extent or 0)
            nchunks, krem = divmod(kext, kc_len)
            # the result starts at zero (a fill of the rows' columns), so every chunk is
            # the same code: one copy of the row blocks in a loop over the chunks (a
            # separate first chunk starting from zero doubled the code LLVM compiles:
            # ResNet-50's convolutions took 1.4 s more to build)
            zi = Var(_tmp("zi"), extent=nrows)
            zj = Var(_tmp("zj"), extent=extent)
            chunks: list[Stmt] = [_loops([zi, zj], L.Store(
                *held(prefix + tuple(outer_idx[:-1]) + (zi, zj)), _init_value(r.op, acc_dt)))]
            kc = Var(_tmp("kc"), extent=nchunks)
            first_k = L.binary("mul", kc, L.const(kc_len, L.INDEX))
            chunks.append(L.For(kc, nchunks, row_blocks((first_k, kc_len, False)), "serial"))
            if krem:
                chunks.append(row_blocks((L.const(nchunks * kc_len, L.INDEX), krem, False)))
            if partial is not None:
                assert epilogue is not None
                ei = Var(_tmp("ei"), extent=nrows)
                ej = Var(_tmp("ej"), extent=extent)
                chunks.append(_loops([ei, ej], _store_result(
                    buf, prefix + tuple(outer_idx[:-1]) + (ei, ej), L.Load(partial, (ei, ej)),
                    epilogue)))
            stmt = L.seq(*chunks)
            if partial is not None:
                stmt = L.Allocate(partial, stmt)
        else:
            stmt = row_blocks(None)
        loops = loop_outer[:-1]
    for a in reversed(loops):
        stmt = L.For(a, int(a.extent or 0), stmt, "serial")
    return stmt


def _reduce_stmt(axes: Sequence[Var], prefix: tuple[Expr, ...], r: L.Reduce,
                 buf: Buffer, epilogue: Epilogue | None = None) -> Stmt:
    """The loops of a reduction over the spatial `axes` (the loop axes) storing to
    `buf[prefix + axes]` (through `epilogue`, when given)."""
    if r.op in ("argmax", "argmin"):
        return _arg_reduce(axes, prefix, r, buf, epilogue)
    if _is_inner_spatial(axes, r):
        return _tiled_reduce(axes, prefix, r, buf, epilogue=epilogue)
    v, acc_dt = _source_value(r)
    acc = Buffer(_tmp(f"{buf.name}_acc"), (), acc_dt, "local")
    upd = L.Store(acc, (), _combine(r.op, L.Load(acc, ()), v))
    red = _loops(r.axes, upd, "vectorized") if r.axes else upd
    result: Expr = L.Load(acc, ())
    if buf.dtype != acc_dt:
        result = L.Cast(result, buf.dtype)
    inner_body = L.Allocate(acc, L.seq(L.Store(acc, (), _init_value(r.op, acc_dt)), red,
                                       _store_result(buf, prefix + tuple(axes), result,
                                                     epilogue)))
    stmt: Stmt = inner_body
    for a in reversed(axes):
        stmt = L.For(a, int(a.extent or 0), stmt, "serial")
    return stmt


def _arg_reduce(axes: Sequence[Var], prefix: tuple[Expr, ...], r: L.Reduce,
                buf: Buffer, epilogue: Epilogue | None = None) -> Stmt:
    src = r.source
    vdt = _acc_dtype(src.dtype)
    v = src if src.dtype == vdt else L.Cast(src, vdt)
    best = Buffer(_tmp(f"{buf.name}_best"), (), vdt, "local")
    where = Buffer(_tmp(f"{buf.name}_idx"), (), "int64", "local")
    flat: Expr = L.const(0, "int64")
    for a in r.axes:
        flat = L.binary("add", L.binary("mul", flat, L.const(int(a.extent or 0), "int64")), a)
    bv = L.Load(best, ())
    better: Expr = L.Cmp("gt" if r.op == "argmax" else "lt", v, bv)
    if L.is_float(vdt):
        better = L.binary("or", better,
                          L.binary("and", _isnan(v), L.Unary("not", _isnan(bv), "bool")))
    elif vdt == "bool":
        better = (L.binary("and", v, L.Unary("not", bv, "bool")) if r.op == "argmax"
                  else L.binary("and", bv, L.Unary("not", v, "bool")))
    upd = L.seq(L.Store(where, (), L.Select(better, flat, L.Load(where, ()), "int64")),
                L.Store(best, (), L.Select(better, v, bv, vdt)))
    red = upd
    for a in reversed(r.axes):
        red = L.For(a, int(a.extent or 0), red, "serial")
    result: Expr = L.Load(where, ())
    if buf.dtype != "int64":
        result = L.Cast(result, buf.dtype)
    init_best = _init_value(r.op, vdt)
    # the first element decides when every value equals the initial one (or is -inf)
    body = L.Allocate(best, L.Allocate(where, L.seq(
        L.Store(best, (), init_best), L.Store(where, (), L.const(0, "int64")), red,
        _store_result(buf, prefix + tuple(axes), result, epilogue))))
    stmt: Stmt = body
    for a in reversed(axes):
        stmt = L.For(a, int(a.extent or 0), stmt, "serial")
    return stmt


def _item_stmt(axes: Sequence[Var], prefix: tuple[Expr, ...], body: Expr,
               buf: Buffer, index: tuple[Expr, ...] | None = None,
               guard: Expr | None = None, epilogue: Epilogue | None = None) -> Stmt:
    if isinstance(body, L.Reduce):
        assert index is None
        return _reduce_stmt(axes, prefix, body, buf, epilogue)
    assert epilogue is None
    value = body if body.dtype == buf.dtype else L.Cast(body, buf.dtype)
    store: Stmt = L.Store(buf, prefix + tuple(axes) if index is None else index, value)
    if guard is not None:
        store = L.IfThenElse(guard, store)
    return _loops(axes, store)


class Epilogue:
    """What an output does to a reduction's result, element by element, applied where
    the reduction stores it (`_fuse_epilogues`): `out[g(i)] = f(t[i], inputs..)` becomes
    `out[g(i)] = f(acc, ..)` written from the accumulators, with no stage `t` and no
    second pass over it. `g` maps `t`'s index one-to-one onto `out`'s (the same index;
    flattened pixels `q -> (q / W, q % W)`; blocked columns `(jb, jj) -> jb * B + jj`).
    `index` and `body` are expressions over `svars`, one variable per dim of `t`;
    `body` reads `t` (`stage`) where the output read it."""
    __slots__ = ("body", "dtype", "index", "out", "stage", "svars")

    def __init__(self, stage: Buffer, svars: tuple[Var, ...], out: Buffer,
                 index: tuple[Expr, ...], body: Expr):
        self.stage, self.svars, self.out, self.index, self.body = stage, svars, out, index, body
        self.dtype = out.dtype

    def locate(self, at: Sequence[Expr]) -> tuple[Buffer, tuple[Expr, ...]]:
        """Where the element `at` of the stage lives in the output."""
        sub = {id(v): e for v, e in zip(self.svars, at)}
        return self.out, tuple(L.substitute(e, sub) for e in self.index)

    def apply(self, value: Expr, at: Sequence[Expr]) -> Expr:
        """The output's value for the stage's element `at` when the reduction's result
        there is `value`."""
        e = _map_loads(self.body, lambda ld: value if ld.buffer is self.stage else None)
        e = L.substitute(e, {id(v): i for v, i in zip(self.svars, at)})
        return e if e.dtype == self.dtype else L.Cast(e, self.dtype)


def _store_result(buf: Buffer, index: tuple[Expr, ...], value: Expr,
                  epilogue: Epilogue | None) -> L.Store:
    """`buf[index] = value`, or through `epilogue` (`buf` is then its stage)."""
    if epilogue is None:
        return L.Store(buf, index, value)
    out, at = epilogue.locate(index)
    return L.Store(out, at, epilogue.apply(value, index))


class _Item:
    """One loop nest to emit: `buf[axes] = body` (a stage or an output), or
    `buf[index] = body` when `index` is given (an output written in its producer's
    order, see `_relaid`; only where `guard` holds, when given: the producer's padded
    columns are skipped). A reduction with an `epilogue` stores `epilogue(result)`."""
    __slots__ = ("axes", "body", "buf", "epilogue", "guard", "index", "local")

    def __init__(self, axes: tuple[Var, ...], body: Expr, buf: Buffer, local: bool,
                 index: tuple[Expr, ...] | None = None, guard: Expr | None = None,
                 epilogue: Epilogue | None = None):
        self.axes, self.body, self.buf, self.local = axes, body, buf, local
        self.index, self.guard, self.epilogue = index, guard, epilogue

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(int(a.extent or 0) for a in self.axes)

    def needs_inner(self) -> bool:
        """Whether its last axis should stay a loop (a contiguous vectorised one)."""
        if not self.axes or int(self.axes[-1].extent or 0) <= 1:
            return False
        if isinstance(self.body, L.Reduce):
            return _is_inner_spatial(self.axes, self.body)
        return True

    def inner_axes(self) -> int:
        """How many trailing axes stay loops inside the parallel loop: the contiguous
        one (`needs_inner`), and the rows of a row-blocked column reduction."""
        if not self.needs_inner():
            return 0
        if isinstance(self.body, L.Reduce) and _row_block(self.axes, self.body) > 1:
            return 2
        return 1


def _map_loads(e: Expr, fn) -> Expr:
    """`e` with every Load replaced by `fn(load)` (None: kept), children first."""
    memo: dict[int, Expr] = {}
    for node in L.walk(e):
        kids = L.children(node)
        new = [memo[id(c)] for c in kids]
        changed = any(n is not c for n, c in zip(new, kids))
        out = L.rebuild(node, new) if changed else node
        if isinstance(node, L.Load):
            repl = fn(out)
            if repl is not None:
                out = repl
        memo[id(node)] = out
    return memo[id(e)]


def _common_prefix(items: Sequence[_Item]) -> int:
    """How many leading spatial dimensions all the nests share such that iteration
    `i` of them touches only row `i` of what earlier nests produce: every nest has those
    dims, and every load of a produced buffer indexes them with the nest's own axes."""
    shapes = [it.shape for it in items]
    depth = min(len(s) for s in shapes)
    k = 0
    while k < depth and all(s[k] == shapes[0][k] for s in shapes):
        k += 1
    depth = k
    produced = {id(it.buf) for it in items}
    for it in items:
        for n in L.walk(it.body):
            if isinstance(n, L.Load) and id(n.buffer) in produced:
                m = 0
                while m < depth and m < len(n.indices) and n.indices[m] is it.axes[m]:
                    m += 1
                depth = min(depth, m)
    return depth


def _choose_depth(items: Sequence[_Item]) -> int:
    """The number of leading dims the parallel loop covers (0: no parallel loop)."""
    depth = _common_prefix(items)
    if depth == 0:
        return 0
    shape = items[0].shape

    def size(d: int) -> int:
        return math.prod(shape[:d])
    keep_inner = [len(it.axes) - it.inner_axes() for it in items if it.needs_inner()]
    hi = min([depth] + keep_inner)
    if (hi < 1 or size(hi) < 2) and any(it.inner_axes() == 2 for it in items):
        # row blocking leaves no parallel dims: parallel rows instead (a lone reduction
        # gets parallel row blocks in `schedule`)
        if len(items) == 1:
            return 0
        hi = min([depth] + [len(it.axes) - 1 for it in items if it.needs_inner()])
    if hi < 1 or size(hi) < 2:
        if any(isinstance(it.body, L.Reduce) and it.needs_inner() for it in items):
            return 0     # a column reduction stays contiguous (tiles run in parallel)
        hi = depth
    if size(hi) < 2:
        return 0
    for d in range(1, hi + 1):
        if size(d) >= _knob("par_min"):
            return d
    return hi


def _prefix_index(p: Var, shape: tuple[int, ...]) -> list[Expr]:
    """The index of each of the `shape` dims at flat parallel iteration `p`."""
    out: list[Expr] = []
    live = [k for k, d in enumerate(shape) if d != 1]
    for k, d in enumerate(shape):
        if d == 1:
            out.append(L.const(0, L.INDEX))
            continue
        inner = math.prod(shape[k + 1:])
        e: Expr = p
        if inner != 1:
            e = L.binary("div", e, L.const(inner, L.INDEX))
        if k != live[0]:
            e = L.binary("mod", e, L.const(d, L.INDEX))
        out.append(e)
    return out


def _fused(items: Sequence[_Item], depth: int) -> tuple[Stmt, int]:
    """One parallel loop over the first `depth` dims (flattened), every nest inside it;
    local buffers lose those dims (one row per iteration, allocated per call)."""
    shape = items[0].shape[:depth]
    extent = math.prod(shape)
    p = Var("p", extent=extent)
    idx = _prefix_index(p, shape)
    rows: dict[int, Buffer] = {}
    stmts: list[Stmt] = []
    allocs: list[Buffer] = []

    def to_row(load: L.Load) -> Expr | None:
        nb = rows.get(id(load.buffer))
        return None if nb is None else L.Load(nb, load.indices[depth:])
    for it in items:
        body = _map_loads(it.body, to_row) if rows else it.body
        body = L.substitute(body, {id(a): e for a, e in zip(it.axes[:depth], idx)})
        index = guard = None
        if it.local:
            nb = Buffer(it.buf.name, it.buf.shape[depth:], it.buf.dtype, "local")
            rows[id(it.buf)] = nb
            allocs.append(nb)
            prefix: tuple[Expr, ...] = ()
        else:
            nb, prefix = it.buf, tuple(idx)
            if it.index is not None:
                lead = {id(a): e for a, e in zip(it.axes[:depth], idx)}
                index = tuple(L.substitute(e, lead) for e in it.index)
                if it.guard is not None:
                    guard = L.substitute(it.guard, lead)
        stmts.append(_item_stmt(it.axes[depth:], prefix, body, nb, index, guard,
                                it.epilogue))
    inner = L.seq(*stmts)
    for buf in reversed(allocs):
        inner = L.Allocate(buf, inner)
    return L.For(p, extent, inner, "parallel"), extent


def _work(it: _Item) -> int:
    """Iterations of an item's loop nest (times its reduction's), a cost estimate."""
    n = math.prod(it.shape)
    if isinstance(it.body, L.Reduce):
        n *= math.prod(int(a.extent or 0) for a in it.body.axes)
    return n


def _relaid(it: _Item, locals_: dict[int, _Item]) -> _Item | None:
    """An output that only re-lays out one local stage `t` (every load of `t` indexes it
    with the output's axes `a` (reading a leading part of that dim of `t` when it is
    longer: a padded channel count), `a / c` or `a % c`, or a flattened pair `a * S + b`
    (b shorter than S: two loops replace that dim of `t`), each dim once: a blocked
    convolution's or dense's epilogue `out[n, o, h, w] = f(t[n, o / B, h, w, o % B])`,
    or with the pixels flattened `f(t[n, o / B, h * W + w, o % B])`),
    as a nest over `t`'s dims storing to `out[index]`: it then shares `t`'s leading
    dims. None when it is not of that form."""
    if it.local or it.index is not None or isinstance(it.body, L.Reduce):
        return None
    loads = [n for n in L.walk(it.body) if isinstance(n, L.Load) and id(n.buffer) in locals_]
    if not loads or any(ld.buffer is not loads[0].buffer for ld in loads):
        return None
    t = locals_[id(loads[0].buffer)]
    axis_ids = {id(a): a for a in it.axes}

    def pattern(ld: L.Load) -> tuple | None:
        out: list[tuple] = []
        for e in ld.indices:
            if isinstance(e, Var) and id(e) in axis_ids:
                out.append(("v", id(e), 0))
            elif (isinstance(e, L.Binary) and e.op == "add" and isinstance(e.b, Var)
                  and id(e.b) in axis_ids and isinstance(e.a, L.Binary) and e.a.op == "mul"
                  and isinstance(e.a.a, Var) and id(e.a.a) in axis_ids
                  and isinstance(e.a.b, L.Const) and int(e.a.b.value) > 0):
                # a flattened pair `a * S + b` (a flat convolution's pixel h * Wp + w)
                out.append(("flat", (id(e.a.a), id(e.b)), int(e.a.b.value)))
            elif (isinstance(e, L.Binary) and e.op in ("div", "mod") and isinstance(e.a, Var)
                  and id(e.a) in axis_ids and isinstance(e.b, L.Const)
                  and int(e.b.value) > 0):
                out.append((e.op, id(e.a), int(e.b.value)))
            else:
                return None
        return tuple(out)
    pat = pattern(loads[0])
    if pat is None or len(pat) != len(t.axes) or any(pattern(ld) != pat for ld in loads[1:]):
        return None
    tshape = t.shape
    ext_of = list(tshape)       # the loop over t's dims (a leading part of a dim read whole)
    naxes = tuple(Var(_tmp(f"{it.buf.name}_r"), extent=d) for d in tshape)
    occ: dict[int, dict[str, tuple[int, int]]] = {}
    guards: list[Expr] = []
    # flattened dims of t: q -> (the outer and inner loop replacing t's dim q, stride)
    flats: dict[int, tuple[Var, Var, int]] = {}
    flat_of: dict[int, Expr] = {}
    ext_by_id = {id(a): int(a.extent or 0) for a in it.axes}
    for q, (kind, a, c) in enumerate(pat):
        if kind == "flat":
            ha, wb = a
            if ha == wb or ha in occ or wb in occ or ha in flat_of or wb in flat_of:
                return None
            eh, ew = ext_by_id[ha], ext_by_id[wb]
            if ew > c or eh < 1 or ew < 1 or (eh - 1) * c + ew > tshape[q]:
                return None
            vh = Var(_tmp(f"{it.buf.name}_r"), extent=eh)
            vw = Var(_tmp(f"{it.buf.name}_r"), extent=ew)
            flats[q] = (vh, vw, c)
            flat_of[ha], flat_of[wb] = vh, vw
            continue
        if a in flat_of or kind in occ.setdefault(a, {}):
            return None
        occ[a][kind] = (q, c)
    vmap: dict[int, Expr] = {}
    for a in it.axes:
        ext = int(a.extent or 0)
        o = occ.get(id(a), {})
        if id(a) in flat_of:
            vmap[id(a)] = flat_of[id(a)]
        elif set(o) == {"v"}:
            q = o["v"][0]
            if tshape[q] < ext:
                return None
            ext_of[q] = ext
            vmap[id(a)] = naxes[q]
        elif set(o) == {"div", "mod"}:
            (qd, c), (qm, c2) = o["div"], o["mod"]
            if c != c2 or tshape[qm] != c or tshape[qd] != -(-ext // c):
                return None
            vmap[id(a)] = L.binary("add", L.binary("mul", naxes[qd], L.const(c, L.INDEX)),
                                   naxes[qm])
            if tshape[qd] * c != ext:
                # `t` has padded columns (a GEMM whose blocks do not divide N): skipped
                guards.append(L.cmp("lt", vmap[id(a)], L.const(ext, L.INDEX)))
        elif not o and ext == 1:
            vmap[id(a)] = L.const(0, L.INDEX)
        else:
            return None
    if ext_of != list(tshape):
        fresh = tuple(Var(n.name, extent=d) for n, d in zip(naxes, ext_of))
        rename = {id(n): f for n, f in zip(naxes, fresh)}
        vmap = {k: L.substitute(e, rename) for k, e in vmap.items()}
        guards = [L.substitute(g, rename) for g in guards]
        naxes = fresh
    tbuf = t.buf
    tindex: tuple[Expr, ...] = tuple(
        L.binary("add", L.binary("mul", flats[q][0], L.const(flats[q][2], L.INDEX)),
                 flats[q][1]) if q in flats else n for q, n in enumerate(naxes))
    body = _map_loads(it.body, lambda ld: L.Load(ld.buffer, tindex)
                      if ld.buffer is tbuf else None)
    body = L.substitute(body, vmap)
    index = tuple(vmap[id(a)] for a in it.axes)
    loop_axes = tuple(a for q, n in enumerate(naxes)
                      for a in ((flats[q][0], flats[q][1]) if q in flats else (n,)))
    if not flats and len(naxes) >= 2 and index:
        # stores along the output's contiguous dimension: when it is `t`'s
        # second-to-last dim (a convolution's width before its block of channels), the
        # last two loops swap (the row of `t` is a local in cache, read strided)
        last = {id(m) for m in L.walk(index[-1]) if isinstance(m, Var)}
        if id(naxes[-2]) in last and id(naxes[-1]) not in last:
            loop_axes = naxes[:-2] + (naxes[-1], naxes[-2])
    guard: Expr | None = None
    for g in guards:
        guard = g if guard is None else L.binary("and", guard, g)
    return _Item(loop_axes, body, it.buf, False, index, guard)


def _lone_reduction(it: _Item) -> tuple[Stmt, int] | None:
    """A kernel's only nest, a column reduction with no parallel dims of its own: its
    tiles of columns (one row: a column sum, a batch-1 matmul) or its blocks of rows (a
    2-D matmul) as the parallel loop."""
    r = it.body
    if it.local or not isinstance(r, L.Reduce) or not _is_inner_spatial(it.axes, r):
        return None
    if math.prod(it.shape[:-1]) == 1:
        stmt = _tiled_reduce(it.axes, (), r, it.buf, parallel=True, epilogue=it.epilogue)
    elif math.prod(it.shape[:-2]) == 1 and _row_block(it.axes, r) > 1:
        stmt = _tiled_reduce(it.axes, (), r, it.buf, parallel_rows=True,
                             epilogue=it.epilogue)
    else:
        return None
    assert isinstance(stmt, L.For)
    return stmt, stmt.extent


# The prologue every parallel call repeats: <= 1/16 of all the work. At 1/8, a blocked
# depthwise 3x3 convolution (input re-laid out in blocks of channels: 1/8.4 of the work)
# had every thread re-lay out the whole input instead of its own blocks of channels:
# 256x28x28 took 0.23 ms on 2 threads against 0.16 on one (0.09 at 1/16).
# (knob prologue_share, default 16)

# Every call of a kernel with a prologue (each range the native pool runs) computes it
# again: such a kernel is split into this many ranges per thread (the knob
# PROLOGUE_RANGES_KNOB, which the executor reads from the kernel's knobs) instead of
# the pool's 4. conv3x3/s2 64->128 on 56x56 (a 36 us padded input, 0.61 ms on one
# thread): 2 threads, 8 ranges 0.45 ms, 2 ranges 0.33 ms.
PROLOGUE_RANGES = 1
PROLOGUE_RANGES_KNOB = "schedule.prologue_ranges"


def ranges_per_thread(kernel: object) -> int:
    """The ranges per thread a kernel's splits over the native pool ask for (its knob
    PROLOGUE_RANGES_KNOB, set by a kernel that computes a prologue in every range; a
    PrimFunc or a compiled KernelInfo), 0 for the pool's own count. Read by the graph
    executor and by native programs' pooled calls."""
    return max(0, knobs.knob_of(kernel, PROLOGUE_RANGES_KNOB, 0))


def _with_prologue(items: Sequence[_Item]) -> tuple[Stmt, int] | None:
    """Stages a parallel loop cannot share (a padded input, a re-laid weight) computed
    whole by every call into its own locals, then the remaining nests in one parallel
    loop, when those stages cost at most 1/`prologue_share` of the kernel's work. With
    no such stage (m = 0: a weight packed at build time), an epilogue relaid in its
    stage's order may still give the nests a shared parallel loop."""
    total = sum(_work(it) for it in items)
    # extent, m, main, depth, the lone reduction's own parallel loop
    best: tuple[int, int, list[_Item], int, tuple[Stmt, int] | None] | None = None
    for m in range(len(items)):
        pro, main = items[:m], list(items[m:])
        if not all(it.local for it in pro):
            break
        if sum(_work(it) for it in pro) * _knob("prologue_share") > total:
            break
        depth = _choose_depth(main)
        if not depth:
            locals_ = {id(it.buf): it for it in main if it.local}
            relaid = [(_relaid(it, locals_) or it) if not it.local else it for it in main]
            if any(r is not it for r, it in zip(relaid, main)):
                depth = _choose_depth(relaid)
                if depth:
                    main = relaid
        lone = _lone_reduction(main[0]) if not depth and len(main) == 1 else None
        if not depth and lone is None:
            continue
        extent = lone[1] if lone is not None else math.prod(main[0].shape[:depth])
        if best is None or extent > best[0]:
            best = (extent, m, main, depth, lone)
        if extent >= _knob("par_min"):
            break       # the fewest prologue stages giving a long enough parallel loop
    if best is None:
        return None
    _, m, main, depth, lone = best
    pro = items[:m]
    if pro:
        knobs.ask(PROLOGUE_RANGES_KNOB, PROLOGUE_RANGES, (1, 2, 4))
    stmt, extent = lone if lone is not None else _fused(main, depth)
    body = L.seq(*[_item_stmt(it.axes, (), it.body, it.buf, epilogue=it.epilogue)
                   for it in pro], stmt)
    for it in reversed(pro):
        body = L.Allocate(it.buf, body)
    return body, extent


def _fuse_epilogues(items: list[_Item]) -> list[_Item]:
    """Each output that is an element-wise function of one local reduction stage, read
    at one index that maps the stage one-to-one onto the output (`_stage_to_output`),
    becomes that reduction's `Epilogue` (a convolution's or dense's bias, ReLU and
    residual add): the reduction writes the output itself, from its accumulators, in
    the output's place in the order (the nests between them do not read the stage).
    Not fused: a stage read by another nest, an output reading another nest's buffer,
    a stage in another dtype (float16 outputs of float32 sums)."""
    readers: dict[int, int] = {}
    for it in items:
        for n in L.walk(it.body):
            if isinstance(n, L.Load):
                readers[id(n.buffer)] = readers.get(id(n.buffer), 0) + 1
    produced = {id(it.buf) for it in items}
    stages = {id(it.buf): it for it in items if it.local}
    fused: dict[int, _Item] = {}          # id(output item) -> the reduction writing it
    taken: set[int] = set()               # id(stage item) fused away
    for out in items:
        if out.local or out.index is not None or out.epilogue is not None or \
                isinstance(out.body, L.Reduce):
            continue
        loads = [n for n in L.walk(out.body) if isinstance(n, L.Load)
                 and id(n.buffer) in produced]
        if not loads or any(ld.buffer is not loads[0].buffer for ld in loads):
            continue
        stage = stages.get(id(loads[0].buffer))
        if stage is None or not isinstance(stage.body, L.Reduce) or id(stage) in taken or \
                stage.buf.dtype != out.buf.dtype or \
                readers.get(id(stage.buf), 0) != len(loads):
            continue
        epilogue = _stage_to_output(stage, out, loads)
        if epilogue is None:
            continue
        fused[id(out)] = _Item(stage.axes, stage.body, stage.buf, False, epilogue=epilogue)
        taken.add(id(stage))
    if not fused:
        return items
    return [fused.get(id(it), it) for it in items if id(it) not in taken]


def _stage_to_output(stage: _Item, out: _Item, loads: list[L.Load]) -> Epilogue | None:
    """The epilogue writing `out` from `stage`'s results, when every load of the stage
    in `out` has the same index, one that maps the stage one-to-one onto the output:
    each dim of the stage an output axis of the same extent, a flattened pair of them
    (`h * W + w`, w of extent W), or with another dim a split one (`o / B`, `o % B`,
    the stage's dims B and the output's extent / B: no padded columns); output axes of
    extent 1 may be absent. None otherwise."""
    index = loads[0].indices
    if any(len(ld.indices) != len(index) or
           any(not _same_expr(a, b) for a, b in zip(ld.indices, index)) for ld in loads[1:]):
        return None
    shape = stage.shape
    if len(index) != len(shape) or math.prod(shape) != math.prod(out.shape):
        return None
    ext = {id(a): int(a.extent or 0) for a in out.axes}
    svars = tuple(Var(_tmp(f"{stage.buf.name}_s"), extent=d) for d in shape)
    inv: dict[int, Expr] = {}
    split: dict[int, dict[str, tuple[int, int]]] = {}

    def axis(e: Expr) -> bool:
        return isinstance(e, Var) and id(e) in ext

    def assign(a: Var, e: Expr) -> bool:
        if id(a) in inv:
            return False
        inv[id(a)] = e
        return True
    for q, e in enumerate(index):
        sv, d = svars[q], shape[q]
        if axis(e):
            if ext[id(e)] != d or not assign(e, sv):
                return None
        elif (isinstance(e, L.Binary) and e.op == "add" and axis(e.b)
              and isinstance(e.a, L.Binary) and e.a.op == "mul" and axis(e.a.a)
              and isinstance(e.a.b, L.Const)):
            h, w, c = e.a.a, e.b, int(e.a.b.value)
            if h is w or ext[id(w)] != c or ext[id(h)] * c != d or \
                    not assign(h, L.binary("div", sv, L.const(c, L.INDEX))) or \
                    not assign(w, L.binary("mod", sv, L.const(c, L.INDEX))):
                return None
        elif (isinstance(e, L.Binary) and e.op in ("div", "mod") and axis(e.a)
              and isinstance(e.b, L.Const) and int(e.b.value) > 0):
            if e.op in split.setdefault(id(e.a), {}):
                return None
            split[id(e.a)][e.op] = (q, int(e.b.value))
        elif isinstance(e, L.Const) and d == 1 and e.value == 0:
            continue
        else:
            return None
    for a in out.axes:
        parts = split.get(id(a))
        if parts is not None:
            if set(parts) != {"div", "mod"}:
                return None
            (qd, c), (qm, c2) = parts["div"], parts["mod"]
            if c != c2 or shape[qm] != c or shape[qd] * c != ext[id(a)] or not assign(
                    a, L.binary("add", L.binary("mul", svars[qd], L.const(c, L.INDEX)),
                                svars[qm])):
                return None
        elif id(a) not in inv:
            if ext[id(a)] != 1:
                return None
            inv[id(a)] = L.const(0, L.INDEX)
    out_index = tuple(inv[id(a)] for a in out.axes)
    # the tiles store along the stage's last dim: it must stay the output's contiguous
    # one (a plain NCHW output of a blocked stage is written by `_relaid` instead, its
    # rows read strided from the local stage and stored contiguously)
    if svars:
        last, inner = out_index[-1] if out_index else None, svars[-1]
        if not (last is inner or (isinstance(last, L.Binary) and last.op == "add"
                                  and last.b is inner)):
            return None
    body = L.substitute(out.body, inv)
    return Epilogue(stage.buf, svars, out.buf, out_index, body)


def _same_expr(x: Expr, y: Expr) -> bool:
    """Structurally equal index expressions (variables by identity)."""
    if x is y:
        return True
    if type(x) is not type(y) or isinstance(x, (Var, L.Load)):
        return False
    if isinstance(x, L.Const):
        return x.value == y.value and x.dtype == y.dtype      # type: ignore[attr-defined]
    if any(getattr(x, f, None) != getattr(y, f, None) for f in ("op", "dtype", "name")):
        return False
    kx, ky = L.children(x), L.children(y)
    return len(kx) == len(ky) and all(_same_expr(a, b) for a, b in zip(kx, ky))


def schedule(b: LowerContext, outputs: Sequence[Tensor], out_buffers: Sequence[Buffer]
             ) -> tuple[Stmt, int]:
    """The body of the PrimFunc writing `outputs` into `out_buffers`, and the extent of
    its parallel loop (1 when there is none)."""
    _NAMES.n = 0
    _knob("vector_bits")          # read by the code generator (jit.module_ir)
    body, extent = _schedule(outputs, out_buffers, b)
    if extent > 1:
        _knob("threads")          # read by the executor (native/kernels.py NativeCall)
    return body, extent


def _schedule(outputs: Sequence[Tensor], out_buffers: Sequence[Buffer], b: LowerContext
              ) -> tuple[Stmt, int]:
    direct: dict[int, Buffer] = {}          # id(stage Tensor) -> output buffer it writes
    for t, ob in zip(outputs, out_buffers):
        if (t.kind == "stage" and id(t) not in direct and t.buffer is not None
                and t.buffer.dtype == ob.dtype):
            direct[id(t)] = ob
    bmap = {id(t.buffer): direct[id(t)] for t in b.stages if id(t) in direct}
    items: list[_Item] = []
    for t in b.stages:
        assert t.buffer is not None and t.body is not None
        target = direct.get(id(t), t.buffer)
        body = L.substitute(t.body, {}, bmap) if bmap else t.body
        items.append(_Item(tuple(t.axes), body, target, target is t.buffer))
    for t, ob in zip(outputs, out_buffers):
        if id(t) in direct and direct[id(t)] is ob:
            continue
        axes = _fresh_axes(t.shape, f"{ob.name}_i")
        value = t[axes] if axes else t[()]
        if bmap:
            value = L.substitute(value, {}, bmap)
        items.append(_Item(axes, value, ob, False))
    if not items:
        return L.Seq(()), 1
    items = _fuse_epilogues(items)
    depth = _choose_depth(items)
    if depth:
        return _fused(items, depth)
    if len(items) > 1:
        with_pro = _with_prologue(items)
        if with_pro is not None:
            return with_pro
    if len(items) == 1:
        lone = _lone_reduction(items[0])
        if lone is not None:
            return lone
    stmts = [_item_stmt(it.axes, (), it.body, it.buf, epilogue=it.epilogue) for it in items]
    body = L.seq(*stmts)
    for it in reversed(items):
        if it.local:
            body = L.Allocate(it.buf, body)
    return body, 1
