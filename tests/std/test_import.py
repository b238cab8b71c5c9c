"""`#[import "NAME"]` in Relay text, `relaylang.std.import_std`, the nat library, and the
directive through `relay run` and `relay check`, errors included."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from adt_values import py

import relaylang as rl
from relaylang import std
from relaylang.cli import main
from relaylang.std import import_std, library
from relaylang.syntax.parser import parse_in_module, parse_with_diagnostics

VERSION = '#[version = "0.0.5"]\n'
PRELUDE = VERSION + '#[import "prelude"]\n'


def errors(text: str) -> list[str]:
    _, diagnostics = parse_with_diagnostics(text, source_name="t.relay")
    return [d.short() for d in diagnostics]


# ---------------------------------------------------------------- the directive


def test_imported_names_are_the_librarys_own_objects() -> None:
    mod = rl.parse(PRELUDE + "def @main() -> List[int32] { @map(@id, Cons(1, Nil)) }\n")
    prelude = rl.prelude()
    for gv in prelude.functions:
        assert gv in mod.functions and mod.functions[gv] is prelude.functions[gv]
    assert set(prelude.type_definitions) <= set(mod.type_definitions)
    assert list(mod.functions)[-1].name_hint == "main"      # the text's own after the library
    assert py(rl.evaluate(mod)) == [1]


def test_a_program_in_tvms_printed_style_runs() -> None:
    # as TVM printed programs over its prelude: full tensor types, type comments
    text = PRELUDE + """
