"""Occurrences the IR itself locates: op names, constructors, numbers, attribute keys.

A call's span starts at its callee's text, so an op or constructor call whose
text starts with the callee's name names it there (an infix `+` does not, and is
skipped). Constants and pattern constructors carry their token's span. Attribute
keys are not kept by the parser; they are found in the text of their own call
(the innermost call claims a key, and only the op's schema fields count, so
`/* ty=... */` comments and function attributes are not mistaken for them).

Walks are `post_order` over each function, and an explicit stack over patterns:
no recursion, whatever the depth.
"""
from __future__ import annotations

import dataclasses
import re
from bisect import bisect_right
from typing import Any

from ... import op as op_registry
from ...ir.expr import Call, Constant, Constructor, Expr, Match, Op, PatternConstructor
from ...ir.span import Span
from ...ir.traverse import post_order
from .index import Occurrence

_ATTR_KEY = re.compile(r"(?<![\w%@./])([A-Za-z_]\w*)[ \t]*=(?!=)")
_NAME_CHAR = re.compile(r"[\w/.]")


class SourceText:
    """The document's text with line starts, for token checks by position."""

    def __init__(self, text: str, source_name: str):
        self.text = text
        self.source_name = source_name
        self.lines = text.split("\n")
        self.line_starts = [0]
        for line in self.lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column - 1

    def position(self, offset: int) -> tuple[int, int]:
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1

    def token_at(self, line: int, column: int, name: str) -> bool:
        """Is `name` written at (line, column), as a whole token?"""
        if not 1 <= line <= len(self.lines):
            return False
        text = self.lines[line - 1]
        if not text.startswith(name, column - 1):
            return False
        after = column - 1 + len(name)
        return after >= len(text) or not _NAME_CHAR.match(text, after)

    def span(self, line: int, column: int, length: int) -> Span:
        return Span(self.source_name, line, column, line, column + length)


def _schema_fields(op_name: str) -> frozenset[str]:
    opdef = op_registry.get_op_def(op_name)
    if opdef is None or opdef.attrs is None:
        return frozenset()
    return frozenset(f.name for f in dataclasses.fields(opdef.attrs))


class IROccurrences:
    """Collects op, constructor, number and attribute occurrences of functions."""

    def __init__(self, source: SourceText):
        self.source = source
        self._fields: dict[str, frozenset[str]] = {}

    def of_function(self, fn: Expr, container: str, typed: bool) -> list[Occurrence]:
        return self.of_nodes(post_order(fn), container, typed)

    def of_nodes(self, nodes: list[Expr], container: str, typed: bool) -> list[Occurrence]:
        """Occurrences located by `nodes`, given in post-order (inner calls first, so the
        innermost call claims an attribute key)."""
        out: list[Occurrence] = []
        seen: set[tuple[int, int]] = set()
        claimed: set[int] = set()
        for node in nodes:
            kind = type(node)
            if kind is Call:
                self._call(node, container, typed, out, seen, claimed)
            elif kind is Constant:
                self._number(node, container, typed, out)
            elif kind is Match:
                self._patterns(node, container, out)
        return out

    def _call(self, call: Call, container: str, typed: bool, out: list[Occurrence],
              seen: set[tuple[int, int]], claimed: set[int]) -> None:
        span, callee = call.span, call.op
        if span is None:
            return
        if isinstance(callee, Op):
            name, kind, symbol = callee.name, "op", "op:" + callee.name
        elif isinstance(callee, Constructor):
            name, kind, symbol = callee.name, "constructor", "constructor:" + callee.name
        else:
            return
        where = (span.line, span.column)
        if where not in seen and self.source.token_at(span.line, span.column, name):
            seen.add(where)
            ty = call.checked_type if typed else None
            out.append(Occurrence(self.source.span(span.line, span.column, len(name)), name,
                                  kind, False, symbol, type_of=ty, container=container))
        if kind == "op" and call.attrs is not None:
            self._attributes(call, name, container, out, claimed)

    def _attributes(self, call: Call, op_name: str, container: str, out: list[Occurrence],
                    claimed: set[int]) -> None:
        fields = self._fields.get(op_name)
        if fields is None:
            fields = self._fields[op_name] = _schema_fields(op_name)
        if not fields:
            return
        span, src = call.span, self.source
        start, end = src.offset(span.line, span.column), src.offset(span.end_line, span.end_column)
        for m in _ATTR_KEY.finditer(src.text, start, end):
            key = m.group(1)
            if key not in fields or m.start() in claimed:
                continue
            claimed.add(m.start())
            line, column = src.position(m.start())
            out.append(Occurrence(src.span(line, column, len(key)), key, "attribute", False,
                                  f"attribute:{op_name}:{key}", container=container))

    def _number(self, node: Constant, container: str, typed: bool,
                out: list[Occurrence]) -> None:
        span = node.span
        if span is None or span.line != span.end_line:
            return
        lines = self.source.lines
        if not 1 <= span.line <= len(lines):
            return
        token = lines[span.line - 1][span.column - 1:span.end_column - 1]
        if not token or not (token[0] in "-0123456789" or token.startswith(("inf", "nan"))):
            return      # True/False, or a meta[...] reference
        out.append(Occurrence(span, token, "number", False, None,
                              type_of=node.checked_type if typed else None, container=container))

    def _patterns(self, node: Match, container: str, out: list[Occurrence]) -> None:
        stack: list[Any] = [c.lhs for c in node.clauses]
        while stack:
            p = stack.pop()
            if isinstance(p, PatternConstructor):
                span, name = p.span, p.constructor.name
                if span is not None and self.source.token_at(span.line, span.column, name):
                    out.append(Occurrence(self.source.span(span.line, span.column, len(name)),
                                          name, "constructor", False, "constructor:" + name,
                                          container=container))
            stack.extend(getattr(p, "patterns", ()))
