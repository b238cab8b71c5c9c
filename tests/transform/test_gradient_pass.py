"""The gradient pass (relaylang/transform/gradient.py): `rl.transform.gradient` and the
registered pass `Gradient`, in both modes.

Gradients are checked against central finite differences in float64 on the interpreter
and the LLVM backend (a higher-order result runs in its mixed mode), on straight-line
programs (random ones from hypothesis: both modes agree) and on programs with `if`,
recursion through a global, closures, ADTs with `match`, and references. Also: deep
programs (10,000 layers, no RecursionError), located diagnostics, printing and parsing
back, and the optimisation passes on a differentiated function.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gradient_pass_check import check_gradient, gradient_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.op import make, registry
from relaylang.transform import InferType, Sequential, get_pass
from relaylang.transform.tvm_pipeline import optimize

HEADER = '#[version = "0.0.5"]\n'
SETTINGS = settings(max_examples=12, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


def parse(text: str) -> IRModule:
    return rl.parse(HEADER + text, source_name="test.relay")


def rand(*shape: int, seed: int = 0, lo: float = -1.5, hi: float = 1.5) -> np.ndarray:
    return np.random.default_rng(seed).uniform(lo, hi, size=shape)


# ---------------------------------------------------------------- the API


def test_the_api_returns_the_result_and_one_gradient_per_parameter() -> None:
    x = rl.var("x", shape=(3,), dtype="float64")
    y = rl.var("y", shape=(3,), dtype="float64")
    fn = rl.Function([x, y], rl.multiply(x, y))
    for mode in ("higher_order", "first_order"):
        g = rl.transform.gradient(fn, mode=mode)
        assert isinstance(g, rl.Function) and g.params == fn.params
        assert rl.astext(g.checked_type) == ("fn (Tensor[(3), float64], Tensor[(3), float64]) -> "
                                             "(Tensor[(3), float64], (Tensor[(3), float64], "
                                             "Tensor[(3), float64]))")
        a, b = rand(3), rand(3, seed=1)
        value, (da, db) = rl.evaluate(IRModule.from_expr(g), a, b)
        np.testing.assert_allclose(value, a * b)
        np.testing.assert_allclose(da, b)
        np.testing.assert_allclose(db, a)


def test_the_pass_is_registered_and_replaces_the_entry() -> None:
    mod = parse("def @main(%x: Tensor[(2), float64]) { exp(%x) }")
    assert rl.transform.get_pass("gradient").name == "Gradient"
    out = rl.transform.Gradient(mode="first_order")(mod)
    _, (dx,) = rl.evaluate(out, np.array([0.0, 1.0]))
    np.testing.assert_allclose(dx, np.exp([0.0, 1.0]))
    with pytest.raises(ValueError, match="mode"):
        rl.transform.gradient(mod["main"], mode="forward")


def test_a_global_is_differentiated_through_its_module() -> None:
    mod = parse("def @main(%x: Tensor[(2), float64]) { multiply(%x, %x) }")
    g = rl.transform.gradient(mod.get_global_var("main"), mod)
    _, (dx,) = rl.evaluate(IRModule.from_expr(g), np.array([1.0, 2.0]))
    np.testing.assert_allclose(dx, [2.0, 4.0])


# ---------------------------------------------------------------- straight-line programs

UNARY = ["tanh", "sigmoid", "exp", "negative", "sin"]
BINARY = ["add", "subtract", "multiply", "maximum"]


@st.composite
def straight_line(draw: Any) -> IRModule:
    """A random DAG of tensor ops over two float64 parameters (some broadcast), with
    lets, tuples and projections; the result is a tensor or a tuple."""
    x = rl.var("x", shape=(2, 3), dtype="float64")
    y = rl.var("y", shape=(3,), dtype="float64")
    pool: list[Any] = [x, y]
    bindings: list[tuple[Any, Any]] = []
    for i in range(draw(st.integers(1, 7))):
        kind = draw(st.sampled_from(["unary", "binary", "binary", "tuple", "reduce", "let"]))
        a = draw(st.sampled_from(pool))
        if kind == "unary":
            e = make.get_builder(draw(st.sampled_from(UNARY)))(a)
        elif kind == "binary":
            e = make.get_builder(draw(st.sampled_from(BINARY)))(a, draw(st.sampled_from(pool)))
        elif kind == "tuple":
            t = rl.Tuple([a, draw(st.sampled_from(pool))])
            e = make.multiply(rl.TupleGetItem(t, 0), rl.TupleGetItem(t, 1))
        elif kind == "reduce":
            e = make.add(make.sum(a, axis=(-1,), keepdims=True), a)
        else:
            v = rl.var(f"v{i}")
            bindings.append((v, make.tanh(a)))
            e = v
        pool.append(e)
    result = pool[-1] if draw(st.booleans()) else rl.Tuple([pool[-1], draw(st.sampled_from(pool))])
    for v, value in reversed(bindings):
        result = rl.Let(v, value, result)
    return IRModule.from_expr(rl.Function([x, y], result))


@SETTINGS
@given(straight_line(), st.integers(0, 2**32 - 1))
def test_both_modes_agree_with_finite_differences_on_straight_line_programs(
        mod: IRModule, seed: int) -> None:
    args = [rand(2, 3, seed=seed), rand(3, seed=seed + 1)]
    check_gradient(mod, args)
    first = rl.evaluate(gradient_module(mod, "first_order"), *args)
    higher = rl.evaluate(gradient_module(mod, "higher_order"), *args)
    for a, b in zip(first[1], higher[1]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@settings(SETTINGS, max_examples=3)
@given(straight_line(), st.integers(0, 2**32 - 1))
def test_straight_line_programs_on_llvm(mod: IRModule, seed: int) -> None:
    check_gradient(mod, [rand(2, 3, seed=seed), rand(3, seed=seed + 1)], targets=("llvm",))


def test_tuple_parameters_and_results() -> None:
    mod = parse("""
