"""Editing help computed from a document's analysis: semantic tokens, inlay hints,
formatting edits and code actions. Pure functions of (analysis, positions); no pygls.

Semantic tokens use LSP's standard token types, so every editor colours them
without a custom theme; the index's kinds map onto them as

    global -> function          op -> function + defaultLibrary   type -> type
    local  -> variable          graph id -> variable + readonly   constructor -> enumMember
    attribute -> property       number -> number                  (+ declaration at definitions)
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from lsprotocol import types as lsp

from relaylang.ir.span import Span

from .positions import LineIndex

TOKEN_TYPES = ["function", "variable", "type", "enumMember", "property", "number"]
TOKEN_MODIFIERS = ["declaration", "readonly", "defaultLibrary"]
LEGEND = lsp.SemanticTokensLegend(token_types=TOKEN_TYPES, token_modifiers=TOKEN_MODIFIERS)

_KIND_TOKEN: dict[str, tuple[str, tuple[str, ...]]] = {
    "global": ("function", ()), "op": ("function", ("defaultLibrary",)),
    "local": ("variable", ()), "graph": ("variable", ("readonly",)),
    "type": ("type", ()), "constructor": ("enumMember", ()),
    "attribute": ("property", ()), "number": ("number", ()),
}


def _modifier_bits(names: Iterable[str]) -> int:
    return sum(1 << TOKEN_MODIFIERS.index(n) for n in names)


def semantic_tokens(occurrences: Iterable[Any], index: LineIndex) -> list[int]:
    """LSP's relative encoding (delta line, delta start, length, type, modifiers) of every
    one-line occurrence, in document order; an occurrence overlapping the previous is dropped."""
    data: list[int] = []
    prev_line, prev_start, prev_end = 0, 0, -1
    ordered = sorted(occurrences, key=lambda o: (o.span.line, o.span.column))
    for occ in ordered:
        span, kind = occ.span, _KIND_TOKEN.get(occ.kind)
        if kind is None or span.line != span.end_line or span.end_column <= span.column:
            continue
        start = index.position(span.line, span.column)
        end = index.position(span.line, span.end_column)
        if start.line == prev_line and start.character < prev_end:
            continue
        modifiers = kind[1] + (("declaration",) if occ.is_definition else ())
        delta_line = start.line - prev_line
        delta_start = start.character - prev_start if delta_line == 0 else start.character
        data += [delta_line, delta_start, end.character - start.character,
                 TOKEN_TYPES.index(kind[0]), _modifier_bits(modifiers)]
        prev_line, prev_start, prev_end = start.line, start.character, end.character
    return data


# ---------------------------------------------------------------- types of bindings


def _next_char_after(text_lines: list[str], span: Span) -> str:
    """The first non-blank character after `span` on its line or the following ones."""
    line0, col0 = span.end_line - 1, span.end_column - 1
    while line0 < len(text_lines):
        rest = text_lines[line0][col0:].lstrip()
        if rest:
            return rest[0]
        line0, col0 = line0 + 1, 0
    return ""


def unannotated(bindings: Iterable[Any], index: LineIndex) -> list[Any]:
    """Bindings with an inferred type and no `: type` written after the name (a `{`
    after a parameter starts its attributes, before any annotation: not handled)."""
    return [b for b in bindings
            if b.type_text and _next_char_after(index.lines, b.span) not in (":", "{")]


def _inside(span: Span, index: LineIndex, window: lsp.Range | None) -> bool:
    if window is None:
        return True
    at = index.position(span.line, span.column)
    return (window.start.line, window.start.character) <= (at.line, at.character) <= \
        (window.end.line, window.end.character)


def inlay_hints(bindings: Iterable[Any], index: LineIndex,
                window: lsp.Range | None = None) -> list[lsp.InlayHint]:
    """`: type` after each binding whose type is not written out."""
    return [lsp.InlayHint(position=index.position(b.span.end_line, b.span.end_column),
                          label=f": {b.type_text}", kind=lsp.InlayHintKind.Type,
                          padding_left=False, padding_right=True)
            for b in unannotated(bindings, index) if _inside(b.span, index, window)]


def annotation_actions(bindings: Iterable[Any], index: LineIndex, uri: str,
                       window: lsp.Range) -> list[lsp.CodeAction]:
    """"Insert inferred type annotation" for unannotated `let`/parameter/pattern variables
    (graph ids `%0` cannot carry an annotation in Relay) on the lines of `window`."""
    actions: list[lsp.CodeAction] = []
    for b in unannotated(bindings, index):
        if b.kind != "local" or not window.start.line <= b.span.line - 1 <= window.end.line:
            continue
        at = index.position(b.span.end_line, b.span.end_column)
        edit = lsp.TextEdit(range=lsp.Range(at, at), new_text=f": {b.type_text}")
        actions.append(lsp.CodeAction(
            title=f"Insert inferred type annotation `%{b.name.lstrip('%')}: {b.type_text}`",
            kind=lsp.CodeActionKind.RefactorRewrite,
            edit=lsp.WorkspaceEdit(changes={uri: [edit]})))
    return actions


# ---------------------------------------------------------------- formatting

_ITEM = re.compile(r"^(def @|type |extern type )([A-Za-z_][A-Za-z0-9_/.]*)")
_COMMENT_OR_BLANK = re.compile(r"^\s*(//.*|/\*.*\*/\s*)?$")
_COMMENT = re.compile(r"//|/\*")


class FormattingRefused(Exception):
    """The text cannot be formatted without losing something (the message says what)."""


def _format(text: str, source_name: str) -> str:
    from relaylang.ir.diagnostics import DiagnosticError
    from relaylang.syntax.format import format_text
    try:
        formatted = format_text(text, source_name=source_name)
    except DiagnosticError as e:
        raise FormattingRefused("the document has errors; fix them to format it") from e
    return formatted.text


def _items(lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level definition's lines: (first, last), 0-based inclusive; the comments and
    blank lines before the next definition are not part of it."""
    starts = [(i, m.group(0)) for i, line in enumerate(lines) if (m := _ITEM.match(line))]
    items: dict[str, tuple[int, int]] = {}
    for k, (first, name) in enumerate(starts):
        last = (starts[k + 1][0] if k + 1 < len(starts) else len(lines)) - 1
        while last > first and _COMMENT_OR_BLANK.match(lines[last]):
            last -= 1
        items[name] = (first, last)
    return items


