"""ChangeBatch: a new batch size for chosen parameters; each row computes as before."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Call, Function, GlobalVar, Var
from relaylang.ir.module import IRModule
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass
from relaylang.transform.change_batch import ChangeBatch, parse_batch_axes
from relaylang.transform.pass_infra import PassNotFound, pass_text

HEADER = '#[version = "0.0.5"]\n'
MODEL = HEADER + """def @main(%x: Tensor[(1, 3), float32], %w: Tensor[(4, 3), float32],
    %b: Tensor[(4), float32]) -> Tensor[(1, 4), float32] {
  %0 = nn.relu(nn.bias_add(nn.dense(%x, %w), %b));
  nn.softmax(%0)
}"""


def test_each_row_of_the_batch_computes_as_batch_one():
    before = rl.parse(MODEL)
    after = ChangeBatch(data={"x": 0}, batch_size=5)(before)
    assert after["main"].params[0].type_annotation.shape == (5, 3)
    assert after["main"].checked_type.ret_type.shape == (5, 4)
    InferType()(rl.parse(rl.astext(after)))                    # re-parses and type-checks
    rng = np.random.default_rng(0)
    xs = rng.uniform(0.5, 1.5, (5, 3)).astype("float32")
    w = rng.uniform(0.5, 1.5, (4, 3)).astype("float32")
    b = rng.uniform(0.5, 1.5, (4,)).astype("float32")
    batched = rl.evaluate(after, xs, w, b)
    for i in range(5):
        np.testing.assert_allclose(batched[i:i + 1], rl.evaluate(before, xs[i:i + 1], w, b),
                                   rtol=1e-6)


def test_idempotent_and_round_trips_as_text():
    p = get_pass("ChangeBatch{data=x:0,batch_size=5}")
    once = p(rl.parse(MODEL))
    assert rl.astext(p(once)) == rl.astext(once)
    assert pass_text(p) == "ChangeBatch{data=x:0,batch_size=5}"
    assert get_pass(pass_text(p)) == p


def test_data_forms():
    x = Var("x", TensorType((1,), "float32"))
    assert parse_batch_axes({x: 0, "%m": -1}) == {"x": 0, "m": -1}
    assert parse_batch_axes("x:0; m:1") == parse_batch_axes("x:0 m:1") == {"x": 0, "m": 1}
    for bad in ("x", "x:a", ":0"):
        with pytest.raises(ValueError):
            parse_batch_axes(bad)
    with pytest.raises(ValueError):
        ChangeBatch(data="x:0", batch_size=0)
    with pytest.raises((PassNotFound, ValueError)):
        get_pass("ChangeBatch{data=x}")


@pytest.mark.parametrize("data, message", [
    ("x:3", "axis 3 is outside %x"),
    ("y:0", "no function has a parameter %y"),
    ("f:0", "%f has no tensor type annotation"),
])
def test_bad_requests_are_diagnostics(data, message):
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(1, 3), float32], %f: fn (float32) -> float32) {
      %x
    }""")
    with pytest.raises(rl.DiagnosticError) as e:
        ChangeBatch(data=data)(mod)
    assert message in e.value.diagnostics[0].message
    assert e.value.diagnostics[0].span is not None


def test_opt_level_follows_tvm():
    assert ChangeBatch.opt_level == 1 and ChangeBatch().batch_size == 16


def test_deep_chain():
    x = Var("x", TensorType((1, 2), "float32"))
    body = x
    for _ in range(100_000):
        body = Call(get_op("negative"), (body,))
    mod = IRModule({GlobalVar("main"): Function((x,), body)})
    fn = ChangeBatch(data="x:0", batch_size=3).transform_function(
        mod["main"], mod, rl.transform.PassContext())
    assert fn.params[0].type_annotation.shape == (3, 2)
    leaf = fn.body
    while isinstance(leaf, Call):
        leaf = leaf.args[0]
    assert leaf is fn.params[0]
