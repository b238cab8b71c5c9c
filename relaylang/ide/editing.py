"""Editing help over a document's text and analysis: which bindings lack a written type
(inlay hints and "insert annotation" actions), and formatting the whole text or the
top-level definitions some lines touch, refused where the formatter would drop comments.

Lines are 0-based here, as editors count them; spans are the IR's (1-based).
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from ..ir.span import Span

_ITEM = re.compile(r"^(def @|type |extern type )([A-Za-z_][A-Za-z0-9_/.]*)")
_COMMENT_OR_BLANK = re.compile(r"^\s*(//.*|/\*.*\*/\s*)?$")
_COMMENT = re.compile(r"//|/\*")


# ---------------------------------------------------------------- types of bindings


def _next_char_after(lines: list[str], span: Span) -> str:
    """The first non-blank character after `span` on its line or the following ones."""
    line0, col0 = span.end_line - 1, span.end_column - 1
    while line0 < len(lines):
        rest = lines[line0][col0:].lstrip()
        if rest:
            return rest[0]
        line0, col0 = line0 + 1, 0
    return ""


def unannotated(bindings: Iterable[Any], lines: list[str]) -> list[Any]:
    """Bindings (occurrences) with an inferred type and no `: type` written after the name
    in `lines`, the text's lines (a `{` after a parameter starts its attributes, before
    any annotation: not handled)."""
    return [b for b in bindings
            if b.type_text and _next_char_after(lines, b.span) not in (":", "{")]


# ---------------------------------------------------------------- formatting


class FormattingRefused(Exception):
    """The text cannot be formatted without losing something (the message says what)."""


def _format(text: str, source_name: str) -> str:
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.format import format_text
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


def format_whole(text: str, source_name: str) -> str | None:
    """The text in the printer's layout, or None if it is so already. FormattingRefused when
    the formatter would drop comments written inside a definition, or the text has errors."""
    formatted = _format(text, source_name)
    if formatted == text:
        return None
    old_lines, new_lines = text.split("\n"), formatted.split("\n")
    new_items = _items(new_lines)
    for name, (first, last) in _items(old_lines).items():
        new = new_items.get(name)
        kept = _comment_count(new_lines[new[0]:new[1] + 1]) if new else 0
        if _comment_count(old_lines[first:last + 1]) > kept:
            raise FormattingRefused(f"formatting would drop comments inside `{name}`")
    return formatted


def format_lines(text: str, source_name: str, first_line: int,
                 last_line: int) -> list[tuple[int, int, str]]:
    """(first, last, new text) of each top-level definition that lines `first_line` to
    `last_line` touch and the formatter changes: its lines are replaced by the new text.
    The rest of the text (and the comments between definitions) stays as written."""
    formatted = _format(text, source_name)
    old_lines, new_lines = text.split("\n"), formatted.split("\n")
    new_items = _items(new_lines)
    out: list[tuple[int, int, str]] = []
    for name, (first, last) in _items(old_lines).items():
        if last < first_line or first > last_line or name not in new_items:
            continue
        new_first, new_last = new_items[name]
        old_block, new_block = old_lines[first:last + 1], new_lines[new_first:new_last + 1]
        if old_block == new_block:
            continue
        if _comment_count(old_block) > _comment_count(new_block):
            raise FormattingRefused(f"formatting would drop comments inside `{name}`")
        out.append((first, last, "\n".join(new_block)))
    return out