def _comment_count(lines: list[str]) -> int:
    return sum(len(_COMMENT.findall(line)) for line in lines)


def format_document(text: str, source_name: str, index: LineIndex) -> list[lsp.TextEdit]:
    """One edit replacing the whole text by the printer's layout (none if already so).
    Refused when the formatter would drop comments written inside a definition."""
    formatted = _format(text, source_name)
    if formatted == text:
        return []
    old_lines, new_lines = text.split("\n"), formatted.split("\n")
    for name, (first, last) in _items(old_lines).items():
        new = _items(new_lines).get(name)
        kept = _comment_count(new_lines[new[0]:new[1] + 1]) if new else 0
        if _comment_count(old_lines[first:last + 1]) > kept:
            raise FormattingRefused(f"formatting would drop comments inside `{name}`")
    return [lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), index.end()), new_text=formatted)]


def format_range(text: str, source_name: str, index: LineIndex,
                 window: lsp.Range) -> list[lsp.TextEdit]:
    """Edits reformatting the top-level definitions whose lines `window` touches; the rest
    of the text (and the comments between definitions) stays as written."""
    formatted = _format(text, source_name)
    old_lines, new_lines = text.split("\n"), formatted.split("\n")
    new_items = _items(new_lines)
    edits: list[lsp.TextEdit] = []
    for name, (first, last) in _items(old_lines).items():
        if last < window.start.line or first > window.end.line or name not in new_items:
            continue
        new_first, new_last = new_items[name]
        old_block, new_block = old_lines[first:last + 1], new_lines[new_first:new_last + 1]
        if old_block == new_block:
            continue
        if _comment_count(old_block) > _comment_count(new_block):
            raise FormattingRefused(f"formatting would drop comments inside `{name}`")
        end = lsp.Position(last, index.units_before(last, len(old_lines[last])))
        edits.append(lsp.TextEdit(range=lsp.Range(lsp.Position(first, 0), end),
                                  new_text="\n".join(new_block)))
    return edits
