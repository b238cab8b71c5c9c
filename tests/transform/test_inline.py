"""Inline: calls of `Inline=1` globals replaced by fresh copies of their bodies; recursive
ones left alone; inlined globals dropped when unreferenced; examples and a 100,000-long
chain go through.

Each output re-parses and type-checks, the pass is idempotent on it, and the
interpreter agrees before and after.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.analysis import bound_vars
from relaylang.ir.attrs import DictAttrs
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Let, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass

same = shared_same_value

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
INLINE = get_pass("Inline")


def parse(text: str) -> IRModule:
    return InferType()(rl.parse(HEADER + text))


def check(before: IRModule, args: list | None = None) -> IRModule:
    after = INLINE(before)
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(again, after)
    assert rl.structural_equal(INLINE(again), after)          # idempotent
    if args is not None:
        assert same(rl.evaluate(before, *args), rl.evaluate(after, *args))
    return after


def calls_of(mod: IRModule, name: str) -> int:
    return sum(1 for fn in mod.functions.values() for n in post_order(fn)
               if isinstance(n, Call) and isinstance(n.op, GlobalVar) and n.op.name_hint == name)


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.relay")
                                        if p.name != "digits_mlp.relay"))
def test_examples_unchanged_without_marks(name: str) -> None:
    mod = InferType()(rl.parse((EXAMPLES / name).read_text()))
    assert INLINE(mod) is mod                  # nothing is marked Inline=1


SQ = """
def @sq(%x: float32, Inline=1) -> float32 {
  let %t = multiply(%x, %x);
  add(%t, %x)
}
"""


def test_inlines_and_drops() -> None:
    mod = parse(SQ + """
def @main(%y: float32) -> float32 {
  %0 = @sq(%y);
  @sq(%0)
}""")
    out = check(mod, [np.array(1.5, "float32")])
    assert "sq" not in out and calls_of(out, "sq") == 0
    lets = [n.var for n in post_order(out["main"]) if isinstance(n, Let)]
    # two copies of %t, plus a let for the second call's non-atomic argument
    assert len(lets) == len({id(v) for v in lets}) == 3
    assert not set(map(id, bound_vars(out["main"]))) & set(map(id, bound_vars(mod["sq"])))


def test_non_atomic_argument_let_bound_once_in_order() -> None:
    mod = parse(SQ + """
def @two(%a: float32, %b: float32, Inline=1) -> float32 { subtract(%a, %b) }
def @main(%y: float32) -> float32 {
  @two(@sq(add(%y, 1f)), negative(%y))
}""")
    out = check(mod, [np.array(2.0, "float32")])
    body = out["main"].body
    # the arguments become lets, first argument first, before the body
    assert isinstance(body, Let) and isinstance(body.value, Let)
    assert isinstance(body.body, Let) and body.body.value.op.name == "negative"
    adds = [n for n in post_order(out["main"]) if isinstance(n, Call)
            and getattr(n.op, "name", "") == "add" and n.args[1].__class__ is Constant]
    assert len(adds) == 1                                 # add(%y, 1f) evaluated once


def test_atomic_argument_substituted() -> None:
    out = check(parse(SQ + "def @main(%y: float32) -> float32 { @sq(%y) }"),
                [np.array(3.0, "float32")])
    body = out["main"].body
    assert isinstance(body, Let) and body.value.args[0] is out["main"].params[0]


def test_recursive_not_inlined() -> None:
    mod = parse("""
def @rec(%x: float32, Inline=1) -> float32 {
  if (less(%x, 0f)) { %x } else { @rec(subtract(%x, 1f)) }
}
def @even(%n: int32, Inline=1) -> bool {
  if (equal(%n, 0)) { True } else { @odd(subtract(%n, 1)) }
}
def @odd(%n: int32, Inline=1) -> bool {
  if (equal(%n, 0)) { False } else { @even(subtract(%n, 1)) }
}
def @main(%y: float32) -> (float32, bool) { (@rec(%y), @even(4)) }""")
    out = check(mod, [np.array(2.5, "float32")])
    assert calls_of(out, "rec") == 2 and "even" in out and "odd" in out


def test_unmarked_and_value_uses_stay() -> None:
    mod = parse(SQ + """
def @plain(%x: float32) -> float32 { negative(%x) }
def @main(%y: float32) -> float32 {
  let %f = @sq;
  %0 = @plain(%y);
  %f(%0)
}""")
    out = check(mod, [np.array(2.0, "float32")])
    # As TVM's Inline: the value use of @sq becomes a copy of the function, and @sq goes.
    assert "sq" not in out and calls_of(out, "plain") == 1


def test_transitive_inlining() -> None:
    mod = parse(SQ + """
def @quad(%x: float32, Inline=1) -> float32 { %0 = @sq(%x); @sq(%0) }
def @main(%y: float32) -> float32 { @quad(%y) }""")
    out = check(mod, [np.array(1.25, "float32")])
    assert list(out.functions) == [out.get_global_var("main")]


def test_match_binders_fresh() -> None:
    mod = parse("""
type Opt[A] { Some(A), Empty, }
def @get(%o: Opt[float32], Inline=1) -> float32 {
  match (%o) { Some(%v) => add(%v, 1f), Empty => 0f, }
}
def @main(%y: float32) -> (float32, float32) { (@get(Some(%y)), @get(Empty)) }""")
    out = check(mod, [np.array(2.0, "float32")])
    binders = bound_vars(out["main"])
    assert len(binders) == len({id(v) for v in binders}) and "get" not in out


def test_deep_chain() -> None:
    x, one, add = Var("x", TensorType((), "float32")), Constant(np.array(1, "float32")), \
        get_op("add")
    p = Var("p", TensorType((), "float32"))
    helper = Function((p,), Call(add, (p, one)), attrs=DictAttrs((("Inline", 1),)))
    gv = GlobalVar("helper")
    body: object = x
    for _ in range(100_000):
        body = Call(gv, (body,))
    out = INLINE(IRModule({gv: helper, GlobalVar("main"): Function((x,), body)}))
    assert "helper" not in out
    assert sum(isinstance(n, Let) for n in post_order(out["main"])) == 99_999
