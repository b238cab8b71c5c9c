"""The texts the session's IR was parsed from, for showing diagnostics.

Each input is parsed on its own, inside the session module (syntax/parser.py
`parse_in_module`), under a source name of its own (`<input 3>`), so spans in a
definition made three inputs ago still point into the text it came from. When
shown, the input being answered is called `<input>` (or the file it was loaded
from), an older one by its number or its file. Definitions re-read together with a
later input (redefine.py) are parsed from one combined text; its lines are mapped
back to the input or file each came from.
"""
from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..ir.diagnostics import Diagnostic, render_all

if TYPE_CHECKING:
    from ..ir.span import Span
    from .redefine import Combined

INPUT_NAME = "<input>"


class Sources:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}          # source name -> text
        self._shown: dict[str, str] = {}          # source name -> name shown when older
        self._combined: dict[str, Combined] = {}  # combined source name -> its line map
        self.current = ""
        self._current_shown = INPUT_NAME

    def add(self, text: str, shown: str = INPUT_NAME) -> str:
        """Register the text of a new input; its source name for the parser."""
        name = f"<input {len(self._texts) + 1}>"
        self._texts[name] = text
        self._shown[name] = name if shown == INPUT_NAME else shown
        self.current = name
        self._current_shown = shown
        return name

    def add_combined(self, combined: Combined) -> str:
        """Register a combined text (of the current input and re-read definitions);
        its source name for the parser. Its spans are shown in the original texts."""
        name = f"{self.current} + re-read definitions"
        self._combined[name] = combined
        return name

    def text(self, name: str) -> str:
        return self._texts[name]

    def shown_name(self, name: str) -> str:
        return self._current_shown if name == self.current else self._shown.get(name, name)

    def original(self, span: Span | None) -> Span | None:
        """`span` in the input it was read from (a combined text's line mapped back)."""
        combined = self._combined.get(span.source_name) if span is not None else None
        if combined is None:
            return span
        for seg in combined.segments:
            if seg.first <= span.line < seg.first + seg.count:
                shift = seg.orig_first - seg.first
                return span._replace(source_name=seg.source_name, line=span.line + shift,
                                     end_line=span.end_line + shift)
        return span

    def _move(self, span: Span | None) -> Span | None:
        if span is None or span.source_name not in self._texts:
            return span
        return span._replace(source_name=self.shown_name(span.source_name))

    def render(self, diagnostics: list[Diagnostic], color: bool = False) -> str:
        located = [replace(d, span=self.original(d.span),
                           notes=tuple(replace(n, span=self.original(n.span)) for n in d.notes))
                   for d in diagnostics]
        moved = [replace(d, span=self._move(d.span),
                         notes=tuple(replace(n, span=self._move(n.span)) for n in d.notes))
                 for d in located]
        texts: dict[str, str] = {}
        for d in located:
            for span in [d.span] + [n.span for n in d.notes]:
                if span is not None and span.source_name in self._texts:
                    texts[self.shown_name(span.source_name)] = self._texts[span.source_name]
        return render_all(moved, texts, color=color)
