"""Type inference: every construct gets a type, every ill-typed program a located error."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.ir.diagnostics import Diagnostic, Severity
from relaylang.syntax.printer import astext
from relaylang.typing import check_module

HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil }\n"


def typed(text: str) -> rl.IRModule:
    mod, diags = check_module(rl.parse(HEADER + text))
    assert not [d for d in diags if d.severity is Severity.ERROR], [d.short() for d in diags]
    return mod


def global_type(text: str, name: str = "main") -> str:
    mod = typed(text)
    return astext(mod.get_global_var(name).checked_type)


def errors(text: str) -> list[Diagnostic]:
    _, diags = check_module(rl.parse(HEADER + text))
    errs = [d for d in diags if d.severity is Severity.ERROR]
    assert errs, "expected type errors"
    return errs


def one_error(text: str, fragment: str, line: int, column: int) -> Diagnostic:
    errs = errors(text)
    assert len(errs) == 1, [d.short() for d in errs]
    d = errs[0]
    assert fragment in d.message, d.message
    assert (d.span.line, d.span.column) == (line, column), d.short()
    return d


# ---------------------------------------------------------------- constructs

def test_constants_tuples_projection_let_if() -> None:
    assert global_type("def @main(%c: bool) { let %t = (1, 2f, True); if (%c) { %t.1 } else "
                       "{ 3f } }") == "fn (bool) -> float32"


def test_unannotated_parameter_is_inferred_from_its_use() -> None:
    assert global_type("def @main(%x: float32) { let %f = fn (%a) { %a }; %f(%x) }") == \
        "fn (float32) -> float32"


def test_every_node_gets_a_checked_type() -> None:
    mod = typed("def @main(%x: (float32, int32)) { let %y = %x.1; (%y, %x.0) }")
    from relaylang.ir import Op
    from relaylang.ir.traverse import post_order
    for node in post_order(mod["main"]):
        if not isinstance(node, Op):
            assert node.checked_type is not None, node


def test_closures_capture_and_higher_order_calls() -> None:
    text = ("def @apply(%f: fn (int32) -> int32, %x: int32) -> int32 { %f(%x) }\n"
            "def @main(%k: int32) { let %g = fn (%y: int32) { %k }; @apply(%g, %k) }")
    assert global_type(text) == "fn (int32) -> int32"


def test_recursion_and_mutual_recursion_through_annotations() -> None:
    text = ("def @even(%n: int32, %b: bool) -> bool { if (%b) { @odd(%n, %b) } else { True } }\n"
            "def @odd(%n: int32, %b: bool) -> bool { @even(%n, %b) }\n"
            "def @main() { @odd(1, False) }")
    assert global_type(text) == "fn () -> bool"


def test_unannotated_global_is_inferred_from_its_callers() -> None:
    text = "def @id(%x) { %x }\ndef @main(%y: float32) { @id(%y) }"
    assert global_type(text, "id") == "fn (float32) -> float32"


def test_polymorphic_globals_are_instantiated_per_call() -> None:
    text = (LIST + "def @len[A](%xs: List[A]) -> int32 { match (%xs) { Cons(_, %t) => @len(%t), "
            "Nil => 0 } }\n"
            "def @main() { (@len(Cons(1f, Nil)), @len(Cons(True, Nil))) }")
    assert global_type(text) == "fn () -> (int32, int32)"
    assert global_type(text, "len") == "fn [A](List[A]) -> int32"


def test_constructors_as_values_and_pattern_variables() -> None:
    text = (LIST + "def @main(%xs: List[float32]) { match (%xs) { Cons(%h, %t) => (%h, %t), "
            "Nil => (0f, Nil) } }")
    assert global_type(text) == "fn (List[float32]) -> (float32, List[float32])"


def test_tuple_patterns() -> None:
    assert global_type("def @main(%p: (int32, bool)) { match (%p) { (%a, _) => %a } }") == \
        "fn ((int32, bool)) -> int32"


def test_references() -> None:
    text = "def @main() { let %r = ref(1f); ref_write(%r, 2f); (ref_read(%r), %r) }"
    assert global_type(text) == "fn () -> (float32, ref(float32))"


def test_meta_constants_get_their_array_type() -> None:
    import numpy as np
    mod = rl.parse(HEADER + "def @main() { meta[relay.Constant][0] }",
                   metadata={"relay.Constant": [np.zeros((2, 3), "int8")]})
    typed_mod, diags = check_module(mod)
    assert not diags
    assert astext(typed_mod.get_global_var("main").checked_type) == "fn () -> Tensor[(2, 3), int8]"


def test_any_dimension_unifies_with_a_known_one() -> None:
    assert global_type("def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(2, 3), float32] "
                       "{ %x }") == "fn (Tensor[(?, 3), float32]) -> Tensor[(2, 3), float32]"


def test_checked_types_are_set_once_and_reused() -> None:
    mod = rl.parse(HEADER + "def @main(%x: float32) { (%x, %x) }")
    first, _ = check_module(mod)
    body = first["main"].body
    before = body.checked_type
    second, _ = check_module(mod)
    assert second["main"].body.checked_type is before


# ---------------------------------------------------------------- errors

def test_if_condition_must_be_bool() -> None:
    one_error("def @main(%x: float32) { if (%x) { 1 } else { 2 } }", "condition of `if`", 2, 30)


def test_op_called_with_the_wrong_number_of_arguments() -> None:
    one_error("def @main(%x: float32) { add(%x) }", "`add` expects 2 arguments (lhs, rhs), got 1",
              2, 26)
    one_error("def @main(%x: float32) { negative(%x, %x) }", "`negative` expects 1 argument (data)",
              2, 26)


def test_if_branches_must_agree_with_a_note_at_the_other_branch() -> None:
    d = one_error("def @main(%c: bool) { if (%c) { 1 } else { 2f } }", "else-branch", 2, 44)
    assert "expected int32, found float32" in d.message
    assert d.notes and d.notes[0].span.column == 33


def test_return_type_differs_from_annotation() -> None:
    d = one_error("def @main(%x: float32) -> int32 {\n  %x\n}", "function body", 3, 3)
    assert "expected int32, found float32" in d.message
    assert d.notes[0].message.startswith("the result type is declared here")


def test_argument_mismatch_points_at_the_argument_with_a_note_at_the_parameter() -> None:
    d = one_error("def @f(%a: float32) -> float32 { %a }\ndef @main() { @f(1) }",
                  "argument 1 of `@f`", 3, 18)
    assert "expected float32, found int32" in d.message
    assert d.notes[0].span.line == 2 and "parameter `%a`" in d.notes[0].message


def test_shape_mismatch_names_the_dimension() -> None:
    d = one_error("def @main(%x: Tensor[(2, 3), float32]) -> Tensor[(2, 4), float32] { %x }",
                  "dimension 1 is 4 against 3", 2, 69)
    assert "Tensor[(2, 4), float32]" in d.message


def test_wrong_arity() -> None:
    d = one_error("def @f(%a: float32) -> float32 { %a }\ndef @main() { @f(1f, 2f) }",
                  "`@f` expects 1 argument, got 2", 3, 15)
    assert d.notes and "defined here" in d.notes[0].message


def test_calling_a_non_function() -> None:
    one_error("def @main(%x: float32) { %x(1f) }", "cannot call a value of type float32", 2, 26)


def test_projecting_a_non_tuple_and_out_of_range() -> None:
    one_error("def @main(%x: float32) { %x.0 }", "it is not a tuple", 2, 26)
    one_error("def @main(%x: (float32,)) { %x.3 }", "field 3 is out of range", 2, 29)


def test_ref_read_of_a_non_reference() -> None:
    one_error("def @main(%x: float32) { ref_read(%x) }", "argument of ref_read", 2, 35)


def test_pattern_of_the_wrong_type() -> None:
    errs = errors(LIST + "def @main(%x: float32) { match (%x) { Cons(_, _) => 1, Nil => 2 } }")
    assert "the value matched by `Cons`" in errs[0].message
    assert (errs[0].span.line, errs[0].span.column) == (3, 39)


def test_constructor_pattern_arity() -> None:
    one_error(LIST + "def @main(%x: List[int32]) { match? (%x) { Cons(%a) => 1 } }",
              "constructor `Cons` has 2 fields, the pattern gives 1", 3, 44)


def test_rigid_type_parameter_is_not_a_tensor() -> None:
    one_error("def @f[A](%x: A) -> float32 { %x }", "expected float32, found A", 2, 31)


def test_uninferable_parameter_asks_for_an_annotation() -> None:
    one_error("def @main() { fn (%x) { %x } }", "cannot infer the type of `%x`", 2, 19)


def test_several_independent_errors_are_all_reported() -> None:
    errs = errors("def @a(%x: float32) -> int32 { %x }\n"
                  "def @b(%c: float32) { if (%c) { 1 } else { 2 } }")
    assert [d.span.line for d in errs] == [2, 3]


# ---------------------------------------------------------------- match coverage

def test_non_exhaustive_match_names_a_missing_value() -> None:
    one_error(LIST + "def @main(%xs: List[int32]) -> int32 { match (%xs) { Cons(%h, Nil) => %h, "
              "Nil => 0 } }", "`Cons(_, Cons(_, _))` is not matched", 3, 40)


def test_partial_match_is_allowed_and_unreachable_clause_warns() -> None:
    text = (LIST + "def @main(%xs: List[int32]) -> int32 { match? (%xs) { Cons(%h, _) => %h, "
            "Cons(_, Nil) => 1 } }")
    _, diags = check_module(rl.parse(HEADER + text))
    assert [(d.severity, d.span.line) for d in diags] == [(Severity.WARNING, 3)]
    assert "can never match" in diags[0].message


def test_wildcard_and_variable_make_a_match_exhaustive() -> None:
    typed(LIST + "def @main(%xs: List[int32]) -> int32 { match (%xs) { Nil => 0, %other => 1 } }")
    typed("def @main(%p: (bool, bool)) -> int32 { match (%p) { (_, _) => 1 } }")


# ---------------------------------------------------------------- scale

@pytest.mark.parametrize("n", [100_000])
def test_100k_let_chain_and_nested_tuples_infer_without_recursion(n: int) -> None:
    lets = "".join(f"let %v{i} = (%v{i - 1}, 1f).0;\n" for i in range(1, n))
    mod = typed(f"def @main(%v0: float32) {{\n{lets}%v{n - 1}\n}}")
    assert astext(mod.get_global_var("main").checked_type) == "fn (float32) -> float32"


# ---------------------------------------------------------------- API and examples

def test_infer_type_pass_returns_a_typed_module_or_raises_every_error() -> None:
    mod = rl.parse(HEADER + "def @main(%x: float32) { (%x, %x) }")
    typed_mod = rl.transform.InferType()(mod)
    assert astext(typed_mod["main"].checked_type) == "fn (float32) -> (float32, float32)"
    bad = rl.parse(HEADER + "def @a(%x: float32) -> int32 { %x }\n"
                   "def @b(%x: float32) -> bool { %x }")
    with pytest.raises(rl.DiagnosticError) as info:
        rl.transform.InferType()(bad)
    assert len(info.value.diagnostics) == 2
    assert "3 |" in info.value.render()           # rendered with the source line


def _examples() -> list:
    from pathlib import Path
    return sorted((Path(__file__).resolve().parents[2] / "examples").glob("*.relay"))


@pytest.mark.parametrize("path", _examples(), ids=lambda p: p.name)
def test_examples_type_check_and_results_equal_annotations(path) -> None:
    from relaylang.ir.equal import structural_equal
    from relaylang.ir.types import FuncType
    mod = rl.transform.InferType()(rl.parse(path.read_text(), source_name=str(path)))
    for gv, fn in mod.functions.items():
        assert isinstance(gv.checked_type, FuncType)
        if fn.ret_type is not None:
            assert structural_equal(fn.body.checked_type, fn.ret_type), gv.name_hint
            assert structural_equal(gv.checked_type.ret_type, fn.ret_type), gv.name_hint


def test_a_constructor_pattern_with_too_few_fields_is_an_arity_error_not_a_crash():
    # Found by the fuzzer: coverage checking indexed past the shorter row.
    text = """type List[A] {
  Cons(A, A, List[A]),
  Nil,
}
def @length[A](%l: List[A]) -> int32 {
  match (%l) {
    Cons(_, %rest) => add(1, @length(%rest)),
    Nil => 0,
  }
}
"""
    [d] = errors(text)
    assert "has 3 fields, the pattern gives 2" in d.message and d.span.line == 8
