"""LLVM lowering of nn.contrib_conv2d_NCHWc (channel-blocked 2-D convolution).

    out[n, ob, h, w, oc] = sum over (icb, kh, kw, ic) of
                           in[n, icb, h*s + kh*d, w*s + kw*d, ic] * W[ob, icb, kh, kw, ic, oc]

The data arrives blocked (NCHW{ic}c) and the weight pre-laid out at build time
(OIHW{ic}i{oc}o, folded by FoldConstant after AlterOpLayout), so the kernel re-lays out
nothing: the output is written in its own blocked layout, which the next convolution
reads as it is. The scheduler (backend/llvm/schedule.py) register-blocks the reduction:
the output's block of `oc` channels is the vector tile (the weight's contiguous last
axis), a row of output pixels (`w`) shares each weight vector (`_row_block`), and the
leading dims (n, ob, h) are the parallel loop; each input pixel's `ic` channels are
contiguous, read one broadcast at a time.

Narrow outputs (7x7, 14x14) flatten the pixels (h * OW + w), as conv_lowering.py's
FLAT_PIXELS path does, so a row block runs across image rows; the output is then a copy
of that stage in the output's order (the scheduler runs it in the stage's order).
Padding: each parallel iteration pads what it reads (`_padded`): no padded copy of the
whole input that every call of the kernel would repeat as a prologue.

Weights: large blocks of weights (the late layers: 1.2 MiB per output block at
512@7x7) come from memory once per call; K blocking runs the reduction in chunks of one
kernel position's weights (`conv.k_merge`), every row block per chunk, and the
scheduler prefetches the next chunk while this one is computed
(`schedule.prefetch_chunks`), so the stream overlaps the arithmetic.
"""
from __future__ import annotations

from typing import Any

from ..registry import implement
from .lowering_support import _acc, _conv_window, _finish, _out, _product

# Outputs at most this wide (and taller than one row) flatten their pixels (see
# conv_lowering.FLAT_PIXELS_MAX_WIDTH, measured there: a 7-wide row would split into
# row blocks of 4 + 3).
NCHWC_FLAT_MAX_WIDTH = 16

# Padding by rows inside the parallel loop needs this many input channels per block (a
# vector's worth: the rows are copied a block of channels at a time); fewer (the RGB
# stem, NCHW3c) pad the whole input in a prologue. Measured on the stem (7x7/2, 3->64,
# 224x224, with bias and relu, one thread): rows 1.33-1.36 ms, whole 1.15-1.17 ms.
NCHWC_ROW_PAD_MIN_CHANNELS = 8

# K blocking: the default of the scheduler's knob schedule.k_chunk_bytes for these
# kernels (0: off): when one output block's weights exceed it, the reduction runs in
# chunks of about that many bytes of weights, all the row blocks of a parallel iteration
# per chunk, so a chunk comes from memory once for the whole row of pixels and is then
# reused from L1 (without it, the first row block streams the whole block of weights).
NCHWC_K_CHUNK_BYTES = 24576
K_CHUNK_CHOICES = (0, 16384, 24576, 49152, 131072, 524288)

# The reduction's first axis, which K blocking chunks (knob conv.k_merge; kernels with
# more than one input channel block and kernel row): 2 the blocks x kernel positions
# (chunks of one position's ic * oc weights, 16 KiB at 64x64: a third of L1 next to
# the pixels, where a kernel row's 48 KiB filled it), 1 the blocks x kernel rows, 0 the
# blocks alone. Measured on ResNet-50's 3x3 layers (one thread, weights flushed from
# the caches and the input warm, as inside the model; cpu-time medians of 40
# interleaved calls, 2 against 1): 512@7 -5%, 512@14/2 -4%, 256@14 -5%, 128@56/2 -7%,
# 128@28 +-1%; the whole model (1 thread, cpu time, 3 alternating runs, with prefetch
# on against both off) 66-70 ms against 74-76.
NCHWC_K_MERGE = 2