def @main(%x: Tensor[(), int32]) -> Tensor[(), int32] {
  %0 = Cons(%x, Cons(2 /* ty=int32 */, Nil /* ty=List[int32] */));
  %1 = @map(fn (%y: Tensor[(), int32]) -> Tensor[(), int32] { multiply(%y, %y) }, %0);
  %2 = @foldl(fn (%a: Tensor[(), int32], %b: Tensor[(), int32]) { add(%a, %b) }, 0, %1);
  match (@zip(%1, %0)) {
    Cons(%p, _) => %2 + %p.1,
    Nil => %2,
  }
}
"""
    assert py(rl.evaluate(rl.parse(text), 3)) == 9 + 4 + 3


def test_import_twice_and_nat_after_prelude_share_everything() -> None:
    text = PRELUDE + '#[import "prelude"]\n#[import "nat"]\n' + \
        "def @main() -> int32 { @nat_to_int(@nat_nth(Cons(succ(zero), Nil), zero)) }\n"
    mod = rl.parse(text)
    assert sorted(g.name_hint for g in mod.type_definitions) == ["List", "Option", "Tree", "nat"]
    assert len(mod.functions) == len(library("nat").functions) + 1
    assert py(rl.evaluate(mod)) == 1


def test_directive_spellings() -> None:
    assert rl.parse(VERSION + '#[ import   "prelude" ]\ndef @f() -> int32 { @sum(Nil) }')
    assert rl.parse(VERSION + '#[import\n  "prelude"]\n\ndef @f() -> int32 { @sum(Nil) }')
    # the version header may be left out only where it may anyway (REPL input)
    assert errors('#[import "prelude"]\ndef @f() -> int32 { 1 }')[0].startswith("1:1: expected "
                                                                             "the text format")


def test_a_directive_in_a_comment_imports_nothing() -> None:
    found = errors(VERSION + '// #[import "prelude"]\ndef @f() -> int32 { @sum(Nil) }')
    assert found == ["3:21: undefined global function `@sum`",
                     "3:26: unknown operator or constructor `Nil`"]


def test_unknown_library_is_located() -> None:
    assert errors(VERSION + '#[import "prelud"]\n') == [
        ('2:1: unknown library "prelud" in `#[import]` (the standard libraries are "prelude", '
         '"nat")')]


def test_malformed_directive_is_located() -> None:
    assert errors(VERSION + "#[import prelude]\n") == [
        '2:1: malformed import directive: write `#[import "prelude"]`']
    assert errors(VERSION + '#[import "a" "b"]\n') == [
        '2:1: malformed import directive: write `#[import "prelude"]`']


def test_a_directive_after_a_definition_is_a_syntax_error() -> None:
    found = errors(VERSION + 'def @f() -> int32 { 1 }\n#[import "prelude"]\n')
    assert len(found) == 1 and found[0].startswith("3:1: ")


def test_redefining_an_imported_name_is_located() -> None:
    assert errors(PRELUDE + "def @map(%x: int32) -> int32 { %x }\n") == [
        '3:5: `@map` is already defined by `#[import "prelude"]`']
    found = errors(PRELUDE + "type Option[A] { Just(A) }\n")
    assert found == ['3:6: type `Option` is already defined by `#[import "prelude"]`']
    found = errors(PRELUDE + "type Maybe[A] { Some(A) }\n")
    assert len(found) == 1 and found[0].startswith("3:17: a constructor named `Some` was "
                                                   "already defined")


def test_type_errors_in_programs_using_the_prelude_point_at_the_program() -> None:
    mod = rl.parse(PRELUDE + "def @main() -> int32 {\n  @length(1)\n}\n", source_name="t.relay")
    with pytest.raises(rl.DiagnosticError) as info:
        rl.transform.InferType()(mod)
    spans = [d.span for d in info.value.diagnostics]
    assert spans and all(s.source_name == "t.relay" and s.line == 4 for s in spans)


def test_expression_text_has_no_imports() -> None:
    with pytest.raises(rl.DiagnosticError):
        rl.parse_expr('#[import "prelude"]\n1')


def test_parse_in_module_reads_an_import() -> None:
    # what the REPL would use: definitions typed after `#[import "prelude"]`
    found = parse_in_module('#[import "prelude"]\ndef @two() -> int32 { @length(Cons(1, '
                            'Cons(2, Nil))) }', rl.IRModule())
    assert found.diagnostics == []
    assert py(rl.evaluate(found.items, entry="two")) == 2


# ---------------------------------------------------------------- import_std


def test_import_std_adds_the_library_ahead_of_the_module() -> None:
    mod = rl.parse(VERSION + "def @main() -> int32 { 1 }")
    both = import_std(mod, "prelude")
    assert len(mod.functions) == 1                          # not changed
    assert [g.name_hint for g in both.functions][-1] == "main"
    assert len(both.functions) == 25 and "List" in both
    assert py(rl.evaluate(both)) == 1


def test_import_std_does_not_add_twice() -> None:
    mod = rl.parse(PRELUDE + "def @main() -> int32 { @sum(Nil) }")
    assert list(import_std(mod, "prelude").functions) == list(mod.functions)
    once = import_std(rl.IRModule(), "prelude")
    assert list(import_std(once, "prelude").functions) == list(once.functions)
    # a printed and re-parsed prelude is recognised as the prelude
    reparsed = rl.parse(rl.astext(mod))
    assert len(import_std(reparsed, "prelude").functions) == len(reparsed.functions)
    assert py(rl.evaluate(import_std(reparsed, "prelude"))) == 0


def test_import_std_refuses_a_different_definition_of_a_library_name() -> None:
    mod = rl.parse(VERSION + "def @map(%x: int32) -> int32 { %x }")
    with pytest.raises(ValueError, match="already defines @map differently"):
        import_std(mod, "prelude")
    with pytest.raises(KeyError, match="no standard library 'list'"):
        import_std(mod, "list")


def test_nat_import_std_brings_the_prelude() -> None:
    mod = import_std(rl.parse(VERSION + "def @main() -> int32 { 3 }"), "nat")
    assert {"nat", "List", "Tree"} <= {g.name_hint for g in mod.type_definitions}


def test_import_std_of_nat_into_a_module_with_the_prelude() -> None:
    mod = rl.parse(PRELUDE + "def @main() -> int32 { 1 + @sum(Nil) }")
    both = import_std(mod, "nat")
    assert len(both.functions) == len(library("nat").functions) + 1
    assert "nat" in both and py(rl.evaluate(both)) == 1


# ---------------------------------------------------------------- nat


def nat(body: str) -> object:
    text = VERSION + '#[import "nat"]\n' + f"def @main() -> int32 {{\n{body}\n}}\n"
    return py(rl.evaluate(rl.parse(text)))


def test_nat_functions() -> None:
    assert nat("@nat_to_int(zero)") == 0
    assert nat("@nat_to_int(succ(succ(zero)))") == 2
    assert nat("@nat_to_int(@int_to_nat(7))") == 7
    assert nat("@nat_to_int(@int_to_nat(-3))") == 0
    assert nat("@nat_to_int(@nat_double(@int_to_nat(21)))") == 42
    assert nat("@nat_to_int(@nat_add(@int_to_nat(3), @int_to_nat(4)))") == 7
    xs = "Cons(10, Cons(20, Cons(30, Nil)))"
    assert nat(f"@nat_nth({xs}, @int_to_nat(2))") == 30
    assert nat(f"@sum(@nat_update({xs}, zero, 1))") == 51
    assert nat(f"@nth(@nat_update({xs}, succ(zero), 2), 0)") == 10     # TVM's lost this
    assert nat(f"@sum(@nat_update({xs}, succ(zero), 2))") == 42
    assert nat("@nat_iterate(fn (%v: int32) -> int32 { %v * 2 }, @int_to_nat(10))(1)") == 1024
    assert nat("@nat_to_int(@nat_iterate(@nat_double, @int_to_nat(3))(succ(zero)))") == 8


def test_nat_update_past_the_end_is_a_match_failure() -> None:
    with pytest.raises(Exception, match="match"):
        nat("@hd(@nat_update(Nil, zero, 1))")


# ---------------------------------------------------------------- libraries that fail


def _fake_libraries(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, texts: dict[str, str]
                    ) -> None:
    for name, text in texts.items():
        (tmp_path / f"{name}.relay").write_text(text)
    monkeypatch.setattr(std, "LIBRARIES", (*std.LIBRARIES, *texts))
    real = std.library_path
    monkeypatch.setattr(std, "library_path", lambda name: tmp_path / f"{name}.relay"
                        if name in texts else real(name))


def test_a_broken_library_is_reported_at_the_directive(monkeypatch: pytest.MonkeyPatch,
                                                       tmp_path: Path) -> None:
    _fake_libraries(monkeypatch, tmp_path, {"broken": VERSION + "def @f( { 1 }\n"})
    found = errors(VERSION + '#[import "broken"]\n')
    assert len(found) == 1 and found[0].startswith(
        '2:1: cannot import "broken": the library does not parse (')
    assert "broken.relay:2:" in found[0]


def test_libraries_that_import_each_other(monkeypatch: pytest.MonkeyPatch,
                                          tmp_path: Path) -> None:
    _fake_libraries(monkeypatch, tmp_path, {"ping": VERSION + '#[import "pong"]\n',
                                            "pong": VERSION + '#[import "ping"]\n'})
    found = errors(VERSION + '#[import "ping"]\n')
    assert len(found) == 1 and found[0].startswith('2:1: cannot import "ping"')


# ---------------------------------------------------------------- the command line

PROGRAM = PRELUDE + """
def @main(%n: int32) -> int32 {
  let %xs = Cons(%n, Cons(2, Cons(3, Nil)));
  @sum(@map(fn (%x: int32) -> int32 { %x * 10 }, @filter(fn (%x: int32) -> bool { %x > 1 }, %xs)))
}
"""


def test_relay_run_with_the_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "uses_prelude.relay"
    path.write_text(PROGRAM)
    assert main(["run", str(path), "--input", "n=4"]) == 0
    assert capsys.readouterr().out.strip() == "90"
    assert main(["check", str(path)]) == 0
    assert f"{path}: @main: fn (int32) -> int32" in capsys.readouterr().out


def test_relay_run_in_a_subprocess(tmp_path: Path) -> None:
    path = tmp_path / "uses_prelude.relay"
    path.write_text(PROGRAM)
    result = subprocess.run([sys.executable, "-m", "relaylang", "run", str(path), "--input",
                             "n=1"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "50"


def test_relay_run_with_an_unknown_import(tmp_path: Path) -> None:
    path = tmp_path / "bad.relay"
    path.write_text(PROGRAM.replace('"prelude"', '"prelude2"'))
    result = subprocess.run([sys.executable, "-m", "relaylang", "run", str(path)],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert f'{path}:2:1: error: unknown library "prelude2"' in result.stderr
    assert "Traceback" not in result.stderr


def test_relay_fmt_keeps_the_directive_instead_of_the_library() -> None:
    from relaylang.syntax.format import format_text
    text = ('// header\n#[version = "0.0.5"]\n#[import  "prelude"]\n#[import "nat"]\n\n'
            "// the entry\ndef @main() -> int32 { @length(Cons(1, Nil)) }\n")
    formatted = format_text(text, source_name="t.relay")
    assert formatted.text.splitlines()[:5] == [
        "// header", '#[version = "0.0.5"]', '#[import "prelude"]', '#[import "nat"]',
        "// the entry"]
    assert formatted.text.count("def @") == 1
    again = format_text(formatted.text, source_name="t.relay")
    assert again.text == formatted.text
    assert py(rl.evaluate(rl.parse(formatted.text))) == 1


# ---------------------------------------------------------------- the editor


def test_the_editor_checks_a_document_that_imports_the_prelude() -> None:
    from relaylang.ide import navigation
    from relaylang.ide.analysis import analyze
    text = PRELUDE + "\ndef @main() -> int32 {\n  @length(Cons(1, Nil))\n}\n"
    first = analyze(text, "file:///t.relay")
    assert first.diagnostics == []
    hover = navigation.hover(first, 5, 4)
    assert hover is not None and "fn [A](List[A]) -> int32" in hover[0]
    # an error in the document is reported there, against the library's types
    broken = analyze(text.replace("Cons(1, Nil)", "Cons(1, 2)"), "file:///t.relay",
                     previous=first)
    found = [d.short() for d in broken.diagnostics]
    assert len(found) == 1 and found[0].startswith("5:19: type mismatch")
    assert all(d.span.source_name == "file:///t.relay" for d in broken.diagnostics)
