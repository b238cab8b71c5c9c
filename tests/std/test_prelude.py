"""Every function of relaylang/std/prelude.relay run by the interpreter, with the values
TVM's prelude gives (its tests in tests/python/relay/test_adt.py), the prelude's types,
its round trip through the printer, and 100,000-element lists."""
from __future__ import annotations

from typing import Any

import pytest
from adt_values import py

import relaylang as rl
from relaylang.std import LIBRARIES, library

HEADER = '#[version = "0.0.5"]\n#[import "prelude"]\n'

# TVM's prelude.rly defines exactly these (its Prelude.load_prelude lists them).
TVM_GLOBALS = ("id", "compose", "flip", "hd", "tl", "nth", "update", "map", "foldl", "foldr",
               "foldr1", "concat", "filter", "zip", "rev", "map_accuml", "map_accumr",
               "unfoldl", "unfoldr", "sum", "length", "tmap", "size", "iterate")


def run(body: str, ret: str, defs: str = "") -> Any:
    """`@main() -> ret { body }` with the prelude imported, run, as Python."""
    mod = rl.parse(f"{HEADER}{defs}\ndef @main() -> {ret} {{\n{body}\n}}\n")
    return py(rl.evaluate(mod))


def lst(*items: int) -> str:
    """A Relay list expression of int32 scalars."""
    text = "Nil"
    for item in reversed(items):
        text = f"Cons({item}, {text})"
    return text


INC = "fn (%v: int32) -> int32 { %v + 1 }"
ADD = "fn (%a: int32, %b: int32) -> int32 { %a + %b }"
SUB = "fn (%a: int32, %b: int32) -> int32 { %a - %b }"


# ---------------------------------------------------------------- the library itself


def test_the_prelude_has_tvms_names_and_types() -> None:
    mod = rl.prelude()
    assert {gv.name_hint for gv in mod.functions} == set(TVM_GLOBALS)
    assert [g.name_hint for g in mod.type_definitions] == ["List", "Option", "Tree"]
    assert [c.name for c in mod["List"].constructors] == ["Cons", "Nil"]
    assert [c.name for c in mod["Option"].constructors] == ["Some", "None"]
    assert [c.name for c in mod["Tree"].constructors] == ["Rose"]
    types = {gv.name_hint: rl.astext(gv.checked_type) for gv in mod.functions}
    # TVM's signatures (python/tvm/relay/std/prelude.rly), written as our printer does.
    assert types["map"] == "fn [A, B](fn (A) -> B, List[A]) -> List[B]"
    assert types["foldl"] == "fn [A, B](fn (A, B) -> A, A, List[B]) -> A"
    assert types["foldr"] == "fn [A, B](fn (A, B) -> B, B, List[A]) -> B"
    assert types["zip"] == "fn [A, B](List[A], List[B]) -> List[(A, B)]"
    assert types["nth"] == "fn [A](List[A], int32) -> A"
    assert types["update"] == "fn [A](List[A], int32, A) -> List[A]"
    assert types["sum"] == "fn (List[int32]) -> int32"
    assert types["map_accumr"] == "fn [A, B, C](fn (A, B) -> (A, C), A, List[B]) -> (A, List[C])"
    assert types["unfoldr"] == "fn [A, B](fn (A) -> Option[(A, B)], A) -> List[B]"
    assert types["size"] == "fn [A](Tree[A]) -> int32"
    assert types["iterate"] == "fn [A](fn (A) -> A, int32) -> fn (A) -> A"


def test_every_library_type_checks_with_every_node_typed() -> None:
    for name in LIBRARIES:
        mod = library(name)
        for gv, fn in mod.functions.items():
            assert gv.checked_type is not None, f"{name}: @{gv.name_hint}"
            assert fn.checked_type is not None and fn.body.checked_type is not None


def test_prelude_is_a_new_module_over_shared_definitions() -> None:
    a, b = rl.prelude(), rl.prelude()
    assert a is not b and a.functions is not b.functions
    assert list(a.functions) == list(b.functions)           # the same GlobalVars
    assert a["map"] is b["map"]
    a.functions.clear()                                     # the caller's own table
    assert len(rl.prelude().functions) == len(TVM_GLOBALS)


@pytest.mark.parametrize("name", LIBRARIES)
def test_parse_print_parse_is_structurally_equal(name: str) -> None:
    mod = library(name)
    text = rl.astext(mod)
    again = rl.parse(text)
    assert rl.structural_equal(mod, again)
    assert rl.astext(again, show_meta_data=False).count("def @") == len(mod.functions)
    # and the untyped re-parse prints back to itself
    assert rl.astext(rl.parse(rl.astext(again))) == rl.astext(again)


