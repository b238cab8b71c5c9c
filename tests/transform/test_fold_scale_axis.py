"""FoldScaleAxis, ForwardFoldScaleAxis, BackwardFoldScaleAxis: scales folded into conv/dense
weights with the same results; where they must not fold; deep chains; the pass registry."""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import Conv2DAttrs
from relaylang.transform import BindParams, InferType, PassContext, PrintIR, get_pass
from relaylang.transform.fold_scale_axis.backward import backward_fold_scale_axis
from relaylang.transform.fold_scale_axis.forward import forward_fold_scale_axis

HEADER = '#[version = "0.0.5"]\n'
FSA = get_pass("FoldScaleAxis")
FORWARD = get_pass("ForwardFoldScaleAxis")
BACKWARD = get_pass("BackwardFoldScaleAxis")


def op_names(mod: IRModule) -> list[str]:
    return sorted(n.op.name for fn in mod.functions.values() for n in post_order(fn)
                  if isinstance(n, Call) and isinstance(n.op, Op))


def check_same(before: IRModule, after: IRModule, seed: int = 0) -> None:
    InferType()(rl.parse(rl.astext(after)))              # re-parses and type-checks
    args = main_args(before, seed)
    assert args is not None
    # The rescaled weights round once more: a few ulps of the largest summed term.
    assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args), atol=1e-5)


def conv_bn_relu(weights: dict[str, np.ndarray]) -> IRModule:
    src = HEADER + """def @main(%x: Tensor[(1, 3, 6, 6), float32],
          %w: Tensor[(5, 3, 3, 3), float32],
          %g: Tensor[(5), float32], %b: Tensor[(5), float32], %m: Tensor[(5), float32],
          %v: Tensor[(5), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1], channels=5, kernel_size=[3, 3]);
  %1 = nn.batch_norm(%0, %g, %b, %m, %v);
  nn.relu(%1.0)
}"""
    return BindParams(weights)(rl.parse(src))


@pytest.mark.parametrize("gamma_sign", [1.0, -1.0])
def test_conv_bn_relu_leaves_conv_add_relu(gamma_sign: float) -> None:
    # A negative gamma gives a negative scale: still folded, the scale does not pass the relu.
    rng = np.random.default_rng(0)
    weights = {"w": rng.standard_normal((5, 3, 3, 3)).astype("float32"),
               "g": (gamma_sign * rng.uniform(0.5, 2, 5)).astype("float32"),
               "b": rng.standard_normal(5).astype("float32"),
               "m": rng.standard_normal(5).astype("float32"),
               "v": rng.uniform(0.5, 2, 5).astype("float32")}
    before = conv_bn_relu(weights)
    with PassContext(opt_level=3):
        prepared = rl.transform.Sequential([get_pass("SimplifyInference"),
                                            get_pass("FoldConstant")])(before)
        assert op_names(prepared) == ["add", "multiply", "nn.conv2d", "nn.relu"]
        out = FSA(prepared)
    assert op_names(out) == ["add", "nn.conv2d", "nn.relu"]
    check_same(before, out)


