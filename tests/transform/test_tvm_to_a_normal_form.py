"""ToANormalForm against TVM v0.19's tests/python/relay/test_pass_to_a_normal_form.py: the
checks the golden cases (tests/golden/tvm/to_a_normal_form/) cannot make: test_nat_add's
value and test_gradient_if. Pipelines run through the golden harness (re-parse,
idempotence, same values where @main takes tensors)."""
from __future__ import annotations

from pathlib import Path

import relaylang as rl
from relaylang.ir.expr import Let
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.testing.cases import split_cases
from relaylang.testing.golden import run_case
from relaylang.transform import InferType
from relaylang.transform.gradient import gradient


def run_golden(mod: IRModule | str, pipeline: str, skip: tuple[str, ...] = (),
               opt_level: int | None = None) -> IRModule:
    """`relay opt [--opt-level N] -p PIPELINE` on `mod` through the golden harness
    (relaylang/testing):
    its automatic checks (re-parse, idempotence, same values on the interpreter) must hold;
    the typed output module."""
    text = mod if isinstance(mod, str) else rl.astext(mod)
    level = "" if opt_level is None else f" --opt-level {opt_level}"
    head = f"// RUN: relay opt %s{level} -p {pipeline}\n"
    if skip:
        head += f"// GOLDEN-SKIP: {', '.join(skip)}\n"
    run = run_case(split_cases(Path("tvm_case.relay"), head + text)[0])
    assert [r.exit_code for r in run.results] == [0], run.results[0].stderr
    assert not run.problems, "\n".join(run.problems)
    return InferType()(rl.parse(run.stdout))


def assert_same(actual: IRModule, expected: IRModule) -> None:
    expected = InferType()(expected)
    assert rl.structural_equal(actual, expected, map_free_vars=True), \
        f"actual:\n{rl.astext(actual)}\nexpected:\n{rl.astext(expected)}"


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
