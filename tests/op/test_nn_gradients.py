"""Gradient rules of the nn family (relaylang/op/nn/gradients.py) against central finite
differences in float64, on random shapes (hypothesis): each rule called directly on a
typed forward call with a random adjoint, its expressions evaluated by the interpreter
and natively (LLVM), compared with the differences of sum(adjoint * op(inputs)) computed
with the op's NumPy kernel (grad_check.check_rule). The losses nn.cross_entropy and
nn.cross_entropy_with_logits (declared for this) are checked against their formulas."""
from __future__ import annotations

import numpy as np
import pytest
from grad_check import check_rule, rule_outputs
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relaylang.op import registry

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
dims = st.integers(1, 4)


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def away_from_zero(seed: int, *shape: int) -> np.ndarray:
    """Values at least 0.1 from 0 (relu-like kinks are not differentiable there)."""
    x = rand(seed, *shape)
    return np.where(np.abs(x) < 0.1, 0.1 + np.abs(x), x) * np.sign(x + 1e-12)


# ------------------------------------------------------------------ dense layers


@SETTINGS
@given(lead=st.lists(dims, min_size=0, max_size=2), k=dims, n=dims, seed=st.integers(0, 99))
def test_dense(lead, k, n, seed):
    check_rule("nn.dense", [rand(seed, *lead, k), rand(seed + 1, n, k)])


@SETTINGS
@given(m=dims, k=dims, n=dims, ta=st.booleans(), tb=st.booleans(), seed=st.integers(0, 99))
def test_matmul(m, k, n, ta, tb, seed):
    a = rand(seed, k, m) if ta else rand(seed, m, k)
    b = rand(seed + 1, n, k) if tb else rand(seed + 1, k, n)
    check_rule("nn.matmul", [a, b], transpose_a=ta, transpose_b=tb)


def test_matmul_with_leading_batch_axes():
    check_rule("nn.matmul", [rand(0, 2, 3, 4), rand(1, 5, 4)], transpose_b=True)


@SETTINGS
@given(batch=st.sampled_from([(2, 2), (1, 3), (3, 1), (1, 1)]), m=dims, k=dims, n=dims,
       ta=st.booleans(), tb=st.booleans(), seed=st.integers(0, 99))
def test_batch_matmul_with_broadcast_batch(batch, m, k, n, ta, tb, seed):
    a = rand(seed, batch[0], *((k, m) if ta else (m, k)))
    b = rand(seed + 1, batch[1], *((n, k) if tb else (k, n)))
    check_rule("nn.batch_matmul", [a, b], transpose_a=ta, transpose_b=tb)


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 99))
def test_bias_add(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check_rule("nn.bias_add", [rand(seed, *shape), rand(seed + 1, shape[axis])], axis=axis)


# ------------------------------------------------------------------ activations


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), seed=st.integers(0, 99),
       alpha=st.floats(0.01, 0.5))
