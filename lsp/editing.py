"""Editing help as LSP objects: semantic tokens, inlay hints, formatting edits and code
actions. The decisions are relaylang/ide/editing.py's (which bindings lack a written type,
what formatting changes); here they become LSP positions and edits. No pygls.

Semantic tokens use LSP's standard token types, so every editor colours them
without a custom theme; the index's kinds map onto them as

    global -> function          op -> function + defaultLibrary   type -> type
    local  -> variable          graph id -> variable + readonly   constructor -> enumMember
    attribute -> property       number -> number                  (+ declaration at definitions)
"""
from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lsprotocol import types as lsp

from relaylang.ide.editing import FormattingRefused, format_lines, format_whole, unannotated
from relaylang.ir.span import Span

from .positions import LineIndex

__all__ = ["LEGEND", "TOKEN_MODIFIERS", "TOKEN_TYPES", "FormattingRefused", "annotation_actions",
           "format_document", "format_range", "inlay_hints", "semantic_tokens"]

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
            for b in unannotated(bindings, index.lines) if _inside(b.span, index, window)]


def annotation_actions(bindings: Iterable[Any], index: LineIndex, uri: str,
                       window: lsp.Range) -> list[lsp.CodeAction]:
    """"Insert inferred type annotation" for unannotated `let`/parameter/pattern variables
    (graph ids `%0` cannot carry an annotation in Relay) on the lines of `window`."""
    actions: list[lsp.CodeAction] = []
    for b in unannotated(bindings, index.lines):
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

def format_document(text: str, source_name: str, index: LineIndex) -> list[lsp.TextEdit]:
    """One edit replacing the whole text by the printer's layout (none if already so).
    FormattingRefused when the text has errors or a comment would have no place."""
    formatted = format_whole(text, source_name)
    if formatted is None:
        return []
    return [lsp.TextEdit(range=lsp.Range(lsp.Position(0, 0), index.end()), new_text=formatted)]


def format_range(text: str, source_name: str, index: LineIndex,
                 window: lsp.Range) -> list[lsp.TextEdit]:
    """Edits reformatting the top-level definitions whose lines `window` touches; the rest
    of the text (and the comments between definitions) stays as written."""
    edits = []
    for first, last, new_text in format_lines(text, source_name, window.start.line,
                                              window.end.line):
        end = lsp.Position(last, index.units_before(last, len(index.lines[last])))
        edits.append(lsp.TextEdit(range=lsp.Range(lsp.Position(first, 0), end),
                                  new_text=new_text))
    return edits
