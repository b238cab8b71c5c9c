"""LLVM lowerings of nn.dense, nn.matmul and nn.batch_matmul.

Dense, matmul and batch_matmul with 4+ rows and a reduction of 16+ (dense: any
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
"""
from __future__ import annotations

import math
from typing import Any

from ..registry import implement
from .lowering_support import _BLOCKS, _acc, _out, _finish, _product, _row_index


def _product_sum(b: Any, shape: tuple, dtype: str, fsrc: Any, k_extent: int,
                 name: str) -> Any:
    """sum over k of fsrc(idx, k) (in _acc(dtype)), as a tensor of `dtype`."""
    acc = _acc(dtype)
    k = b.reduce_axis(k_extent, "k")
    if dtype == "bool":
        raise NotImplementedError(f"{name} of bool tensors")
    t = b.compute(shape, lambda *i: b.reduce_sum(fsrc(i, k, acc), [k]), dtype=acc, name=name)
    return _finish(b, t, dtype, name + "_cast")


# From this many output columns up to 15, a GEMM no block divides is padded to a block of
# 16 (one vector of accumulators per row) instead of taking the dot-product form (a
# horizontal sum per output element, its cost growing with the columns). Kernel times,
# one thread, dense with a constant weight, dot -> blocked: 64x128 by 6 columns 2.36 ->
# 1.70 us, 7: 2.05 -> 1.12 (64x100), 10: 3.43 -> 1.46 (MLP b64's last layer), 12: 3.35
# -> 1.79 (128x64); 32x256 by 10: 2.54 -> 1.44. Fewer columns favour the dot form (64x128
# by 1: 0.53 against 1.78; by 5: 1.71 against 1.69; 16x512 by 5: 1.40 against 1.74).
_SMALL_N_BLOCKED = 9
# ... when the product has at least this many rows (a weight that is not a constant is
# re-laid out by every call: 4x300 by 9 columns took 0.56 us in the dot form, 1.08
# blocked; 13x37 by 10: 0.51 against 0.28).
_SMALL_N_MIN_ROWS = 8


