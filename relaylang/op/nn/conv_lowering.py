"""LLVM lowerings of nn.conv1d/2d/3d: which form a convolution takes (the constants
below say what was measured):

- blocked (`_blocked_conv`): T[n, o // B, *sp, o % B], the weight re-laid out as
  Wb[o // B, c, *k, o % B] (packed at build time when constant), a register tile of B
  output channels fed by broadcast input pixels, rows of pixels sharing each weight
  vector (the scheduler's `_row_block`). Every convolution with groups == 1 that is not
  direct: B is the widest of 64/32/16/8 dividing the output channels, or, when that is
  below PADDED_BLOCK_MIN (20, 24, 36 channels), 16 with the last block padded by
  zero-weight channels. Grouped ones: a block dividing the channels per group.
  Depthwise (multiplier 1) with a stride or a narrow output: the padded input re-laid
  out in blocks of 16 channels per parallel iteration, rows of its pixels sharing each
  weight vector (`schedule.ROW_BLOCK_ELEMENTWISE`).
- direct (`f` in `_conv`): out[n, o, *sp] with a tile of output columns innermost, the
  window read contiguously: a short reduction (_DIRECT_REDUCTION) whose block would be
  at most _DIRECT_MAX_BLOCK channels (MNIST-like 1 -> 8), wide stride-1 depthwise
  layers (DEPTHWISE_DIRECT_MIN_WIDTH, each parallel iteration padding its own channel
  plane), and grouped convolutions without a block. Rows are computed
  `_direct_width` wide (whole tiles; zero padding added on the right), and a stride
  along W reads the padded input split into phases (PHASE_SPLIT).
- channels last: T[n, *sp, o] (only when PADDED_BLOCK_MIN is 0).
- padding: a materialised padded copy (per channel plane in the direct depthwise
  form), so the reductions have no bounds checks.
"""
from __future__ import annotations

import math
from typing import Any

from ..registry import implement
from .lowering_support import _BLOCKS, _acc, _conv_window, _finish, _out, _product


# Depthwise convolutions (one input channel per group, multiplier 1) with unit strides
# and an output at least this wide use the direct form, the innermost loop a tile of
# output columns read contiguously from one channel's padded plane (each parallel
# iteration pads its own channel); others use blocks of channels (`_blocked_conv`).
# Measured (one 3x3 layer, 1 / 2 threads, ms): 128x56x56 blocked 0.29-0.32 / 0.31-0.46,
# direct 0.35 / 0.19; 32x112x112 0.29-0.35 / 0.34-0.77 against 0.26 / 0.26; but
# 256x28x28 blocked 0.16 / 0.09 against 0.35 / 0.18, 1024x7x7 0.05 / 0.03 against
# 0.22 / 0.12, and stride 2 blocked everywhere (64x112x112 /2: 0.29 / 0.28 against 0.39).
# Again with the blocked form's row blocks and the direct form's widened rows (1 thread,
# ms, blocked / direct): 128x56x56 0.234 / 0.251, 32x112x112 0.271 / 0.269, 256x28x28
# 0.134 / 0.145: close on one core, kept (2 threads not measurable then: the second core
# was busy).
DEPTHWISE_DIRECT_MIN_WIDTH = 48


def _depthwise_direct(cin: int, opg: int, groups: int, strides: list, width: int) -> bool:
    unit = all(s == 1 for s in strides) or (DEPTHWISE_DIRECT_STRIDED and PHASE_SPLIT)
    return (cin == 1 and opg == 1 and groups > 1 and unit
            and width >= DEPTHWISE_DIRECT_MIN_WIDTH)


# Strided wide depthwise layers in the direct form too (the input split into phases)?
# Measured slower (64x112x112 /2, 1 thread, machine loaded, ms: blocked 0.50, direct
# with phases 0.74): off.
DEPTHWISE_DIRECT_STRIDED = 0


