"""Polymorphic globals: inferred one call-graph component at a time, callees first, and
generalised over their declared type parameters, so every use instantiates a closed type
even when the result (or a parameter) is not annotated."""
from __future__ import annotations

import relaylang as rl
from relaylang.ir.diagnostics import Diagnostic, Severity
from relaylang.ir.expr import Call, GlobalVar
from relaylang.ir.traverse import post_order
from relaylang.syntax.printer import astext
from relaylang.typing import check_module
from relaylang.typing.scc import strongly_connected_components

HEADER = '#[version = "0.0.5"]\n'
LIST = "type List[A] { Cons(A, List[A]), Nil }\n"


def types_of(text: str) -> dict[str, str]:
    mod, diags = check_module(rl.parse(HEADER + text))
    assert not [d for d in diags if d.severity is Severity.ERROR], [d.short() for d in diags]
    return {gv.name_hint: astext(gv.checked_type) for gv in mod.functions}


def errors(text: str) -> list[Diagnostic]:
    _, diags = check_module(rl.parse(HEADER + text))
    return [d for d in diags if d.severity is Severity.ERROR]


def global_call_type_args(text: str, caller: str) -> list[tuple[str, list[str]]]:
    mod, diags = check_module(rl.parse(HEADER + text), type_args=True)
    assert not diags, [d.short() for d in diags]
    return [(n.op.name_hint, [astext(t) for t in n.type_args]) for n in post_order(mod[caller])
            if isinstance(n, Call) and isinstance(n.op, GlobalVar)]


# ---------------------------------------------------------------- generalisation

def test_unannotated_result_is_generalised_and_used_at_two_types() -> None:
    text = ("def @id[A](%p: A) { %p }\n"
            "def @main(%x: float32, %i: int32) { (add(@id(%x), 1f), @id(%i)) }")
    assert types_of(text) == {"id": "fn [A](A) -> A",
                              "main": "fn (float32, int32) -> (float32, int32)"}


def test_caller_defined_before_the_polymorphic_global() -> None:
    text = ("def @main(%x: float32, %i: int32) { (@id(%x), @id(%i)) }\n"
            "def @id[A](%p: A) { %p }")
    assert types_of(text)["main"] == "fn (float32, int32) -> (float32, int32)"


def test_polymorphic_global_used_at_three_types() -> None:
    text = (LIST + "def @dup[A](%x: A) { (%x, %x) }\n"
            "def @main(%f: float32, %i: int32, %l: List[bool]) { (@dup(%f), @dup(%i), @dup(%l)) }")
    types = types_of(text)
    assert types["dup"] == "fn [A](A) -> (A, A)"
    assert types["main"] == ("fn (float32, int32, List[bool]) -> ((float32, float32), "
                             "(int32, int32), (List[bool], List[bool]))")


def test_generalised_through_a_chain_of_polymorphic_globals() -> None:
    text = ("def @main(%x: float32, %b: bool) { (@outer(%x), @outer(%b)) }\n"
            "def @outer[B](%y: B) { @inner(%y) }\n"
            "def @inner[A](%p: A) { (%p, 1) }")
    types = types_of(text)
    assert types["outer"] == "fn [B](B) -> (B, int32)"
    assert types["main"] == "fn (float32, bool) -> ((float32, int32), (bool, int32))"


def test_unannotated_polymorphic_map_over_a_list_used_at_two_element_types() -> None:
    text = (LIST + "def @map[A, B](%f: fn (A) -> B, %xs: List[A]) { match (%xs) { "
            "Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil } }\n"
            "def @main(%a: List[float32], %b: List[int32]) { "
            "(@map(fn (%v: float32) { less(%v, 0f) }, %a), "
            "@map(fn (%v: int32) { cast(%v, dtype=\"float32\") }, %b)) }")
    types = types_of(text)
    assert types["map"] == "fn [A, B](fn (A) -> B, List[A]) -> List[B]"
    assert types["main"] == ("fn (List[float32], List[int32]) -> "
                             "(List[bool], List[float32])")


