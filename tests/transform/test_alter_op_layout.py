"""AlterOpLayout: the target's preferred layouts, where the target comes from, and its
place in -O3 (no target: no change)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.ir.expr import Call, Op
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import PassContext
from relaylang.transform.bind_params import BindParams
from relaylang.transform.layout.alter_op_layout import TARGET_LAYOUTS, AlterOpLayout, target_kind
from relaylang.transform.tvm_pipeline import default_pipeline, missing_passes, optimize

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def ops(mod: IRModule) -> list[str]:
    return [n.op.name for fn in mod.functions.values() for n in post_order(fn)
            if isinstance(n, Call) and isinstance(n.op, Op)]


def conv_bn_relu(bound: bool) -> IRModule:
    """examples/conv_bn_relu.relay, its weights bound as constants when `bound`."""
    mod = rl.parse((EXAMPLES / "conv_bn_relu.relay").read_text())
    if not bound:
        return mod
    args = main_args(mod, seed=3)
    names = [p.name_hint for p in mod["main"].params][1:]
    return BindParams(params=dict(zip(names, args[1:])))(mod)


TWO_CONVS = """#[version = "0.0.5"]
def @main(%data: Tensor[(1, 8, 16, 16), float32], %w0: Tensor[(16, 8, 3, 3), float32],
          %gamma: Tensor[(16), float32], %beta: Tensor[(16), float32],
          %mean: Tensor[(16), float32], %var: Tensor[(16), float32],
          %w1: Tensor[(16, 16, 3, 3), float32]) {
  %0 = nn.conv2d(%data, %w0, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
  %1 = nn.batch_norm(%0, %gamma, %beta, %mean, %var, epsilon=2e-05f);
  %2 = nn.relu(%1.0);
  %3 = nn.conv2d(%2, %w1, padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3]);
  nn.relu(add(%3, %0))
}
"""


def two_convs(bound: bool) -> IRModule:
    """Conv + BN + ReLU, then a second convolution whose result is added to the first
    one's (a residual): a region the llvm target converts (one convolution alone is not
    worth the data's two transforms, transform/layout/nchwc.py)."""
    mod = rl.parse(TWO_CONVS)
    if not bound:
        return mod
    args = main_args(mod, seed=3)
    names = [p.name_hint for p in mod["main"].params][1:]
    return BindParams(params=dict(zip(names, args[1:])))(mod)


def test_target_kinds():
    assert target_kind("llvm -mcpu=skylake") == "llvm"
    assert target_kind("") == "" and target_kind(None) == ""
    assert set(TARGET_LAYOUTS) == {"llvm", "interp"}
    with pytest.raises(ValueError, match="no layouts for target `cuda`"):
        AlterOpLayout(target="cuda")


def test_llvm_converts_conv2d_to_nchwc():
    """TVM's x86 choice (transform/layout/nchwc.py; NHWC stays reachable through
    ConvertLayout{desired_layouts=nn.conv2d:NHWC}, tests/transform/test_convert_layout.py)."""
    mod = two_convs(bound=False)
    out = AlterOpLayout(target="llvm")(mod)
    conv = next(n for n in post_order(out["main"]) if isinstance(n, Call)
                and getattr(n.op, "name", "") == "nn.contrib_conv2d_NCHWc")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout, conv.attrs.out_layout) == (
        "NCHW8c", "OIHW8i16o", "NCHW16c")
    assert rl.structural_equal(AlterOpLayout(target="llvm")(out), out)
    args = main_args(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args), rtol=1e-4, atol=1e-4)


def test_target_comes_from_the_context_config():
    mod = two_convs(bound=False)
    assert ops(AlterOpLayout()(mod)) == ops(mod)             # no target anywhere: no change
    with PassContext(opt_level=3, config={"target": "llvm"}):
        converted = AlterOpLayout()(mod)
    assert "layout_transform" in ops(converted)
    with PassContext(opt_level=3, config={"target": "llvm"}):   # the option wins
        assert ops(AlterOpLayout(target="interp")(mod)) == ops(mod)


def test_o3_without_target_is_unchanged():
    assert "AlterOpLayout" not in missing_passes()
    assert any(p.name == "AlterOpLayout" for p in default_pipeline(3).passes)
    mod = conv_bn_relu(bound=True)
    with_pass = optimize(mod, opt_level=3)
    with PassContext(disabled_pass=["AlterOpLayout"]):
        without = optimize(mod, opt_level=3)
    assert rl.structural_equal(with_pass, without)


def test_o3_with_llvm_target_folds_weight_transforms():
    """With constant weights, -O3 for llvm adds exactly the data's two edge transforms."""
    mod = two_convs(bound=True)
    plain = optimize(mod, opt_level=3)
    with PassContext(config={"target": "llvm"}):
        llvm = optimize(mod, opt_level=3)
    assert len(ops(llvm)) == len(ops(plain)) + 2
    assert ops(llvm).count("layout_transform") == 2
    x = np.random.default_rng(0).uniform(0.5, 1.5, (1, 8, 16, 16)).astype("float32")
    assert same_value(rl.evaluate(plain, x), rl.evaluate(llvm, x), rtol=1e-4, atol=1e-4)


def test_a_lone_convolution_stays_nchw_for_llvm():
    mod = conv_bn_relu(bound=False)
    assert ops(AlterOpLayout(target="llvm")(mod)) == ops(mod)