def test_relu_and_leaky_relu(shape, seed, alpha):
    x = away_from_zero(seed, *shape)
    check_rule("nn.relu", [x])
    check_rule("nn.leaky_relu", [x], alpha=alpha)


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=4), data=st.data(), seed=st.integers(0, 99))
def test_prelu(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    check_rule("nn.prelu", [away_from_zero(seed, *shape), rand(seed + 1, shape[axis])],
               axis=axis)


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), data=st.data(), seed=st.integers(0, 99))
def test_softmax_family(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(seed, *shape)
    check_rule("nn.softmax", [x], axis=axis)
    check_rule("nn.log_softmax", [x], axis=axis)


def test_fast_softmax_uses_softmax_gradient():
    # fast_softmax is exact in float64 (TVM's fast_exp approximates float32 only)
    check_rule("nn.fast_softmax", [rand(0, 3, 4)], axis=0)


def test_dropout_is_the_identity_in_inference():
    check_rule("nn.dropout", [rand(0, 2, 3)], rate=0.3)


@SETTINGS
@given(shape=st.lists(dims, min_size=2, max_size=4), seed=st.integers(0, 99))
def test_batch_flatten(shape, seed):
    check_rule("nn.batch_flatten", [rand(seed, *shape)])


# ------------------------------------------------------------------ normalisation


@SETTINGS
@given(shape=st.lists(dims, min_size=2, max_size=4), data=st.data(), seed=st.integers(0, 99),
       center=st.booleans(), scale=st.booleans())
def test_batch_norm_all_five_inputs(shape, data, seed, center, scale):
    axis = data.draw(st.integers(0, len(shape) - 1))
    c = shape[axis]
    inputs = [rand(seed, *shape), rand(seed + 1, c), rand(seed + 2, c), rand(seed + 3, c),
              np.abs(rand(seed + 4, c)) + 0.5]
    check_rule("nn.batch_norm", inputs, axis=axis, center=center, scale=scale, epsilon=1e-3)


@SETTINGS
@given(shape=st.lists(st.integers(2, 4), min_size=1, max_size=3), data=st.data(),
       seed=st.integers(0, 99), center=st.booleans(), scale=st.booleans())
def test_layer_norm(shape, data, seed, center, scale):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    c = shape[axis]
    check_rule("nn.layer_norm", [rand(seed, *shape), rand(seed + 1, c), rand(seed + 2, c)],
               axis=axis, center=center, scale=scale, rtol=1e-4, atol=1e-5)


@SETTINGS
@given(n=dims, c=dims, rest=st.lists(st.integers(2, 4), min_size=1, max_size=2),
       seed=st.integers(0, 99))
def test_instance_norm(n, c, rest, seed):
    check_rule("nn.instance_norm", [rand(seed, n, c, *rest), rand(seed + 1, c),
                                    rand(seed + 2, c)], rtol=1e-4, atol=1e-5)


@SETTINGS
@given(n=dims, groups=st.integers(1, 3), per=st.integers(1, 3), w=st.integers(1, 3),
       seed=st.integers(0, 99))
def test_group_norm(n, groups, per, w, seed):
    c = groups * per
    if per * w == 1:
        w = 2                   # a group of one element has no variance
    check_rule("nn.group_norm", [rand(seed, n, c, w), rand(seed + 1, c), rand(seed + 2, c)],
               num_groups=groups, rtol=1e-4, atol=1e-5)


def test_l2_normalize_inside_and_below_eps():
    check_rule("nn.l2_normalize", [rand(0, 2, 3)], eps=1e-5, axis=(1,))
    check_rule("nn.l2_normalize", [rand(1, 2, 3, 2)], eps=1e-5, axis=(0, 2))
    check_rule("nn.l2_normalize", [1e-3 * rand(2, 2, 3)], eps=1.0, axis=(1,))   # clamped


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), data=st.data(), seed=st.integers(0, 99))
def test_lrn(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    check_rule("nn.lrn", [rand(seed, *shape)], axis=axis, size=data.draw(st.integers(1, 5)),
               alpha=data.draw(st.floats(0.1, 2.0)), beta=data.draw(st.floats(0.25, 1.0)),
               bias=data.draw(st.floats(0.5, 2.0)), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------ padding


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), data=st.data(), seed=st.integers(0, 99))
def test_pad_data_and_value(shape, data, seed):
    widths = tuple(data.draw(st.tuples(st.integers(0, 2), st.integers(0, 2))) for _ in shape)
    check_rule("nn.pad", [rand(seed, *shape), np.array(0.7)], pad_width=widths)


def test_pad_other_modes_have_no_rule():
    from relaylang.op.nn.gradients import GradientNotSupported
    with pytest.raises(GradientNotSupported, match="reflect"):
        rule_outputs("nn.pad", [rand(0, 3, 3), np.array(0.0)],
                     {"pad_width": ((1, 1), (1, 1)), "pad_mode": "reflect"},
                     [rand(1, 5, 5)])


# ------------------------------------------------------------------ losses