def test_type_arguments_are_recorded_per_use_and_at_a_monomorphic_recursive_call() -> None:
    text = (LIST + "def @map[A, B](%f: fn (A) -> B, %xs: List[A]) { match (%xs) { "
            "Cons(%h, %t) => Cons(%f(%h), @map(%f, %t)), Nil => Nil } }\n"
            "def @id[A](%p: A) { %p }\n"
            "def @main(%a: List[float32]) { (@map(fn (%v: float32) { less(%v, 0f) }, %a), "
            "@id(1), @id(%a)) }")
    assert sorted(global_call_type_args(text, "main")) == [
        ("id", ["List[float32]"]), ("id", ["int32"]), ("map", ["float32", "bool"])]
    # Inside its own component @map is used at its own type parameters.
    assert global_call_type_args(text, "map") == [("map", ["A", "B"])]


def test_global_without_type_parameters_still_gets_its_types_from_a_polymorphic_caller() -> None:
    text = ("def @helper(%x) { %x }\n"
            "def @poly[A](%a: A) { @helper(1f) }\n"
            "def @main() { (@poly(1), @poly(True)) }")
    types = types_of(text)
    assert types["helper"] == "fn (float32) -> float32"
    assert types["poly"] == "fn [A](A) -> float32"


def test_result_known_only_through_an_op_relation_is_generalised() -> None:
    text = ("def @scale[A](%tag: A, %x: float32) { (%tag, multiply(%x, 2f)) }\n"
            "def @main() { (@scale(1, 1f), @scale(True, 2f)) }")
    assert types_of(text)["main"] == "fn () -> ((int32, float32), (bool, float32))"


# ---------------------------------------------------------------- recursion

def test_polymorphic_recursion_through_a_fully_annotated_global() -> None:
    text = ("def @depth[A](%x: A, %n: int32) -> int32 { if (less(%n, 1)) { 0 } else { "
            "add(@depth((%x, %x), subtract(%n, 1)), 1) } }\n"
            "def @main() { (@depth(1f, 3), @depth(True, 2)) }")
    assert types_of(text)["main"] == "fn () -> (int32, int32)"
    assert global_call_type_args(text, "depth") == [("depth", ["(A, A)"])]


def test_polymorphic_recursion_without_a_result_annotation_is_an_error_with_a_note() -> None:
    text = ("def @depth[A](%x: A, %n: int32) { if (less(%n, 1)) { 0 } else { "
            "add(@depth((%x, %x), subtract(%n, 1)), 1) } }")
    [err] = errors(text)
    assert "expected A, found (A, A)" in err.message
    assert (err.span.line, err.span.column) == (2, 76)
    assert any("recursive group" in note.message for note in err.notes)


def test_mutually_recursive_polymorphic_globals() -> None:
    text = ("def @even[A](%x: A, %n: int32) -> bool { if (equal(%n, 0)) { True } else { "
            "@odd(%x, subtract(%n, 1)) } }\n"
            "def @odd[A](%x: A, %n: int32) { if (equal(%n, 0)) { False } else { "
            "@even(%x, subtract(%n, 1)) } }\n"
            "def @main() { (@odd(1f, 3), @even((1, 2), 4), @odd(True, 1)) }")
    types = types_of(text)
    assert types["odd"] == "fn [A](A, int32) -> bool"
    assert types["main"] == "fn () -> (bool, bool, bool)"


def test_mutual_recursion_without_result_annotations_is_monomorphic_with_a_note() -> None:
    # One component, neither signature complete: each uses the other at its own type
    # parameters (GHC does the same with partial signatures), so the two `A`s clash.
    text = ("def @ping[A](%x: A, %n: int32) { if (equal(%n, 0)) { 0 } else { "
            "@pong(%x, subtract(%n, 1)) } }\n"
            "def @pong[A](%x: A, %n: int32) { if (equal(%n, 0)) { 1 } else { "
            "@ping(%x, subtract(%n, 1)) } }")
    errs = errors(text)
    assert [(d.span.line, d.span.column) for d in errs] == [(2, 71), (3, 71)]
    assert all("expected A, found A" in d.message for d in errs)
    assert all("recursive group" in d.notes[-1].message for d in errs)
    # Annotating one result breaks the cycle for the checker: it is closed up front.
    types = types_of(text.replace("@pong[A](%x: A, %n: int32)", "@pong[A](%x: A, %n: int32) -> int32")
                     + "\ndef @main() { (@ping(1f, 3), @pong(True, 2)) }")
    assert types["ping"] == "fn [A](A, int32) -> int32"
    assert types["main"] == "fn () -> (int32, int32)"


