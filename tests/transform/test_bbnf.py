"""ToBasicBlockNormalForm and its checker `is_bbnf`: placement, examples, semantics, depth."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.block_forms import is_bbnf, lifted_exprs
from relaylang.ir.expr import Call, Constant, Expr, Function, GlobalVar, If, Let, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.types import TensorType
from relaylang.transform.normal_forms.to_basic_block_normal_form import ToBasicBlockNormalForm

same_value = partial(shared_same_value, equal_nan=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'


def inputs_for(mod) -> list:
    """Concrete arguments for @main: small positive ints, seeded random floats."""
    rng = np.random.default_rng(0)
    args = []
    for p in mod["main"].params:
        ty = p.type_annotation
        assert isinstance(ty, TensorType)
        if ty.dtype.startswith("int"):
            args.append(np.full(ty.shape, 4, dtype=ty.dtype))
        elif ty.dtype == "bool":
            args.append(np.array(True))
        else:
            args.append(rng.uniform(0.1, 1.0, ty.shape).astype(ty.dtype))
    return args


def check_pass(mod, args_list):
    """The checks every pass case gets: checker, re-parse, type check, idempotence, results."""
    out = ToBasicBlockNormalForm()(mod)
    assert is_bbnf(out), [rl.astext(e) for e in lifted_exprs(out)]
    again = rl.parse(rl.astext(out))
    rl.transform.InferType()(again)
    assert rl.structural_equal(ToBasicBlockNormalForm()(out), out)
    assert rl.structural_equal(ToBasicBlockNormalForm()(again), again)
    for args in args_list:
        assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))
    return out


EXAMPLE_NAMES = sorted(p.stem for p in EXAMPLES.glob("*.relay") if p.stem != "digits_mlp")


@pytest.mark.parametrize("name", EXAMPLE_NAMES)
def test_examples(name):
    mod = rl.parse((EXAMPLES / f"{name}.relay").read_text())
    check_pass(mod, [inputs_for(mod)])


SHARED_IN_BRANCHES = HEADER + """
def @main(%c: bool, %x: float32) -> float32 {
  %0 = add(%x, 1f);
  %1 = multiply(%0, 2f);
  if (%c) { %1 } else { subtract(%1, %0) }
}
"""


def test_value_used_in_two_branches_is_bound_before_the_if():
    mod = rl.parse(SHARED_IN_BRANCHES)
    assert not is_bbnf(mod)
    out = check_pass(mod, [[np.array(c), np.float32(3)] for c in (True, False)])
    body = out["main"].body
    # %1 is used by both branches, %0 by the else branch and by %1 (outside): both bound
    assert isinstance(body, Let) and isinstance(body.body, Let)
    assert isinstance(body.body.body, If)
    assert body.value.op.name == "add" and body.body.value.op.name == "multiply"


def test_value_used_in_one_branch_stays_in_it():
    text = HEADER + """
def @main(%c: bool, %x: float32) -> float32 {
  if (%c) { %0 = add(%x, 1f); multiply(%0, %0) } else { %x }
}
"""
    mod = rl.parse(text)
    assert is_bbnf(mod)
    out = ToBasicBlockNormalForm()(mod)
    assert out["main"] is mod["main"]        # nothing to do: the function is kept as is
    branch = out["main"].body.true_branch
    assert isinstance(branch, Call) and branch.args[0] is branch.args[1]   # graph form kept


def test_nested_branches_bind_at_the_lowest_common_ancestor():
    text = HEADER + """
def @main(%a: bool, %b: bool, %x: float32) -> float32 {
  if (%a) {
    %0 = negative(%x);
    if (%b) { %0 } else { add(%0, 1f) }
  } else {
    %x
  }
}
"""
    mod = rl.parse(text)
    args = [[np.array(a), np.array(b), np.float32(2)] for a in (True, False) for b in (True, False)]
    out = check_pass(mod, args)
    outer = out["main"].body
    assert isinstance(outer, If)
    # bound inside the true branch of the outer if, not above it
    assert isinstance(outer.true_branch, Let) and outer.true_branch.value.op.name == "negative"


def test_shared_value_of_closure_body_and_outside():
    text = HEADER + """
