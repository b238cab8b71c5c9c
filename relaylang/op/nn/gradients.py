"""Gradient rules of the nn family (TVM's FPrimalGradient, python/tvm/relay/op/_tensor_grad.py).

A rule takes the forward call `orig` (typed: its args carry `checked_type`, `orig.attrs`
its attributes) and the adjoint `grad` of its output (a tuple-typed output gets a
tuple-typed adjoint) and returns one untyped expression per input, of that input's type.
Shapes are read from the checked types (they are concrete where a rule needs them);
broadcast inputs get their gradient summed back with `collapse_sum_like`.

Convolutions: the data gradient is the transposed convolution of the adjoint (TVM's
choice); the weight gradient is itself a convolution, of the data (channels and batch
swapped, groups kept by folding the batch into the channel axis) by the adjoint (its
spatial extent as the kernel), with strides and dilation exchanged -- every step an op
that has a native lowering, for any layout (transposed to N C spatial.. and back) and
any strides, padding, dilation and groups.
"""
from __future__ import annotations

from typing import Any

from ...ir import builder
from ...ir.expr import Expr
from .. import make
from ..registry import implement
from .conv_layouts import (
    depthwise_multiplier,
    is_blocked,
    out_layout_of,
    plain_attrs,
    plain_shape,
)
from .conv_relations import SPATIAL, conv_geometry


class GradientNotSupported(NotImplementedError):
    """The op has a gradient rule, but not for these attributes (the message says which)."""


# ------------------------------------------------------------------ helpers


def shape_of(e: Expr) -> tuple[int, ...]:
    """The concrete shape of a typed expression (a rule needs it to build its graph)."""
    t = e.checked_type
    shape = getattr(t, "shape", None)
    if shape is None or not all(isinstance(d, int) for d in shape):
        raise GradientNotSupported(f"the gradient needs a tensor of known shape, got {t}")
    return tuple(int(d) for d in shape)


def dtype_of(e: Expr) -> str:
    return e.checked_type.dtype


def scalar(value: float, like: Expr) -> Expr:
    return builder.const(value, dtype_of(like))


def field(e: Expr, i: int) -> Expr:
    """Field i of a tuple-valued expression (a Tuple node's field itself)."""
    fields = getattr(e, "fields", None)
    if fields is not None:
        return fields[i]
    return builder.TupleGetItem(e, i)


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def inverse_perm(perm: list[int]) -> list[int]:
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return inv


def maybe_transpose(e: Expr, perm: list[int]) -> Expr:
    return e if list(perm) == list(range(len(perm))) else make.transpose(e, axes=tuple(perm))


def along(v: Expr, axis: int, rank: int) -> Expr:
    """A vector of the channels of `axis`, shaped to broadcast in a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return v if rank == 1 else make.reshape(v, newshape=tuple(shape))


def reduce_except(g: Expr, axis: int, rank: int) -> Expr:
    """Sum of g over every axis but `axis` (a vector along it)."""
    axes = tuple(a for a in range(rank) if a != axis)
    return make.sum(g, axis=axes) if axes else g


# ------------------------------------------------------------------ dense layers


def _flat2(e: Expr, like: Expr) -> Expr:
    """`e` (of the shape of the typed `like`, rank >= 2) as a matrix of its last axis
    (leading axes folded into rows). The adjoint is untyped: its shape is its output's."""
    shape = shape_of(like)
    return e if len(shape) == 2 else make.reshape(e, newshape=(-1, shape[-1]))


@implement("nn.dense", target="gradient")
def dense_grad(orig: Any, grad: Any) -> list[Any]:
    """y = x w^T: dx = g w, dw = g^T x (leading axes of x folded into the batch)."""
    x, w = orig.args
    dx = make.nn.dense(grad, make.transpose(w, axes=(1, 0)))
    if len(shape_of(x)) == 1:                       # x (K,): y (N,)
        dw = make.multiply(make.expand_dims(grad, axis=1), make.expand_dims(x, axis=0))
    else:
        # an explicit transpose: the native GEMM is faster on it than with transpose_a
        dw = make.nn.matmul(make.transpose(_flat2(grad, orig), axes=(1, 0)), _flat2(x, x))
    return [dx, dw]


