"""SimplifyFCTranspose: dense weights read pre-transposed parameters, same results."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call, Function, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import DenseAttrs
from relaylang.op.transform import TransposeAttrs
from relaylang.transform import InferType, get_pass
from relaylang.transform.pass_infra import pass_text
from relaylang.transform.simplify_fc_transpose import (
    SimplifyFCTranspose,
    search_fc_transpose,
    simplify_fc_transpose,
)

HEADER = '#[version = "0.0.5"]\n'
SFT = get_pass("SimplifyFCTranspose{target_weights=*}")
MLP = HEADER + """def @main(%x: Tensor[(2, 3), float32], %w1: Tensor[(3, 5), float32],
    %b: Tensor[(5), float32], %w2: Tensor[(5, 4), float32]) {
  %0 = nn.relu(add(nn.dense(%x, transpose(%w1, axes=[1, 0])), %b));
  nn.dense(%0, transpose(%w2))
}"""


def params(mod: IRModule) -> list[str]:
    return [p.name_hint for p in mod["main"].params]


def test_results_with_transposed_weights_supplied():
    before = rl.parse(MLP)
    after = SFT(before)
    assert params(after) == ["x", "b", "w1.T", "w2.T"]
    assert not any(isinstance(n, Op) and n.name == "transpose" for n in post_order(after["main"]))
    InferType()(rl.parse(rl.astext(after)))                  # re-parses and type-checks
    assert rl.astext(SFT(after)) == rl.astext(after)          # idempotent
    rng = np.random.default_rng(0)
    x, w1, b, w2 = (rng.uniform(0.5, 1.5, s).astype("float32")
                    for s in [(2, 3), (3, 5), (5,), (5, 4)])
    expected = rl.evaluate(before, x, w1, b, w2)
    np.testing.assert_allclose(rl.evaluate(after, x, b, w1.T, w2.T), expected, rtol=1e-6)


def test_search_fc_transpose_finds_the_weights_once():
    fn = rl.parse(MLP)["main"]
    assert search_fc_transpose(fn) == ["w1", "w2"]


@pytest.mark.parametrize("targets", [["w2"], "w2", "%w2"])
def test_target_weights_from_python_and_text(targets):
    p = SimplifyFCTranspose(target_weights=targets)
    assert pass_text(p) == "SimplifyFCTranspose{target_weights=w2}"
    assert get_pass(pass_text(p)) == p
    assert params(p(rl.parse(MLP))) == ["x", "w1", "b", "w2.T"]


def test_var_in_target_list():
    mod = rl.parse(MLP)
    w1 = mod["main"].params[1]
    assert params(SimplifyFCTranspose(target_weights=[w1])(mod)) == ["x", "b", "w2", "w1.T"]


def test_let_bound_weight_is_not_a_parameter():
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3, 3), float32]) {
      let %v: Tensor[(3, 3), float32] = nn.relu(%w);
      nn.dense(%x, transpose(%v))
    }""")
    out = SFT(mod)
    assert params(out) == ["x", "w"]
    assert rl.structural_equal(out, InferType()(mod))


def test_opt_level_and_required_pass_follow_tvm():
    assert SFT.opt_level == 4 and SFT.required == ("DeadCodeElimination",)


def test_no_target_weights_rewrites_nothing():
    mod = rl.parse(MLP)
    out = get_pass("SimplifyFCTranspose")(mod)
    assert rl.structural_equal(out, InferType()(mod))


def test_deep_chain():
    x = Var("x", TensorType((2, 3), "float32"))
    w = Var("w", TensorType((3, 3), "float32"))
    data = x
    for _ in range(100_000):
        data = Call(get_op("nn.relu"), (data,))
    weight = Call(get_op("transpose"), (w,), TransposeAttrs(axes=None))
    fn = Function((x, w), Call(get_op("nn.dense"), (data, weight), DenseAttrs(units=None)))
    assert search_fc_transpose(fn) == ["w"]
    out = simplify_fc_transpose(fn, {"w"})
    assert [p.name_hint for p in out.params] == ["x", "w.T"]
    assert out.body.args[1] is out.params[1]
