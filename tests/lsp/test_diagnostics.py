"""relaylang diagnostics -> LSP diagnostics: codes per error class, ranges, related info."""
from __future__ import annotations

import pytest
from lsprotocol import types as lsp

from lsp.diagnostics import diagnostic_code, to_lsp_diagnostics
from relaylang.ide.analysis import analyze
from relaylang.ir.diagnostics import Diagnostic, Note
from relaylang.ir.span import Span

URI = "file:///tmp/t.relay"
HEAD = '#[version = "0.0.5"]\n'


def lsp_diagnostics(body: str) -> list[lsp.Diagnostic]:
    text = HEAD + body
    a = analyze(text, URI, 1)
    return to_lsp_diagnostics(a.diagnostics, text, URI, own_source=URI)


@pytest.mark.parametrize("body, code", [
    ("def @f() { (1 + }\n", "syntax"),
    ("def @f(%x: int32) -> float32 { %x }\n", "type-mismatch"),
    ("def @f() { %nope }\n", "undefined-name"),
    ("def @f() { @g() }\n", "undefined-name"),
    ("def @f() { 1 }\ndef @f() { 2 }\n", "duplicate-definition"),
    ("def @f(%x: Tensor[(2), flot32]) { %x }\n", "unknown-dtype"),
    ("def @f(%x: Tensor[(2), float32]) { nn.relu(%x, foo=1) }\n", "attribute"),
    ("def @f(%x: Tensor[(2), float32], %y: Tensor[(3), float32]) { add(%x, %y) }\n",
     "op-type-relation"),
    ("def @f() { meta[relay.Constant][0] }\n", "metadata"),
])
def test_each_error_class_has_its_code(body: str, code: str) -> None:
    found = lsp_diagnostics(body)
    assert found, body
    assert found[0].code == code, found[0].message
    assert found[0].source == "relay"
    assert found[0].severity == lsp.DiagnosticSeverity.Error


def test_missing_header_is_a_version_error() -> None:
    a = analyze("def @f() { 1 }\n", URI, 1)
    assert [diagnostic_code(d) for d in a.diagnostics] == ["version"]


def test_notes_become_related_information_in_the_same_document() -> None:
    (d,) = lsp_diagnostics("def @f(%x: int32) -> float32 {\n  %x\n}\n")
    assert d.range == lsp.Range(lsp.Position(2, 2), lsp.Position(2, 4))
    (related,) = d.related_information
    assert related.location.uri == URI
    assert related.message == "the result type is declared here"
    assert related.location.range.start == lsp.Position(1, 21)


def test_range_is_in_utf16_units_after_non_ascii_text() -> None:
    (d,) = lsp_diagnostics('def @f() { /* 𝔸é */ %nope }\n')
    line = (HEAD + 'def @f() { /* 𝔸é */ %nope }').split("\n")[1]
    col = line.index("%nope") + 1                # one more UTF-16 unit for `𝔸`
    assert (d.range.start.line, d.range.start.character) == (1, col)
    assert d.range.end.character == col + 5


def test_notes_without_span_join_the_message_and_unknown_messages_get_a_generic_code() -> None:
    d = Diagnostic.warning("something odd", Span(URI, 1, 1, 1, 2), Note("because"))
    (out,) = to_lsp_diagnostics([d], "x\n", URI, own_source=URI)
    assert out.message == "something odd\nnote: because"
    assert out.code == "warning" and out.severity == lsp.DiagnosticSeverity.Warning
    assert out.related_information is None


def test_the_code_is_the_one_the_stage_set_whatever_the_message_says() -> None:
    d = Diagnostic.error("type mismatch, reworded", Span(URI, 1, 1, 1, 2), code="arity")
    (out,) = to_lsp_diagnostics([d], "x\n", URI, own_source=URI)
    assert out.code == "arity"
    assert diagnostic_code(Diagnostic.error("type mismatch in x", None)) == "error"


def test_note_in_another_file_points_there() -> None:
    d = Diagnostic.error("x", None, Note("there", Span("/abs/other.relay", 1, 1, 1, 2)))
    (out,) = to_lsp_diagnostics([d], "x\n", URI, own_source=URI)
    assert out.related_information[0].location.uri == "file:///abs/other.relay"
    assert out.range == lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
