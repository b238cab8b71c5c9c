"""syntax/parser.py `parse_in_module` and the REPL reading inputs inside its module."""
from __future__ import annotations

import relaylang as rl
from relaylang.ir.expr import Call
from relaylang.repl.session import Session
from relaylang.syntax.parser import parse_in_module

MODULE = rl.parse('#[version = "0.0.5"]\ntype List[T] {\n  Cons(T, List[T]),\n  Nil,\n}\n'
                  "def @twice(%x: float32) -> float32 {\n  add(%x, %x)\n}\n")


def test_unbalanced_paren_in_an_expression_is_reported_in_the_input():
    found = parse_in_module("add(1f, 2f))", MODULE, expression=True)
    [d] = found.diagnostics
    assert d.message == "unexpected `)`; expected end of input"
    assert (d.span.source_name, d.span.line, d.span.column) == ("<input>", 1, 12)


def test_a_def_uses_the_modules_own_global_and_constructor():
    found = parse_in_module("def @f(%x: float32) {\n  Cons(@twice(%x), Nil)\n}", MODULE)
    assert found.diagnostics == [] and found.replaced == frozenset()
    [fn] = found.items.functions.values()
    assert isinstance(fn.body, Call) and fn.body.op is MODULE.get_constructor("Cons")
    assert fn.body.args[0].op is MODULE.get_global_var("twice")
    assert fn.body.args[1].op is MODULE.get_constructor("Nil")     # Nil is applied
    assert list(MODULE.functions) == [MODULE.get_global_var("twice")]    # unchanged


def test_replacing_a_def_gives_it_a_new_global_used_by_the_text():
    found = parse_in_module("def @g() { @twice(1) }\ndef @twice(%x: int32) { %x }", MODULE)
    assert found.diagnostics == [] and found.replaced == {"twice"}
    new = found.items.get_global_var("twice")
    assert new is not MODULE.get_global_var("twice")
    assert found.items["g"].body.op is new


def test_a_redefinition_is_read_in_one_parse(monkeypatch):
    from relaylang.syntax import parser
    calls = []
    real = parser._parse_in
    monkeypatch.setattr(parser, "_parse_in", lambda *a: calls.append(a) or real(*a))
    found = parse_in_module("def @twice(%x: int32) { %x }", MODULE)
    assert found.replaced == {"twice"} and len(calls) == 1


def test_a_definition_head_inside_a_comment_redefines_nothing():
    text = "/*\ndef @twice(%x: int32) { %x }\n*/\ndef @g() { @twice(1f) }"
    found = parse_in_module(text, MODULE)
    assert found.diagnostics == [] and found.replaced == frozenset()
    assert found.items["g"].body.op is MODULE.get_global_var("twice")


def test_undefined_names_and_positions_are_the_inputs():
    found = parse_in_module("\n  @nope(%y)", MODULE, expression=True)
    assert [(d.message.split(":")[0], d.span.line, d.span.column) for d in found.diagnostics] \
        == [("undefined global function `@nope`", 2, 3), ("unknown local variable `%y`", 2, 9)]


def test_local_vars_are_in_scope_and_a_deep_expression_parses():
    from relaylang.ir.expr import Var
    x = Var("_")
    found = parse_in_module("add(%_, %_)", MODULE, expression=True, local_vars={"_": x})
    assert found.diagnostics == [] and found.expr.args[0] is x
    depth = 20000
    text = "".join(f"let %x{i} = {i};\n" for i in range(depth)) + f"%x{depth - 1}"
    assert parse_in_module(text, MODULE, expression=True).diagnostics == []


def test_session_module_is_not_printed_per_input(monkeypatch):
    s = Session()
    assert not s.submit(rl.astext(MODULE)).error
    from relaylang.syntax import printer

    def no_module_printing(node, *args, **kwargs):
        assert not isinstance(node, rl.IRModule), "the session module was printed"
        return original(node, *args, **kwargs)
    original = printer.astext
    monkeypatch.setattr(printer, "astext", no_module_printing)
    assert s.is_complete("@twice(2f)")
    assert s.submit("@twice(2f)").output == "%out1: float32 = 4.0"
    assert s.submit("Cons(%_, Nil)").output == "%out2: List[float32] = Cons(4.0, Nil)"
    assert s.submit("def @h(%l: List[float32]) { match (%l) { Cons(%a, _) => @twice(%a), "
                    "Nil => 0f } }").output == "defined @h: fn (List[float32]) -> float32"
    assert s.submit("@h(%_)").output == "%out3: float32 = 8.0"


def test_replacing_a_def_a_kept_def_calls_re_reads_the_caller():
    s = Session()
    assert not s.submit("def @a() { 1f }\ndef @b() { @a() }").error
    assert s.submit("def @a() { 1 }").output == \
        "defined @a: fn () -> int32\nupdated @b: fn () -> int32"
    assert s.submit("def @a() { 1 }\ndef @b() { @a() }").output == \
        "defined @a: fn () -> int32\ndefined @b: fn () -> int32"
    assert s.submit("@b()").output == "%out1: int32 = 1"


def test_errors_in_an_older_input_show_that_inputs_text():
    s = Session()
    assert not s.submit("type L { A, B }").error
    assert not s.submit("def @pick(%l: L) -> int32 {\n  match? (%l) { A => 1 }\n}").error
    out = s.submit("@pick(B)").output
    assert out.startswith("<input 2>:2:3: error: no clause of this match accepts the value B")
    assert "2 |   match? (%l) { A => 1 }" in out