# ---------------------------------------------------------------- errors

def test_body_forcing_a_type_parameter_to_a_tensor_is_an_error_at_the_body() -> None:
    text = ("def @f[A](%x: A) { let %y: float32 = %x; %y }\n"
            "def @main() { (@f(1), @f(2f)) }")
    [err] = errors(text)
    assert "expected float32, found A" in err.message
    assert (err.span.line, err.span.column) == (2, 38)


def test_op_applied_to_a_type_parameter_names_it_at_the_argument() -> None:
    [err] = errors("def @f[A](%x: A) { add(%x, 1f) }\ndef @main() { @f(1) }")
    assert "`add` cannot take argument 1 of type A: type parameter A" in err.message
    assert (err.span.line, err.span.column) == (2, 24)


def test_non_generalised_hole_still_conflicts_between_uses() -> None:
    # %q is not a declared type parameter: it is shared by every use of @f.
    [err] = errors("def @f[A](%p: A, %q) { %p }\ndef @main() { (@f(1, 2f), @f(1, 3)) }")
    assert "expected float32, found int32" in err.message


# ---------------------------------------------------------------- polymorphic values

APPLY = "def @apply[A, B](%f: fn(A) -> B, %x: A) -> B { %f(%x) }\n"
APPLY2 = "def @apply2[A, B, C](%f: fn(A, B) -> C, %x: A, %y: B) -> C { %f(%x, %y) }\n"


def test_tvm_defunctionalization_simple_local_polymorphic_function_as_argument() -> None:
    # apache/tvm v0.19.0, tests/python/relay/test_pass_defunctionalization.py, test_simple.
    text = ("def @simple[A, B](%f: fn(A) -> B, %xs: A) -> B {\n  %f(%xs)\n}\n"
            "def @main(%l: Tensor[(5, 5), float32]) -> Tensor[(5, 5), float32] {\n"
            "  %0 = fn[A](%x: A) -> A {\n    %x\n  };\n  @simple(%0, %l)\n}")
    assert types_of(text)["main"] == "fn (Tensor[(5, 5), float32]) -> Tensor[(5, 5), float32]"


def test_tvm_defunctionalization_global_recursion_polymorphic_global_as_argument() -> None:
    # apache/tvm v0.19.0, tests/python/relay/test_pass_defunctionalization.py,
    # test_global_recursion.
    text = (LIST + "def @id[A](%x: A) -> A {\n  %x\n}\n"
            "def @map[A, B](%f: fn(A) -> B, %xs: List[A]) -> List[B] {\n"
            "  match (%xs) {\n    Cons(%x, %rest) => Cons(%f(%x), @map(%f, %rest)),\n"
            "    Nil => Nil,\n  }\n}\n"
            "def @main(%l: List[float32]) -> List[float32] {\n  @map(@id, %l)\n}")
    assert types_of(text)["main"] == "fn (List[float32]) -> List[float32]"


def test_tvm_eta_expand_constructor_polymorphic_function_against_a_monomorphic_result() -> None:
    # apache/tvm v0.19.0, tests/python/relay/test_pass_eta_expand.py,
    # test_eta_expand_constructor (the expected module, and the input through the pass).
    expected = (LIST + "def @main[A]() -> fn(A, List[A]) -> List[A] {\n"
                "  fn [A](%x: A, %xs: List[A]) -> List[A] {\n    Cons(%x, %xs)\n  }\n}")
    assert types_of(expected)["main"] == "fn [A]() -> fn (A, List[A]) -> List[A]"
    source = LIST + "def @main[A]() -> fn(A, List[A]) -> List[A] {\n  Cons\n}"
    seq = rl.transform.Sequential([rl.transform.EtaExpand(expand_constructor=True),
                                   rl.transform.InferType()])
    out = seq(rl.parse(HEADER + source))
    assert astext(out["main"].checked_type) == "fn [A]() -> fn (A, List[A]) -> List[A]"


