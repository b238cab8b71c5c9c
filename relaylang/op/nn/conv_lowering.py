"""LLVM lowerings of nn.conv1d/2d/3d (blocked, direct, depthwise and channels-last forms;
see llvm_lowering.py's docstring for the loop shapes)."""
from __future__ import annotations

import math
from typing import Any

from ..registry import implement
from .lowering_support import _BLOCKS, _acc, _out, _finish, _product


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