def test_rl_prelude_is_the_lazy_public_name() -> None:
    import relaylang.std
    assert rl.prelude is relaylang.std.prelude
    assert "prelude" in rl.__all__


# ---------------------------------------------------------------- functions


def test_id_compose_flip() -> None:
    assert run("@id(7)", "int32") == 7
    assert run(f"@compose({INC}, fn (%v: int32) -> int32 {{ %v * 10 }})(4)", "int32") == 41
    assert run(f"@flip({SUB})(1, 10)", "int32") == 9


def test_hd_tl() -> None:
    assert run(f"@hd({lst(5, 6, 7)})", "int32") == 5
    assert run(f"@tl({lst(5, 6, 7)})", "List[int32]") == [6, 7]
    assert run(f"@tl({lst(5)})", "List[int32]") == []


def test_hd_of_nil_is_a_match_failure() -> None:
    mod = rl.parse(f"{HEADER}def @main() -> int32 {{ @hd({lst()}) }}\n")
    with pytest.raises(Exception, match="match"):
        rl.evaluate(mod)


def test_nth_and_update() -> None:
    xs = lst(10, 20, 30, 40)
    assert [run(f"@nth({xs}, {i})", "int32") for i in range(4)] == [10, 20, 30, 40]
    assert run(f"@update({xs}, 0, 1)", "List[int32]") == [1, 20, 30, 40]
    assert run(f"@update({xs}, 2, 3)", "List[int32]") == [10, 20, 3, 40]
    assert run(f"@update({xs}, 3, 4)", "List[int32]") == [10, 20, 30, 4]


def test_update_past_the_end_fails_as_tvms() -> None:
    mod = rl.parse(f"{HEADER}def @main() -> List[int32] {{ @update({lst(1)}, 1, 9) }}\n")
    with pytest.raises(Exception, match="match"):
        rl.evaluate(mod)


def test_length_and_sum() -> None:
    assert run(f"@length({lst()})", "int32") == 0
    assert run(f"@length({lst(4, 4, 4)})", "int32") == 3
    assert run(f"@sum({lst(1, 2, 3, 4)})", "int32") == 10
    assert run(f"@sum({lst()})", "int32") == 0


def test_map_keeps_order_and_changes_type() -> None:
    assert run(f"@map({INC}, {lst(1, 2, 3)})", "List[int32]") == [2, 3, 4]
    assert run(f"@map(fn (%v: int32) -> bool {{ %v > 1 }}, {lst(1, 2)})",
               "List[bool]") == [False, True]
    assert run(f"@map({INC}, {lst()})", "List[int32]") == []


def test_map_applies_the_function_first_to_last() -> None:
    # a reference cell records the order of the calls
    body = (f"let %log = ref({lst()});\n"
            "let %f = fn (%v: int32) -> int32 { ref_write(%log, Cons(%v, ref_read(%log))); %v };\n"
            f"let %out = @map(%f, {lst(1, 2, 3)});\n"
            "@rev(ref_read(%log))")
    assert run(body, "List[int32]") == [1, 2, 3]


def test_folds() -> None:
    # foldl: ((0 - 1) - 2) - 3; foldr: 1 - (2 - (3 - 0)); foldr1: 1 - (2 - 3)
    assert run(f"@foldl({SUB}, 0, {lst(1, 2, 3)})", "int32") == -6
    assert run(f"@foldr({SUB}, 0, {lst(1, 2, 3)})", "int32") == 2
    assert run(f"@foldr1({SUB}, {lst(1, 2, 3)})", "int32") == 2
    assert run(f"@foldr1({SUB}, {lst(8)})", "int32") == 8
    assert run(f"@foldl({ADD}, 5, {lst()})", "int32") == 5
    assert run(f"@foldr(Cons, {lst(9)}, {lst(1, 2)})", "List[int32]") == [1, 2, 9]


def test_filter_concat_rev() -> None:
    assert run(f"@filter(fn (%v: int32) -> bool {{ %v > 2 }}, {lst(3, 1, 4, 1, 5)})",
               "List[int32]") == [3, 4, 5]
    assert run(f"@filter(fn (%v: int32) -> bool {{ False }}, {lst(3, 1)})",
               "List[int32]") == []
    assert run(f"@concat({lst(1, 2)}, {lst(3, 4)})", "List[int32]") == [1, 2, 3, 4]
    assert run(f"@concat({lst()}, {lst(3)})", "List[int32]") == [3]
    assert run(f"@rev({lst(1, 2, 3)})", "List[int32]") == [3, 2, 1]
    assert run(f"@rev({lst()})", "List[int32]") == []


