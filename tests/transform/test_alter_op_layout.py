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


def test_target_kinds():
    assert target_kind("llvm -mcpu=skylake") == "llvm"
    assert target_kind("") == "" and target_kind(None) == ""
    assert set(TARGET_LAYOUTS) == {"llvm", "interp"}
    with pytest.raises(ValueError, match="no layouts for target `cuda`"):
        AlterOpLayout(target="cuda")


def test_llvm_converts_conv2d_to_nhwc_hwio():
    mod = conv_bn_relu(bound=False)
    out = AlterOpLayout(target="llvm")(mod)
    conv = next(n for n in post_order(out["main"])
                if isinstance(n, Call) and getattr(n.op, "name", "") == "nn.conv2d")
    assert (conv.attrs.data_layout, conv.attrs.kernel_layout) == ("NHWC", "HWIO")
    assert rl.structural_equal(AlterOpLayout(target="llvm")(out), out)
    args = main_args(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args), rtol=1e-5, atol=1e-6)


def test_target_comes_from_the_context_config():
    mod = conv_bn_relu(bound=False)
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
    mod = conv_bn_relu(bound=True)
    plain = optimize(mod, opt_level=3)
    with PassContext(config={"target": "llvm"}):
        llvm = optimize(mod, opt_level=3)
    assert len(ops(llvm)) == len(ops(plain)) + 2
    assert ops(llvm).count("layout_transform") == 2
    x = np.random.default_rng(0).uniform(0.5, 1.5, (1, 3, 32, 32)).astype("float32")
    assert same_value(rl.evaluate(plain, x), rl.evaluate(llvm, x), rtol=1e-5, atol=1e-5)
