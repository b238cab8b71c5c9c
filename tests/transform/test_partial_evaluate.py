"""PartialEvaluate: static parts computed, residual code for the rest, fuel-limited recursion,
references with a store, static match/if; examples keep their results; deep inputs go through.

Each output re-parses and type-checks, and the interpreter agrees before and after (exact
for integers, the default tolerance of `same_value` for floats). Not idempotent: a second
run may unfold a residual recursive call one more level (TVM's fuel), so that is not checked.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from pass_helpers import same_value

import relaylang as rl
from relaylang.ir.analysis import bound_vars
from relaylang.ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    RefCreate,
    RefRead,
    Var,
    pattern_vars,
)
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.transform import InferType, get_pass
from relaylang.transform.partial_eval.machine import evaluate_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
PE = get_pass("PartialEvaluate")


def parse(text: str) -> IRModule:
    return InferType()(rl.parse(HEADER + text))


def check(before: IRModule, *arg_lists: list) -> IRModule:
    after = PE(before)
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(again, after)
    for args in arg_lists:
        assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))
    main = after["main"]
    binders = bound_vars(main)                # de-duplicated: each variable bound once
    assert len({id(v) for v in binders}) == sum(1 for _ in _binding_sites(main))
    return after


def _binding_sites(fn: Function) -> Iterator[Var]:
    """Every binding occurrence, one per site (a variable bound twice comes twice)."""
    for node in post_order(fn):
        if isinstance(node, Let):
            yield node.var
        elif isinstance(node, Function):
            yield from node.params
        elif isinstance(node, Match):
            for clause in node.clauses:
                yield from pattern_vars(clause.lhs)


def text(fn: Function) -> str:
    """The printed function without the inferred-type comments."""
    return re.sub(r" /\* ty=[^*]*\*/", "", rl.astext(fn))


def i32(v: int) -> np.ndarray:
    return np.array(v, "int32")


def calls_of(mod: IRModule, name: str) -> int:
    return sum(1 for fn in mod.functions.values() for n in post_order(fn)
               if isinstance(n, Call) and isinstance(n.op, GlobalVar) and n.op.name_hint == name)


def nodes(fn: Function, kind: type) -> list:
    return [n for n in post_order(fn) if isinstance(n, kind)]


# ---------------------------------------------------------------- examples

@pytest.mark.parametrize("name,inputs", [
    ("recursion.relay", [0, 1, 10, 12]),
    ("closures.relay", [0, 1, 3]),
    ("list_adt.relay", [0, 3]),
    ("references.relay", [0, 10]),
])
def test_examples_same_results(name: str, inputs: list[int]) -> None:
    mod = InferType()(rl.parse((EXAMPLES / name).read_text()))
    check(mod, *[[i32(n)] for n in inputs])


def test_example_list_static_parts_are_computed() -> None:
    mod = InferType()(rl.parse((EXAMPLES / "list_adt.relay").read_text()))
    main = PE(mod)["main"]
    # the static list [1, 2, 3, 4] is mapped and summed at compile time but for %k
    assert calls_of(IRModule({GlobalVar("main"): main}), "map") == 0
    assert same_value(rl.evaluate(PE(mod), i32(3)), (i32(30), i32(3)))


# ---------------------------------------------------------------- rules

SUM_TO = """
def @sum_to(%n: int32, %acc: int32) -> int32 {
  if (equal(%n, 0)) { %acc } else { @sum_to(subtract(%n, 1), add(%acc, %n)) }
}
"""


def test_static_bound_recursion_unrolls() -> None:
    out = check(parse(SUM_TO + "def @main() -> int32 { @sum_to(10, 0) }"), [])
    body = out["main"].body
    assert isinstance(body, Constant) and int(body.data) == 55


def test_dynamic_bound_recursion_stays_a_call() -> None:
    out = check(parse(SUM_TO + "def @main(%n: int32) -> int32 { @sum_to(%n, 0) }"),
                [i32(0)], [i32(7)])
    # unfolded into @main while the arguments make progress (the accumulator goes from
    # static to dynamic), then one residual call there, and @sum_to's own
    assert calls_of(out, "sum_to") == 2
    assert "sum_to" in out


def test_recursion_without_progress_stops() -> None:
    # TVM's test_loop: an endless loop on a constant is unfolded once, then stays a call
    # (not run: it would not terminate)
    out = PE(parse("""
