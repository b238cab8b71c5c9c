"""Outline queries: document symbols, folding ranges, workspace symbols.

Document symbols nest: constructors under their type, local functions
(`let %f = fn ...`) under the global or local function whose text holds them.
Lines are 1-based, as everywhere in relaylang.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ...ir.expr import Function, If, Let, Match
from ...ir.span import Span
from ...ir.text import type_text
from ...ir.traverse import post_order
from .docs import constructor_text

if TYPE_CHECKING:
    from ..analysis import DefinitionState, DocumentAnalysis


@dataclass
class DocSymbol:
    name: str
    kind: str                 # function, type, constructor, variable
    span: Span                # the whole definition
    selection_span: Span      # its name
    detail: str | None = None
    children: list[DocSymbol] = field(default_factory=list)


class WorkspaceSymbol(NamedTuple):
    name: str
    kind: str                 # function, type, constructor
    uri: str
    span: Span
    container: str | None


def _last_line(a: DocumentAnalysis, state: DefinitionState) -> int:
    """The range's last line that is not blank (a definition's extent for outlines)."""
    lines = a.source.lines if a.source is not None else a.text.split("\n")
    end = state.range.end_line
    while end > state.range.start_line and not lines[end - 1].strip():
        end -= 1
    return end


def extent(a: DocumentAnalysis, state: DefinitionState) -> Span:
    lines = a.source.lines if a.source is not None else a.text.split("\n")
    end = _last_line(a, state)
    return Span(a.uri, state.range.start_line, 1, end, len(lines[end - 1]) + 1)


def document_symbols(a: DocumentAnalysis) -> list[DocSymbol]:
    out = []
    for name, state in a.definitions.items():
        target = next((o for o in a.index.of_symbol(_symbol_of(state)) if o.is_definition),
                      None)
        whole = extent(a, state)
        selection = target.span if target is not None else Span(
            a.uri, whole.line, 1, whole.line, 1)
        if state.range.kind == "type":
            sym = DocSymbol(name, "type", whole, selection, None, _constructors(a, name))
        else:
            detail = target.type_text if target is not None else None
            sym = DocSymbol(name, "function", whole, selection, detail, _local_functions(a, state))
        out.append(sym)
    return out


def _symbol_of(state: DefinitionState) -> str:
    name = state.range.name
    return "global:" + name[1:] if state.range.kind == "function" else "type:" + name


def _constructors(a: DocumentAnalysis, type_name: str) -> list[DocSymbol]:
    ctors = {c.name: c for d in a.module.type_definitions.values()
             if d.header.name_hint == type_name for c in d.constructors}
    out = []
    for occ in a.index.definitions("constructor"):
        if occ.container == type_name:
            ctor = ctors.get(occ.name)
            detail = constructor_text(ctor) if ctor is not None else None
            out.append(DocSymbol(occ.name, "constructor", occ.span, occ.span, detail))
    return sorted(out, key=lambda s: (s.span.line, s.span.column))


def _local_functions(a: DocumentAnalysis, state: DefinitionState) -> list[DocSymbol]:
    """`let %f = fn ...` in this definition's IR, nested by where their text lies."""
    if not isinstance(state.parsed, Function):
        return []
    found = []
    for node in post_order(state.parsed):
        if isinstance(node, Let) and isinstance(node.value, Function) and \
                node.var.span is not None and node.value.span is not None:
            ty = node.var.checked_type
            var_span = a.line_map.span(node.var.span)     # IR spans: lines as parsed
            found.append(DocSymbol("%" + node.var.name_hint, "function",
                                   var_span.merge(a.line_map.span(node.value.span)), var_span,
                                   type_text(ty) if ty is not None else None))
    found.sort(key=lambda s: (s.span.line, s.span.column))
    return _nest(found)


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and \
        (inner.end_line, inner.end_column) <= (outer.end_line, outer.end_column)


def _nest(symbols: list[DocSymbol]) -> list[DocSymbol]:
    """Symbols sorted by start, as a forest by span containment (a stack, no recursion)."""
    roots: list[DocSymbol] = []
    open_: list[DocSymbol] = []
    for sym in symbols:
        while open_ and not _inside(sym.span, open_[-1].span):
            open_.pop()
        (open_[-1].children if open_ else roots).append(sym)
        open_.append(sym)
    return roots


def folding_ranges(a: DocumentAnalysis) -> list[tuple[int, int]]:
    """(start_line, end_line) pairs, 1-based: each definition, and the multi-line functions,
    ifs and matches inside those that parsed."""
    out: set[tuple[int, int]] = set()
    for state in a.definitions.values():
        end = _last_line(a, state)
        if end > state.range.start_line:
            out.add((state.range.start_line, end))
        if isinstance(state.parsed, Function):
            for node in post_order(state.parsed):
                if isinstance(node, (Function, If, Match)) and node.span is not None and \
                        node.span.end_line > node.span.line:
                    span = a.line_map.span(node.span)     # IR spans: lines as parsed
                    out.add((span.line, span.end_line))
    return sorted(out)


def _matches(query: str, name: str) -> bool:
    """Case-insensitive subsequence match, as editors' symbol pickers do."""
    it = iter(name.lower())
    return all(ch in it for ch in query.lower())


def workspace_symbols(analyses: Iterable[DocumentAnalysis], query: str) -> list[WorkspaceSymbol]:
    """Globals, types and constructors defined in `analyses` whose names match `query`."""
    kinds = {"global": "function", "type": "type", "constructor": "constructor"}
    out = []
    for a in analyses:
        for occ in a.index.definitions():
            kind = kinds.get(occ.kind)
            if kind is not None and _matches(query.lstrip("@"), occ.name.lstrip("@")):
                container = occ.container if occ.container != occ.name else None
                out.append(WorkspaceSymbol(occ.name, kind, a.uri, occ.span, container))
    return sorted(out, key=lambda s: (s.name.lower(), s.uri, s.span.line))
