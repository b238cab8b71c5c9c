"""DeadCodeElimination (with and without `inline_once`) and RemoveUnusedFunctions: which
lets and globals go, which must stay (effects, closures, recursion), on every example and
on a 100,000-long let chain.

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
DCE = get_pass("DeadCodeElimination")
INLINE = get_pass("DeadCodeElimination{inline_once=true}")
RUF = get_pass("RemoveUnusedFunctions")


def parse(text: str) -> IRModule:
    return InferType()(rl.parse(HEADER + text))


def check(before: IRModule, p) -> IRModule:
    after = p(before)
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(again, after)
    assert rl.structural_equal(p(again), after)          # idempotent
    if "main" in before:
        args = inputs(before)
        assert same(rl.evaluate(before, *args), rl.evaluate(after, *args))
    return after


def kept(mod: IRModule, name: str = "main") -> list[str]:
    return sorted(n.var.name_hint for n in post_order(mod[name]) if isinstance(n, Let))


@pytest.mark.parametrize("p", [DCE, INLINE, RUF], ids=["dce", "inline_once", "ruf"])
@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.relay")
                                        if p.name != "digits_mlp.relay"))
def test_examples(name: str, p) -> None:
    check(InferType()(rl.parse((EXAMPLES / name).read_text())), p)


def test_dead_lets_cascade() -> None:
    mod = parse("""def @main(%x: float32) -> float32 {
      let %a = add(%x, 1f);
      let %b = multiply(%a, 2f);
      let %unused = fn (%i: float32) -> float32 { %i };
      let %c = subtract(%x, 1f);
      multiply(%c, %c)
    }""")
    assert kept(check(mod, DCE)) == ["c"]


def test_effects_stay() -> None:
    mod = parse("""def @g(%y: float32) -> float32 { %y }
    def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {
      let %r = ref(%x);
      let %w = ref_write(%r, %x);
      let %q = ref_read(%r);
      let %u = @g(1f);
      let %f = fn (%z: float32) -> float32 { %z };
      let %v = %f(2f);
      let %d = nn.dropout(%x);
      let %n = negative(%x);
      %x
    }""")
    assert kept(check(mod, DCE)) == ["d", "f", "q", "r", "u", "v", "w"]


def test_inline_once() -> None:
    mod = parse("""def @main(%x: int32) -> int32 {
      let %a = add(%x, 1);
      let %b = multiply(%a, 2);
      let %twice = subtract(%b, %x);
      let %k = add(%x, 3);
      let %r = ref(%x);
      let %f = fn (%i: int32) -> int32 { add(%i, %k) };
      let %dead = negative(%twice);
      %0 = add(%twice, %twice);
      add(%f(%0), ref_read(%r))
    }""")
    out = check(mod, INLINE)
    # %a, %b: used once, inlined; %k: used in a closure; %r: an effect; %f: a closure
    # value used once in the body is inlined (building a closure has no effect)
    assert kept(out) == ["k", "r", "twice"]
    assert kept(check(mod, DCE)) == ["a", "b", "f", "k", "r", "twice"]


def test_primitive_functions_untouched() -> None:
    mod = parse("""def @main(%x: float32) -> float32 {
      %0 = fn (%y: float32, Primitive=1) -> float32 { let %d = add(%y, 1f); %y };
      %0(%x)
    }""")
    assert kept(check(mod, DCE)) == ["d"]


def test_remove_unused_functions() -> None:
    mod = parse("""def @leaf(%x: float32) -> float32 { %x }
    def @helper(%x: float32) -> float32 { @leaf(%x) }
    def @value(%x: float32) -> float32 { %x }
    def @loop(%x: float32) -> float32 { @loop(@helper(%x)) }
    def @init(%x: float32) -> float32 { %x }
    def @main(%x: float32) -> float32 { let %f = @value; %f(@helper(%x)) }""")
    names = lambda m: sorted(gv.name_hint for gv in m.functions)
    assert names(check(mod, RUF)) == ["helper", "leaf", "main", "value"]
    both = get_pass("RemoveUnusedFunctions{entry_functions=main; init}")
    assert names(check(mod, both)) == ["helper", "init", "leaf", "main", "value"]
    assert get_pass("RemoveUnusedFunctions{entry_functions=nothing}")(mod) is mod
    from relaylang.transform.remove_unused_functions import RemoveUnusedFunctions
    assert names(RemoveUnusedFunctions("@init,main")(mod)) == names(both(mod))


def test_deep_chain() -> None:
    x, one, add = Var("x", TensorType((), "float32")), Constant(np.array(1, "float32")), \
        get_op("add")
    variables = [Var(f"v{i}") for i in range(100_000)]
    body: object = x
    for i in reversed(range(100_000)):           # each let feeds the next; none is used
        prev = x if i == 0 else variables[i - 1]
        body = Let(variables[i], Call(add, (prev, one)), body)
    mod = IRModule({GlobalVar("main"): Function((x,), body)})
    assert DCE(mod)["main"].body is x
    used = Let(variables[-1], Call(add, (variables[-2], one)), variables[-1])
    for i in reversed(range(99_999)):
        prev = x if i == 0 else variables[i - 1]
        used = Let(variables[i], Call(add, (prev, one)), used)
    inlined = INLINE(IRModule({GlobalVar("main"): Function((x,), used)}))["main"].body
    assert isinstance(inlined, Call) and not kept(IRModule({GlobalVar("main"):
                                                            Function((x,), inlined)}))
    assert len(kept(DCE(IRModule({GlobalVar("main"): Function((x,), used)})))) == 100_000
    assert RUF(mod) is mod