def @main(%p: (Tensor[(2), float64], Tensor[(2), float64]), %z: Tensor[(2), float64]) {
  %0 = multiply(%p.0, %z);
  let %t = (%0, tanh(%p.1));
  (%t, add(%t.1, %z))
}""")
    check_gradient(mod, [(rand(2), rand(2, seed=1)), rand(2, seed=2)], targets=("interp", "llvm"))


def test_integer_parameters_get_zero_gradients() -> None:
    mod = parse("""
def @main(%x: Tensor[(3), float64], %n: Tensor[(3), int32]) {
  multiply(%x, cast(%n, dtype="float64"))
}""")
    for mode in ("first_order", "higher_order"):
        _, (dx, dn) = rl.evaluate(gradient_module(mod, mode), rand(3), np.array([1, 2, 3], "int32"))
        np.testing.assert_allclose(dx, [1, 2, 3])
        assert dn.dtype == np.int32 and not dn.any()


# ---------------------------------------------------------------- control flow, closures, ADTs

IF = """
def @main(%x: Tensor[(2, 2), float64], %y: Tensor[(2), float64]) {
  %0 = sum(%x);
  if (greater(%0, 0f64)) {
    multiply(%x, %y)
  } else {
    %1 = tanh(%x);
    add(%1, exp(%y))
  }
}"""

RECURSION = """
def @power(%x: Tensor[(3), float64], %n: int32) -> Tensor[(3), float64] {
  if (equal(%n, 0)) {
    ones_like(%x)
  } else {
    %0 = @power(%x, subtract(%n, 1));
    multiply(%x, %0)
  }
}
def @main(%x: Tensor[(3), float64], %y: Tensor[(3), float64]) {
  %1 = @power(%x, 3);
  add(%1, sin(%y))
}"""

CLOSURES = """
def @main(%x: Tensor[(3), float64], %y: Tensor[(3), float64]) {
  let %scale = fn (%v: Tensor[(3), float64]) -> Tensor[(3), float64] {
    multiply(%v, %y)
  };
  let %twice = fn (%f: fn (Tensor[(3), float64]) -> Tensor[(3), float64],
                   %w: Tensor[(3), float64]) -> Tensor[(3), float64] {
    %f(%f(%w))
  };
  %0 = %twice(%scale, %x);
  let %loop = fn (%i: int32, %acc: Tensor[(3), float64]) -> Tensor[(3), float64] {
    if (equal(%i, 0)) { %acc } else { %loop(subtract(%i, 1), tanh(%scale(%acc))) }
  };
  add(%0, %loop(3, %x))
}"""

ADT = """
#[import "prelude"]
def @main(%x: Tensor[(2), float64], %y: Tensor[(2), float64]) {
  %0 = Cons(%x, Cons(multiply(%x, %y), Cons(tanh(%y), Nil)));
  let %xs = @map(fn (%e: Tensor[(2), float64]) { exp(%e) }, %0);
  %1 = @foldl(fn (%acc: Tensor[(2), float64], %e1: Tensor[(2), float64]) {
    multiply(%acc, %e1)
  }, ones_like(%x), %xs);
  match (%xs) {
    Cons(%h, _) => add(%1, %h),
    Nil => %1,
  }
}"""

MONOMORPHIC_ADT = """
type Tree {
  Leaf(Tensor[(2), float64]),
  Node(Tree, Tree),
}
def @total(%t: Tree) -> Tensor[(2), float64] {
  match (%t) {
    Leaf(%v) => %v,
    Node(%l, %r) => multiply(@total(%l), @total(%r)),
  }
}
def @main(%x: Tensor[(2), float64], %y: Tensor[(2), float64]) {
  @total(Node(Leaf(%x), Node(Leaf(tanh(%y)), Leaf(add(%x, %y)))))
}"""

REFERENCES = """
def @main(%x: Tensor[(2), float64], %y: Tensor[(2), float64]) {
  let %acc = ref(%x);
  let %step = fn (%v: Tensor[(2), float64]) {
    ref_write(%acc, multiply(ref_read(%acc), %v))
  };
  %step(%y);
  %step(sigmoid(%y));
  ref_read(%acc)
}"""

PROGRAMS = {"if": IF, "recursion": RECURSION, "closures": CLOSURES, "adt": ADT,
            "monomorphic_adt": MONOMORPHIC_ADT, "references": REFERENCES}


def _args(name: str, seed: int) -> list[np.ndarray]:
    if name == "if":
        return [rand(2, 2, seed=seed), rand(2, seed=seed + 1)]
    if name in ("recursion", "closures"):
        return [rand(3, seed=seed), rand(3, seed=seed + 1)]
    return [rand(2, seed=seed), rand(2, seed=seed + 1)]


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_higher_order_programs_against_finite_differences(name: str) -> None:
    mod = parse(PROGRAMS[name])
    for seed in (0, 7):                  # `if`: both branches are taken across seeds
        check_gradient(mod, _args(name, seed), modes=("higher_order",))


def test_both_branches_of_the_if() -> None:
    mod = parse(IF)
    x = np.abs(rand(2, 2))
    for sign in (1.0, -1.0):
        check_gradient(mod, [sign * x, rand(2, seed=3)], modes=("higher_order",),
                       targets=("interp", "llvm"))


@pytest.mark.parametrize("name", ["recursion", "closures", "adt", "references"])
def test_higher_order_programs_on_llvm(name: str) -> None:
    check_gradient(parse(PROGRAMS[name]), _args(name, 3), modes=("higher_order",),
                   targets=("llvm",))


def test_the_new_globals_and_types_are_added_to_the_module() -> None:
    mod = parse(MONOMORPHIC_ADT)
    g = rl.transform.gradient(mod["main"], mod)
    names = {gv.name_hint for gv in mod.functions}
    assert {"total_grad"} <= names and "Tree_grad" in {t.name_hint for t in mod.type_definitions}
    mod.functions[mod.get_global_var("main")] = g
    InferType()(mod)


# ---------------------------------------------------------------- printing, diagnostics


@pytest.mark.parametrize("mode", ["first_order", "higher_order"])
@pytest.mark.parametrize("name", ["straight", *sorted(PROGRAMS)])
def test_the_result_prints_parses_back_and_type_checks(name: str, mode: str) -> None:
    text = PROGRAMS.get(name, "def @main(%x: Tensor[(2), float64]) { %0 = tanh(%x); (%0, exp(%0)) }")
    if mode == "first_order" and name != "straight":
        return
    out = InferType()(gradient_module(parse(text), mode))
    printed = rl.astext(out)
    back = rl.parse(printed)
    assert rl.structural_equal(back, out), printed
    assert rl.structural_equal(InferType()(back), out)


# Ops unlikely ever to get a rule, with a call of each on %x: Tensor[(2, 2), float32].
NO_RULE = {"qnn.quantize": 'qnn.quantize(%x, 1f, 0, out_dtype="int8")',
           "unique": "unique(%x)", "topk": "topk(%x, k=1)", "linalg.det": "linalg.det(%x)"}


def test_an_op_without_a_rule_is_a_located_diagnostic_naming_it() -> None:
    found = [n for n in NO_RULE if registry.get_op_def(n) is not None
             and registry.implementation(n, "gradient") is None]
    if not found:
        pytest.skip("every candidate op has a gradient rule")
    name = found[0]
    mod = parse(f"def @main(%x: Tensor[(2, 2), float32]) {{\n  %0 = {NO_RULE[name]};\n  %0\n}}")
    for mode in ("first_order", "higher_order"):
        with pytest.raises(rl.DiagnosticError) as info:
            gradient_module(mod, mode)
        (d,) = info.value.diagnostics
        assert d.code == "no-gradient" and f"`{name}`" in d.message
        assert d.span is not None and d.span.line == 3, d


def test_first_order_refuses_control_flow_with_a_located_diagnostic() -> None:
    with pytest.raises(rl.DiagnosticError) as info:
        gradient_module(parse(IF), "first_order")
    (d,) = info.value.diagnostics
    assert d.code == "not-differentiable" and "higher_order" in d.message
    assert d.span is not None and d.span.line == 5


def test_parameters_that_are_not_tensors_are_refused() -> None:
    mod = parse("def @main(%f: fn (float64) -> float64, %x: float64) { %f(%x) }")
    with pytest.raises(rl.DiagnosticError) as info:
        gradient_module(mod, "higher_order")
    (d,) = info.value.diagnostics
    assert d.code == "not-differentiable" and "%f" in d.message and d.span.line == 2


# ---------------------------------------------------------------- deep programs


@pytest.mark.parametrize("mode", ["first_order", "higher_order"])
def test_a_10000_layer_chain(mode: str) -> None:
    layers = 10_000
    x = rl.var("x", shape=(2,), dtype="float64")
    e: Any = x
    for _ in range(layers):
        e = make.multiply(e, rl.const(1.0001, "float64"))
    g = rl.transform.gradient(rl.Function([x], e), mode=mode)
    assert g.checked_type is not None            # typed by the pass
    value, (dx,) = rl.evaluate(IRModule.from_expr(g), np.array([1.0, 2.0]))
    np.testing.assert_allclose(dx, [1.0001 ** layers] * 2, rtol=1e-9)
    np.testing.assert_allclose(value, np.array([1.0, 2.0]) * 1.0001 ** layers, rtol=1e-9)


# ---------------------------------------------------------------- optimisation passes

def _count(mod: IRModule) -> int:
    return sum(len(post_order(fn)) for fn in mod.functions.values())


def _mlp() -> IRModule:
    x = rl.var("x", shape=(4, 3), dtype="float64")
    w = rl.var("w", shape=(3, 3), dtype="float64")
    c0 = rl.const(rand(4, 3, seed=5), "float64")
    c1 = rl.const(rand(3, seed=6), "float64")
    h1 = make.add(make.multiply(x, c0), c1)
    h = make.tanh(make.sum(make.multiply(make.expand_dims(h1, axis=2), w), axis=(1,)))
    out = make.add(make.sum(make.multiply(h, h)), make.sum(make.multiply(c0, c1)))
    return IRModule.from_expr(rl.Function([x, w], out))


SIMPLIFY = {
    "DeadCodeElimination": ["DeadCodeElimination"],
    "FoldConstant": ["FoldConstant"],
    "PartialEvaluate": ["PartialEvaluate"],
    "PE+DCE+FoldConstant": ["PartialEvaluate", "DeadCodeElimination", "FoldConstant"],
    "PE+EliminateDeadReferences+DCE+FoldConstant": [
        "PartialEvaluate", "EliminateDeadReferences", "DeadCodeElimination{inline_once=true}",
        "FoldConstant"],
}


def node_counts(mode: str) -> dict[str, int]:
    """Nodes of the differentiated `_mlp` before and after each simplification."""
    g = InferType()(gradient_module(_mlp(), mode))
    counts = {"gradient": _count(g)}
    for label, names in SIMPLIFY.items():
        counts[label] = _count(Sequential([get_pass(n) for n in names])(g))
    return counts


@pytest.mark.parametrize("mode", ["first_order", "higher_order"])
def test_the_result_survives_o3_and_the_passes_that_simplify_it(mode: str) -> None:
    mod = _mlp()
    g = InferType()(gradient_module(mod, mode))
    args = [rand(4, 3, seed=1), rand(3, 3, seed=2)]
    want = rl.evaluate(g, *args)
    variants = {"O3": optimize(g)}
    for label, names in SIMPLIFY.items():
        variants[label] = Sequential([get_pass(n) for n in names])(g)
    for label, out in variants.items():
        out = InferType()(out)
        back = rl.parse(rl.astext(out))
        assert rl.structural_equal(back, out), label
        for target in ("interp", "llvm"):
            got = rl.create_executor(out, target=target)(*args)
            np.testing.assert_allclose(got[0], want[0], rtol=1e-9, err_msg=f"{label} {target}")
            for a, b in zip(got[1], want[1]):
                np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12,
                                           err_msg=f"{label} {target}")
    check_gradient(mod, args, modes=(mode,))


def test_the_passes_reduce_the_first_order_result() -> None:
    counts = node_counts("first_order")
    print("first_order node counts:", counts)
    assert counts["DeadCodeElimination"] < counts["gradient"]
    assert counts["FoldConstant"] < counts["gradient"]
    assert counts["PartialEvaluate"] < counts["gradient"]
    assert counts["PE+DCE+FoldConstant"] < counts["FoldConstant"]


def test_the_passes_reduce_the_higher_order_result() -> None:
    # PartialEvaluate runs the backpropagators at compile time (the code grows: what is
    # left of them is references nobody reads, which DeadCodeElimination keeps as
    # effects); EliminateDeadReferences removes those, and the result is smaller than
    # the first-order one's input to the same passes.
    counts = node_counts("higher_order")
    print("higher_order node counts:", counts)
    assert counts["FoldConstant"] < counts["gradient"]
    assert counts["PE+EliminateDeadReferences+DCE+FoldConstant"] < counts["gradient"] // 2
    mod = _mlp()
    g = InferType()(gradient_module(mod, "higher_order"))
    out = Sequential([get_pass(n) for n in SIMPLIFY["PE+EliminateDeadReferences+DCE+FoldConstant"]])(g)
    main = out["main"]
    kinds = {type(n).__name__ for n in post_order(main.body)}
    assert not kinds & {"Function", "RefCreate", "RefRead", "RefWrite"}, kinds


def test_eliminate_dead_references_keeps_what_is_read_and_effects() -> None:
    mod = parse("""
def @main(%x: float32) {
  let %dead = ref(%x);
  let %live = ref(%x);
  ref_write(%dead, add(%x, 1f));
  ref_write(%live, multiply(%x, 2f));
  let %f = fn () { ref_write(%dead, %x) };
  %f();
  ref_read(%live)
}""")
    out = get_pass("EliminateDeadReferences")(mod)
    text = rl.astext(out)
    assert "%dead" not in text and "ref(%x)" in text and "ref_read(%live)" in text
    assert rl.evaluate(out, np.float32(3.0)) == rl.evaluate(mod, np.float32(3.0)) == 6.0


def test_a_rule_that_does_not_cover_the_attributes_is_a_located_diagnostic():
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(4, 4), float64]) {\n'
            '  sum(nn.pad(%x, 0f64, pad_width=[[1, 1], [1, 1]], pad_mode="reflect"))\n}\n')
    mod = rl.parse(text)
    for mode in ("first_order", "higher_order"):
        with pytest.raises(rl.DiagnosticError) as e:
            rl.transform.gradient(mod["main"], mod=mod, mode=mode)
        (d,) = e.value.diagnostics
        assert "nn.pad" in d.message and "not supported" in d.message
        assert d.span is not None and d.span.line == 3
