"""The symbol index of one document: every name occurrence, and who defines what.

An `Occurrence` is one token of the text that names something (a local, a graph
id, a global, a type, a constructor, an op, an attribute key, a number), with
its span (1-based line and column in code points, end exclusive, one line) and
a `symbol_id` shared by all occurrences of the same thing. `SymbolIndex` answers
"what is at this position", "where is it defined", "where is it used" with
per-line tables built once per analysis, so a query never rescans the text.

Types are printed lazily: a 2,000-line model has thousands of occurrences and
most are never hovered.
"""
from __future__ import annotations

import bisect
import operator
from collections.abc import Iterable
from typing import Any

from ...ir.span import Span
from ...ir.text import type_text as _type_text

_position = operator.attrgetter("span.line", "span.column")

KINDS = ("local", "graph", "global", "type", "constructor", "op", "attribute", "number")
BINDING_KINDS = ("local", "graph")


class Occurrence:
    """One name token. `type_text` is the inferred type as Relay text (printed on first use).

    `container` is the top-level definition the token sits in (`@main`, `List`), so
    call hierarchy and symbol outlines need not search for it.
    """

    __slots__ = (
        "_type",
        "_type_text",
        "container",
        "is_definition",
        "kind",
        "name",
        "span",
        "symbol_id",
    )

    def __init__(self, span: Span, name: str, kind: str, is_definition: bool,
                 symbol_id: str | None, type_text: str | None = None, *,
                 type_of: Any = None, container: str | None = None):
        self.span = span
        self.name = name
        self.kind = kind
        self.is_definition = is_definition
        self.symbol_id = symbol_id
        self.container = container
        self._type = type_of
        self._type_text = type_text

    @property
    def type_text(self) -> str | None:
        if self._type_text is None and self._type is not None:
            self._type_text = _type_text(self._type)
            self._type = None
        return self._type_text

    @property
    def type_of(self) -> Any:
        """The inferred `Type` object when the text has not been printed yet (else None)."""
        return self._type

    def shifted(self, lines: int, source_name: str) -> Occurrence:
        """The same occurrence `lines` lines further down (a definition moved by an edit)."""
        s = self.span
        occ = Occurrence(Span(source_name, s.line + lines, s.column, s.end_line + lines,
                              s.end_column), self.name, self.kind, self.is_definition,
                         self.symbol_id, self._type_text, type_of=self._type,
                         container=self.container)
        return occ

    def with_type(self, type_text: str | None, type_of: Any) -> Occurrence:
        return Occurrence(self.span, self.name, self.kind, self.is_definition, self.symbol_id,
                          type_text, type_of=type_of, container=self.container)

    def __repr__(self) -> str:
        d = " def" if self.is_definition else ""
        return f"<{self.kind}{d} {self.name} at {self.span.line}:{self.span.column}>"


class SymbolIndex:
    def __init__(self, occurrences: Iterable[Occurrence]):
        self.occurrences: list[Occurrence] = sorted(occurrences, key=_position)
        self._by_line: dict[int, list[Occurrence]] = {}
        self._by_symbol: dict[str, list[Occurrence]] = {}
        self._definitions: dict[str, Occurrence] = {}
        for occ in self.occurrences:
            self._by_line.setdefault(occ.span.line, []).append(occ)
            if occ.symbol_id is None:
                continue
            self._by_symbol.setdefault(occ.symbol_id, []).append(occ)
            if occ.is_definition:
                self._definitions.setdefault(occ.symbol_id, occ)
        self._starts: dict[int, list[int]] = {}     # per line, on first query

    def at(self, line: int, col: int) -> Occurrence | None:
        """The occurrence under the cursor at (line, col), 1-based code points. A cursor
        just after a token (`%x|`) still names it, as editors expect, unless another token
        starts right there."""
        occs = self._by_line.get(line)
        if not occs:
            return None
        starts = self._starts.get(line)
        if starts is None:
            starts = self._starts[line] = [o.span.column for o in occs]
        i = bisect.bisect_right(starts, col) - 1
        if i < 0:
            return None
        occ = occs[i]
        if col < occ.span.end_column or (col == occ.span.end_column):
            return occ
        return None

    def definition_of(self, occ: Occurrence) -> Occurrence | None:
        if occ.symbol_id is None:
            return None
        return self._definitions.get(occ.symbol_id)

    def references_of(self, occ: Occurrence, include_declaration: bool = True) -> list[Occurrence]:
        if occ.symbol_id is None:
            return [occ]
        refs = self._by_symbol.get(occ.symbol_id, [occ])
        return refs if include_declaration else [o for o in refs if not o.is_definition]

    def bindings(self) -> list[Occurrence]:
        """Definitions of locals and graph ids (parameters, lets, pattern variables, `%0 =`)."""
        return [o for o in self.occurrences if o.is_definition and o.kind in BINDING_KINDS]

    def of_symbol(self, symbol_id: str) -> list[Occurrence]:
        return self._by_symbol.get(symbol_id, [])

    def definitions(self, kind: str | None = None) -> list[Occurrence]:
        return [o for o in self._definitions.values() if kind is None or o.kind == kind]
