"""The REPL session without a terminal (relaylang/repl/session.py, commands.py)."""
from __future__ import annotations

import pytest

import relaylang as rl
from relaylang.repl.session import Session

TWICE = "def @twice(%x: float32) -> float32 {\n  add(%x, %x)\n}"
LIST = "type List[T] {\n  Cons(T, List[T]),\n  Nil,\n}"


@pytest.fixture
def session() -> Session:
    s = Session()
    assert s.submit(TWICE).output == "defined @twice: fn (float32) -> float32"
    return s


def ok(session: Session, text: str) -> str:
    reply = session.submit(text)
    assert not reply.error, reply.output
    return reply.output


def error(session: Session, text: str) -> str:
    reply = session.submit(text)
    assert reply.error, reply.output
    return reply.output


def test_expressions_print_value_and_type_and_are_numbered(session):
    assert ok(session, "@twice(2f)") == "%out1: float32 = 4.0"
    assert ok(session, "@twice(%_)") == "%out2: float32 = 8.0"
    assert ok(session, "add(%out1, %out2)") == "%out3: float32 = 12.0"
    assert ok(session, "(%_, (1, 2))") == "%out4: (float32, (int32, int32)) = (12.0, (1, 2))"
    assert ok(session, "%_.1") == "%out5: (int32, int32) = (1, 2)"


def test_tensor_results_print_as_numpy_does(session):
    out = ok(session, "ones(shape=[2, 2], dtype=\"float32\")")
    assert out == "%out1: Tensor[(2, 2), float32] =\n[[1. 1.]\n [1. 1.]]"


def test_definitions_are_added_and_replaced(session):
    assert ok(session, "def @twice(%x: int32) { add(%x, %x) }") == \
        "defined @twice: fn (int32) -> int32"
    assert ok(session, "@twice(4)") == "%out1: int32 = 8"
    assert ok(session, LIST) == "defined type List"
    assert ok(session, "Cons(1f, Nil)") == "%out2: List[float32] = Cons(1.0, Nil)"
    out = ok(session, "match (%_) { Cons(%h, _) => %h, Nil => 0f }")
    assert out == "%out3: float32 = 1.0"


def test_several_items_at_once_with_a_version_header(session):
    text = '#[version = "0.0.5"]\ndef @a() { 1f }\n\ndef @b() { @a() }\n'
    assert ok(session, text) == "defined @a: fn () -> float32\ndefined @b: fn () -> float32"
    assert ok(session, "@b()") == "%out1: float32 = 1.0"


def test_syntax_error_has_a_caret_under_the_input(session):
    out = error(session, "add(1f, 2f))")
    assert out.splitlines() == [
        "<input>:1:12: error: unexpected `)`; expected end of input",
        "  |", "1 | add(1f, 2f))", "  |            ^"]


def test_type_error_points_into_the_input_and_keeps_the_session(session):
    out = error(session, "def @bad(%x: float32) {\n  add(%x, (1f, 2f))\n}")
    assert out.startswith("<input>:2:11: error: add: rhs must be a tensor")
    assert "2 |   add(%x, (1f, 2f))" in out
    assert "bad" not in ok(session, ":list")         # rejected: the module is unchanged
    assert ok(session, "@twice(1f)") == "%out1: float32 = 2.0"


def test_runtime_error_is_shown_with_its_span(session):
    ok(session, LIST)
    out = error(session, "let %n: List[float32] = Nil; match? (%n) { Cons(%h, _) => %h }")
    assert out.splitlines() == [
        "<input>:1:30: error: no clause of this match accepts the value Nil", "  |",
        "1 | let %n: List[float32] = Nil; match? (%n) { Cons(%h, _) => %h }",
        "  |                              " + "^" * 24]
    assert ok(session, "@twice(1f)") == "%out1: float32 = 2.0"


def test_unknown_result_names_are_unknown_locals(session):
    assert "unknown local variable `%out7`" in error(session, "%out7")
    assert "unknown local variable `%_`" in error(Session(), "%_")


def test_completeness_decided_by_the_parser(session):
    assert not session.is_complete("def @f(%x) {")
    assert not session.is_complete("add(1f,")
    assert not session.is_complete("(1f")
    assert not session.is_complete("/* still in a comment")
    assert not session.is_complete("let %x = 1f;")
    assert session.is_complete("add(1f, 2f)")
    assert session.is_complete("add(1f, 2f))")           # a real error: shown at once
    assert session.is_complete("def @f(%x) { %x } }")
    assert session.is_complete(":type")
    assert session.is_complete("   ")