# Software prefetch under K blocking (the scheduler's knob schedule.prefetch_chunks,
# there off by default; PREFETCH_LOCALITY in schedule.py): the weights one chunk ahead
# stream into L2 while the current chunk is computed. Measured as above (1 against 0):
# 2048->512 1x1 @7 -15%, 512@7 3x3 -14%, 1024->2048 1x1/2 @14 -8%, 256@14 -6%,
# 128@28 -2%; 2 chunks ahead measured the same as 1, prefetcht0 / prefetcht2 the same
# or worse than prefetcht1, prefetchnta 3x slower.
NCHWC_PREFETCH_CHUNKS = 1
PREFETCH_CHUNK_CHOICES = (0, 1, 2)


@implement("nn.contrib_conv2d_NCHWc", target="llvm")
def conv2d_nchwc(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from .conv_relations import nchwc_geometry
    g = nchwc_geometry(attrs)
    data, weight = inputs
    shape, dt = _out(out_type)
    strides, dil, pads = _conv_window(g, dt)
    acc = _acc(dt)
    cb, ic = data.shape[1], data.shape[4]
    ob, _, kh, kw, _, oc = weight.shape
    nb, _, oh, ow, _ = shape

    flat = 2 <= ow <= NCHWC_FLAT_MAX_WIDTH and oh > 1
    src = _padded(b, data, pads, strides, dil, (nb, ob, oh, ow, oc), kh, flat)
    # K blocking (the scheduler's, knob schedule.k_chunk_bytes, here with a default of
    # its own): the reduction runs in chunks along its first axis, every row block of the
    # parallel iteration per chunk, the partial sums kept in the stage between chunks
    b.knob("schedule.k_chunk_bytes", NCHWC_K_CHUNK_BYTES, K_CHUNK_CHOICES)
    # software prefetch of the next chunk's weights (the scheduler's knob, off there)
    b.knob("schedule.prefetch_chunks", NCHWC_PREFETCH_CHUNKS, PREFETCH_CHUNK_CHOICES)
    # the reduction's first axis (the one K blocking chunks; NCHWC_K_MERGE): 2 the
    # input channel blocks and kernel positions (chunks of one position's ic * oc
    # weights), 1 the blocks and kernel rows (chunks of kw * ic * oc), 0 the blocks
    merge = 0
    if kh * kw > 1:
        merge = b.knob("conv.k_merge", NCHWC_K_MERGE if kh > 1 and cb > 1 else 0,
                       (0, 1, 2) if kh > 1 else (0, 2))
    if merge == 2:
        rp = b.reduce_axis(cb * kh * kw, "rp")
        rcb, rkh, rkw = rp / (kh * kw), (rp / kw) % kh, rp % kw
        axes = [rp]
    elif merge == 1:
        rq = b.reduce_axis(cb * kh, "rq")
        rcb, rkh = rq / kh, rq % kh
        rkw = b.reduce_axis(kw, "rkw")
        axes = [rq, rkw]
    else:
        rcb, rkh, rkw = (b.reduce_axis(cb, "rcb"), b.reduce_axis(kh, "rkh"),
                         b.reduce_axis(kw, "rkw"))
        axes = [rcb, rkh, rkw]
    ric = b.reduce_axis(ic, "ric")
    t = _conv(b, data, src, weight, acc, strides, dil, (nb, ob, oh, ow, oc), flat,
              (rcb, rkh, rkw, ric), axes + [ric])
    if flat:
        return b.compute(shape, lambda n, o, y, x, i: b.cast(t[(n, o, y * ow + x, i)], dt),
                         dtype=dt, name="conv2d_nchwc_out")
    return _finish(b, t, dt, "conv2d_nchwc_cast")


def _padded(b: Any, data: Any, pads: list, strides: list, dil: list, oshape: tuple,
            kh: int, flat: bool) -> Any:
    """The input as the convolution reads it: `data` itself without padding, else a
    padded copy made inside the parallel loop, so that each parallel iteration pads only
    what it reads (no prologue every call repeats). It is indexed with the output's
    leading axes, which the scheduler fuses into its parallel loop: flattened pixels
    (parallel over n, ob) pad the whole input, pad[n, o, c, y, x, i]; rows (parallel over
    n, ob, h) the `kh` input rows of output row h, pad[n, o, h, c, r, x, i] (row
    h * s + r * d of the padded input). Either is a small part of the work: the whole
    input per output channel block, or kh rows per output row and block. (Reading the
    input in place under a select instead measured 1.45-1.6x slower: 3x3 64@56 1.08 ms
    against 1.58, 512@7 1.35 against 1.98-2.47.)"""
    if not any(p or q for p, q in pads):
        return None
    nb, ob, oh = oshape[:3]
    n_, cb, h_, w_, ic = data.shape
    (pt, pb), (pl, pr) = pads
    wp = w_ + pl + pr

    def at(n: Any, c: Any, y: Any, x: Any, i: Any) -> Any:
        """data at padded coordinates (y, x), zero outside."""
        conds = []
        if pt or pb:
            yy = y - pt
            conds.append(b.logical_and(b.ge(yy, 0), b.lt(yy, h_)))
            y = b.min(b.max(yy, 0), max(h_ - 1, 0))
        if pl or pr:
            xx = x - pl
            conds.append(b.logical_and(b.ge(xx, 0), b.lt(xx, w_)))
            x = b.min(b.max(xx, 0), max(w_ - 1, 0))
        if data.size == 0:
            return b.const(0, data.dtype)
        value = data[(n, c, y, x, i)]
        if not conds:
            return value
        inside = conds[0] if len(conds) == 1 else b.logical_and(conds[0], conds[1])
        return b.select(inside, value, b.const(0, data.dtype))
    if not flat and ic < NCHWC_ROW_PAD_MIN_CHANNELS:
        # a few channels (an RGB stem): rows of 3 would not vectorise; the whole padded
        # input once per call instead (a prologue: it is small)
        return ("whole", b.materialize(b.compute(
            (n_, cb, h_ + pt + pb, wp, ic), at, dtype=data.dtype, name="conv_pad")))
    if flat:
        return ("flat", b.materialize(b.compute(
            (nb, ob, cb, h_ + pt + pb, wp, ic),
            lambda n, o, c, y, x, i: at(n, c, y, x, i), dtype=data.dtype, name="conv_pad")))
    return ("rows", b.materialize(b.compute(
        (nb, ob, oh, cb, kh, wp, ic),
        lambda n, o, h, c, r, x, i: at(n, c, h * strides[0] + r * dil[0], x, i),
        dtype=data.dtype, name="conv_pad")))


def _conv(b: Any, data: Any, src: Any, weight: Any, acc: str, strides: list, dil: list,
          oshape: tuple, flat: bool, index: tuple, axes: list) -> Any:
    """The convolution's stage: (N, OB, OH, OW, oc), or (N, OB, OH * OW, oc) with the
    pixels flattened; `index` the input channel block, kernel row and column and input
    channel (expressions of the reduction `axes`)."""
    nb, ob, oh, ow, oc = oshape
    cblk, rkh, rkw, ric = index

    def pixel(n: Any, o: Any, y: Any, x: Any) -> Any:
        xx = x * strides[1] if strides[1] != 1 else x
        xx = xx + (rkw * dil[1] if dil[1] != 1 else rkw)
        if src is not None and src[0] == "rows":
            return src[1][(n, o, y, cblk, rkh, xx, ric)]
        yy = y * strides[0] if strides[0] != 1 else y
        yy = yy + (rkh * dil[0] if dil[0] != 1 else rkh)
        if src is not None and src[0] == "whole":
            return src[1][(n, cblk, yy, xx, ric)]
        if src is not None:
            return src[1][(n, o, cblk, yy, xx, ric)]
        return data[(n, cblk, yy, xx, ric)]

    def wgt(o: Any, i: Any) -> Any:
        return weight[(o, cblk, rkh, rkw, ric, i)]

    if flat:
        def fflat(n: Any, o: Any, hw: Any, i: Any) -> Any:
            return b.reduce_sum(_product(b, pixel(n, o, hw / ow, hw % ow), wgt(o, i), acc),
                                axes)
        return b.compute((nb, ob, oh * ow, oc), fflat, dtype=acc, name="conv2d_nchwc")

    def f(n: Any, o: Any, y: Any, x: Any, i: Any) -> Any:
        return b.reduce_sum(_product(b, pixel(n, o, y, x), wgt(o, i), acc), axes)
    return b.compute(oshape, f, dtype=acc, name="conv2d_nchwc")
