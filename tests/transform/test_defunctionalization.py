"""Defunctionalization: after it, nothing reachable from the chosen function calls or
passes a function (TVM's test_pass_defunctionalization.py check), results are the same,
unsupported programs get a diagnostic, first-order programs are returned as they are,
and a 100,000-long chain goes through. Golden cases: tests/golden/defunctionalization.
"""
from __future__ import annotations

import numpy as np
import pytest
from pass_helpers import same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import FuncType, TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass
from relaylang.transform.defunc_specialize import has_func_type
from relaylang.transform.defunctionalization import defunctionalize

HEADER = '#[version = "0.0.5"]\n'
DEFUNC = get_pass("Defunctionalization")
F32 = TensorType((), "float32")
LIST = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}
def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {
  match (%xs) {
    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),
    Nil => Nil,
  }
}
def @foldl[A, B](%f: fn (A, B) -> A, %acc: A, %xs: List[B]) -> A {
  match (%xs) {
    Cons(%x, %rest) => @foldl(%f, %f(%acc, %x), %rest),
    Nil => %acc,
  }
}
"""


def parse(text: str) -> IRModule:
    return rl.parse(HEADER + LIST + text)


def reachable(mod: IRModule, entry: str = "main") -> list[Function]:
    """The functions `entry` calls, transitively (itself included)."""
    seen = {entry}
    work, out = [mod[entry]], []
    while work:
        fn = work.pop()
        out.append(fn)
        for node in post_order(fn):
            if isinstance(node, GlobalVar) and node.name_hint not in seen:
                seen.add(node.name_hint)
                work.append(mod[node.name_hint])
    return out


def assert_first_order(mod: IRModule, entry: str = "main") -> None:
    mod = InferType()(mod)
    for fn in reachable(mod, entry):
        for node in post_order(fn):
            if isinstance(node, Call):
                assert not has_func_type(node.checked_type), rl.astext(node)
                assert not any(has_func_type(a.checked_type) for a in node.args), \
                    rl.astext(node)


def test_map_and_fold_with_closures_compute_the_same() -> None:
    mod = parse("""
def @main(%a: float32, %b: float32, %k: float32) -> float32 {
  %0 = @map(fn (%x: float32) -> float32 { multiply(%x, %k) }, Cons(%a, Cons(%b, Nil)));
  @foldl(fn (%s: float32, %y: float32) -> float32 { add(%s, %y) }, %k, %0)
}""")
    out = DEFUNC(mod)
    assert_first_order(out)
    args = [np.array(v, "float32") for v in (1.5, -2.0, 3.0)]
    assert same_value(rl.evaluate(InferType()(mod), *args), rl.evaluate(out, *args))
    assert float(rl.evaluate(out, *args)) == pytest.approx(3.0 + 4.5 - 6.0)


def test_output_is_a_fixpoint_and_reparses() -> None:
    out = DEFUNC(parse("""
def @main(%a: float32) -> List[float32] {
  @map(fn (%x: float32) -> float32 { negative(%x) }, Cons(%a, Nil))
}"""))
    text = rl.astext(out)
    assert rl.astext(DEFUNC(out)) == text
    assert rl.astext(DEFUNC(rl.parse(text))) == text


def test_first_order_program_is_returned_unchanged() -> None:
    mod = InferType()(parse("def @main(%a: float32) -> float32 { negative(%a) }"))
    assert DEFUNC(mod).functions == mod.functions


def test_func_option_chooses_the_function() -> None:
    mod = parse("""
def @other(%a: float32) -> List[float32] {
  @map(fn (%x: float32) -> float32 { negative(%x) }, Cons(%a, Nil))
}
def @main(%a: float32) -> float32 { %a }""")
    out = get_pass("Defunctionalization{func=other}")(mod)
    assert_first_order(out, "other")
    assert "apply0" in {gv.name_hint for gv in out.functions}
    with pytest.raises(rl.DiagnosticError, match="no global function @missing"):
        get_pass("Defunctionalization{func=missing}")(mod)


@pytest.mark.parametrize("body, message", [
    ("let %g = fn (%x: float32) -> float32 { %x }; @map(%g, Cons(%a, Nil))",
     "bound by let or match"),
    (("@map(if (True) { fn (%x: float32) -> float32 { %x } } else "
      "{ fn (%x: float32) -> float32 { negative(%x) } }, Cons(%a, Nil))"),
     "must be a lambda, a global or a parameter"),
])
def test_unsupported_function_arguments_get_a_diagnostic(body: str, message: str) -> None:
    mod = parse(f"def @main(%a: float32) -> List[float32] {{ {body} }}")
    with pytest.raises(rl.DiagnosticError, match=message) as err:
        DEFUNC(mod)
    assert err.value.diagnostics[0].span is not None


def test_functions_in_and_out_of_the_entry_are_refused() -> None:
    with pytest.raises(rl.DiagnosticError, match="@main takes a function"):
        DEFUNC(parse("def @main(%f: fn (float32) -> float32) -> float32 { %f(1f) }"))
    with pytest.raises(rl.DiagnosticError, match="returns a function here"):
        DEFUNC(parse("""
def @compose(%f: fn (float32) -> float32) -> fn (float32) -> float32 {
  fn (%x: float32) -> float32 { %f(%f(%x)) }
}
def @main(%a: float32) -> float32 {
  %0 = @compose(fn (%y: float32) -> float32 { negative(%y) });
  %0(%a)
}"""))


def test_deep_chain() -> None:
    # A 100,000-long chain inside the lambda, which moves into @apply0, and one before the
    # call. The core rewrite is run on the typed module: the pass's second InferType
    # over the same nodes adds time, not coverage.
    x, y = Var("x", F32), Var("y", F32)
    one, add = Constant(np.array(1, "float32")), get_op("add")
    chain: object = x
    inner: object = y
    for _ in range(100_000):
        inner = Call(add, (inner, one))
    for _ in range(1_000):
        chain = Call(add, (chain, one))
    f, v = Var("f", FuncType((F32,), F32)), Var("v", F32)
    twice = GlobalVar("twice")
    mod = IRModule({
        twice: Function((f, v), Call(f, (Call(f, (v,)),)), F32),
        GlobalVar("main"): Function((x,), Call(twice, (Function((y,), inner, F32), chain)))})
    out = defunctionalize(InferType()(mod))
    names = {gv.name_hint for gv in out.functions}
    assert names == {"main", "twice", "twice_0", "apply0"}
    (clause,) = out["apply0"].body.clauses
    node = clause.rhs
    for _ in range(100_000):
        node = node.args[0]
    assert node is out["apply0"].params[1]          # the lambda's %y is @apply0's argument


def test_a_module_without_the_entry_is_a_located_error() -> None:
    mod = rl.parse('#[version = "0.0.5"]\ndef @f(%x: float32) { %x }\n')
    with pytest.raises(rl.DiagnosticError, match=r"no global function @main .*@f") as err:
        rl.transform.Defunctionalization()(mod)
    span = err.value.diagnostics[0].span
    assert span is not None and span.line == 2
