"""ToGraphNormalForm and the checker `is_gnf`: on every example, on the A-normal form
of every example, and on targeted programs (which lets go, which stay).

Each output is checked: `is_gnf` accepts it, it re-parses and type-checks, the pass is
idempotent on it, and the interpreter agrees before and after.
"""
from __future__ import annotations

from functools import partial
from pathlib import Path

import numpy as np
import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.analysis import gnf_violation, is_gnf
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Let, Var
from relaylang.ir.module import IRModule
from relaylang.ir.normal_forms import is_gnf as ir_is_gnf
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass

inputs = main_args
same_value = partial(shared_same_value, equal_nan=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
GNF = get_pass("ToGraphNormalForm")
ANF = get_pass("ToANormalForm")


def parse(text: str) -> IRModule:
    return rl.parse(HEADER + text)


def check_pass_output(before: IRModule, after: IRModule, *args) -> None:
    assert is_gnf(after), gnf_violation(after)
    again = rl.parse(rl.astext(after))
    InferType()(again)
    assert rl.structural_equal(GNF(after), after)
    assert rl.structural_equal(again, after)
    if "main" in before:
        args = args or tuple(inputs(before))
        assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


def lets(expr) -> list[Let]:
    return [n for n in post_order(expr) if isinstance(n, Let)]


def kept(mod: IRModule, name: str = "main") -> list[str]:
    return sorted(let.var.name_hint for let in lets(mod[name]))


def example(path: str):
    mod = rl.parse((EXAMPLES / path).read_text())
    if path == "digits_mlp.relay":
        weights = np.load(EXAMPLES / "digits_mlp.npz")
        return mod, (np.load(EXAMPLES / "digits_sample.npy"),
                     *(weights[k] for k in ("w1", "b1", "w2", "b2")))
    return mod, ()


NAMES = sorted(p.name for p in EXAMPLES.glob("*.relay"))


# ---------------------------------------------------------------- examples


@pytest.mark.parametrize("path", NAMES)
def test_examples(path):
    mod, args = example(path)
    check_pass_output(mod, GNF(mod), *args)


@pytest.mark.parametrize("path", NAMES)
def test_examples_through_anf_and_back(path):
    mod, args = example(path)
    anf = ANF(mod)
    out = GNF(anf)
    check_pass_output(mod, out, *args)
    if path in ("mlp.relay", "attention.relay", "conv_bn_relu.relay", "digits_mlp.relay"):
        assert not is_gnf(anf)                # their ANF lets are all pure
        assert rl.structural_equal(out, mod)  # and GNF gives the graph back


def test_examples_keep_their_effects():
    mod = GNF(ANF(rl.parse((EXAMPLES / "references.relay").read_text())))
    names = kept(mod)
    assert {"count", "total", "loop", "counter"} <= set(names)
    for n in (0, 4):
        got = rl.evaluate(mod, np.int32(n))
        assert [v.item() for v in got] == [n, n * (n + 1) // 2, 102]
    mod = GNF(rl.parse((EXAMPLES / "closures.relay").read_text()))
    assert kept(mod) == ["add3", "loop", "step"]     # %double is a pure closure


# ---------------------------------------------------------------- what goes


def test_pure_lets_become_shared_nodes():
    mod = parse("""def @main(%x: float32) {
      let %a = add(%x, 1f);
      let %b = (%a, %a);
      let %c = %b.1;
      multiply(%c, %a)
    }""")
    out = GNF(mod)
    body = out["main"].body
    assert not lets(body)
    assert isinstance(body, Call) and body.op.name == "multiply"
    assert body.args[1] is body.args[0].tuple_value.fields[0]          # %a, shared
    check_pass_output(mod, out, np.float32(2))


def test_dead_pure_let_is_dropped_dead_effect_is_kept():
    mod = parse("""def @main(%x: int32) {
      let %unused = add(%x, 1);
      let %r = ref(0);
      ref_write(%r, %x);
      ref_read(%r)
    }""")
    out = GNF(mod)
    assert kept(out) == ["", "r"]
    assert rl.evaluate(out, np.int32(7)).item() == 7
    check_pass_output(mod, out, np.int32(7))


def test_let_returning_its_variable_goes_even_with_effects():
    mod = parse("""def @g(%x: int32) { %x }
    def @main(%x: int32) { let %r = ref(%x); let %v = @g(%x); %v }""")
    out = GNF(mod)
    assert kept(out) == ["r"]
    assert isinstance(out["main"].body.body, Call)
    check_pass_output(mod, out, np.int32(3))


def test_nested_scopes_and_closures_without_captures():
    mod = parse("""type Opt[A] { Some(A), Nothing, }
    def @main(%c: bool, %x: int32) {
      let %f = fn (%y: int32) { let %t = multiply(%y, 2); add(%t, %t) };
      let %o = if (%c) { let %s = Some(%x); %s } else { Nothing };
      match (%o) {
        Some(%v) => { let %w = add(%v, 1); %f(%w) },
        Nothing => { 0 },
      }
    }""")
    out = GNF(mod)
    assert kept(out) == []
    for c in (True, False):
        check_pass_output(mod, out, np.array(c), np.int32(4))


# ---------------------------------------------------------------- what stays


@pytest.mark.parametrize("value, reason", [
    ("ref(%x)", "effect"),
    ("ref_read(%cell)", "effect"),
    ("ref_write(%cell, %x)", "effect"),
    ("@g(%x)", "call of a global"),
    ("%h(%x)", "call of a closure"),
    ("nn.dropout(%t)", "stateful operator"),
    ("match? (%l) { Cons(%a, _) => { %a } }", "partial match"),
])
def test_effectful_values_keep_their_let(value, reason):
    mod = parse(f"""type List[A] {{ Cons(A, List[A]), Nil, }}
    def @g(%x: int32) {{ %x }}
    def @main(%x: int32, %h: fn (int32) -> int32, %t: Tensor[(2), float32], %l: List[int32]) {{
      let %cell = ref(1);
      let %keep = {value};
      let %pure = add(%x, 1);
      (%keep, %pure)
    }}""")
    out = GNF(mod)
    assert kept(out) == ["cell", "keep"], reason
    assert is_gnf(out) and not is_gnf(mod)
    assert rl.structural_equal(GNF(out), out)


def test_recursive_and_captured_lets_stay():
    mod = parse("""def @main(%n: int32) {
      let %k = add(%n, 1);
      let %loop = fn (%i: int32) -> int32 {
        if (equal(%i, 0)) { %k } else { %loop(subtract(%i, 1)) }
      };
      %loop(%n)
    }""")
    out = GNF(mod)
    assert kept(out) == ["k", "loop"]
    check_pass_output(mod, out, np.int32(5))
    assert rl.evaluate(out, np.int32(5)).item() == 6


# ---------------------------------------------------------------- the checker


def test_checker_reports_the_first_removable_let():
    mod = parse("""def @main(%x: int32) {
      let %r = ref(%x);
      let %a = add(%x, 1);
      let %b = multiply(%a, 2);
      (%r, %b)
    }""")
    found = gnf_violation(mod)
    assert isinstance(found.node, Let) and found.node.var.name_hint == "a"
    assert "%a" in found.reason
    assert not is_gnf(mod) and is_gnf(GNF(mod))
    assert is_gnf(parse("def @main(%x: int32) { %0 = add(%x, 1); (%0, %0) }"))


def test_checker_takes_a_stateful_predicate():
    e = rl.parse_expr("fn (%x: int32) { let %a = add(%x, 1); %a }")
    assert not is_gnf(e)
    e = rl.parse_expr("fn (%x: int32) { let %a = add(%x, 1); (%a, %a) }")
    assert not is_gnf(e) and ir_is_gnf(e, stateful=lambda op: op.name == "add")


# ---------------------------------------------------------------- depth


def test_deep_let_chain_goes_through():
    x = Var("x", TensorType((), "int32"))
    add = get_op("add")
    one = Constant(np.array(1, dtype="int32"))
    variables = [Var(f"v{i}") for i in range(100_000)]
    body: object = variables[-1]
    for i in reversed(range(100_000)):
        prev = x if i == 0 else variables[i - 1]
        body = Let(variables[i], Call(add, (prev, one)), body)
    mod = IRModule({GlobalVar("main"): Function((x,), body)})
    assert not is_gnf(mod)
    out = GNF(mod)
    assert is_gnf(out) and not lets(out["main"])
    back = ANF(out)
    assert len(lets(back["main"])) == 100_000
    assert rl.structural_equal(GNF(back), out)