def @main(%x: float32) -> float32 {
  %0 = exp(%x);
  %1 = fn (%y: float32) -> float32 { add(%y, %0) };
  %1(%0)
}
"""
    mod = rl.parse(text)
    out = check_pass(mod, [[np.float32(0.5)]])
    assert isinstance(out["main"].body, Let) and out["main"].body.value.op.name == "exp"


def test_let_inside_branch_and_match_clauses():
    text = HEADER + """
type Opt { Some(float32), None }
def @main(%x: float32) -> float32 {
  %0 = add(%x, 2f);
  %1 = Some(%0);
  match (%1) {
    Some(%v) => { let %w = multiply(%v, %0); %w },
    None => { %0 },
  }
}
"""
    mod = rl.parse(text)
    check_pass(mod, [[np.float32(1.5)]])


def test_checker_on_plain_graph_and_anf():
    graph = rl.parse(HEADER + "def @main(%x: float32) { %0 = add(%x, %x); multiply(%0, %0) }")
    assert is_bbnf(graph) and is_bbnf(graph["main"])
    anf = rl.parse(HEADER + "def @main(%x: float32) { let %a = add(%x, %x); "
                   "if (less(%a, 0f)) { %a } else { negative(%a) } }")
    assert is_bbnf(anf)


def test_recursion_with_shared_values_keeps_results():
    text = HEADER + """
def @main(%n: int32) -> int32 {
  %0 = multiply(%n, 2);
  %1 = less_equal(%n, 0);
  if (%1) { %0 } else { %2 = subtract(%n, 1); %3 = @main(%2); add(%3, %0) }
}
"""
    mod = rl.parse(text)
    check_pass(mod, [[np.int32(k)] for k in (0, 3, 7)])


def deep_shared(n: int) -> Function:
    """A let chain of n bindings whose last value is shared by both branches of an if,
    built directly (parsing 100k lines would dominate the test's time)."""
    add, neg, less = Op("add"), Op("negative"), Op("less")
    one, zero = Constant(np.array(1, "float32")), Constant(np.array(0, "float32"))
    vs = [Var("v0", TensorType((), "float32"))] + [Var(f"v{i}") for i in range(1, n)]
    shared = Call(neg, (vs[-1],))
    body: Expr = If(Call(less, (shared, zero)), shared, Call(add, (shared, one)))
    for i in range(n - 1, 0, -1):
        body = Let(vs[i], Call(add, (vs[i - 1], one)), body)
    return Function((vs[0],), body)


def module_of(fn: Function) -> IRModule:
    return IRModule({GlobalVar("main"): fn})


def test_deep_let_chain_keeps_results():
    mod = module_of(deep_shared(5_000))
    check_pass(mod, [[np.float32(0)], [np.float32(-9000)]])
    assert not is_bbnf(mod)


def test_100k_let_chain_without_recursion_error():
    mod = module_of(deep_shared(100_000))
    out = ToBasicBlockNormalForm()(mod)
    assert is_bbnf(out) and not is_bbnf(mod)
    body = out["main"].body
    for _ in range(100_000 - 1):
        assert isinstance(body, Let)
        body = body.body
    assert isinstance(body, Let) and body.value.op.name == "negative"


def test_100k_nested_calls_in_branches():
    x, c = Var("x", TensorType((), "float32")), Var("c", TensorType((), "bool"))
    chain: Expr = x
    for _ in range(100_000):
        chain = Call(Op("negative"), (chain,))
    fn = Function((x, c), If(c, chain, Call(Op("add"), (chain, chain))))
    out = ToBasicBlockNormalForm()(module_of(fn))
    assert is_bbnf(out) and isinstance(out["main"].body, Let)
    assert out["main"].body.value is chain      # the chain itself is shared, not rebuilt