def _gemm_block(n: int) -> int:
    """The column block (register tile width) of a blocked GEMM with `n` output
    columns, 0 for none: the widest of `_BLOCKS` dividing `n`; else from
    `_SMALL_N_BLOCKED` to 15 columns a block of 16; else, from 16 columns up, the
    widest of 64/32/16 padding `n` by at most 1/8, else the one padding it least (the
    widest on a tie; the re-laid weight has zero columns there and the epilogue reads
    only the real ones: 1000 -> 1024, 10 -> 16)."""
    exact = next((k for k in _BLOCKS if n % k == 0), 0)
    if _SMALL_N_BLOCKED <= n < 16 and not exact:
        return 16
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
    real one (`ob` not dividing N) are zero weights, never read back.

    Knobs (b.knob): `gemm.block`, the column block (any of 8/16/32/64 up to the columns
    rounded to 16: a block not dividing N pads it), and `gemm.row_chunk`, the rows per
    chunk (0: none; multiples of the scheduler's row block), and with row chunks
    `gemm.rows_outer`, the loop order (0: panels outer, 1: row chunks outer)."""
    acc = _acc(dt)
    batch = shape[:nbatch]
    lead = shape[nbatch:-1]
    rows = math.prod(lead)
    ncols = shape[-1]
    widest = max(16, -(-ncols // 16) * 16)
    ob = b.knob("gemm.block", ob, tuple(k for k in (8, 16, 32, 64) if k <= widest))
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
    block = 6 if ob >= 64 else 8
    mb = b.knob("gemm.row_chunk", _row_chunk(rows, ob, nblk * math.prod(batch)),
                (0,) + tuple(block * m for m in (1, 2, 4, 8, 16) if 2 * block * m <= rows))
    rows_outer = 0
    if mb:
        # few panels: the rows in chunks of `mb` too (T[.., jb, mo, mi, jj], rows past
        # the last one read the last row and are never read back), so that the
        # parallel loop covers (panel, row chunk) and each iteration keeps the
        # scheduler's row-blocked register tiles
        mo_n = -(-rows // mb)
        clamp = mo_n * mb != rows
        # loop order: panels outer (a panel stays in cache while its row chunks pass) or
        # row chunks outer (a chunk of `a` rows stays in L1 while the panels pass)
        rows_outer = b.knob("gemm.rows_outer", 0, (0, 1))

        def fred_split(*i: Any) -> Any:
            jb, mo = (i[nbatch + 1], i[nbatch]) if rows_outer else (i[nbatch], i[nbatch + 1])
            mi = i[nbatch + 2]
            m = mo * mb + mi
            if clamp:
                m = b.min(m, rows - 1)
            return fred(*(i[:nbatch] + (jb, m, i[-1])))
        outer = (mo_n, nblk) if rows_outer else (nblk, mo_n)
        t = b.compute(batch + outer + (mb, ob), fred_split, dtype=acc, name=name)
    else:
        t = b.compute(batch + (nblk, rows, ob), fred, dtype=acc, name=name)

    def fout(*i: Any) -> Any:
        m: Any = 0
        for pos, d in enumerate(lead):
            m = i[nbatch + pos] if pos == 0 else m * d + i[nbatch + pos]
        j = i[-1]
        if not mb:
            at = (j / ob, m)
        elif rows_outer:
            at = (m / mb, j / ob, m % mb)
        else:
            at = (j / ob, m / mb, m % mb)
        return b.cast(t[tuple(i[:nbatch]) + at + (j % ob,)], dt)
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


# A reduction shorter than this is bound by the output's stores, not the FMAs: the
# blocked form's extra pass (the local result copied to the output) costs more than it
# saves (matmul 1000x1x1000: 0.19 ms direct, 0.5-0.6 blocked and padded).
_BLOCKED_MIN_K = 16


# A product of one row (a GEMV) whose right-hand side is known at build time takes the
# blocked form (the panels packed once; a broadcast of x[k] against 4 vectors of a panel
# row, against the dot form's two loads per FMA and a horizontal sum per output) while
# that weight is at most this large; larger weights stream from memory in both forms and
# the dot form reads fewer bytes (no padded columns). Kernel times, one thread (two):
# 1x784 by 128 6.35 -> 3.85 us, 1x512 by 512 17.5 -> 7.6 (11.5 -> 5.7); 2 MiB (1024 by
# 512) 36.9 -> 36.5 (31.7 -> 36.0); 8 MiB (2048 by 1000) 279 -> 295. Two rows: 2x512 by
# 512 34.2 -> 9.3, 2x2048 by 1000 555 -> 304 us, blocked at any size.
_GEMV_BLOCKED_MAX_BYTES = 1 << 20


def _use_blocked(shape: tuple, nbatch: int, kext: int, dt: str, short: bool = False,
                 packed_weight: bool = False, contiguous_dot: bool = True) -> int:
    """The column block of a blocked GEMM for this product (0: the other form): 4 or
    more rows (fewer with `packed_weight`, a right-hand side known at build whose panels
    are packed once: two or three rows, or one while that weight is at most
    `_GEMV_BLOCKED_MAX_BYTES` or the dot form would read it strided, not
    `contiguous_dot`), `_SMALL_N_MIN_ROWS` for fewer than 16 columns padded to a block, a
    column block, a reduction of at least `_BLOCKED_MIN_K` (shorter ones: only with
    `short`, dense's earlier rule, and a block dividing the columns)."""
    rows = math.prod(shape[nbatch:-1])
    if kext <= 0 or dt == "bool" or 0 in shape:
        return 0
    if rows < 4:
        small = kext * shape[-1] * 4 <= _GEMV_BLOCKED_MAX_BYTES
        if not packed_weight or (rows == 1 and contiguous_dot and not small):
            return 0
    if kext < _BLOCKED_MIN_K:
        return next((k for k in _BLOCKS if shape[-1] % k == 0), 0) if short else 0
    ob = _gemm_block(shape[-1])
    if shape[-1] < ob and rows < _SMALL_N_MIN_ROWS:
        return 0            # a padded block of few columns pays only over enough rows
    return ob


@implement("nn.dense", target="llvm")
def dense(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    x, w = inputs
    shape, dt = _out(out_type)
    ob = _use_blocked(shape, 0, x.shape[-1], dt, short=True,
                      packed_weight=b.is_build_constant(w))
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
    ob = (_use_blocked(shape, 0, kext, dt, packed_weight=b.is_build_constant(c),
                       contiguous_dot=tb)
          if a.ndim >= 2 and c.ndim == 2 else 0)
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