def test_fold_scale_axis_runs_backward_forward_fold_constant_and_respects_disabled() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 4, 4), float32],
          %w: Tensor[(3, 2, 1, 1), float32]) {
  %0 = multiply(%x, 2f);
  %1 = nn.conv2d(%0, %w, channels=3, kernel_size=[1, 1]);
  multiply(%1, 3f)
}"""
    mod = rl.parse(src)
    seen: list[str] = []

    class Record(PrintIR):
        def run_after_pass(self, mod, info):
            seen.append(info.name)

    with PassContext(opt_level=3, instruments=[Record()]):
        out = FSA(mod)
    assert seen == ["BackwardFoldScaleAxis", "ForwardFoldScaleAxis", "FoldConstant",
                    "FoldScaleAxis"]
    # Both scales moved into the weight (a parameter, so the multiplies stay there): the
    # conv reads %x itself and is the result.
    conv = out["main"].body
    assert isinstance(conv, Call) and conv.op.name == "nn.conv2d"
    assert conv.args[0] is out["main"].params[0]
    assert op_names(out) == ["multiply", "multiply", "nn.conv2d"]
    check_same(mod, out)
    with PassContext(opt_level=3, disabled_pass=["ForwardFoldScaleAxis"]):
        partial = FSA(mod)
    conv = partial["main"].body                    # the input scale stays where it was
    assert isinstance(conv, Call) and conv.op.name == "nn.conv2d"
    assert isinstance(conv.args[0], Call) and conv.args[0].op.name == "multiply"


def test_registered_by_tvm_names_at_opt_level_3() -> None:
    for name in ("FoldScaleAxis", "ForwardFoldScaleAxis", "BackwardFoldScaleAxis"):
        p = get_pass(name)
        assert p.name == name and p.info.opt_level == 3
    assert "FoldScaleAxis" in [p.name for p in rl.transform.default_pipeline(3).passes]


def test_untyped_input_is_typed_first_and_output_typed() -> None:
    src = HEADER + """def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(3, 8), float32],
          %s: Tensor[(8), float32]) {
  nn.dense(multiply(%x, %s), %w, units=3)
}"""
    mod = rl.parse(src)
    out = FORWARD(mod)
    assert out["main"].checked_type is not None
    assert op_names(out) == ["multiply", "nn.dense"]
    dense = out["main"].body
    assert isinstance(dense, Call) and isinstance(dense.args[0], Var)   # x, unscaled
    check_same(mod, out)


def test_dense_with_3d_data_folds_along_the_last_axis() -> None:
    # TVM's dense rules name axis 1, right for 2-d data only; here the reduced/units axis.
    src = HEADER + """def @main(%x: Tensor[(2, 4, 8), float32], %w: Tensor[(8, 8), float32],
          %s: Tensor[(8), float32], %t: Tensor[(8), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.dense(%0, %w, units=8);
  multiply(%1, %t)
}"""
    mod = rl.parse(src)
    with PassContext(opt_level=3):
        out = FSA(mod)
    dense = out["main"].body
    assert isinstance(dense, Call) and dense.op.name == "nn.dense"     # both multiplies moved
    check_same(mod, out)


def test_conv3d_folds_both_directions() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 3, 3, 3), float32],
          %w: Tensor[(4, 2, 1, 1, 1), float32],
          %s: Tensor[(2, 1, 1, 1), float32], %t: Tensor[(4, 1, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.conv3d(%0, %w, channels=4, kernel_size=[1, 1, 1]);
  multiply(%1, %t)
}"""
    mod = rl.parse(src)
    with PassContext(opt_level=3):
        out = FSA(mod)
    body = out["main"].body
    assert isinstance(body, Call) and body.op.name == "nn.conv3d"
    check_same(mod, out)


def test_scale_shared_with_another_user_is_not_folded_forward_or_backward() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 4, 4), float32],
          %w: Tensor[(3, 2, 1, 1), float32],
          %s: Tensor[(2, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  %1 = nn.conv2d(%0, %w, channels=3, kernel_size=[1, 1]);
  (%1, nn.max_pool2d(%0, pool_size=[2, 2]))
}"""
    mod = InferType()(rl.parse(src))
    with PassContext(opt_level=3):
        out = FSA(mod)
    assert rl.structural_equal(out, mod)


def test_sum_of_conv_and_relu_needs_a_positive_scale() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 4, 4), float32],
          %w: Tensor[(3, 2, 1, 1), float32], %v: Tensor[(3, 2, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, channels=3, kernel_size=[1, 1]);
  %1 = nn.conv2d(%x, %v, channels=3, kernel_size=[1, 1]);
  %2 = add(%0, nn.relu(%1));
  multiply(%2, {scale})
}"""
    negative = InferType()(rl.parse(src.replace("{scale}", "-2f")))
    assert rl.structural_equal(BACKWARD(negative), negative)       # relu(-2 y) != -2 relu(y)
    positive = rl.parse(src.replace("{scale}", "2f"))
    out = BACKWARD(positive)
    assert isinstance(out["main"].body, Call) and out["main"].body.op.name == "add"
    check_same(positive, out)


def test_fold_is_idempotent() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 4, 4), float32],
          %w: Tensor[(3, 2, 3, 3), float32],
          %b: Tensor[(2, 1, 1), float32], %s: Tensor[(2, 1, 1), float32]) {
  %0 = multiply(%x, %s);
  %1 = add(%0, %b);
  nn.conv2d(%1, %w, padding=[1, 1, 1, 1], channels=3, kernel_size=[3, 3])
}"""
    with PassContext(opt_level=3):
        once = FSA(rl.parse(src))
        twice = FSA(once)
    assert rl.astext(once) == rl.astext(twice)
    check_same(rl.parse(src), once, seed=1)


def _typed(node, shape: tuple[int, ...]):
    node.set_checked_type(TensorType(shape, "float32"))
    return node


def _conv(data, w):
    return Call(get_op("nn.conv2d"), (data, w), Conv2DAttrs(kernel_size=(1, 1), channels=2))


def _relus(e, depth: int):
    for _ in range(depth):
        e = Call(get_op("nn.relu"), (e,))
    return e


# 100k-deep chains: a scale travels the whole chain. Only the nodes the rules read get
# types (inferring 100k nodes takes seconds and is tested elsewhere); the point is that
# nothing recurses. The functions, not the passes, so no inference runs after.
DEPTH = 100_000
SHAPE = (1, 2, 3, 3)


def test_100k_deep_relu_chain_backward() -> None:
    x, w = Var("x"), Var("w")
    _typed(x, SHAPE), _typed(w, (2, 2, 1, 1))
    conv = _typed(_conv(x, w), SHAPE)
    chain = _typed(_relus(conv, DEPTH), SHAPE)
    three = _typed(Constant(np.full((2, 1, 1), 3.0, "float32")), (2, 1, 1))
    out = backward_fold_scale_axis(Function((x, w), Call(get_op("multiply"), (chain, three))))
    nodes = [n for n in post_order(out) if isinstance(n, Call) and isinstance(n.op, Op)]
    assert [n.op.name for n in nodes].count("nn.relu") == DEPTH
    assert isinstance(out.body, Call) and out.body.op.name == "nn.relu"
    (new_conv,) = [n for n in nodes if n.op.name == "nn.conv2d"]
    weight = new_conv.args[1]                      # multiply(w, expand_dims(squeeze(3)))
    assert isinstance(weight, Call) and weight.op.name == "multiply" and weight.args[0] is w


def test_100k_deep_relu_chain_forward() -> None:
    x, w = Var("x"), Var("w")
    _typed(x, SHAPE), _typed(w, (2, 2, 1, 1))
    half = _typed(Constant(np.array(0.5, "float32")), ())
    chain = _typed(_relus(Call(get_op("multiply"), (x, half)), DEPTH), SHAPE)
    out = forward_fold_scale_axis(Function((x, w), _typed(_conv(chain, w), SHAPE)))
    nodes = [n for n in post_order(out) if isinstance(n, Call) and isinstance(n.op, Op)]
    assert [n.op.name for n in nodes].count("nn.relu") == DEPTH
    assert any(n.op.name == "nn.relu" and n.args[0] is x for n in nodes)    # x, unscaled
    assert isinstance(out.body, Call) and out.body.op.name == "nn.conv2d"
    weight = out.body.args[1]
    assert isinstance(weight, Call) and weight.op.name == "multiply" and weight.args[0] is w


def test_pipeline_level_3_folds_and_level_2_does_not() -> None:
    weights = {"w": np.full((5, 3, 3, 3), 0.1, "float32"), "g": np.full(5, 2.0, "float32"),
               "b": np.zeros(5, "float32"), "m": np.zeros(5, "float32"),
               "v": np.ones(5, "float32")}
    mod = conv_bn_relu(weights)
    with PassContext(disabled_pass=["FuseOps"]):
        o2 = rl.transform.optimize(mod, opt_level=2)
        o3 = rl.transform.optimize(mod, opt_level=3)
    assert "multiply" in op_names(o2) and "multiply" not in op_names(o3)
    check_same(mod, o3)


def test_conv_and_weight_of_other_dtype_are_left_alone() -> None:
    src = HEADER + """def @main(%x: Tensor[(1, 2, 4, 4), float16],
          %w: Tensor[(3, 2, 1, 1), float16],
          %s: Tensor[(3, 1, 1), float32]) {
  %0 = nn.conv2d(%x, %w, channels=3, kernel_size=[1, 1], out_dtype="float32");
  multiply(%0, %s)
}"""
    mod = InferType()(rl.parse(src))
    assert rl.structural_equal(BACKWARD(mod), mod)