def _block(ocount: int, opg: int, cin: int, groups: int) -> int:
    """The output channel block of the blocked convolution (0: not blocked). A block lies
    in one group; depthwise (one input channel per group and output) blocks channels."""
    if cin == 1 and opg == 1 and groups > 1:
        return next((k for k in (16, 8, 4) if ocount % k == 0), 0)
    return next((k for k in _BLOCKS + (4,) if opg % k == 0), 0)


# One group whose output channels have no block of at least PADDED_BLOCK_MIN dividing
# them (and not the direct form): blocks of 16 (8 for at most 8 channels), the last
# padded with zero-weight channels that the epilogue skips. Blocks of 4 (a 4-lane tile)
# and the channels-last form measured far slower (ms, 1 thread, 3x3 pad 1, blocks of 4
# / channels last / padded): 16->20 at 28x28 0.523 / 0.044 / 0.055, 32->36 at 14x14
# 0.498 / 0.088 / 0.040, 16->12 at 30x30 0.364 / 0.181 / 0.034, 8->4 at 56x56 0.218 /
# 0.219 / 0.045; blocks of 8 against padded 16: 16->24 at 28x28 0.065 / 0.050, 64->40
# at 14x14 0.118 / 0.070.
PADDED_BLOCK_MIN = 16


def _padded_block(ocount: int, opg: int) -> int:
    """The block of the blocked form with zero-padded output channels (0: none)."""
    if opg != ocount or not PADDED_BLOCK_MIN:
        return 0
    return 8 if ocount <= 8 else 16


# The direct NCHW form (innermost loop a tile of output columns, the window read
# contiguously; no row blocking, so only the tile's few vectors accumulate) for a short
# reduction (input channels per group times the window, at most _DIRECT_REDUCTION) when
# the blocked form's block of output channels would be at most _DIRECT_MAX_BLOCK.
# Measured (one conv + bias + clip or relu, 1 thread, ms, direct / blocked): the
# MobileNet stem 3->32 3x3 /2 224: 1.69 / 0.21; 1x1 32->64 at 112: 1.63 / 0.51; 3->16
# 3x3 at 64: 0.051 / 0.035; 2->16 3x3 /2 at 100: 0.065 / 0.022. Blocks of 8 and fewer
# (rows widened by `_direct_width`): 3->8 3x3 at 64 0.025 / 0.032, 1->8 5x5 at 64 0.020 /
# 0.030, 1->4 5x5 at 28 0.0038 / 0.0052, 1->8 5x5 at 28 0.0066 / 0.0057, 3->8 3x3 at
# 112 0.125 / 0.097, 1x1 16->4 at 56 0.018 / 0.013: mixed, so they stay direct, except
# with a stride along the tile's W (_DIRECT_UNIT_STRIDE), where even with the input
# split into phases (PHASE_SPLIT) the blocked form is faster: 3->8 3x3 /2 at 224 0.32 /
# 0.22, 1->8 5x5 /2 at 57 0.0090 / 0.0070, 2->4 3x3 /2 at 30 0.0022 / 0.0022 (strided
# loads without phases: 0.69, 0.051, 0.0051).
_DIRECT_REDUCTION = 32
_DIRECT_MIN_WIDTH = 8
_DIRECT_MAX_BLOCK = 8
_DIRECT_UNIT_STRIDE = 1


def _direct(cin: int, ksize: list, width: int, groups: int, ob: int,
            strided_rows: bool = False) -> bool:
    """`strided_rows`: a stride along the output's contiguous W (the tile's axis)."""
    return (groups == 1 and cin * math.prod(ksize) <= _DIRECT_REDUCTION
            and width >= _DIRECT_MIN_WIDTH and ob <= _DIRECT_MAX_BLOCK
            and not (strided_rows and _DIRECT_UNIT_STRIDE))