def _mm_grads(a: Expr, b: Expr, g: Expr, ta: bool, tb: bool, batched: bool
              ) -> tuple[Expr, Expr]:
    """The adjoints of op(a) op(b) (op: transposed or not) through nn.matmul (or
    nn.batch_matmul). A transposed first operand is transposed explicitly (the native GEMM
    is faster so)."""
    op = make.nn.batch_matmul if batched else make.nn.matmul

    def mm(p: Expr, q: Expr, transpose_a: bool = False, transpose_b: bool = False) -> Expr:
        if transpose_a:
            p = make.transpose(p, axes=(0, 2, 1) if batched else (1, 0))
        return op(p, q, transpose_b=transpose_b) if transpose_b else op(p, q)
    if not ta and not tb:
        return mm(g, b, transpose_b=True), mm(a, g, transpose_a=True)
    if not ta and tb:
        return mm(g, b), mm(g, a, transpose_a=True)
    if ta and not tb:
        return mm(b, g, transpose_b=True), mm(a, g)
    return mm(b, g, transpose_a=True, transpose_b=True), mm(g, a, transpose_a=True,
                                                            transpose_b=True)


@implement("nn.matmul", target="gradient")
def matmul_grad(orig: Any, grad: Any) -> list[Any]:
    a, b = orig.args
    ta, tb = bool(orig.attrs.transpose_a), bool(orig.attrs.transpose_b)
    if len(shape_of(a)) != 2:
        if ta:
            raise GradientNotSupported("nn.matmul: transpose_a with tensor_a of rank > 2")
        # leading axes of a are a batch: fold them into the rows
        da, db = _mm_grads(_flat2(a, a), b, _flat2(grad, orig), ta, tb, batched=False)
        return [make.reshape_like(da, a), db]
    da, db = _mm_grads(a, b, grad, ta, tb, batched=False)
    return [da, db]


@implement("nn.batch_matmul", target="gradient")
def batch_matmul_grad(orig: Any, grad: Any) -> list[Any]:
    """A batch of 1 broadcasts: its adjoint is summed over the batch."""
    a, b = orig.args
    ta, tb = bool(orig.attrs.transpose_a), bool(orig.attrs.transpose_b)
    da, db = _mm_grads(a, b, grad, ta, tb, batched=True)
    return [make.collapse_sum_like(da, a), make.collapse_sum_like(db, b)]


@implement("nn.bias_add", target="gradient")
def bias_add_grad(orig: Any, grad: Any) -> list[Any]:
    data, _ = orig.args
    rank = len(shape_of(data))
    return [grad, reduce_except(grad, norm_axis(orig.attrs.axis, rank), rank)]


# ------------------------------------------------------------------ activations


@implement("nn.relu", target="gradient")
def relu_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    return [make.where(make.greater(x, make.zeros_like(x)), grad, make.zeros_like(grad))]


@implement("nn.leaky_relu", target="gradient")
def leaky_relu_grad(orig: Any, grad: Any) -> list[Any]:
    x = orig.args[0]
    alpha = scalar(float(orig.attrs.alpha), x)
    return [make.where(make.greater(x, make.zeros_like(x)), grad, make.multiply(grad, alpha))]


@implement("nn.prelu", target="gradient")
def prelu_grad(orig: Any, grad: Any) -> list[Any]:
    x, alpha = orig.args
    rank = len(shape_of(x))
    axis = norm_axis(orig.attrs.axis, rank)
    positive = make.greater(x, make.zeros_like(x))
    dx = make.where(positive, grad, make.multiply(grad, along(alpha, axis, rank)))
    dalpha = reduce_except(make.where(positive, make.zeros_like(grad), make.multiply(grad, x)),
                           axis, rank)
    return [dx, dalpha]


@implement("nn.softmax", "nn.fast_softmax", target="gradient")
def softmax_grad(orig: Any, grad: Any) -> list[Any]:
    """dx = (g - sum(g y)) y along the axis."""
    axis = orig.attrs.axis
    inner = make.sum(make.multiply(grad, orig), axis=(axis,), keepdims=True)
    return [make.multiply(make.subtract(grad, inner), orig)]