def test_polymorphic_global_passed_to_a_higher_order_function_at_two_types() -> None:
    text = ("def @id[A](%x: A) -> A { %x }\n" + APPLY +
            "def @main(%a: float32, %b: int32) { (@apply(@id, %a), @apply(@id, %b)) }")
    assert types_of(text)["main"] == "fn (float32, int32) -> (float32, int32)"


def test_local_polymorphic_function_passed_at_two_types() -> None:
    text = (APPLY + "def @main(%a: float32, %b: int32) {\n"
            "  %0 = fn[A](%x: A) -> A { %x };\n  (@apply(%0, %a), @apply(%0, %b))\n}")
    assert types_of(text)["main"] == "fn (float32, int32) -> (float32, int32)"


def test_let_bound_polymorphic_function_passed_at_two_types() -> None:
    text = (APPLY + "def @main(%a: float32, %b: int32) {\n"
            "  let %id = fn[A](%x: A) -> A { %x };\n  (@apply(%id, %a), @apply(%id, %b))\n}")
    assert types_of(text)["main"] == "fn (float32, int32) -> (float32, int32)"


def test_constructor_passed_as_a_value_at_two_types() -> None:
    text = (LIST + APPLY2 + "def @main(%a: float32, %b: int32) {\n"
            "  (@apply2(Cons, %a, Nil), @apply2(Cons, %b, Nil))\n}")
    assert types_of(text)["main"] == "fn (float32, int32) -> (List[float32], List[int32])"


def test_eta_expanded_constructor_passed_as_a_value_at_two_types() -> None:
    text = (LIST + APPLY2 + "def @main(%a: float32, %b: int32) {\n"
            "  let %c = fn[A](%x: A, %xs: List[A]) -> List[A] { Cons(%x, %xs) };\n"
            "  (@apply2(%c, %a, Nil), @apply2(%c, %b, Nil))\n}")
    assert types_of(text)["main"] == "fn (float32, int32) -> (List[float32], List[int32])"


def test_polymorphic_functions_with_renamed_type_parameters_unify() -> None:
    text = "def @main() -> fn [B](B) -> B {\n  fn [A](%x: A) -> A { %x }\n}"
    assert types_of(text)["main"] == "fn () -> fn [B](B) -> B"


def test_constructor_value_at_conflicting_types_is_an_error_at_the_argument() -> None:
    text = (LIST + APPLY2 + "def @main(%a: float32, %l: List[int32]) {\n"
            "  @apply2(Cons, %a, %l)\n}")
    [err] = errors(text)
    assert "argument 3 of `@apply2`: expected List[float32], found List[int32]" in err.message
    assert (err.span.line, err.span.column) == (5, 21)


def test_polymorphic_value_used_at_the_wrong_result_type_is_an_error_at_the_body() -> None:
    text = ("def @id[A](%x: A) -> A { %x }\n" + APPLY +
            "def @main(%a: float32) -> int32 {\n  @apply(@id, %a)\n}")
    [err] = errors(text)
    assert "expected int32, found float32" in err.message
    assert (err.span.line, err.span.column) == (5, 3)
    local = (APPLY + "def @main(%a: float32) -> int32 {\n"
             "  %0 = fn[A](%x: A) -> A { %x };\n  @apply(%0, %a)\n}")
    [err] = errors(local)
    assert "expected int32, found float32" in err.message
    assert (err.span.line, err.span.column) == (5, 3)


def test_polymorphic_value_with_the_wrong_arity_is_an_error_at_the_argument() -> None:
    text = (APPLY + "def @main(%a: float32) {\n"
            "  let %f = fn[A](%x: A, %y: A) -> A { %x };\n  @apply(%f, %a)\n}")
    [err] = errors(text)
    assert "argument 1 of `@apply`" in err.message and "1 parameters against 2" in err.message
    assert (err.span.line, err.span.column) == (5, 10)