def test_type_and_ast_commands(session):
    assert ok(session, ":type @twice") == "fn (float32) -> float32"
    assert ok(session, ":type add(1f, 2f)") == "float32"
    assert ok(session, ":ast add(1f, 2f)").splitlines() == [
        "Call : float32  #1", "  Op add", "  Constant 1f : float32", "  Constant 2f : float32"]
    assert ok(session, ":time @twice(1f)").startswith("%out1: float32 = 2.0\ntime: ")
    assert error(session, ":type") == "usage: :type EXPR"
    assert "did you mean :type?" in error(session, ":typ 1f")


def test_passes_and_opt_commands(session):
    passes = ok(session, ":passes").splitlines()
    assert any(line.split()[0] == "FoldConstant" and len(line.split()) > 2 for line in passes)
    assert all(not line.split()[1].startswith(line.split()[0] + "(") for line in passes)
    out = ok(session, ":opt ToANormalForm @twice")
    assert out.startswith("def @twice") and "let %x1 = add(%x, %x)" in out
    diff = ok(session, ":anf @twice --diff")
    assert "-  add(%x, %x)" in diff and "+  let %x1 = add(%x, %x)" in diff.replace(
        " /* ty=float32 */", "")
    assert ok(session, ":gnf").startswith('#[version = "0.0.5"]')
    assert "fn" in ok(session, ":cps @twice")
    assert "unknown pass `Nope`" in error(session, ":opt Nope")
    assert "no function @nope" in error(session, ":opt ToANormalForm @nope")
    assert ok(session, ":opt FoldConstant @twice --diff") == "(no change)"


def test_save_round_trips_and_load_reset(session, tmp_path):
    ok(session, LIST)
    ok(session, "def @len(%l: List[float32]) -> int32 {\n  match (%l) {\n"
                "    Cons(_, %t) => add(1, @len(%t)),\n    Nil => 0,\n  }\n}")
    path = tmp_path / "session.relay"
    assert "saved 2 function(s) and 1 type(s)" in ok(session, f":save {path}")
    saved = session.module
    ok(session, ":reset")
    assert ok(session, ":list") == '#[version = "0.0.5"]'
    assert "defined @len" in ok(session, f":load {path}")
    assert rl.structural_equal(rl.parse(path.read_text()), session.module)
    assert rl.astext(saved) == rl.astext(session.module)
    assert ok(session, "@len(Cons(1f, Cons(2f, Nil)))") == "%out1: int32 = 2"
    assert "cannot read file" in error(session, f":load {tmp_path / 'missing.relay'}")


def test_load_reports_errors_with_the_file_name(session, tmp_path):
    path = tmp_path / "bad.relay"
    path.write_text('#[version = "0.0.5"]\ndef @f() {\n  %nope\n}\n')
    out = error(session, f":load {path}")
    assert out.startswith(f"{path}:3:3: error: unknown local variable `%nope`")


def test_help_and_quit(session):
    help_text = ok(session, ":help")
    for name in ("help", "type", "ast", "passes", "opt", "anf", "gnf", "cps", "time", "load",
                 "save", "reset", "quit"):
        assert f":{name}" in help_text
    assert session.submit(":quit").quit


def test_deep_expression_evaluates():
    depth = 2000          # the wrapper is re-printed and re-parsed: keep this test quick
    s = Session()
    text = "let %x0 = 0;\n" + "".join(f"let %x{i + 1} = add(%x{i}, 1);\n" for i in range(depth)) \
        + f"%x{depth}"
    assert s.submit(text).output == f"%out1: int32 = {depth}"


def test_closures_and_references_survive_between_inputs():
    s = Session()
    ok(s, "def @counter(%start: int32) {\n  let %r = ref(%start);\n"
          "  (fn () { ref_write(%r, add(ref_read(%r), 1)) }, fn () { ref_read(%r) })\n}")
    ok(s, "@counter(5)")
    assert ok(s, "%_.0()") == "%out2: () = ()"
    assert ok(s, "%out1.1()") == "%out3: int32 = 6"
    assert ok(s, "fn (%x: int32) { add(%x, 1) }") == \
        "%out4: fn (int32) -> int32 = <closure of 1 parameter(s)>"
    assert ok(s, "%_(41)") == "%out5: int32 = 42"


def test_an_import_directive_brings_the_prelude_into_the_session() -> None:
    s = Session()
    reply = s.submit('#[import "prelude"]')
    assert not reply.error, reply.output
    assert ok(s, "@length(Cons(1f, Cons(2f, Nil)))") == "%out1: int32 = 2"
