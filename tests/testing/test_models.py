"""relaylang.testing.models: the standard model families with random weights.

Every registered model at its small size, in float32 and float16: typed as
built, printed and re-parsed to an equal module, run by the interpreter with the
weights as arguments and bound as constants, finite. Full-size ResNet-50,
ResNeXt-50 and MobileNet only build and type-check (their parameter counts are
the published ones); they are not run.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call, Op
from relaylang.ir.traverse import pre_order
from relaylang.ir.types import TensorType
from relaylang.testing import models
from relaylang.testing.models import gpt2, mlp, mnist, mobilenet, resnet, resnext

DTYPES = ("float32", "float16")

# (input shape, output shape) of each model at its small size, batch 1
SMALL_SHAPES = {
    "mlp": ((1, 1, 28, 28), (1, 10)),
    "mnist": ((1, 1, 28, 28), (1, 10)),
    "resnet18": ((1, 3, 32, 32), (1, 10)),
    "resnet50": ((1, 3, 32, 32), (1, 10)),
    "resnext50": ((1, 3, 32, 32), (1, 10)),
    "mobilenet": ((1, 3, 32, 32), (1, 10)),
    "gpt2": ((1, 8), (1, 8, 64)),
}


def op_counts(mod) -> Counter:
    return Counter(n.op.name for n in pre_order(mod["main"].body)
                   if isinstance(n, Call) and isinstance(n.op, Op))


def convs(mod) -> list[Call]:
    return [n for n in pre_order(mod["main"].body)
            if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == "nn.conv2d"]


def param_count(params) -> int:
    return sum(a.size for a in params.values())


def test_the_registry_names_the_standard_models() -> None:
    assert {"mlp", "mnist", "resnet50", "resnext50", "mobilenet", "gpt2"} <= set(models.MODELS)
    assert set(SMALL_SHAPES) == set(models.MODELS)
    with pytest.raises(KeyError, match="no model 'vgg16'"):
        models.get_workload("vgg16")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(models.MODELS))
def test_small_model_types_prints_and_runs(name: str, dtype: str) -> None:
    mod, params = models.get_workload(name, small=True, dtype=dtype)
    main = mod["main"]
    in_shape, out_shape = SMALL_SHAPES[name]

    # typed as built; weights follow the input(s), each annotated as its array is
    inputs = models.input_vars(mod, params)
    assert [tuple(v.type_annotation.shape) for v in inputs] == [in_shape]
    assert [p.name_hint for p in main.params[len(inputs):]] == list(params)
    for p in main.params[len(inputs):]:
        array = params[p.name_hint]
        assert (tuple(p.type_annotation.shape), p.type_annotation.dtype) == \
            (array.shape, str(array.dtype)) == (array.shape, dtype)
    ret = main.checked_type.ret_type
    assert isinstance(ret, TensorType)
    assert (tuple(ret.shape), ret.dtype) == (out_shape, dtype)
    assert rl.structural_equal(rl.transform.InferType()(mod), mod)

    # printed and parsed back: the same module, and no metadata section (weights are
    # parameters, other constants scalars)
    text = rl.astext(mod)
    assert "meta[" not in text
    assert rl.structural_equal(rl.parse(text), mod)

    # runs, finite, with weights as arguments or bound as constants alike
    x = models.example_inputs(mod, params)
    out = np.asarray(rl.evaluate(mod, *x, *models.params_in_order(mod, params)))
    assert out.shape == out_shape and out.dtype == np.dtype(dtype)
    assert np.isfinite(out).all()
    if name != "gpt2":      # softmax over classes
        np.testing.assert_allclose(out.astype(np.float32).sum(axis=-1), 1.0,
                                   rtol=0, atol=1e-2 if dtype == "float16" else 1e-5)
    bound = rl.transform.BindParams(params)(mod)
    assert [p.name_hint for p in bound["main"].params] == [v.name_hint for v in inputs]
    np.testing.assert_array_equal(np.asarray(rl.evaluate(bound, *x)), out)


def test_weights_are_deterministic_and_float16_rounds_float32() -> None:
    _, a = models.get_workload("resnet50", small=True)
    _, b = models.get_workload("resnet50", small=True)
    _, c = models.get_workload("resnet50", small=True, seed=1)
    _, h = models.get_workload("resnet50", small=True, dtype="float16")
    assert list(a) == list(b) == list(c) == list(h)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        np.testing.assert_array_equal(a[k].astype(np.float16), h[k])
    assert any(not np.array_equal(a[k], c[k]) for k in a)
    for k, v in a.items():
        assert np.isfinite(v).all()
        if k.endswith("_moving_var"):
            assert v.min() > 0.5


def test_mlp_and_mnist_layers() -> None:
    mod, params = mlp.get_workload()
    assert param_count(params) == 784 * 128 + 128 + 128 * 10 + 10
    assert op_counts(mod) == Counter({"nn.dense": 2, "nn.bias_add": 2, "nn.relu": 1,
                                      "nn.softmax": 1, "nn.batch_flatten": 1})
    mod, params = mlp.get_workload(batch_size=4, hidden=(32, 16), num_classes=3)
    assert [a.shape for a in params.values()] == [(32, 784), (32,), (16, 32), (16,), (3, 16),
                                                  (3,)]
    assert tuple(mod["main"].checked_type.ret_type.shape) == (4, 3)

    mod, params = mnist.get_workload()
    assert tuple(mod["main"].params[0].type_annotation.shape) == (1, 1, 28, 28)
    assert params["fc1_weight"].shape == (500, 50 * 4 * 4)
    assert [c.attrs.kernel_size for c in convs(mod)] == [(5, 5), (5, 5)]
    assert op_counts(mod)["nn.max_pool2d"] == 2


@pytest.mark.parametrize("num_layers, n_convs, n_adds", [(18, 21, 8), (34, 37, 16),
                                                         (50, 53, 16), (101, 104, 33)])
def test_resnet_depths(num_layers: int, n_convs: int, n_adds: int) -> None:
    """The unit tables of resnet.py at a tiny width: 2 (basic) or 3 (bottleneck) convs per
    unit, a projection per stage, the stem and the residual adds."""
    mod, _ = resnet.get_workload(num_layers=num_layers, base_channels=4,
                                 image_shape=(3, 64, 64), num_classes=5)
    counts = op_counts(mod)
    assert (counts["nn.conv2d"], counts["add"]) == (n_convs, n_adds)
    assert counts["nn.max_pool2d"] == 1         # a 64x64 image has the ImageNet stem
    assert tuple(mod["main"].checked_type.ret_type.shape) == (1, 5)


def test_resnext_groups_its_bottleneck_convolutions() -> None:
    mod, params = models.get_workload("resnext50", small=True)
    grouped = [c for c in convs(mod) if c.attrs.groups > 1]
    assert len(grouped) == 4 and {c.attrs.groups for c in grouped} == {4}
    # planes 16 * 8 / 64 * 4 groups = 8 channels in stage 1's bottleneck, 2 per group
    assert params["stage1_unit1_conv2_weight"].shape == (8, 2, 3, 3)
    with pytest.raises(ValueError, match="bottleneck"):
        resnext.get_workload(num_layers=18)
    with pytest.raises(ValueError, match="bottleneck"):
        resnet.get_workload(num_layers=34, groups=32)
    with pytest.raises(ValueError, match="num_layers"):
        resnet.get_workload(num_layers=20)


def test_mobilenet_is_depthwise() -> None:
    mod, params = mobilenet.get_workload(alpha=0.25, image_shape=(3, 32, 32), num_classes=4)
    depthwise = [c for c in convs(mod) if c.attrs.groups > 1]
    assert len(depthwise) == 13 and len(convs(mod)) == 27
    for c in depthwise:
        assert c.attrs.groups == c.attrs.channels == c.checked_type.shape[1]
        assert tuple(c.args[1].type_annotation.shape) == (c.attrs.channels, 1, 3, 3)
    assert params["fc_weight"].shape == (4, 256)


def test_gpt2_attention_is_causal() -> None:
    """Changing the last token changes only the last position's logits."""
    mod, params = models.get_workload("gpt2", small=True)
    weights = models.params_in_order(mod, params)
    ids = np.array([[1, 5, 9, 2, 7, 3, 3, 0]], dtype="int32")
    other = ids.copy()
    other[0, -1] = 11
    a = np.asarray(rl.evaluate(mod, ids, *weights))
    b = np.asarray(rl.evaluate(mod, other, *weights))
    np.testing.assert_array_equal(a[:, :-1], b[:, :-1])
    assert not np.allclose(a[:, -1], b[:, -1])
    counts = op_counts(mod)
    assert counts["nn.batch_matmul"] == 4 and counts["nn.layer_norm"] == 5
    assert counts["take"] == 2 and counts["tanh"] == 2 and counts["where"] == 2
    with pytest.raises(ValueError, match="multiple of heads"):
        gpt2.get_workload(hidden=30, heads=4)


@pytest.mark.parametrize("name, n_params, n_convs", [
    ("resnet50", 25_595_060, 53),       # pre-activation ResNet-50 of tvm.relay.testing
    ("resnext50", 25_082_036, 53),      # torchvision's 32x4d has 25,028,904 (no pre-act BN)
    ("mobilenet", 4_253_864, 27),
])
def test_full_size_models_build_and_type_check(name: str, n_params: int, n_convs: int) -> None:
    mod, params = models.get_workload(name)
    assert tuple(mod["main"].params[0].type_annotation.shape) == (1, 3, 224, 224)
    assert tuple(mod["main"].checked_type.ret_type.shape) == (1, 1000)
    assert param_count(params) == n_params
    assert len(convs(mod)) == n_convs
