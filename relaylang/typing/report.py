"""Type errors worded for people: what was expected, what was found, and where
the expectation came from (a note at the parameter or annotation)."""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple, Union

from ..ir.diagnostics import DiagnosticContext, Note
from ..ir.expr import Constructor, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.span import Span
from ..ir.text import type_text as ir_type_text
from ..ir.types import Type
from .solver import Solver


def type_text(solver: Solver, t: Type) -> str:
    return ir_type_text(solver.resolve(t))


class Use(NamedTuple):
    """Child `index` of `parent`, where it is written. Finding that in the source text
    costs a search of the parent's text, so a check records this pair and `Reporter.span`
    looks the span up only when an error is reported: a program that type-checks
    never searches (inference stays linear in program size)."""

    parent: Expr
    index: int


Site = Union[Span, Use, None]


class LazyNote(NamedTuple):
    """A note whose span is a `Site`, resolved like an error's (`Reporter.note`)."""

    message: str
    site: Site


class Reporter:
    def __init__(self, diag: DiagnosticContext, solver: Solver, sources: dict[str, str]):
        self.diag = diag
        self.solver = solver
        self.sources = sources
        self._line_starts: dict[str, list[int]] = {}

    def at(self, parent: Expr, index: int) -> Span | None:
        """The span of child `index` of `parent` as written there (see `use_span`)."""
        return use_span(parent, index, self.sources, self._line_starts)

    def span(self, site: Site) -> Span | None:
        """The span a site stands for (a `Use` is searched for now, on the error path)."""
        return self.at(site.parent, site.index) if isinstance(site, Use) else site

    def note(self, note: Note | LazyNote) -> Note:
        return Note(note.message, self.span(note.site)) if isinstance(note, LazyNote) else note

    def error(self, message: str, span: Span | None, *notes: Note,
              code: str | None = None) -> None:
        """Report an error; `code` is its class from ir/diagnostic_codes.py."""
        self.diag.error(message, span, *notes, code=code)

    def mismatch(self, what: str, expected: Type, actual: Type, detail: str,
                 span: Span | None, *notes: Note) -> None:
        self.error(f"type mismatch in {what}: expected {type_text(self.solver, expected)}, "
                   f"found {type_text(self.solver, actual)} ({detail.strip()})", span, *notes,
                   code="type-mismatch")

    @staticmethod
    def callee_name(callee: Expr) -> str:
        if isinstance(callee, GlobalVar):
            return f"`@{callee.name_hint}`"
        if isinstance(callee, Var):
            return f"`%{callee.name_hint}`"
        if isinstance(callee, Constructor):
            return f"constructor `{callee.name}`"
        return "the called function"

    @staticmethod
    def definition_note(callee: Expr, mod: IRModule) -> tuple[Note, ...]:
        if isinstance(callee, GlobalVar) and callee in mod.functions:
            fn = mod.functions[callee]
            if fn.span is not None:
                return (Note(f"`@{callee.name_hint}` is defined here", fn.span),)
        if isinstance(callee, Constructor) and callee.span is not None:
            return (Note(f"`{callee.name}` is declared here", callee.span),)
        return ()

    @staticmethod
    def param_note(callee: Expr, index: int, mod: IRModule) -> tuple[Note, ...]:
        if isinstance(callee, GlobalVar) and callee in mod.functions:
            params = mod.functions[callee].params
            if index < len(params) and params[index].span is not None:
                p = params[index]
                return (Note(f"parameter `%{p.name_hint}` of `@{callee.name_hint}` is declared "
                             "here", p.span),)
        return ()


_SHARED_LEAVES = (Var, GlobalVar, Constructor)


def _token(node: Expr) -> str:
    if isinstance(node, Var):
        return "%" + node.name_hint
    if isinstance(node, GlobalVar):
        return "@" + node.name_hint
    return node.name


def use_span(parent: Expr, index: int, sources: dict[str, str],
             line_starts: dict[str, list[int]] | None = None) -> Span | None:
    """Where `child` is written inside `parent`.

    A variable, global or constructor is one node shared by all its uses, and its
    span is where it was defined; a type error at a use should point at the use.
    Only on the error path, this finds the use in the source text of the parent:
    the k-th textual occurrence of the name, k counting earlier uses of the same
    node among the parent's children. Nested sub-expressions that mention the same
    name first can make it pick a neighbouring occurrence of that name.
    """
    children = parent.children()
    child = children[index]
    if not isinstance(child, _SHARED_LEAVES):
        return child.span or parent.span
    span = parent.span
    text = sources.get(span.source_name) if span is not None else None
    if text is None:
        return child.span
    starts = _line_starts(text, span.source_name, line_starts)
    start = starts[min(span.line - 1, len(starts) - 1)] + span.column - 1
    # To the end of the parent's last line: a parent's span may stop short of a trailing
    # variable, whose own span (its definition) cannot be used to extend it.
    end = starts[span.end_line] if span.end_line < len(starts) else len(text) + 1
    token = _token(child)
    pattern = re.compile(r"(?<![A-Za-z0-9_/.%@])" + re.escape(token) + r"(?![A-Za-z0-9_/])")
    hits = [m.start() for m in pattern.finditer(text, start, max(end, start))]
    if not hits:
        return span
    k = sum(1 for c in children[:index] if c is child)
    if isinstance(parent, Function):
        hits = hits[-1:]       # a function's own parameters come first; its body is last
    pos = hits[min(k, len(hits) - 1)]
    line = bisect_right(starts, pos)
    column = pos - starts[line - 1] + 1
    return Span(span.source_name, line, column, line, column + len(token))


def _line_starts(text: str, name: str, cache: dict[str, list[int]] | None) -> list[int]:
    """Offsets of the first character of each line of `text` (one past each newline)."""
    starts = cache.get(name) if cache is not None else None
    if starts is None:
        starts = [0]
        pos = text.find("\n")
        while pos >= 0:
            starts.append(pos + 1)
            pos = text.find("\n", pos + 1)
        if cache is not None:
            cache[name] = starts
    return starts

