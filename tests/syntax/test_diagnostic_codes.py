"""Diagnostic codes: set where a diagnostic is made, from the one table.

Every `code="..."` written in the package is a key of diagnostic_codes.CODES
and every key is used; each stage gives representative bad inputs the code of
their class; every diagnostic the golden diagnostics inputs produce has one.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from relaylang.ir.diagnostic_codes import CODES
from relaylang.ir.diagnostics import Diagnostic, DiagnosticContext, Note, Severity
from relaylang.ir.span import Span
from relaylang.syntax.parser import parse_with_diagnostics
from relaylang.testing.cases import read_cases
from relaylang.typing import check_module

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
_CODE_ARG = re.compile(r"""\bcode=(["'])([^"']*)\1""")


def _codes_written_in_sources() -> dict[str, list[str]]:
    """code -> the files that pass it as a `code="..."` literal."""
    found: dict[str, list[str]] = {}
    for folder in ("relaylang", "lsp"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for m in _CODE_ARG.finditer(path.read_text(encoding="utf-8")):
                found.setdefault(m.group(2), []).append(str(path.relative_to(ROOT)))
    return found


def test_every_code_written_in_the_package_is_in_the_table() -> None:
    written = _codes_written_in_sources()
    assert written, "no `code=` literal found: the grep no longer matches the sources"
    unknown = {code: files for code, files in written.items() if code not in CODES}
    assert not unknown


def test_every_code_in_the_table_is_used_and_described() -> None:
    written = _codes_written_in_sources()
    assert sorted(set(CODES) - set(written)) == []
    for code, description in CODES.items():
        assert re.fullmatch(r"[a-z]+(-[a-z]+)*", code), code
        assert description and "\n" not in description, code


def test_an_unknown_code_is_rejected_where_the_diagnostic_is_made() -> None:
    with pytest.raises(ValueError, match="not-a-code"):
        Diagnostic.error("x", None, code="not-a-code")


def test_positional_construction_and_the_helpers_still_work() -> None:
    span = Span("t.relay", 1, 1, 1, 2)
    plain = Diagnostic(Severity.ERROR, "m", span, (Note("n"),))
    assert plain.code is None and plain.notes == (Note("n"),)
    assert Diagnostic.error("m", span, Note("n")) == plain
    assert Diagnostic.warning("w", span, code="unreachable-clause").code == "unreachable-clause"
    ctx = DiagnosticContext("t.relay", "x")
    ctx.error("m", span, Note("n"), code="syntax")
    assert ctx.diagnostics == [Diagnostic(Severity.ERROR, "m", span, (Note("n"),), "syntax")]


def _diagnostics(text: str) -> list[Diagnostic]:
    """The parser's diagnostics; when it has none, the type checker's."""
    mod, diags = parse_with_diagnostics(text, "t.relay")
    if not diags:
        _, diags = check_module(mod)
    return diags


LIST = "type T { A, B(int32) }\n"

PARSER_CASES = [
    ("def @f() { (1 + }", "syntax"),
    ("def @f() { %%0 }", "syntax"),
    ("def @f() { (1 + 2) #[foo] }", "syntax"),
    ("def @f() { 1 + match (1) { _ => 2 } }", "syntax"),
    ('def @f(%g: fn(int32) -> int32) { %g(1, a=bar, attrs_type_key="k") }', "syntax"),
    ("def @f() { 1i9 }", "literal"),
    ("def @f() { (1, 2).-1 }", "literal"),
    ("def @f(%x: Tensor[(2.5), float32]) { %x }", "literal"),
    ("def @f(%x: Tensor[(2), float32]) { nn.softmax(%x, axis=1i9) }", "literal"),
    ("def @f(%x: Tensor[(2), flot32]) { %x }", "unknown-dtype"),
    ("def @f(%x: Tensor[(2f), float32]) { %x }", "type-dimension"),
    ("def @f(%x {foo=1}: float32) { %x }", "attribute"),
    ("def @f(%x: Tensor[(2), float32]) { nn.relu(%x, foo=1) }", "attribute"),
    ('def @f(%x: Tensor[(2), float32]) { nn.softmax(%x, axis="a") }', "attribute"),
    ("def @f(%g: fn(int32) -> int32) { %g(1, foo=1) }", "attribute"),
    ("def @f() { meta[relay.Constant][0] }", "metadata"),
    ("def @f() { %y }", "undefined-name"),
    ("def @f() { @g() }", "undefined-name"),
    ("def @f(%x: Foo) { %x }", "undefined-name"),
    ("def @f(%x: int32) { foo(%x) }", "undefined-name"),
    (LIST + "def @f(%x: T) { match (%x) { C => 1 } }", "undefined-name"),
    ("def @f() { %0 = 1; %0 = 2; %0 }", "duplicate-definition"),
    ("def @f() { 1 }\ndef @f() { 2 }", "duplicate-definition"),
    ("type T { A }\ntype T { B }", "duplicate-definition"),
    ("type T { A }\ntype U { A }", "duplicate-definition"),
    ("def @f() { %1 }", "use-before-definition"),
    ("def @f(%let: int32) { 0 }", "reserved-word"),
    ("def @f() { else }", "reserved-word"),
]

TYPE_CASES = [
    ("def @f(%x: int32) -> float32 { %x }", "type-mismatch"),
    (LIST + "def @f(%x: T) -> int32 { match (%x) { A => 1 } }", "non-exhaustive-match"),
    (LIST + "def @f(%x: T) -> int32 { match (%x) { _ => 1, A => 2 } }", "unreachable-clause"),
    (LIST + "def @f(%x: T) -> int32 { match? (%x) { B(%a, %b) => 1 } }", "arity"),
    ("def @g(%x: int32) { %x }\ndef @f() { @g(1, 2) }", "arity"),
    ("def @f(%x: Tensor[(2), float32]) { add(%x) }", "arity"),
    ("def @f(%x: int32) { %x(1) }", "not-callable"),
    ("def @f(%x: int32) { %x.0 }", "tuple-projection"),
    ("def @f(%x: (int32, int32)) { %x.5 }", "tuple-projection"),
    ("def @f(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) { add(%x, %y) }",
     "op-type-relation"),
    ("def @f() { fn (%x) { zeros_like(%x) } }", "cannot-infer"),
]


@pytest.mark.parametrize("body, code", PARSER_CASES + TYPE_CASES)
def test_each_class_of_error_gets_its_code(body: str, code: str) -> None:
    diags = _diagnostics(HEADER + body)
    assert diags, body
    assert [d.code for d in diags] == [code] * len(diags), [d.message for d in diags]


@pytest.mark.parametrize("text", ["def @f() { 1 }\n", '#[version = "0.0.4"]\ndef @f() { 1 }\n'])
def test_version_errors(text: str) -> None:
    assert [d.code for d in _diagnostics(text)] == ["version"]


@pytest.mark.parametrize("body, code", [
    ("def @main() { fn (%x) { %x } }", "cannot-infer"),
    ("def @f() { 1 }\n#[metadata]\n{ bad", "metadata"),
])
def test_errors_made_outside_the_coded_sites(body: str, code: str) -> None:
    assert [d.code for d in _diagnostics(HEADER + body)] == [code]


GOLDEN = sorted((ROOT / "tests/golden/diagnostics").glob("*.relay"))


@pytest.mark.parametrize("path", GOLDEN, ids=[p.name for p in GOLDEN])
def test_golden_diagnostics_inputs_have_codes(path: Path) -> None:
    seen = 0
    for case in read_cases(path):
        diags = _diagnostics(case.text)
        seen += len(diags)
        assert all(d.code in CODES for d in diags), [(d.code, d.message) for d in diags]
    assert seen, f"{path.name} produced no diagnostics"