@SETTINGS
@given(n=dims, k=dims, seed=st.integers(0, 99))
def test_cross_entropy(n, k, seed):
    x = np.abs(rand(seed, n, k)) + 0.2
    y = rand(seed + 1, n, k)
    check_rule("nn.cross_entropy", [x, y])
    check_rule("nn.cross_entropy_with_logits", [np.log(x), y])


def test_cross_entropy_kernels_follow_tvm():
    from relaylang.ir.types import TensorType
    x = np.abs(rand(0, 3, 4)) + 0.1
    y = rand(1, 3, 4)
    ce = registry.get_op_def("nn.cross_entropy")
    cel = registry.get_op_def("nn.cross_entropy_with_logits")
    np.testing.assert_allclose(ce.kernel([x, y], None), -(np.log(x) * y).sum() / 3)
    np.testing.assert_allclose(cel.kernel([x, y], None), -(x * y).sum() / 3)
    t = ce.type_rel([TensorType((3, 4), "float32"), TensorType((3, 4), "float32")], None)
    assert (t.shape, t.dtype) == ((), "float32")
    from relaylang.op.relation import TypeRelError
    with pytest.raises(TypeRelError, match="must be equal"):
        ce.type_rel([TensorType((3, 4), "float32"), TensorType((3, 5), "float32")], None)
    with pytest.raises(TypeRelError):
        cel.type_rel([TensorType((3,), "float32"), TensorType((3,), "float32")], None)


@SETTINGS
@given(lead=st.integers(1, 3), classes=st.integers(1, 4), rest=st.lists(dims, max_size=2),
       reduction=st.sampled_from(["mean", "sum", "none"]), data=st.data(),
       seed=st.integers(0, 99))
def test_nll_loss(lead, classes, rest, reduction, data, seed):
    """Predictions and weights get gradients (the mean's divisor depends on the weights);
    an ignored target contributes nothing."""
    rng = np.random.default_rng(seed)
    targets = rng.integers(0, classes, size=(lead, *rest)).astype("int32")
    ignore = data.draw(st.sampled_from([-100, 0]))
    if not (targets != ignore).any():
        ignore = -100                   # keep a target: a mean over none is 0 / 0
    weights = np.abs(rand(seed + 1, classes)) + 0.5
    check_rule("nn.nll_loss", [rand(seed, lead, classes, *rest), targets, weights],
               reduction=reduction, ignore_index=ignore, nondiff=(1,))


def test_nll_loss_without_batch_and_kernel():
    check_rule("nn.nll_loss", [rand(0, 4), np.array(2, "int32"), np.abs(rand(1, 4)) + 0.5],
               nondiff=(1,))
    pred, t, w = rand(2, 3, 4), np.array([0, 3, -100], "int32"), np.arange(1.0, 5.0)
    op = registry.get_op_def("nn.nll_loss")
    from relaylang.ir.attrs import make_attrs
    attrs = make_attrs(op.attrs, {"reduction": "mean"})
    want = (-pred[0, 0] * 1 - pred[1, 3] * 4) / 5
    np.testing.assert_allclose(op.kernel([pred, t, w], attrs), want)
    from relaylang.ir.types import TensorType
    from relaylang.op.relation import TypeRelError
    with pytest.raises(TypeRelError, match="integer"):
        op.type_rel([TensorType((3, 4), "float32"), TensorType((3,), "float32"),
                     TensorType((4,), "float32")], attrs)
    with pytest.raises(TypeRelError, match="one more axis"):
        op.type_rel([TensorType((3, 4), "float32"), TensorType((3, 4), "int32"),
                     TensorType((4,), "float32")], attrs)
    with pytest.raises(TypeRelError, match="reduction"):
        op.type_rel([TensorType((3, 4), "float32"), TensorType((3,), "int32"),
                     TensorType((4,), "float32")], make_attrs(op.attrs, {"reduction": "max"}))


# ------------------------------------------------------------------ convolutions