def test_polymorphic_value_bound_at_a_wrong_monomorphic_type_is_an_error_at_the_let() -> None:
    text = ("def @main(%a: float32) {\n  let %id = fn[A](%x: A) -> A { %x };\n"
            "  let %g: fn(float32) -> int32 = %id;\n  %g(%a)\n}")
    [err] = errors(text)
    assert "the value bound to `%g`" in err.message
    assert (err.span.line, err.span.column) == (4, 34)


def test_eta_expanded_constructor_with_a_wrong_result_is_an_error_at_the_function() -> None:
    text = (LIST + "def @main[A]() -> fn(A, List[A]) -> List[A] {\n"
            "  fn [B](%x: B, %xs: List[B]) -> B { %x }\n}")
    [err] = errors(text)
    assert "expected fn (A, List[A]) -> List[A], found fn [B](B, List[B]) -> B" in err.message
    assert (err.span.line, err.span.column) == (4, 3)


def test_type_parameter_of_a_polymorphic_function_value_stays_rigid_in_its_body() -> None:
    text = "def @f[A](%x: A) -> fn(A) -> A {\n  fn [B](%y: B) -> B { %x }\n}"
    [err] = errors(text)
    assert "expected B, found A" in err.message
    assert (err.span.line, err.span.column) == (3, 24)


# ---------------------------------------------------------------- branches of unequal polymorphism
# Where a polymorphic function type meets one with fewer type parameters (the branches of an
# `if`, the arms of a `match`), the unified type is the less polymorphic one, as in TVM: the
# polymorphic side is instantiated there, and its holes reach the annotations that decide them.

NESTED = ("def @main[b](%f: fn () -> bool) -> fn (b) -> b {\n"
          "  if (%f()) { fn [a](%x: a) -> a { %x } } else { fn (%z) { %z } }\n}")


def test_tvm_higher_order_nested_gives_the_unannotated_branch_the_result_type() -> None:
    # apache/tvm v0.19.0, tests/python/relay/test_type_infer.py, test_higher_order_nested.
    mod, diags = check_module(rl.parse(HEADER + NESTED))
    assert not diags, [d.short() for d in diags]
    assert astext(mod["main"].checked_type) == "fn [b](fn () -> bool) -> fn (b) -> b"
    body = mod["main"].body
    assert astext(body.checked_type) == "fn (b) -> b"
    assert body.false_branch.params[0].checked_type is mod["main"].type_params[0]


def test_branches_of_unequal_polymorphism_in_either_order_nested_and_in_match_arms() -> None:
    swapped = ("def @main[b](%f: fn () -> bool) -> fn (b) -> b {\n"
               "  if (%f()) { fn (%z) { %z } } else { fn [a](%x: a) -> a { %x } }\n}")
    assert types_of(swapped)["main"] == "fn [b](fn () -> bool) -> fn (b) -> b"
    in_tuple = ("def @main[b](%c: bool) -> (fn (b) -> b, int32) {\n"
                "  if (%c) { (fn [a](%x: a) -> a { %x }, 1) } else { (fn (%z) { %z }, 2) }\n}")
    assert types_of(in_tuple)["main"] == "fn [b](bool) -> (fn (b) -> b, int32)"
    returned = ("def @main[b](%c: bool) -> fn () -> fn (b) -> b {\n"
                "  if (%c) { fn () { fn [a](%x: a) -> a { %x } } } "
                "else { fn () { fn (%z) { %z } } }\n}")
    assert types_of(returned)["main"] == "fn [b](bool) -> fn () -> fn (b) -> b"
    arms = ("type T { A, B }\ndef @main[b](%t: T) -> fn (b) -> b {\n"
            "  match (%t) { A => fn [a](%x: a) -> a { %x }, B => fn (%z) { %z } }\n}")
    assert types_of(arms)["main"] == "fn [b](T) -> fn (b) -> b"
    concrete = ("def @main(%c: bool) -> fn (int32) -> int32 {\n"
                "  if (%c) { fn [a](%x: a) -> a { %x } } else { fn (%z) { %z } }\n}")
    assert types_of(concrete)["main"] == "fn (bool) -> fn (int32) -> int32"
    called = ("def @main(%c: bool) {\n"
              "  %0 = if (%c) { fn [a](%x: a) -> a { %x } } else { fn (%z) { %z } };\n"
              "  %0(1f)\n}")
    assert types_of(called)["main"] == "fn (bool) -> float32"