def _padded_channels(ocount: int) -> int:
    """The channels-last form's output channel count, rounded up to a multiple of 16
    above 16 (zero weights): whole vectors in the tile (MNIST's 50 -> 64)."""
    if ocount <= 16 or ocount % 16 == 0:
        return ocount
    return -(-ocount // 16) * 16


# The direct forms compute a row of output columns in tiles of 64 float32 (the
# scheduler's TILE_BYTES); LLVM keeps a tile of 16, 32 or 64 columns in registers but a
# remainder tile of 48 or a 56-wide row (MobileNet's 112 and 56) in memory, one load and
# store per FMA: the row is computed this wide instead (zero padding on the right, the
# extra columns dropped). Measured (one conv + bias + clip, 1 thread, ms, as wide /
# widened): depthwise 3x3 128x56x56 0.360 / 0.257; 1->4 5x5 at 28 wide 0.0118 / 0.0037;
# depthwise 32x112x112 to 128 columns 0.271 / 0.282 (so multiples of 16 stay).
DIRECT_TILE = 64

# The direct forms at a stride along W read the padded input split into its phases (a
# row of every s-th column each; `_conv`'s `phased`), not every s-th column in each
# tap. Measured (conv + bias + clip, 1 thread, ms, strided reads / phases): 3->8 3x3 /2
# at 224 0.69 / 0.32, 1->8 5x5 /2 at 57 0.051 / 0.009, 2->4 3x3 /2 at 30 0.0051 /
# 0.0022 (those now take the blocked form, _DIRECT_UNIT_STRIDE; grouped convolutions
# without a block of channels still use it).
PHASE_SPLIT = 1


def _direct_width(width: int) -> int:
    """The direct forms' computed row width: below one tile, `width` rounded up to 16,
    32 or DIRECT_TILE columns; above, to a multiple of 16 (a last tile of 16, 32 or 48
    stays in memory, but rounding 112 up to 128 cost as much as it saved); unchanged
    when at most 8."""
    if not DIRECT_TILE or width <= 8:
        return width
    if width > DIRECT_TILE:
        return -(-width // 16) * 16
    return next(w for w in (16, 32, DIRECT_TILE) if w >= width)


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

    nblk = -(-ocount // ob)         # a last block of zero-weight channels (groups == 1)
    assert nblk * ob == ocount or opg == ocount

    def fwb(blk: Any, c: Any, *r: Any) -> Any:
        widx: list[Any] = [0] * (nd + 2)
        o = blk * ob + r[-1]
        widx[wpos[0]], widx[wpos[1]] = o if nblk * ob == ocount else b.min(o, ocount - 1), c
        for j in range(nd):
            widx[wpos[2 + j]] = r[j]
        if nblk * ob == ocount:
            return weight[tuple(widx)]
        return b.select(b.lt(o, ocount), weight[tuple(widx)], b.const(0, weight.dtype))
    wb = b.materialize(b.compute((nblk, cin) + tuple(ksize) + (ob,), fwb,
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
        pb = b.materialize(b.compute((src.shape[dpos[0]], nblk) + psp + (ob,), fpb,
                                     name="conv_input_b"))

        def fdw(n: Any, blk: Any, *rest: Any) -> Any:
            sp, oi = list(rest[:-1]), rest[-1]
            pidx = [sp[j] * strides[j] + rk[j] * dil[j] for j in range(nd)]
            return b.reduce_sum(_product(b, pb[(n, blk) + tuple(pidx) + (oi,)],
                                         wb[(blk, 0) + tuple(rk) + (oi,)], acc), rk)
        t = b.compute((nb, nblk) + osp + (ob,), fdw, dtype=acc, name=f"conv{nd}d")
    elif (nd == 2 and 2 <= osp[1] <= 2 * FLAT_PIXELS_MAX_WIDTH and osp[0] > 1
          and nb * nblk >= FLAT_PIXELS_MIN_BLOCKS
          and b.knob("conv.flat_pixels", int(osp[1] <= FLAT_PIXELS_MAX_WIDTH), (0, 1))):
        # narrow outputs (7x7, 14x14): the pixels flattened, so that the scheduler's row
        # blocks (up to 6 pixels sharing each weight vector) run across image rows
        # instead of splitting a 7-wide row into 4 + 3 (the parallel loop is then over
        # the batch and the channel blocks only: at least FLAT_PIXELS_MIN_BLOCKS)
        oh, ow = osp

        def ff(n: Any, blk: Any, hw: Any, oi: Any) -> Any:
            c = rc if opg == ocount else ((blk * ob) / opg) * cin + rc
            return b.reduce_sum(_product(b, data_at(n, c, [hw / ow, hw % ow]),
                                         wb[(blk, rc) + tuple(rk) + (oi,)], acc), [rc] + rk)
        t = b.compute((nb, nblk, oh * ow, ob), ff, dtype=acc, name=f"conv{nd}d")

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
        t = b.compute((nb, nblk) + osp + (ob,), fb, dtype=acc, name=f"conv{nd}d")

    def fout(*i: Any) -> Any:
        o = i[opos[1]]
        return b.cast(t[(i[opos[0]], o / ob) + tuple(i[opos[2 + j]] for j in range(nd))
                        + (o % ob,)], dt)
    return b.compute(shape, fout, dtype=dt, name=f"conv{nd}d_out")


def _conv(nd: int) -> Any:
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        from .conv_layouts import is_blocked
        from .conv_relations import conv_geometry
        if is_blocked(attrs):
            return _relaid(lower, b, inputs, attrs, out_type)
        g = conv_geometry(attrs, nd)
        data, weight = inputs
        shape, dt = _out(out_type)
        strides, dil, pads = _conv_window(g, dt)
        acc = _acc(dt)
        dpos, wpos, opos = g.data_pos, g.weight_pos, g.out_pos
        groups = int(attrs.groups)
        weight = _standard_weight(b, weight, data.shape[dpos[1]], wpos, groups)
        cin = weight.shape[wpos[1]]                     # input channels per group
        ocount = weight.shape[wpos[0]]
        opg = ocount // groups
        ksize = [weight.shape[wpos[2 + j]] for j in range(nd)]
        sizes = [data.shape[dpos[2 + j]] for j in range(nd)]

        width = shape[opos[-1]] if nd else 0
        direct = _direct(cin, ksize, width, groups, _block(ocount, opg, cin, groups),
                         bool(nd) and strides[-1] > 1 and opos[-1] == nd + 1)
        ob = 0 if direct or _depthwise_direct(cin, opg, groups, strides, width) else \
            _block(ocount, opg, cin, groups)
        if (PADDED_BLOCK_MIN and not direct and groups == 1 and ob < PADDED_BLOCK_MIN
                and ocount % PADDED_BLOCK_MIN):
            ob = _padded_block(ocount, opg)
        elif ob:
            # the knob conv.block: any block dividing the channels the form blocks
            per = ocount if (cin == 1 and opg == 1 and groups > 1) else opg
            ob = b.knob("conv.block", ob, tuple(k for k in _BLOCKS + (4,) if per % k == 0))
        dw_blocked = bool(ob and cin == 1 and opg == 1 and groups > 1)
        # the direct forms (`f` below: NCHW-like output, a tile of output columns) compute
        # rows `_direct_width` wide, the extra columns reading extra zero padding on the
        # right (dropped by the cast that follows)
        wide = width
        if (not ob and (direct or groups > 1) and nd and opos[-1] == nd + 1
                and dpos[-1] == nd + 1):
            wide = _direct_width(width)
            if wide != width:
                pl, pr = pads[-1]
                need = (wide - 1) * strides[-1] + (ksize[-1] - 1) * dil[-1] + 1
                pads[-1] = (pl, max(pr, need - sizes[-1] - pl))

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
        # the direct forms at a stride along W: the (padded) input split into phases,
        # P2[.., r, ph, q] = P[.., r, q * s + ph], so that a tap reads a contiguous row
        # of one phase (q = w + kw * d // s) instead of every s-th column
        stride_w = strides[-1] if nd else 1
        phased = (PHASE_SPLIT and width > 0 and not ob and (direct or groups > 1)
                  and nd and stride_w > 1 and opos[-1] == nd + 1 and dpos[-1] == nd + 1)
        if phased:
            padded, wp = src, src.shape[-1]
            nq = -(-wp // stride_w)

            def fphase(*i: Any) -> Any:
                col = i[-1] * stride_w + i[-2]
                v = padded[tuple(i[:-2]) + (b.min(col, wp - 1),)]
                return b.select(b.lt(col, wp), v, b.const(0, data.dtype))
            src = b.compute(tuple(padded.shape[:-1]) + (stride_w, nq), fphase,
                            dtype=data.dtype, name="conv_phases")
        if src is not data and not dw_blocked:
            src = b.materialize(src)    # depthwise blocked re-lays it out (padding included)

        rc = b.reduce_axis(cin, "rc")
        rk = [b.reduce_axis(k, f"rk{j}") for j, k in enumerate(ksize)]

        def data_at(n: Any, c: Any, sp: list) -> Any:
            didx: list[Any] = [0] * (nd + 2)
            didx[dpos[0]], didx[dpos[1]] = n, c
            for j in range(nd):
                pos = sp[j] * strides[j] if strides[j] != 1 else sp[j]
                off = rk[j] * dil[j] if dil[j] != 1 else rk[j]
                didx[dpos[2 + j]] = pos + off
            if phased:
                off = rk[-1] * dil[-1] if dil[-1] != 1 else rk[-1]
                didx[-1] = sp[-1] + off / stride_w
                return src[tuple(didx[:-1]) + (off % stride_w, didx[-1])]
            return src[tuple(didx)]

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
        if wide == width:
            t = b.compute(shape, f, dtype=acc, name=f"conv{nd}d")
            return _finish(b, t, dt, f"conv{nd}d_cast")
        t = b.compute(tuple(shape[:-1]) + (wide,), f, dtype=acc, name=f"conv{nd}d")
        return b.compute(shape, lambda *i: b.cast(t[i], dt), dtype=dt, name=f"conv{nd}d_cast")
    lower.__name__ = f"conv{nd}d"
    return lower


def _standard_weight(b: Any, weight: Any, channels: int, wpos: list[int], groups: int) -> Any:
    """TVM's depthwise weight with a channel multiplier, (C, M, k...) in OIHW terms
    (`conv_layouts.depthwise_multiplier`), as the (C * M, 1, k...) it reshapes to, in
    the same layout; any other weight as it is."""
    from .conv_layouts import depthwise_multiplier
    o, i = wpos[0], wpos[1]
    m = depthwise_multiplier(channels, weight.shape[o], weight.shape[i], groups)
    if not m:
        return weight
    shape = list(weight.shape)
    shape[o], shape[i] = shape[o] * m, 1

    def f(*j: Any) -> Any:
        idx = list(j)
        idx[o], idx[i] = j[o] / m, j[o] % m
        return weight[tuple(idx)]
    return b.compute(tuple(shape), f, dtype=weight.dtype, name="conv_weight_dm")


def _relaid(lower: Any, b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    """A convolution in blocked layouts (`conv_layouts`): `lower` on the operands re-laid
    to the plain layouts (layout_transform's lowering: index maps the convolution reads
    through), the result re-laid to out_layout. The layout passes turn the common NCHWc
    form into nn.contrib_conv2d_NCHWc, whose kernels read the blocks directly; this is
    the general form."""
    from ...ir.types import TensorType
    from .conv_layouts import lowered_relayout, out_layout_of, plain_attrs, plain_shape
    data, weight = inputs
    plain = plain_attrs(attrs)
    shape, dt = _out(out_type)
    x = lowered_relayout(b, data, attrs.data_layout, plain.data_layout,
                         plain_shape(data.shape, attrs.data_layout, "data_layout", 0),
                         data.dtype)
    w = lowered_relayout(b, weight, attrs.kernel_layout, plain.kernel_layout,
                         plain_shape(weight.shape, attrs.kernel_layout, "kernel_layout", 1),
                         weight.dtype)
    out_layout = out_layout_of(attrs)
    plain_out = plain_shape(shape, out_layout, "out_layout", 0)
    y = lower(b, [x, w], plain, TensorType(plain_out, dt))
    return lowered_relayout(b, y, plain.out_layout or plain.data_layout, out_layout, shape, dt)


for _nd in (1, 2, 3):
    implement(f"nn.conv{_nd}d", target="llvm")(_conv(_nd))


