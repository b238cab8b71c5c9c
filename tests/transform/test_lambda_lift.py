"""LambdaLift: local closures become globals (`@<enclosing>_lifted_<n>`), capturing ones a
call of a global returning the closure; recursive let-bound closures keep working; no
local closure is left; examples and a 100,000-long chain go through.

Each output re-parses and type-checks, the pass is idempotent on it, and the
interpreter agrees before and after.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Let, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass

inputs = main_args
same = shared_same_value

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
LIFT = get_pass("LambdaLift")


def parse(text: str) -> IRModule:
    return InferType()(rl.parse(HEADER + text))


def local_closures(mod: IRModule) -> list[Function]:
    """Functions inside global bodies, except the closure a lifted global returns."""
    out = []
    for fn in mod.functions.values():
        allowed = fn.body if isinstance(fn.body, Function) else None
        out += [n for n in post_order(fn.body) if isinstance(n, Function) and n is not allowed]
    return out


def check(before: IRModule) -> IRModule:
    after = LIFT(before)
    assert not local_closures(after)
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(again, after)
    assert rl.structural_equal(LIFT(again), after)          # idempotent
    args = inputs(before) if "main" in before else None
    if args is not None:
        assert same(rl.evaluate(before, *args), rl.evaluate(after, *args))
    return after


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.relay")
                                        if p.name != "digits_mlp.relay"))
def test_examples(name: str) -> None:
    check(InferType()(rl.parse((EXAMPLES / name).read_text())))


def test_closures_example_results() -> None:
    mod = InferType()(rl.parse((EXAMPLES / "closures.relay").read_text()))
    out = check(mod)
    for n, want in [(3, (12, 42)), (0, (6, 0)), (1, (8, 6))]:
        got = rl.evaluate(out, np.array(n, "int32"))
        assert tuple(int(x) for x in got) == want
    assert {"main_lifted_0", "main_lifted_1", "make_adder_lifted_0"} <= \
        {gv.name_hint for gv in out.functions}


def test_capture_free_closure_becomes_global() -> None:
    out = check(parse("""
def @main(%y: float32) -> float32 {
  let %f = fn (%z: float32) -> float32 { negative(%z) };
  %f(%y)
}"""))
    let = out["main"].body
    assert isinstance(let, Let) and isinstance(let.value, GlobalVar)
    lifted = out[let.value]
    assert lifted.params[0].name_hint == "z" and not isinstance(lifted.body, Function)


def test_capturing_closure_becomes_call() -> None:
    out = check(parse("""
def @main(%y: float32, %w: float32) -> float32 {
  let %f = fn (%z: float32) -> float32 { add(multiply(%z, %y), %w) };
  %f(%y)
}"""))
    let = out["main"].body
    assert isinstance(let.value, Call) and let.value.args == out["main"].params
    lifted = out[let.value.op]
    assert [p.name_hint for p in lifted.params] == ["y", "w"]
    assert isinstance(lifted.body, Function) and lifted.body.attrs.get("Closure") == 1


def test_nested_closures_capture_through() -> None:
    out = check(parse("""
def @main(%a: float32) -> float32 {
  let %outer = fn (%b: float32) -> float32 {
    let %inner = fn (%c: float32) -> float32 { add(%a, multiply(%b, %c)) };
    %inner(%b)
  };
  %outer(2f)
}"""))
    assert len(out.functions) == 3


def test_recursive_closure_with_capture() -> None:
    out = check(parse("""
def @main(%n: int32, %k: int32) -> int32 {
  let %loop = fn (%i: int32, %acc: int32) -> int32 {
    if (less_equal(%i, 0)) { %acc } else { %loop(subtract(%i, 1), add(%acc, %k)) }
  };
  %loop(%n, 0)
}"""))
    lifted = out["main_lifted_0"]
    self_calls = [n for n in post_order(lifted) if isinstance(n, Call) and n.op is
                  out.get_global_var("main_lifted_0")]
    assert len(self_calls) == 1 and self_calls[0].args == lifted.params
    assert int(rl.evaluate(out, np.array(4, "int32"), np.array(3, "int32"))) == 12


def test_recursive_closure_without_capture() -> None:
    out = check(parse("""
def @main(%n: int32) -> int32 {
  let %fact = fn (%i: int32) -> int32 {
    if (less_equal(%i, 1)) { 1 } else { multiply(%i, %fact(subtract(%i, 1))) }
  };
  %fact(%n)
}"""))
    assert int(rl.evaluate(out, np.array(5, "int32"))) == 120


def test_deep_chain() -> None:
    x, one, add = Var("x", TensorType((), "float32")), Constant(np.array(1, "float32")), \
        get_op("add")
    z = Var("z", TensorType((), "float32"))
    body: object = x
    for _ in range(100_000):
        body = Call(add, (body, one))
    closure = Function((z,), Call(add, (z, x)))
    f = Var("f")
    mod = IRModule({GlobalVar("main"): Function((x,), Let(f, closure, Call(f, (body,))))})
    out = LIFT(mod)
    assert len(out.functions) == 2 and not local_closures(out)
