"""Parse a document and record where every name is written and what it resolves to.

The IR keeps the span of a variable, global or constructor where it is defined
(one node is shared by all its uses), so the positions of uses exist only while
the parser runs. `RecordingState` is the parser's own `ParseState` that also
notes each binding and each lookup with the span of its token; the parse itself
is the parser's, with the same per-definition error recovery as
`parse_with_diagnostics` (relaylang/syntax/parser.py).

Each record is a `NameRecord`: where, what kind, definition or use, and a symbol
key. Locals are keyed by their `Var` object (shadowing and `%x` bound twice are
told apart exactly as the parser resolved them), graph ids by a fresh key per
binding (ids restart in every definition), globals, types and constructors by
name.
"""
from __future__ import annotations

import itertools
from typing import Any, NamedTuple

from ...ir.diagnostics import Diagnostic
from ...ir.expr import Constructor, Expr, Function, Var
from ...ir.module import IRModule
from ...ir.span import Span
from ...syntax import parser as relay_parser
from ...syntax.builder_state import ParseState
from .index import Occurrence

# Symbol keys are unique across analyses of all documents, so occurrences kept from an
# earlier analysis never collide with new ones.
_fresh = itertools.count()


class NameRecord(NamedTuple):
    span: Span
    kind: str            # local, graph, global, type, constructor
    is_definition: bool
    symbol_id: str
    name: str            # the token as written: %x, %0, @f, List, Cons
    target: Any          # Var for locals, the bound Expr for graph ids, else None


class _FreeVars(dict):
    """`free_var %x` binds by item assignment; record it as a definition."""

    def __init__(self, state: RecordingState):
        super().__init__()
        self._state = state

    def __setitem__(self, name: str, var: Var) -> None:
        super().__setitem__(name, var)
        if var.span is not None:
            self._state.record(var.span, "local", True, self._state.local_id(var),
                               "%" + name, var)


class RecordingState(ParseState):
    def __init__(self, source_name: str, text: str):
        super().__init__(source_name, text)
        self.records: list[NameRecord] = []
        self.free_vars = _FreeVars(self)
        self._local_ids: dict[int, str] = {}
        self._vars: list[Var] = []           # keeps ids in _local_ids from being reused
        self._graph_ids: dict[str, str] = {}

    def record(self, span: Span, kind: str, is_definition: bool, symbol_id: str, name: str,
               target: Any = None) -> None:
        self.records.append(NameRecord(span, kind, is_definition, symbol_id, name, target))

    def local_id(self, var: Var) -> str:
        key = self._local_ids.get(id(var))
        if key is None:
            key = self._local_ids[id(var)] = f"local:{next(_fresh)}"
            self._vars.append(var)
        return key

    # ------------------------------------------------------------ locals
    def bind_local(self, var: Var, span: Span) -> None:
        super().bind_local(var, span)
        self.record(span, "local", True, self.local_id(var), "%" + var.name_hint, var)

    def lookup_local(self, name: str, span: Span) -> Var:
        var = super().lookup_local(name, span)
        self.record(span, "local", False, self.local_id(var), "%" + name, var)
        return var

    def bind_graph(self, text: str, value: Expr, span: Span) -> None:
        super().bind_graph(text, value, span)
        key = self._graph_ids[text] = f"graph:{next(_fresh)}"
        self.record(span, "graph", True, key, text, value)

    def lookup_graph(self, text: str, span: Span) -> Expr:
        node = super().lookup_graph(text, span)
        key = self._graph_ids.get(text)
        if key is None:       # used before it is bound: a symbol of its own
            key = self._graph_ids[text] = f"graph:{next(_fresh)}"
        self.record(span, "graph", False, key, text, node)
        return node

    def reset_scopes(self) -> None:
        super().reset_scopes()
        self._graph_ids.clear()

    # ------------------------------------------------------------ globals and types
    def global_var(self, name: str, span: Span) -> Any:
        gv = super().global_var(name, span)
        self.record(span, "global", False, "global:" + name, "@" + name)
        return gv

    def define_global(self, name: str, fn: Function, span: Span) -> None:
        super().define_global(name, fn, span)
        self._graph_ids.clear()
        self.record(span, "global", True, "global:" + name, "@" + name)

    def global_type(self, name: str, span: Span, definition: bool = False) -> Any:
        gtv = super().global_type(name, span, definition)
        self.record(span, "type", definition, "type:" + name, name)
        return gtv

    def declare_constructor(self, ctor: Constructor) -> bool:
        ok = super().declare_constructor(ctor)
        if ok and ctor.span is not None:
            self.record(ctor.span, "constructor", True, "constructor:" + ctor.name, ctor.name)
        return ok


def parse_recording(text: str, source_name: str
                    ) -> tuple[IRModule, list[Diagnostic], RecordingState]:
    """`parse_with_diagnostics`, plus the name records of the parse."""
    state = RecordingState(source_name, text)
    module, diagnostics = relay_parser.parse_with_diagnostics(text, source_name, state=state)
    return module, diagnostics, state


def records_to_occurrences(records: list[NameRecord], container: str, typed: bool,
                           state: RecordingState) -> list[Occurrence]:
    """The parser's name records as occurrences, with the types inference set (if `typed`)."""
    out = []
    for rec in records:
        ty = None
        if rec.kind == "global":
            gv = state.globals.get(rec.name[1:])
            ty = gv.checked_type if gv is not None else None
        elif typed and rec.target is not None:
            ty = rec.target.checked_type
        out.append(Occurrence(rec.span, rec.name, rec.kind, rec.is_definition, rec.symbol_id,
                              type_of=ty, container=container))
    return out