@implement("nn.log_softmax", target="gradient")
def log_softmax_grad(orig: Any, grad: Any) -> list[Any]:
    """dx = g - exp(y) sum(g) along the axis."""
    axis = orig.attrs.axis
    total = make.sum(grad, axis=(axis,), keepdims=True)
    return [make.subtract(grad, make.multiply(make.exp(orig), total))]


@implement("nn.dropout", target="gradient")
def dropout_grad(orig: Any, grad: Any) -> list[Any]:
    """Inference semantics (the kernel's, and TVM's after SimplifyInference): the identity
    on the first output; the mask is a constant of ones."""
    return [field(grad, 0)]


@implement("nn.batch_flatten", target="gradient")
def batch_flatten_grad(orig: Any, grad: Any) -> list[Any]:
    return [make.reshape_like(grad, orig.args[0])]


# ------------------------------------------------------------------ normalisation


@implement("nn.batch_norm", target="gradient")
def batch_norm_grad(orig: Any, grad: Any) -> list[Any]:
    """The op's semantics (TVM's batch_norm, inference mode): out = (x - mean) * s + beta
    with s = gamma / sqrt(var + eps) from the moving statistics, which are also its second
    and third outputs. A training-mode batch norm is written with mean/variance (their
    rules give its gradient)."""
    x, gamma, beta, mean, var = orig.args
    attrs = orig.attrs
    rank = len(shape_of(x))
    axis = norm_axis(attrs.axis, rank)
    g, g_mean, g_var = field(grad, 0), field(grad, 1), field(grad, 2)
    inv = make.rsqrt(make.add(var, scalar(float(attrs.epsilon), var)))     # (C,)
    scale = make.multiply(inv, gamma) if attrs.scale else inv
    dx = make.multiply(g, along(scale, axis, rank))
    g_sum = reduce_except(g, axis, rank)                                     # sum of g
    xg_sum = reduce_except(make.multiply(g, x), axis, rank)                  # sum of g x
    centred = make.subtract(xg_sum, make.multiply(mean, g_sum))              # sum g (x - mean)
    dgamma = make.multiply(centred, inv) if attrs.scale else make.zeros_like(gamma)
    dbeta = g_sum if attrs.center else make.zeros_like(beta)
    dmean = make.subtract(g_mean, make.multiply(g_sum, scale))
    # d/dvar of (x - mean) * gamma * (var + eps)^-1/2 = -1/2 * centred * gamma * inv^3
    inv3 = make.multiply(make.multiply(inv, inv), inv)
    dvar_out = make.multiply(make.multiply(centred, inv3), scalar(-0.5, var))
    if attrs.scale:
        dvar_out = make.multiply(dvar_out, gamma)
    dvar = make.add(g_var, dvar_out)
    return [dx, dgamma, dbeta, dmean, dvar]


def _normalized_grad(x: Expr, gamma: Expr, beta: Expr, g: Expr, axes: tuple[int, ...],
                     axis: int, attrs: Any, extra: Any = None) -> list[Expr]:
    """The gradient of out = norm(x) * gamma + beta where norm normalises over `axes`
    (mean and biased variance) and gamma, beta lie along `axis`.
    `extra`: (to_grouped, from_grouped) reshapes for group_norm."""
    rank = len(shape_of(x))
    to_g, from_g = extra if extra is not None else (lambda e: e, lambda e: e)
    eps = scalar(float(attrs.epsilon), x)
    xg = to_g(x)
    mu = make.mean(xg, axis=axes, keepdims=True)
    xc = make.subtract(xg, mu)
    inv = make.rsqrt(make.add(make.mean(make.multiply(xc, xc), axis=axes, keepdims=True), eps))
    xhat = make.multiply(xc, inv)
    gy = make.multiply(g, along(gamma, axis, rank)) if attrs.scale else g
    gyg = to_g(gy)
    # dx = inv * (gy - mean(gy) - xhat * mean(gy * xhat))
    m1 = make.mean(gyg, axis=axes, keepdims=True)
    m2 = make.mean(make.multiply(gyg, xhat), axis=axes, keepdims=True)
    dx = from_g(make.multiply(inv, make.subtract(make.subtract(gyg, m1),
                                                 make.multiply(xhat, m2))))
    if attrs.scale:
        dgamma = reduce_except(make.multiply(g, from_g(xhat)), axis, rank)
    else:
        dgamma = make.zeros_like(gamma)
    dbeta = reduce_except(g, axis, rank) if attrs.center else make.zeros_like(beta)
    return [dx, dgamma, dbeta]