@st.composite
def conv_case(draw, nd):
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cin = groups * draw(st.integers(1, 2))
    cout = groups * draw(st.integers(1, 2))
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    s = [draw(st.integers(1, 3)) for _ in range(nd)]
    d = [draw(st.integers(1, 2)) for _ in range(nd)]
    before = [draw(st.integers(0, 2)) for _ in range(nd)]
    after = [draw(st.integers(0, 2)) for _ in range(nd)]
    sizes = []
    for j in range(nd):
        span = d[j] * (k[j] - 1) + 1
        low = max(1, span - before[j] - after[j])
        sizes.append(draw(st.integers(low, low + 4)))
    n = draw(st.integers(1, 2))
    return ((n, cin, *sizes), (cout, cin // groups, *k),
            {"strides": tuple(s), "dilation": tuple(d), "groups": groups,
             "padding": tuple(before) + tuple(after)})


@SETTINGS
@given(case=conv_case(2), seed=st.integers(0, 99))
def test_conv2d_data_and_weight(case, seed):
    dshape, wshape, kw = case
    check_rule("nn.conv2d", [rand(seed, *dshape), rand(seed + 1, *wshape)], rtol=1e-5,
               atol=1e-5, **kw)


@settings(max_examples=5, deadline=None, derandomize=True)
@given(case=conv_case(1), seed=st.integers(0, 99))
def test_conv1d(case, seed):
    dshape, wshape, kw = case
    check_rule("nn.conv1d", [rand(seed, *dshape), rand(seed + 1, *wshape)], atol=1e-5, **kw)


@settings(max_examples=4, deadline=None, derandomize=True)
@given(case=conv_case(3), seed=st.integers(0, 99))
def test_conv3d(case, seed):
    dshape, wshape, kw = case
    check_rule("nn.conv3d", [rand(seed, *dshape), rand(seed + 1, *wshape)], atol=1e-5, **kw)


@pytest.mark.parametrize("layouts, dshape, wshape, groups", [
    (("NHWC", "HWIO"), (1, 6, 5, 4), (3, 3, 2, 6), 2),
    (("NHWC", "HWOI"), (2, 5, 5, 3), (2, 2, 3, 1), 3),        # depthwise
    (("NCHW", "OIHW"), (1, 4, 6, 6), (8, 1, 3, 3), 4),        # depthwise, multiplier 2
])
def test_conv2d_layouts_and_depthwise(layouts, dshape, wshape, groups):
    data_layout, kernel_layout = layouts
    check_rule("nn.conv2d", [rand(0, *dshape), rand(1, *wshape)], data_layout=data_layout,
               kernel_layout=kernel_layout, groups=groups, strides=(2, 1), padding=(1, 1),
               atol=1e-5)


@st.composite
def conv_transpose_case(draw, nd):
    groups = draw(st.sampled_from([1, 1, 2]))
    cin = groups * draw(st.integers(1, 2))
    per_group_out = draw(st.integers(1, 2))
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    s = [draw(st.integers(1, 3)) for _ in range(nd)]
    d = [draw(st.integers(1, 2)) for _ in range(nd)]
    extra = [draw(st.integers(0, sj - 1)) for sj in s]
    sizes = [draw(st.integers(1, 4)) for _ in range(nd)]
    before, after = [], []
    for j in range(nd):
        full = s[j] * (sizes[j] - 1) + d[j] * (k[j] - 1) + 1 + extra[j]
        b = draw(st.integers(0, min(2, full - 1)))
        a = draw(st.integers(0, min(2, full - 1 - b)))
        before.append(b)
        after.append(a)
    n = draw(st.integers(1, 2))
    return ((n, cin, *sizes), (cin, per_group_out, *k),
            {"strides": tuple(s), "dilation": tuple(d), "groups": groups,
             "padding": tuple(before) + tuple(after), "output_padding": tuple(extra)})


@SETTINGS
@given(case=conv_transpose_case(2), seed=st.integers(0, 99))
def test_conv2d_transpose(case, seed):
    dshape, wshape, kw = case
    check_rule("nn.conv2d_transpose", [rand(seed, *dshape), rand(seed + 1, *wshape)],
               atol=1e-5, **kw)


def test_conv1d_3d_transpose_and_layouts():
    check_rule("nn.conv1d_transpose", [rand(0, 1, 2, 5), rand(1, 2, 3, 3)], strides=(2,),
               atol=1e-5)
    check_rule("nn.conv3d_transpose", [rand(0, 1, 2, 2, 3, 2), rand(1, 2, 1, 2, 2, 2)],
               padding=(1, 0, 0), atol=1e-5)
    check_rule("nn.conv2d_transpose", [rand(0, 1, 3, 3, 4), rand(1, 2, 2, 3, 4)],
               data_layout="NHWC", kernel_layout="HWOI", strides=(2, 2), atol=1e-5)


@pytest.mark.parametrize("op, shape, kw", [
    ("nn.depth_to_space", (2, 8, 2, 3), {"block_size": 2, "mode": "DCR"}),
    ("nn.depth_to_space", (1, 8, 2, 3), {"block_size": 2, "mode": "CRD"}),
    ("nn.depth_to_space", (1, 2, 3, 18), {"block_size": 3, "mode": "CRD", "layout": "NHWC"}),
    ("nn.depth_to_space", (1, 2, 3, 8), {"block_size": 2, "layout": "NHWC"}),
    ("nn.space_to_depth", (2, 3, 4, 6), {"block_size": 2}),
    ("nn.space_to_depth", (1, 4, 6, 3), {"block_size": 2, "layout": "NHWC"}),
])
def test_depth_and_space_moves(op, shape, kw):
    check_rule(op, [rand(0, *shape)], **kw)


@pytest.mark.parametrize("layout, shape, scales", [("NCHW", (1, 2, 3, 4), (2.0, 3.0)),
                                                   ("NHWC", (2, 3, 4, 2), (1.0, 2.0))])
def test_upsampling_nearest(layout, shape, scales):
    # the resize kernel rounds through float32: a linear op, so a large step is exact
    check_rule("nn.upsampling", [rand(0, *shape)], scale_h=scales[0], scale_w=scales[1],
               layout=layout, fd_eps=0.1, atol=1e-5)


def test_conv2d_gradient_runs_natively():
    """The conv rule is made of ops with LLVM lowerings: nothing falls back to NumPy."""
    from grad_check import build_forward

    import relaylang as rl
    from relaylang.ir.module import IRModule
    params, call, _ = build_forward("nn.conv2d", [rand(0, 2, 4, 7, 7), rand(1, 6, 2, 3, 3)],
                                    {"groups": 2, "strides": (2, 2), "padding": (1, 1)})
    adj = rl.var("adj", type_annotation=call.checked_type)
    grads = registry.implementation("nn.conv2d", "gradient")(call, adj)
    lib = rl.build(IRModule.from_expr(rl.Function(params + [adj], rl.Tuple(grads))),
                   target="llvm")
    assert not lib.fallback_ops


def test_every_differentiable_nn_op_has_a_rule():
    names = ["nn.conv1d", "nn.conv2d", "nn.conv3d", "nn.dense", "nn.matmul",
             "nn.batch_matmul", "nn.bias_add", "nn.relu", "nn.leaky_relu", "nn.prelu",
             "nn.softmax", "nn.fast_softmax", "nn.log_softmax", "nn.batch_norm",
             "nn.layer_norm", "nn.instance_norm", "nn.group_norm", "nn.l2_normalize",
             "nn.batch_flatten", "nn.pad", "nn.dropout", "nn.cross_entropy",
             "nn.cross_entropy_with_logits", "nn.nll_loss", "nn.conv1d_transpose", "nn.conv2d_transpose",
             "nn.conv3d_transpose", "nn.depth_to_space", "nn.space_to_depth",
             "nn.upsampling", "nn.lrn"]
    assert [n for n in names if registry.implementation(n, "gradient") is None] == []
