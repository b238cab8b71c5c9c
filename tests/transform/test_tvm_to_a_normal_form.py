"""ToANormalForm against TVM v0.19's tests/python/relay/test_pass_to_a_normal_form.py: the
checks the golden cases (tests/golden/tvm/to_a_normal_form/) cannot make: test_nat_add's
value and test_gradient_if. Pipelines run through the golden harness (re-parse,
idempotence, same values where @main takes tensors)."""
from __future__ import annotations

from tvm_golden import run_golden

import relaylang as rl
from relaylang.ir.expr import Let
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import InferType
from relaylang.transform.gradient import gradient


def _nat_count(value) -> int:
    n = 0
    while value.name == "succ":
        n, value = n + 1, value.fields[0]
    return n


# TVM's test_nat_add: nat_add(S(Z), S(Z)) is 2 before and after; @nat_add gets lets
def test_nat_add() -> None:
    text = """#[version = "0.0.5"]
#[import "nat"]
def @f() -> nat {
  @nat_add(succ(zero), succ(zero))
}
"""
    before = InferType()(rl.parse(text))
    after = run_golden(before, "ToANormalForm", skip=("interp",))
    assert _nat_count(rl.evaluate(before, entry="f")) == 2
    assert _nat_count(rl.evaluate(after, entry="f")) == 2
    assert any(isinstance(n, Let) for n in post_order(after["nat_add"]))


# TVM's test_gradient_if: ANF, the gradient, ANF again
def test_gradient_if() -> None:
    x, y = rl.var("a", shape=(1, 16)), rl.var("y", shape=(1, 16))
    cond = rl.var("cond", shape=(), dtype="bool")
    net = rl.Function([cond, x, y], rl.add(x, rl.If(cond, x, x)))
    mod = run_golden(IRModule.from_expr(net), "ToANormalForm,InferType")
    grad = IRModule.from_expr(gradient(mod["main"], mode="higher_order"))
    run_golden(InferType()(grad), "ToANormalForm", skip=("interp",))