@implement("nn.layer_norm", target="gradient")
def layer_norm_grad(orig: Any, grad: Any) -> list[Any]:
    x, gamma, beta = orig.args
    shape = shape_of(x)
    axis = norm_axis(orig.attrs.axis, len(shape))
    return _normalized_grad(x, gamma, beta, grad, (axis,), axis, orig.attrs)


@implement("nn.instance_norm", target="gradient")
def instance_norm_grad(orig: Any, grad: Any) -> list[Any]:
    x, gamma, beta = orig.args
    shape = shape_of(x)
    axis = norm_axis(orig.attrs.axis, len(shape))
    axes = tuple(k for k in range(1, len(shape)) if k != axis)
    return _normalized_grad(x, gamma, beta, grad, axes, axis, orig.attrs)


@implement("nn.group_norm", target="gradient")
def group_norm_grad(orig: Any, grad: Any) -> list[Any]:
    x, gamma, beta = orig.args
    shape = shape_of(x)
    axis = norm_axis(orig.attrs.axis, len(shape))
    groups = int(orig.attrs.num_groups)
    grouped = shape[:axis] + (groups, shape[axis] // groups) + shape[axis + 1:]
    axes = tuple(range(axis + 1, len(shape) + 1))

    def to_g(e: Expr) -> Expr:
        return make.reshape(e, newshape=grouped)

    def from_g(e: Expr) -> Expr:
        return make.reshape(e, newshape=shape)
    return _normalized_grad(x, gamma, beta, grad, axes, axis, orig.attrs, extra=(to_g, from_g))


@implement("nn.l2_normalize", target="gradient")
def l2_normalize_grad(orig: Any, grad: Any) -> list[Any]:
    """y = x / sqrt(max(sum(x^2), eps)): dx = (g - y sum(g y)) / n where the norm n is
    above eps, g / n where eps clamps it."""
    x = orig.args[0]
    rank = len(shape_of(x))
    axes = tuple(range(rank)) if orig.attrs.axis is None else \
        tuple(norm_axis(a, rank) for a in orig.attrs.axis)
    sq = make.sum(make.multiply(x, x), axis=axes, keepdims=True)
    eps = scalar(float(orig.attrs.eps), x)
    clamped = make.greater(sq, eps)
    n = make.sqrt(make.maximum(sq, eps))
    inner = make.sum(make.multiply(grad, orig), axis=axes, keepdims=True)
    free = make.divide(make.subtract(grad, make.multiply(orig, inner)), n)
    return [make.where(clamped, free, make.divide(grad, n))]


def _window_sum(v: Expr, like: Expr, axis: int, before: int, size: int) -> Expr:
    """out[c] = sum of v[c - before .. c - before + size - 1] along `axis` (zero outside):
    v padded on the axis and `size` shifted slices added."""
    shape = shape_of(like)
    rank = len(shape)
    widths = [(0, 0)] * rank
    widths[axis] = (before, size - 1 - before)
    padded = make.nn.pad(v, scalar(0.0, like), pad_width=tuple(widths))
    total = None
    for k in range(size):
        begin = [0] * rank
        end = list(shape)
        begin[axis] = k
        end[axis] = k + shape[axis]
        piece = make.strided_slice(padded, begin=tuple(begin), end=tuple(end),
                                   strides=(1,) * rank)
        total = piece if total is None else make.add(total, piece)
    assert total is not None
    return total


@implement("nn.lrn", target="gradient")
def lrn_grad(orig: Any, grad: Any) -> list[Any]:
    """y = x s^-beta, s = bias + alpha / size * window_sum(x^2): dx = g s^-beta +
    2 x window_sum^T(g x (-beta) alpha / size s^(-beta - 1)), the transposed window sum
    being the window mirrored."""
    x = orig.args[0]
    attrs = orig.attrs
    rank = len(shape_of(x))
    axis = norm_axis(attrs.axis, rank)
    size, beta = int(attrs.size), float(attrs.beta)
    half = size // 2
    k = float(attrs.alpha) / size
    s = make.add(scalar(float(attrs.bias), x),
                 make.multiply(scalar(k, x), _window_sum(make.multiply(x, x), x, axis, half,
                                                         size)))
    direct = make.multiply(grad, make.power(s, scalar(-beta, x)))
    inner = make.multiply(make.multiply(grad, x),
                          make.multiply(scalar(-beta * k * 2.0, x),
                                        make.power(s, scalar(-beta - 1.0, x))))
    back = _window_sum(inner, x, axis, size - 1 - half, size)
    return [make.add(direct, make.multiply(x, back))]


# ------------------------------------------------------------------ padding


@implement("nn.pad", target="gradient")
def pad_grad(orig: Any, grad: Any) -> list[Any]:
    """constant mode: the adjoint's middle goes to the data, the rest to the pad value."""
    x, value = orig.args
    if orig.attrs.pad_mode != "constant":
        raise GradientNotSupported(f"nn.pad: pad_mode={orig.attrs.pad_mode!r} (only "
                                   "'constant' has a gradient rule)")
    shape = shape_of(x)
    widths = [(int(a), int(b)) for a, b in orig.attrs.pad_width]
    begin = tuple(a for a, _ in widths)
    end = tuple(a + n for (a, _), n in zip(widths, shape))
    inner = make.strided_slice(grad, begin=begin, end=end, strides=(1,) * len(shape))
    dvalue = make.subtract(make.sum(grad), make.sum(inner))
    return [inner, make.cast_like(dvalue, value)]


# ------------------------------------------------------------------ resampling


def _unpermute(grad: Expr, x: Expr, split: tuple[int, ...], perm: tuple[int, ...]) -> Expr:
    """The adjoint of reshape(transpose(reshape(x, split), perm), out): the adjoint read
    as the transposed blocks, transposed back, reshaped as x."""
    blocks = tuple(split[p] for p in perm)
    back = make.transpose(make.reshape(grad, newshape=blocks), axes=tuple(inverse_perm(list(perm))))
    return make.reshape_like(back, x)


def _depth_space_plan(shape: tuple[int, ...], bs: int, layout: str, mode: str,
                      to_space: bool) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The (split shape, permutation) the kernels (resample_kernels.py) move data by."""
    if layout == "NHWC":
        n, h, w, c = shape
        if not to_space:
            return (n, h // bs, bs, w // bs, bs, c), (0, 1, 3, 2, 4, 5)
        if mode == "DCR":
            return (n, h, w, bs, bs, c // bs**2), (0, 1, 3, 2, 4, 5)
        return (n, h, w, c // bs**2, bs, bs), (0, 1, 4, 2, 5, 3)
    n, c, h, w = shape
    if not to_space:
        return (n, c, h // bs, bs, w // bs, bs), (0, 3, 5, 1, 2, 4)
    if mode == "DCR":
        return (n, bs, bs, c // bs**2, h, w), (0, 3, 4, 1, 5, 2)
    return (n, c // bs**2, bs, bs, h, w), (0, 1, 4, 2, 5, 3)


@implement("nn.depth_to_space", "nn.space_to_depth", target="gradient")
def depth_space_grad(orig: Any, grad: Any) -> list[Any]:
    """Both only move elements: the adjoint moves back."""
    x = orig.args[0]
    attrs = orig.attrs
    mode = getattr(attrs, "mode", "DCR")
    split, perm = _depth_space_plan(shape_of(x), int(attrs.block_size), attrs.layout, mode,
                                    orig.op.name == "nn.depth_to_space")
    return [_unpermute(grad, x, split, perm)]


@implement("nn.upsampling", target="gradient")
def upsampling_grad(orig: Any, grad: Any) -> list[Any]:
    """nearest_neighbor by whole factors: each input element is copied to a block of the
    output, whose adjoint is summed."""
    x = orig.args[0]
    attrs = orig.attrs
    sh, sw = float(attrs.scale_h), float(attrs.scale_w)
    if attrs.method != "nearest_neighbor" or not (sh.is_integer() and sw.is_integer()):
        raise GradientNotSupported(f"nn.upsampling: the gradient rule takes method="
                                   f"'nearest_neighbor' with whole scales, got "
                                   f"{attrs.method!r}, scale_h={sh}, scale_w={sw}")
    shape = shape_of(x)
    h = attrs.layout.index("H")
    w = attrs.layout.index("W")
    blocks: list[int] = []
    sums = []
    for axis, size in enumerate(shape):
        blocks.append(size)
        if axis in (h, w):
            blocks.append(int(sh if axis == h else sw))
            sums.append(len(blocks) - 1)
    return [make.sum(make.reshape(grad, newshape=tuple(blocks)), axis=tuple(sums))]


# ------------------------------------------------------------------ losses


@implement("nn.cross_entropy", target="gradient")
def cross_entropy_grad(orig: Any, grad: Any) -> list[Any]:
    """L = -sum(y log x) / batch: dx = -g y / (x batch), dy = -g log(x) / batch."""
    x, y = orig.args
    g = make.divide(grad, scalar(float(shape_of(x)[0]), x))
    return [make.negative(make.divide(make.multiply(g, y), x)),
            make.negative(make.multiply(g, make.log(x)))]


@implement("nn.cross_entropy_with_logits", target="gradient")
def cross_entropy_with_logits_grad(orig: Any, grad: Any) -> list[Any]:
    """L = -sum(x y) / batch (x: log-probabilities): dx = -g y / batch, dy = -g x / batch."""
    x, y = orig.args
    g = make.divide(grad, scalar(float(shape_of(x)[0]), x))
    return [make.negative(make.multiply(g, y)), make.negative(make.multiply(g, x))]


@implement("nn.nll_loss", target="gradient")
def nll_loss_grad(orig: Any, grad: Any) -> list[Any]:
    """loss[n, ..] = -p[n, t, ..] w[t] where t = targets[n, ..] is not ignore_index. With
    A = one_hot(t) along the class axis (zero where ignored) and G the adjoint of each
    loss (the adjoint itself ("none"), broadcast ("sum"), over W = sum(w[t]) ("mean")):
    dp = -A w G; dw = sum over all but the class axis of -A p G, less A L G for "mean"
    (the mean L = orig also depends on w through W)."""
    pred, targets, weights = orig.args
    attrs = orig.attrs
    pshape = shape_of(pred)
    rank = len(pshape)
    axis = 1 if rank > 1 else 0
    dtype = dtype_of(pred)
    one, zero = builder.const(1, dtype), builder.const(0, dtype)
    ignore = builder.const(int(attrs.ignore_index), dtype_of(targets))
    valid = make.cast(make.not_equal(targets, ignore), dtype=dtype)              # (N, d..)
    hot = make.one_hot(targets, one, zero, depth=pshape[axis], axis=axis, dtype=dtype)
    chosen = make.multiply(hot, make.expand_dims(valid, axis=axis) if rank > 1 else valid)
    w_along = along(weights, axis, rank)
    if attrs.reduction == "none":
        g = grad
    else:
        g = grad
        if attrs.reduction == "mean":
            total = make.sum(make.multiply(make.take(weights, targets, axis=0, mode="clip"),
                                           valid))
            g = make.divide(grad, total)
    g_exp = make.expand_dims(g, axis=axis) if attrs.reduction == "none" and rank > 1 else g
    dpred = make.negative(make.multiply(make.multiply(chosen, w_along), g_exp))
    per = make.negative(pred)
    if attrs.reduction == "mean":
        per = make.subtract(per, orig)
    dweights = reduce_except(make.multiply(make.multiply(chosen, per), g_exp), axis, rank)
    return [dpred, make.zeros_like(targets), dweights]


# ------------------------------------------------------------------ convolutions


def _padding_attr(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    """TVM's 2n padding form: every `before`, then every `after`."""
    return tuple(int(b) for b, _ in pads) + tuple(int(a) for _, a in pads)


def _conv_weight_grad(data: Expr, adj: Expr, n: int, c: int, groups: int,
                      in_sp: list[int], o: int, ksize: list[int], strides: tuple[int, ...],
                      dilation: tuple[int, ...], pads: list[tuple[int, int]], nd: int,
                      dtype: str) -> Expr:
    """The weight gradient (O, C / groups, k..) of a convolution of `data` (N, C, in..) whose
    output (N, O, out..) has the adjoint `adj`: itself a convolution over the batch. With
    cg = C / groups input channels a group, the data becomes (cg, groups * N, in..) (the
    batch folded into each group's channels), the adjoint (O, N, out..) is the kernel,
    strides and dilation swap roles; the result (cg, O, k'..), k' >= k, is cut to the
    kernel size."""
    sp = SPATIAL[nd]
    cg = c // groups
    spatial_axes = tuple(range(2, nd + 2))
    if groups == 1:
        data_t = make.transpose(data, axes=(1, 0) + spatial_axes)
    else:
        grouped = make.reshape(data, newshape=(n, groups, cg) + tuple(in_sp))
        swapped = make.transpose(grouped, axes=(2, 1, 0) + tuple(range(3, nd + 3)))
        data_t = make.reshape(swapped, newshape=(cg, groups * n) + tuple(in_sp))
    kernel_t = make.transpose(adj, axes=(1, 0) + spatial_axes)
    conv_op = getattr(make.nn, f"conv{nd}d")
    wfull = conv_op(data_t, kernel_t, strides=dilation, dilation=strides,
                    padding=_padding_attr(pads), groups=groups, data_layout="NC" + sp,
                    kernel_layout="OI" + sp, out_dtype=dtype)
    wcut = make.strided_slice(wfull, begin=(0,) * (nd + 2), end=(cg, o) + tuple(ksize),
                              strides=(1,) * (nd + 2))
    return make.transpose(wcut, axes=(1, 0) + spatial_axes)


def _conv_params(attrs: Any, g: Any) -> tuple[tuple[int, ...], tuple[int, ...],
                                              list[tuple[int, int]], int]:
    return (tuple(int(s) for s in g.strides), tuple(int(d) for d in g.dilation),
            [(int(b), int(a)) for b, a in g.pads], int(attrs.groups))


def conv_grad(nd: int) -> Any:
    """data: the transposed convolution of the adjoint by the weight (read as I O k..);
    weight: `_conv_weight_grad`. Any layout: transposed to N C spatial.. / O I k.. and
    back (a blocked one re-laid to its plain form first)."""
    def rule(orig: Any, grad: Any) -> list[Any]:
        x, w = orig.args
        attrs = orig.attrs
        xs, ws, os_ = shape_of(x), shape_of(w), shape_of(orig)
        if is_blocked(attrs):
            # blocked layouts (conv_layouts): the plain rule between layout transforms
            plain = plain_attrs(attrs)
            out_layout = out_layout_of(attrs)
            plain_out = plain.out_layout or plain.data_layout

            def relaid(e: Expr, src: str, dst: str) -> Expr:
                return make.layout_transform(e, src_layout=src, dst_layout=dst)
            dx, dw = plain_rule(
                relaid(x, attrs.data_layout, plain.data_layout),
                relaid(w, attrs.kernel_layout, plain.kernel_layout),
                relaid(grad, out_layout, plain_out), plain,
                plain_shape(xs, attrs.data_layout, "data_layout", 0),
                plain_shape(ws, attrs.kernel_layout, "kernel_layout", 1),
                plain_shape(os_, out_layout, "out_layout", 0), dtype_of(x))
            return [relaid(dx, plain.data_layout, attrs.data_layout),
                    relaid(dw, plain.kernel_layout, attrs.kernel_layout)]
        return plain_rule(x, w, grad, attrs, xs, ws, os_, dtype_of(x))

    def plain_rule(x: Expr, w: Expr, grad: Expr, attrs: Any, xs: tuple, ws: tuple,
                   os_: tuple, dtype: str) -> list[Any]:
        g = conv_geometry(attrs, nd)
        sp = SPATIAL[nd]
        strides, dilation, pads, groups = _conv_params(attrs, g)
        xc = maybe_transpose(x, g.data_pos)
        wc = maybe_transpose(w, g.weight_pos)
        gc = maybe_transpose(grad, g.out_pos)
        n, c = xs[g.data_pos[0]], xs[g.data_pos[1]]
        in_sp = [xs[p] for p in g.data_pos[2:]]
        o = ws[g.weight_pos[0]]
        ksize = [ws[p] for p in g.weight_pos[2:]]
        out_sp = [os_[p] for p in g.out_pos[2:]]
        # TVM's depthwise weight with a multiplier (C, M, k...): the (C * M, 1, k...)
        # it reshapes to, and its gradient reshaped back
        m = depthwise_multiplier(c, o, ws[g.weight_pos[1]], groups)
        if m:
            wc = make.reshape(wc, newshape=(o * m, 1, *ksize))
            o *= m
        # the rows the windows never reach come back as output_padding
        extra = tuple(in_sp[j] - (strides[j] * (out_sp[j] - 1) + dilation[j] * (ksize[j] - 1)
                                  + 1 - pads[j][0] - pads[j][1]) for j in range(nd))
        transpose_op = getattr(make.nn, f"conv{nd}d_transpose")
        dxc = transpose_op(gc, wc, strides=strides, padding=_padding_attr(pads),
                           dilation=dilation, groups=groups, output_padding=extra,
                           data_layout="NC" + sp, kernel_layout="IO" + sp, out_dtype=dtype)
        dx = maybe_transpose(dxc, inverse_perm(g.data_pos))
        dwc = _conv_weight_grad(xc, gc, n, c, groups, in_sp, o, ksize, strides, dilation,
                                pads, nd, dtype)
        if m:
            dwc = make.reshape(dwc, newshape=(o // m, m, *ksize))
        dw = maybe_transpose(dwc, inverse_perm(g.weight_pos))
        return [dx, dw]
    rule.__name__ = rule.__qualname__ = f"conv{nd}d_grad"
    return rule


def conv_transpose_grad(nd: int) -> Any:
    """y = conv_transpose(x, w) is the adjoint of the convolution by w (w's I O k.. read
    as O I k..): dx = conv(g, w) (output_padding's extra rows are never read), and dw is
    that convolution's weight gradient with g as its data and x as its output's adjoint."""
    def rule(orig: Any, grad: Any) -> list[Any]:
        x, w = orig.args
        attrs = orig.attrs
        g = conv_geometry(attrs, nd, transposed=True)
        sp = SPATIAL[nd]
        strides, dilation, pads, groups = _conv_params(attrs, g)
        # canonical weight (in channels, out channels / groups, k..): I, O, k.. positions
        wperm = [g.weight_pos[1], g.weight_pos[0]] + list(g.weight_pos[2:])
        xc = maybe_transpose(x, g.data_pos)
        wc = maybe_transpose(w, wperm)
        gc = maybe_transpose(grad, g.out_pos)
        xs, ws, os_ = shape_of(x), shape_of(w), shape_of(orig)
        n, cin = xs[g.data_pos[0]], xs[g.data_pos[1]]
        cout = os_[g.out_pos[1]]
        out_sp = [os_[p] for p in g.out_pos[2:]]
        ksize = [ws[p] for p in g.weight_pos[2:]]
        dtype = dtype_of(x)
        conv_op = getattr(make.nn, f"conv{nd}d")
        dxc = conv_op(gc, wc, strides=strides, padding=_padding_attr(pads), dilation=dilation,
                      groups=groups, data_layout="NC" + sp, kernel_layout="OI" + sp,
                      out_dtype=dtype)
        dx = maybe_transpose(dxc, inverse_perm(g.data_pos))
        dwc = _conv_weight_grad(gc, xc, n, cout, groups, out_sp, cin, ksize, strides,
                                dilation, pads, nd, dtype)
        dw = maybe_transpose(dwc, inverse_perm(wperm))
        return [dx, dw]
    rule.__name__ = rule.__qualname__ = f"conv{nd}d_transpose_grad"
    return rule


for _nd in (1, 2, 3):
    implement(f"nn.conv{_nd}d", target="gradient")(conv_grad(_nd))
    implement(f"nn.conv{_nd}d_transpose", target="gradient")(conv_transpose_grad(_nd))
