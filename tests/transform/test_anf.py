"""ToANormalForm and the checker `is_anf`: on every example and on targeted programs.

Each output is checked the same way: `is_anf` accepts it, it re-parses and
type-checks, the pass is idempotent on it, and the interpreter agrees before and after.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Function, If, Let, Match, Tuple, TupleGetItem, Var
from relaylang.ir.module import IRModule
from relaylang.ir.normal_forms import anf_violation, is_anf
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass
from relaylang.transform.normal_forms.to_a_normal_form import to_a_normal_form

inputs = main_args
same_value = partial(shared_same_value, equal_nan=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
ANF = get_pass("ToANormalForm")


def parse(text: str) -> IRModule:
    return rl.parse(HEADER + text)


def check_pass_output(before: IRModule, after: IRModule, *args) -> None:
    """The checks every output gets (args: for @main; derived from its types if omitted)."""
    assert is_anf(after), anf_violation(after)
    again = rl.parse(rl.astext(after))
    InferType()(again)
    assert rl.structural_equal(ANF(after), after)
    assert rl.structural_equal(again, after)
    if "main" in before:
        args = args or tuple(inputs(before))
        assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


def lets(expr) -> list[Let]:
    return [n for n in post_order(expr) if isinstance(n, Let)]


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize("path", sorted(p.name for p in EXAMPLES.glob("*.relay")))
def test_examples(path):
    text = (EXAMPLES / path).read_text()
    mod = rl.parse(text)
    if path == "digits_mlp.relay":
        weights = np.load(EXAMPLES / "digits_mlp.npz")
        args = (np.load(EXAMPLES / "digits_sample.npy"),
                *(weights[k] for k in ("w1", "b1", "w2", "b2")))
    else:
        args = ()
    assert not is_anf(mod)          # examples print in graph form
    out = ANF(mod)
    check_pass_output(mod, out, *args)


@pytest.mark.parametrize("n", [0, 3, 7])
def test_example_results_survive(n):
    mod = rl.parse((EXAMPLES / "list_adt.relay").read_text())
    out = ANF(mod)
    assert same_value(rl.evaluate(out, np.int32(n)), rl.evaluate(mod, np.int32(n)))
    mod = rl.parse((EXAMPLES / "references.relay").read_text())
    got = rl.evaluate(ANF(mod), np.int32(n))
    assert [v.item() for v in got] == [n, n * (n + 1) // 2, 102]


# ---------------------------------------------------------------- scopes


def body_of(mod: IRModule, name: str = "main") -> object:
    return mod[name].body


def test_shared_node_is_bound_once():
    mod = parse("def @main(%x: float32) { %0 = add(%x, 1f); %1 = multiply(%0, %0); (%1, %0) }")
    out = ANF(mod)
    values = [let.value for let in lets(body_of(out))]
    adds = [v for v in values if isinstance(v, Call) and v.op.name == "add"]
    assert len(adds) == 1
    mult = next(v for v in values if isinstance(v, Call) and v.op.name == "multiply")
    assert mult.args[0] is mult.args[1] and isinstance(mult.args[0], Var)
    check_pass_output(mod, out)


def test_node_used_in_one_branch_stays_there():
    mod = parse("""def @main(%c: bool, %x: float32) {
      %0 = add(%x, 1f);
      if (%c) { multiply(%0, 2f) } else { %x }
    }""")
    out = ANF(mod)
    top = lets(body_of(out))
    # the outer chain binds only the `if`; the add lives inside the true branch
    assert [type(let.value) for let in _chain(body_of(out))] == [If]
    branch = _chain(body_of(out))[0].value
    assert [v.value.op.name for v in _chain(branch.true_branch)] == ["add", "multiply"]
    assert not lets(branch.false_branch)
    assert len(top) == 3
    check_pass_output(mod, out, np.array(True), np.float32(2))
    check_pass_output(mod, out, np.array(False), np.float32(2))


def test_node_used_in_both_branches_is_hoisted_to_their_scope():
    mod = parse("""def @main(%c: bool, %x: float32) {
      %0 = add(%x, 1f);
      if (%c) { multiply(%0, 2f) } else { subtract(%0, 2f) }
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert [type(let.value) for let in chain] == [Call, If]
    assert chain[0].value.op.name == "add"
    branch = chain[1].value
    assert [x.value.op.name for x in _chain(branch.true_branch)] == ["multiply"]
    assert [x.value.op.name for x in _chain(branch.false_branch)] == ["subtract"]
    check_pass_output(mod, out, np.array(False), np.float32(2))


def test_nothing_escapes_a_closure():
    mod = parse("""def @main(%x: float32) {
      %1 = fn (%y: float32) { %0 = add(%x, 1f); multiply(%0, %y) };
      %1(3f)
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert [type(let.value) for let in chain] == [Function, Call]
    inner = _chain(chain[0].value.body)
    assert [x.value.op.name for x in inner] == ["add", "multiply"]
    check_pass_output(mod, out, np.float32(2))


def test_node_shared_by_closure_and_outside_is_bound_outside():
    mod = parse("""def @main(%x: float32) {
      %0 = add(%x, 1f);
      %1 = fn (%y: float32) { multiply(%0, %y) };
      %2 = %1(3f);
      add(%2, %0)
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert chain[0].value.op.name == "add" and isinstance(chain[1].value, Function)
    check_pass_output(mod, out, np.float32(2))


def test_match_arms_are_scopes_and_adts_work():
    mod = parse("""type Opt[A] { Some(A), Nothing, }
    def @main(%x: int32) {
      %0 = add(%x, 1);
      %1 = Some(%0);
      match (%1) {
        Some(%v) => { %2 = multiply(%v, %0); add(%2, 1) },
        Nothing => { 0 },
      }
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert [type(let.value) for let in chain] == [Call, Call, Match]
    arm = chain[2].value.clauses[0].rhs
    assert [x.value.op.name for x in _chain(arm)] == ["multiply", "add"]
    check_pass_output(mod, out, np.int32(4))


def test_existing_lets_keep_their_variables_and_are_flattened():
    mod = parse("""def @main(%x: int32) {
      let %a = (let %b = add(%x, 1); multiply(%b, 2));
      let %c = %a;
      subtract(%c, %a)
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert [let.var.name_hint for let in chain[:3]] == ["b", "a", "c"]
    assert isinstance(chain[2].value, Var) and chain[2].value is chain[1].var
    check_pass_output(mod, out, np.int32(4))


def test_recursive_local_function_binds_itself():
    mod = parse("""def @main(%n: int32) {
      let %f = fn (%i: int32) -> int32 {
        if (equal(%i, 0)) { 0 } else { add(%i, %f(subtract(%i, 1))) }
      };
      %f(%n)
    }""")
    out = ANF(mod)
    chain = _chain(body_of(out))
    assert chain[0].var.name_hint == "f" and isinstance(chain[0].value, Function)
    check_pass_output(mod, out, np.int32(10))


def test_references_keep_their_order():
    mod = parse("""def @main(%x: int32) {
      let %r = ref(%x);
      %0 = ref_read(%r);
      %1 = ref_write(%r, add(%0, 1));
      %2 = ref_read(%r);
      (%0, %1, %2)
    }""")
    out = ANF(mod)
    kinds = [type(let.value).__name__ for let in _chain(body_of(out))]
    assert kinds == ["RefCreate", "RefRead", "Call", "RefWrite", "RefRead", "Tuple"]
    got = rl.evaluate(out, np.int32(5))
    assert (got[0].item(), got[2].item()) == (5, 6)
    check_pass_output(mod, out, np.int32(5))


def test_expression_with_free_variables_and_atoms():
    x = Var("x")
    assert to_a_normal_form(x) is x
    e = rl.parse_expr("fn (%y: int32) { %0 = add(%y, 1); (%0, %0.0) }")
    out = to_a_normal_form(e)
    assert is_anf(out)
    assert isinstance(out, Let) and isinstance(out.value, Function)


def test_primitive_function_is_left_alone():
    mod = parse("""def @main(%x: float32) {
      %0 = fn (%y: float32, Primitive=1) { add(multiply(%y, 2f), 1f) };
      %0(%x)
    }""")
    out = ANF(mod)
    prim = _chain(body_of(out))[0].value
    assert prim is mod["main"].body.op
    check_pass_output(mod, out, np.float32(3))


def _chain(expr) -> list[Let]:
    out = []
    while isinstance(expr, Let):
        out.append(expr)
        expr = expr.body
    return out


# ---------------------------------------------------------------- the checker


@pytest.mark.parametrize("text, culprit", [
    ("fn (%x: int32) { add(%x, 1) }", Call),                            # tail not atomic
    ("fn (%x: int32) { let %a = add(add(%x, 1), 2); %a }", Call),       # operand not atomic
    ("fn (%x: int32) { let %a = (let %b = %x; %b); %a }", Let),         # let in a let value
    ("fn (%x: (int32,)) { let %a = %x.0; let %b = (%a, %x.0); %b }", TupleGetItem),
    ("fn (%x: int32) { let %f = fn () { add(%x, 1) }; %f }", Call),     # inside a closure
])
def test_checker_finds_the_culprit(text, culprit):
    e = rl.parse_expr(text)
    found = anf_violation(e)
    assert found is not None and isinstance(found.node, culprit), found
    assert not is_anf(e)
    assert is_anf(to_a_normal_form(e.body))


def test_checker_rejects_sharing_and_accepts_anf():
    x = Var("x")
    shared = Tuple((x,))
    e = Let(Var("a"), shared, Let(Var("b"), shared, x))
    assert anf_violation(e).node is shared
    ok = rl.parse_expr("fn (%x: int32) { let %a = add(%x, 1); let %b = (%a, %a); %b }")
    assert is_anf(ok) and is_anf(parse("def @main(%x: int32) { %x }"))


# ---------------------------------------------------------------- depth


def test_deep_graph_chain_goes_through():
    x = Var("x", TensorType((), "int32"))
    add = get_op("add")
    from relaylang.ir.expr import Constant
    one = Constant(np.array(1, dtype="int32"))
    e = x
    for _ in range(100_000):
        e = Call(add, (e, one))
    mod = IRModule()
    from relaylang.ir.expr import GlobalVar
    mod.functions[GlobalVar("main")] = Function((x,), e)
    out = ANF(mod)
    assert is_anf(out)
    assert len(_chain(out["main"].body)) == 100_000
    assert rl.structural_equal(ANF(out), out)


def test_scope_lca_by_binary_lifting_matches_the_naive_walk():
    import random

    from relaylang.transform.normal_forms.to_a_normal_form import _lca, _Scope

    def naive(a, b):
        while a is not b:
            if a.level >= b.level:
                a = a.parent
            else:
                b = b.parent
        return a

    rng = random.Random(1)
    scopes = [_Scope()]
    for _ in range(2000):       # a long chain, then branches off it anywhere
        scopes.append(scopes[-1].child())
    for _ in range(1000):
        scopes.append(rng.choice(scopes).child())
    for _ in range(5000):
        a, b = rng.choice(scopes), rng.choice(scopes)
        assert _lca(a, b) is naive(a, b)


def test_node_shared_across_deeply_nested_branches_is_bound_at_the_top():
    c, x = Var("c"), Var("x")
    add = get_op("add")
    shared = Call(add, (x, x))
    e = shared
    for _ in range(20_000):
        e = If(c, Call(add, (e, shared)), x)
    out = to_a_normal_form(Function((c, x), e).body)
    assert is_anf(out)
    # every use is inside the outermost true branch: bound first there, once
    assert isinstance(out, Let) and isinstance(out.value, If)
    branch = out.value.true_branch
    assert isinstance(branch, Let) and branch.value is shared
    assert sum(1 for let in lets(out) if let.value is shared) == 1