def @loop[t](%x: t) -> t { @loop(%x) }
def @main() -> int32 { @loop(1) }"""))
    assert text(out["main"]).endswith("@loop(1)\n}")


def test_swapping_arguments_stop_when_nothing_gets_older() -> None:
    # TVM's test_swap_loop: loop(1, 2) -> loop(2, 1) -> loop(1, 2) stays a call
    out = PE(parse("""
type Nat { Z, S(Nat) }
def @loop(%x: Nat, %y: Nat) -> Nat { @loop(%y, %x) }
def @main() -> Nat { @loop(S(Z), S(S(Z))) }"""))
    assert calls_of(IRModule({GlobalVar("main"): out["main"]}), "loop") == 1
    assert re.search(r"@loop\(%\d+, %\d+\)\n}$", text(out["main"]))


def test_deep_static_recursion_no_recursion_error() -> None:
    out = PE(parse(SUM_TO + "def @main() -> int32 { @sum_to(3000, 0) }"))
    assert int(out["main"].body.data) == 3000 * 3001 // 2


def test_operators_fold_and_tuples_project() -> None:
    out = check(parse("""
def @main(%x: float32) -> float32 {
  let %t = (add(1f, 2f), %x);
  multiply(%t.0, %t.1)
}"""), [np.array(1.5, "float32")])
    call = out["main"].body
    assert isinstance(call, Call) and isinstance(call.args[0], Constant)
    assert float(call.args[0].data) == 3.0 and call.args[1] is out["main"].params[0]


def test_static_if_and_match_choose() -> None:
    out = check(parse("""
type Opt { Some(int32), None }
def @main(%x: int32) -> int32 {
  let %o = Some(4);
  let %v = match (%o) { Some(%y) => add(%y, 1), None => 0 };
  if (greater(%v, 3)) { multiply(%x, %v) } else { %x }
}"""), [i32(2)])
    assert not nodes(out["main"], Match)
    assert text(out["main"]).count("multiply(%x, 5)") == 1


def test_dynamic_match_and_if_keep_all_branches() -> None:
    out = check(parse("""
type Opt { Some(int32), None }
def @main(%x: int32, %c: bool) -> int32 {
  let %o = if (%c) { Some(%x) } else { None };
  match (%o) { Some(%y) => add(%y, 1), None => 0 }
}"""), [i32(2), np.array(True)], [i32(2), np.array(False)])
    assert len(nodes(out["main"], Match)) == 1


def test_closures_unfold_with_captured_values() -> None:
    out = check(parse("""
def @main(%x: int32) -> int32 {
  let %k = 3;
  let %f = fn (%y: int32) -> int32 { multiply(%y, %k) };
  add(%f(%x), %f(2))
}"""), [i32(5)])
    printed = text(out["main"])
    assert "multiply(%x, 3)" in printed and ", 6)" in printed
    assert printed.count("fn (") == 1          # no residual closure left: only @main


def test_references_static_store() -> None:
    out = check(parse("""
def @main(%x: int32) -> int32 {
  let %r = ref(1);
  ref_write(%r, add(ref_read(%r), 2));
  add(ref_read(%r), %x)
}"""), [i32(4)])
    assert not nodes(out["main"], RefRead)      # both reads known: 1, then 3
    assert "add(3, %x)" in text(out["main"])


def test_unknown_call_invalidates_store() -> None:
    out = check(parse("""
