"""Semantic tokens, inlay hints, annotation actions and formatting edits (lsp/editing.py)."""
from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from lsp import editing
from lsp.positions import LineIndex
from relaylang.ide.analysis import analyze

SAMPLE = (Path(__file__).parent / "data" / "sample.relay").read_text()
URI = "file:///tmp/sample.relay"
EVERYWHERE = lsp.Range(lsp.Position(0, 0), lsp.Position(99, 0))


def decode(data: list[int]) -> list[tuple[int, int, int, str, set[str]]]:
    """Absolute (line, start, length, type, modifiers) of LSP's relative encoding."""
    out, line, start = [], 0, 0
    for i in range(0, len(data), 5):
        dl, ds, length, kind, mods = data[i:i + 5]
        line, start = line + dl, (start + ds if dl == 0 else ds)
        names = {m for b, m in enumerate(editing.TOKEN_MODIFIERS) if mods >> b & 1}
        out.append((line, start, length, editing.TOKEN_TYPES[kind], names))
    return out


def test_semantic_tokens_cover_each_kind_with_standard_types() -> None:
    a = analyze(SAMPLE, URI, 1)
    tokens = decode(editing.semantic_tokens(a.index.occurrences, LineIndex(SAMPLE)))
    lines = SAMPLE.split("\n")
    found = {(lines[ln][s:s + n], kind, frozenset(m)) for ln, s, n, kind, m in tokens}
    assert ("@f", "function", frozenset({"declaration"})) in found
    assert ("nn.relu", "function", frozenset({"defaultLibrary"})) in found
    assert ("%y", "variable", frozenset({"declaration"})) in found
    assert ("%0", "variable", frozenset({"readonly"})) in found
    assert ("List", "type", frozenset({"declaration"})) in found
    assert ("Cons", "enumMember", frozenset()) in found
    assert ("axis", "property", frozenset()) in found
    assert ("1f", "number", frozenset()) in found
    assert tokens == sorted(tokens)


def test_semantic_tokens_count_utf16_units_and_skip_overlaps() -> None:
    class Occ:
        def __init__(self, line: int, col: int, end: int, kind: str = "local"):
            from relaylang.ir.span import Span
            self.span, self.kind, self.is_definition = Span("u", line, col, line, end), kind, False

    text = "𝔸 %a %b"
    data = editing.semantic_tokens([Occ(1, 3, 5), Occ(1, 4, 5), Occ(1, 6, 8)], LineIndex(text))
    assert decode(data) == [(0, 3, 2, "variable", set()), (0, 6, 2, "variable", set())]


def test_inlay_hints_only_where_no_type_is_written() -> None:
    a = analyze(SAMPLE, URI, 1)
    index = LineIndex(SAMPLE)
    hints = {(h.position.line, h.label) for h in editing.inlay_hints(a.index.bindings(), index)}
    assert (5, ": int32") in hints                       # %n
    assert (6, ": Tensor[(2), float32]") in hints        # let %y
    assert (7, ": Tensor[(2), float32]") in hints        # %0 =
    assert (9, ": List[int32]") in hints                 # pattern %t
    assert not any(label.startswith(": Tensor") for line, label in hints if line == 5)  # %x
    window = lsp.Range(lsp.Position(6, 0), lsp.Position(6, 99))
    assert len(editing.inlay_hints(a.index.bindings(), index, window)) == 1


def test_annotation_action_inserts_the_inferred_type_for_locals_only() -> None:
    a = analyze(SAMPLE, URI, 1)
    index = LineIndex(SAMPLE)
    line7 = lsp.Range(lsp.Position(7, 0), lsp.Position(7, 0))
    assert editing.annotation_actions(a.index.bindings(), index, URI, line7) == []  # %0
    (action,) = editing.annotation_actions(a.index.bindings(), index, URI,
                                           lsp.Range(lsp.Position(6, 4), lsp.Position(6, 4)))
    (edit,) = action.edit.changes[URI]
    assert edit.new_text == ": Tensor[(2), float32]"
    assert edit.range.start == lsp.Position(6, 8)
    fixed = SAMPLE.split("\n")
    fixed[6] = fixed[6][:8] + edit.new_text + fixed[6][8:]
    assert analyze("\n".join(fixed), URI, 2).diagnostics == []


def apply(text: str, edits: list[lsp.TextEdit]) -> str:
    index = LineIndex(text)
    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character),
                    reverse=True):
        text = text[:index.offset(e.range.start)] + e.new_text + text[index.offset(e.range.end):]
        index = LineIndex(text)
    return text


def test_whole_document_formatting_equals_relay_fmt() -> None:
    from relaylang.syntax.format import format_text
    edits = editing.format_document(SAMPLE, URI, LineIndex(SAMPLE))
    assert apply(SAMPLE, edits) == format_text(SAMPLE).text
    formatted = format_text(SAMPLE).text
    assert editing.format_document(formatted, URI, LineIndex(formatted)) == []


def test_range_formatting_touches_only_the_definitions_in_the_range() -> None:
    text = SAMPLE.replace("def @main() { @f(", "// keep me\ndef @main() {   @f(")
    window = lsp.Range(lsp.Position(6, 0), lsp.Position(6, 3))     # inside @f
    out = apply(text, editing.format_range(text, URI, LineIndex(text), window))
    assert "def @main() {   @f(" in out and "// keep me" in out
    assert "  %3 = nn.softmax(%2, axis=0);" in out
    assert editing.format_range(out, URI, LineIndex(out), window) == []


def test_formatting_keeps_comments_and_is_refused_with_errors() -> None:
    text = SAMPLE.replace("  let %y", "  // why\n  let %y")
    (edit,) = editing.format_document(text, URI, LineIndex(text))
    assert "  // why\n  let %y" in edit.new_text
    with pytest.raises(editing.FormattingRefused, match="has errors"):
        editing.format_document(text + "def @", URI, LineIndex(text))
