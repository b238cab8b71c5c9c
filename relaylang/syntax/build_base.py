"""What every group of parser callbacks shares: the parse state, spans, names, errors.

`Builder` (builder.py) is assembled from mixins, one per area of the grammar
(build_types.py, build_patterns.py, build_calls.py, and builder.py's own);
each is a `BuilderBase`, so all of them reach the same `state` and helpers, and
Lark finds every callback on the one `Builder` instance. Also here: the values
that cross those areas (attribute lists, `meta[...]` call attributes).
Mirrors the token helpers of apache/tvm src/relay/parser/parser.cc (spans from
tokens, `Diagnostic::Error` reporting).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..ir.expr import Constructor, Expr, GlobalVar, Op, Var
from ..ir.node import MetaObject
from ..ir.span import Span

if TYPE_CHECKING:
    from .builder_state import ParseState

RESERVED = frozenset("def fn let if else type extern match free_var ref ref_read ref_write".split())
SPECIAL_FLOATS = {"inff", "nanf", "inff16", "inff32", "inff64", "nanf16", "nanf32", "nanf64"}


class AttrList(list):
    """Parsed `key=value` items: (key, value, span of the key)."""


class MetaAttrsArg(Expr):
    """`meta[relay.attrs.X][i]` as the last call argument: the call's attributes."""

    __slots__ = ("obj",)

    def __init__(self, obj: MetaObject, span: Span | None):
        object.__setattr__(self, "obj", obj)
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "checked_type", None)


_new_tuple = tuple.__new__


def span_of(node: Any) -> Span | None:
    """The span a node contributes to an enclosing one. A variable, global, constructor or
    op is one node shared by all its uses, spanning its definition: it contributes none."""
    if isinstance(node, _SHARED_LEAVES):
        return None
    return getattr(node, "span", None)


_SHARED_LEAVES = (Var, GlobalVar, Constructor, Op)


def join_spans(first: Any, last: Any) -> Span | None:
    a, b = span_of(first), span_of(last)
    return a.merge(b) if a is not None else b


class BuilderBase:
    """The helpers of every callback group; `state` is set by `Builder` (one per parse)."""

    state: ParseState

    def _span(self, tok: Any) -> Span:
        # Hot: one call per kept token. `tuple.__new__` skips NamedTuple's Python-level __new__.
        return _new_tuple(Span, (self.state.source_name, tok.line, tok.column, tok.end_line,
                                 tok.end_column))

    def _name(self, tok: Any) -> str:
        """The name of a `%name`/`@name` token; a reserved word there is an error (§2.4)."""
        name = tok.value[1:]
        if name in RESERVED:
            self._reserved_name(tok.value, self._span(tok))
        return name

    def _reserved_name(self, text: str, span: Span) -> None:
        self._error(f"`{text[1:]}` is a reserved word and cannot be a name: `{text}`", span,
                    code="reserved-word")

    def _error(self, message: str, span: Span | None, *, code: str) -> None:
        self.state.diag.error(message, span, code=code)
