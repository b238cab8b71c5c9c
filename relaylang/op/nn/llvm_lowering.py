"""LLVM lowerings of the nn family (see /work/llvm_spec.md, "The lowering API").

Semantics follow `numpy_kernels.py` and `conv_kernels.py`: dense, matmul,
batch_matmul and the convolutions compute in the output dtype (inputs cast to it
first, so int8 x int8 with out_dtype int32 accumulates in int32); float16 computes in
float32 with a float32 accumulator and is rounded once, as `float16_in_float32` does
(softmax, log_softmax, layer_norm and batch_norm too). nn.pad supports the constant,
edge and reflect modes; nn.dropout is the inference identity (and a mask of ones).

Where the loop shapes are described (what `backend/llvm/schedule.py` makes of them):
`gemm_lowering.py` (dense, matmul, batch_matmul: the blocked GEMM), `conv_lowering.py`
(the convolution forms: blocked, direct, depthwise, channels-last) and
`conv_nchwc_lowering.py` (nn.contrib_conv2d_NCHWc, the channel-blocked layout
AlterOpLayout chooses for the llvm target). Padding is a materialised padded copy of
the input (no bounds checks in the reduction); kernels with stages of different shapes
(a padded input, a re-laid weight, the blocked result) are parallel: the scheduler has
every call compute the cheap stages (the prologue) itself and splits the blocked result
with its epilogue.
"""
from __future__ import annotations

import math
from typing import Any

from ..registry import implement
from . import conv_lowering, gemm_lowering  # noqa: F401  (their @implement registrations)
from . import conv_nchwc_lowering  # noqa: F401  (nn.contrib_conv2d_NCHWc)
from . import depthwise_nchwc_lowering  # noqa: F401  (nn.contrib_depthwise_conv2d_NCHWc)
from .lowering_support import _acc, _widen, _out, _finish, _axis, _is_float, _product, _row_index


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


@implement("nn.upsampling3d", target="llvm")
def upsampling3d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from ..image.llvm_lowering import resize_axes_lowering
    from .resample_kernels import upsampling3d_axes, upsampling3d_resampling
    (x,) = inputs
    _, dt = _out(out_type)
    return resize_axes_lowering(b, x, upsampling3d_axes(tuple(x.shape), attrs),
                                upsampling3d_resampling(attrs), dt)


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