def test_branches_of_unequal_polymorphism_without_an_annotation_still_need_one() -> None:
    text = ("def @main(%c: bool) {\n"
            "  if (%c) { fn [a](%x: a) -> a { %x } } else { fn (%z) { %z } }\n}")
    [err] = errors(text)
    assert "cannot infer the type of `%z`" in err.message
    assert (err.span.line, err.span.column) == (3, 52)


def test_a_polymorphic_branch_joined_with_a_monomorphic_one_is_monomorphic() -> None:
    # The `if` is only as general as its int32 branch: calling it at float32 is an error
    # (it was accepted when the joined type was the polymorphic branch's).
    text = ("def @main(%c: bool, %p: fn [a](a) -> a) {\n"
            "  %0 = if (%c) { %p } else { fn (%z: int32) { %z } };\n  %0(1f)\n}")
    [err] = errors(text)
    assert "expected int32, found float32" in err.message
    ok = text.replace("%0(1f)", "%0(1)")
    assert types_of(ok)["main"] == "fn (bool, fn [a](a) -> a) -> int32"


def test_only_the_position_that_met_a_monomorphic_type_is_instantiated() -> None:
    # Both fields of the then-branch are the one type object of %p's annotation; only the
    # first meets a monomorphic function, so the second stays polymorphic.
    text = ("def @main(%c: bool, %p: fn [a](a) -> a) {\n"
            "  %0 = if (%c) { (%p, %p) } else { (fn (%z) { %z }, %p) };\n"
            "  (%0.0(1f), %0.1(1), %0.1(2f))\n}")
    assert types_of(text)["main"] == "fn (bool, fn [a](a) -> a) -> (float32, int32, float32)"
    [err] = errors(text.replace("(%0.0(1f), ", "(%0.0(1f), %0.0(1), "))
    assert "expected float32, found int32" in err.message


def test_an_instantiated_branch_whose_other_side_contains_it_ends() -> None:
    # `fn [a](a) -> a` against `fn (?z) -> fn [a](a) -> a`: ?z becomes the instance's hole,
    # which becomes `fn [a](a) -> a` itself; the joined type refers to the polymorphic one
    # without replacing it inside its own replacement.
    text = ("def @main(%c: bool, %p: fn [a](a) -> a) {\n"
            "  if (%c) { %p } else { fn (%z) { %p } }\n}")
    assert types_of(text)["main"] == \
        "fn (bool, fn [a](a) -> a) -> fn (fn [a](a) -> a) -> fn [a](a) -> a"


# ---------------------------------------------------------------- scale

def test_components_of_a_100k_cycle_and_a_100k_path_without_recursion() -> None:
    n = 100_000
    cycle = {i: [(i + 1) % n] for i in range(n)}
    assert [len(c) for c in strongly_connected_components(list(range(n)), cycle)] == [n]
    path = {i: [i + 1] for i in range(n - 1)}
    assert strongly_connected_components(list(range(n)), path) == [[i] for i in reversed(range(n))]


def test_components_in_dependency_order() -> None:
    edges = {"main": ["a", "b"], "a": ["b"], "b": ["c"], "c": ["b"], "d": []}
    assert strongly_connected_components(["main", "a", "b", "c", "d"], edges) == \
        [["b", "c"], ["a"], ["main"], ["d"]]


def test_long_call_chain_of_polymorphic_globals() -> None:
    n = 2_000
    defs = "".join(f"def @f{i}[A](%x: A) {{ @f{i + 1}(%x) }}\n" for i in range(n))
    text = (f"def @main() {{ (@f0(1f), @f0(True)) }}\n{defs}"
            f"def @f{n}[A](%x: A) {{ (%x, %x) }}")
    types = types_of(text)
    assert types["main"] == "fn () -> ((float32, float32), (bool, bool))"
    assert types["f0"] == "fn [A](A) -> (A, A)"