def test_zip_stops_at_the_shorter_list() -> None:
    assert run(f"@zip({lst(1, 2, 3)}, {lst(10, 20)})",
               "List[(int32, int32)]") == [(1, 10), (2, 20)]
    assert run(f"@zip({lst(1)}, @map(fn (%v: int32) -> bool {{ True }}, {lst(5, 6)}))",
               "List[(int32, bool)]") == [(1, True)]
    assert run(f"@zip({lst()}, {lst(1)})", "List[(int32, int32)]") == []


def test_map_accuml_and_map_accumr() -> None:
    # running sums; the outputs come out as TVM's do (accuml: last first, accumr: in order)
    step = "fn (%acc: int32, %v: int32) -> (int32, int32) { (%acc + %v, %acc * 10) }"
    assert run(f"@map_accuml({step}, 0, {lst(1, 2, 3)})",
               "(int32, List[int32])") == (6, [30, 10, 0])
    assert run(f"@map_accumr({step}, 0, {lst(1, 2, 3)})",
               "(int32, List[int32])") == (6, [50, 30, 0])


COUNTDOWN = ("fn (%n: int32) -> Option[(int32, int32)] {\n"
             "  if (%n == 0) { None } else { Some((%n - 1, %n * 10)) }\n"
             "}")


def test_unfoldl_and_unfoldr() -> None:
    assert run(f"@unfoldr({COUNTDOWN}, 3)", "List[int32]") == [30, 20, 10]
    assert run(f"@unfoldl({COUNTDOWN}, 3)", "List[int32]") == [10, 20, 30]
    assert run(f"@unfoldr({COUNTDOWN}, 0)", "List[int32]") == []


def test_option_constructors() -> None:
    assert run("Some(3)", "Option[int32]") == 3
    assert run("match (Some(3)) { Some(%v) => %v + 1, None => 0 }", "int32") == 4
    assert run("None", "Option[int32]") is None


TREE = "Rose(1, Cons(Rose(2, Nil), Cons(Rose(3, Cons(Rose(4, Nil), Nil)), Nil)))"


def test_tmap_and_size() -> None:
    assert run(f"@tmap({INC}, {TREE})", "Tree[int32]") == (
        2, [(3, []), (4, [(5, [])])])
    assert run(f"@size({TREE})", "int32") == 4
    assert run("@size(Rose(True, Nil))", "int32") == 1


def test_iterate() -> None:
    assert run(f"@iterate({INC}, 5)(10)", "int32") == 15
    assert run(f"@iterate({INC}, 0)(10)", "int32") == 10
    assert run("@iterate(fn (%l: List[int32]) -> List[int32] { Cons(0, %l) }, 3)(Nil)",
               "List[int32]") == [0, 0, 0]


# ---------------------------------------------------------------- long lists

RANGE = """
def @range(%n: int32, %acc: List[int32]) -> List[int32] {
  if (%n == 0) { %acc } else { @range(%n - 1, Cons(%n, %acc)) }
}
"""


def test_a_100000_element_list_through_foldl_and_length() -> None:
    body = ("let %xs = @range(100000, Nil);\n"
            "(@length(%xs), @foldl(fn (%a: int64, %b: int32) -> int64 { %a + cast(%b, "
            'dtype="int64") }, 0i64, %xs), @nth(%xs, 99999))')
    assert run(body, "(int32, int64, int32)", RANGE) == (100000, 5000050000, 100000)


def test_long_lists_through_map_filter_zip_and_update() -> None:
    # the functions TVM wrote with non-tail recursion are loops here (20,000 elements keep
    # the test quick; the interpreter's speed, not its stack, is the limit)
    body = ("let %xs = @range(20000, Nil);\n"
            "let %ys = @update(@map(fn (%v: int32) -> int32 { %v * 2 }, %xs), 19999, -1);\n"
            "let %zs = @zip(%xs, @filter(fn (%v: int32) -> bool { %v > 0 }, %ys));\n"
            "(@length(%zs), @hd(@rev(%ys)), @nth(%zs, 5))")
    assert run(body, "(int32, int32, (int32, int32))", RANGE) == (19999, -1, (6, 12))