def @bump(%r: ref(int32)) -> () { ref_write(%r, add(ref_read(%r), 1)) }
def @main(%x: int32) -> int32 {
  let %r = ref(1);
  let %loop = fn (%n: int32) -> () {
    if (greater(%n, 0)) { @bump(%r); %loop(subtract(%n, 1)) } else { () }
  };
  %loop(%x);
  ref_read(%r)
}"""), [i32(0)], [i32(3)])
    # the loop bound is dynamic: the final read cannot be known
    assert len(nodes(out["main"], RefRead)) >= 1 and nodes(out["main"], RefCreate)


def test_write_in_dynamic_branch_forgotten() -> None:
    out = check(parse("""
def @main(%c: bool) -> int32 {
  let %r = ref(1);
  if (%c) { ref_write(%r, 2) } else { () };
  ref_read(%r)
}"""), [np.array(True)], [np.array(False)])
    assert isinstance(out["main"].body, Let) and nodes(out["main"], RefRead)


def test_stateful_not_folded() -> None:
    out = check(parse("""
def @main(%x: float32) -> Tensor[(2), float32] {
  %0 = nn.dropout(ones(shape=[2], dtype="float32"));
  add(%0.0, %x)
}"""))
    assert [c for c in nodes(out["main"], Call) if getattr(c.op, "name", "") == "nn.dropout"]


def test_polymorphic_unfolded_into_monomorphic_caller_typechecks() -> None:
    check(parse("""
def @twice[A](%f: fn (A) -> A, %x: A) -> A {
  let %g = fn (%y: A) -> A { %f(%y) };
  %g(%g(%x))
}
def @main(%x: float32) -> float32 { @twice(fn (%z: float32) -> float32 { negative(%z) }, %x) }
"""), [np.array(2.0, "float32")])


# ---------------------------------------------------------------- deep inputs

def _chain(first: Expr, n: int, step: Constant) -> Expr:
    """`let %v0 = add(first, step); let %v1 = add(%v0, step); ... %v{n-1}`, built bottom-up."""
    add = rl.op.get("add")
    lets = [(Var("v0"), Call(add, (first, step)))]
    for i in range(1, n):
        lets.append((Var(f"v{i}"), Call(add, (lets[-1][0], step))))
    expr: Expr = lets[-1][0]
    for v, value in reversed(lets):
        expr = Let(v, value, expr)
    return expr


def test_100k_let_chain_evaluator() -> None:
    # The evaluator alone (the pass adds DeadCodeElimination and InferType, tested deep by
    # their own tests): 100,000 dynamic lets give 100,000 residual lets, in order.
    n = 100_000
    x = Var("x", TensorType((), "float32"))
    one = Constant(np.array(1.0, "float32"))
    mod = IRModule({GlobalVar("main"): Function((x,), _chain(x, n, one))})
    out = evaluate_module(mod, 1 << 16)[mod.get_global_var("main")]
    e, count, prev = out.body, 0, out.params[0]
    while isinstance(e, Let):
        assert e.value.args[0] is prev
        prev, e, count = e.var, e.body, count + 1
    assert count == n - 1 and e.args[0] is prev       # the last add is the result itself


def test_5k_let_chain_pass() -> None:
    n = 5_000
    x = Var("x", TensorType((), "float32"))
    one = Constant(np.array(1.0, "float32"))
    mod = IRModule({GlobalVar("main"): Function((x,), _chain(x, n, one))})
    check(mod, [np.array(1.0, "float32")])


def test_static_let_chain_folds() -> None:
    n = 5_000
    one = Constant(np.array(1, "int32"))
    out = PE(IRModule({GlobalVar("main"): Function((), _chain(one, n, one))}))
    assert int(out["main"].body.data) == n + 1


def test_10k_nested_dynamic_ifs() -> None:
    # every branch is a scope of its own: 10,000 nested residual scopes, no recursion
    c = Var("c", TensorType((), "bool"))
    x = Var("x", TensorType((), "int32"))
    e: Expr = x
    for i in range(10_000):
        e = If(c, Call(rl.op.get("add"), (x, Constant(np.array(i, "int32")))), e)
    mod = IRModule({GlobalVar("main"): Function((c, x), e)})
    out = evaluate_module(mod, 1 << 16)[mod.get_global_var("main")]
    assert len(nodes(out, If)) == 10_000
