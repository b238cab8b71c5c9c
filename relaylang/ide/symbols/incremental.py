"""Re-analysis of one edited graph statement, without parsing or checking the rest.

Models are printed in graph form: one top-level `def @main` of thousands of
`%N = ...;` lines, so an edit nearly always changes one such line of one huge
definition. When the previous analysis was clean and the edit changed exactly
one line, which was and still is a whole statement binding the same `%N`:

    old                                    new
    %7 = nn.dense(%6, %w, units=768);      %7 = nn.dense(%6, %w, units=768) /* x */;

the line alone is parsed (`parse_fragment`, in a state holding the function's
parameters and the graph ids bound above it, so names resolve to the same IR
nodes as in a full parse), and type-checked alone (the nodes it refers to are
typed already and stand in as typed variables). If its type is unchanged,
nothing below it can change type: the function is rebuilt with the new value
in place of the old (`_substitute`, the nodes above the edit keep their types),
and the index keeps every other line's occurrences.

Anything else (another kind of line, a diagnostic, a changed type, a `let` or
nested scope in the function, lines added or removed) returns None, and the
caller runs the full analysis: the result must equal what it would give
(tests/ide/test_ide_incremental.py compares the two over random edits).

After lines without tokens were added or removed (symbols/lines.py) the IR's
spans keep the lines they were parsed at: the line is parsed at its old place
(`LineMap.to_parsed`), so the function's spans stay in one frame, and only its
occurrences are moved to where the line is now.
"""
from __future__ import annotations

import dataclasses
import re
from typing import Any, NamedTuple

from ...ir.expr import Constructor, Expr, Function, GlobalVar, Op, Var
from ...ir.module import IRModule
from ...ir.span import Span
from ...ir.text import type_text
from ...ir.traverse import post_order
from ...ir.types import FuncType
from ...syntax.parser import parse_fragment
from ...typing import check_module
from .check import stand_in
from .index import Occurrence
from .ir import IROccurrences, SourceText
from .parse import NameRecord, RecordingState, records_to_occurrences

_STATEMENT_START = re.compile(r"[ \t]*(%[0-9]+)[ \t]*=")
_DEFINITION_START = re.compile(r"[ \t]*(def|type|extern)\b")


class GraphBinding(NamedTuple):
    """`%N = value;` in a definition: where, the id's symbol key, the bound node."""
    line: int
    name: str
    symbol_id: str
    node: Expr


class StatementPatch(NamedTuple):
    """The edited definition after the patch."""
    name: str
    function: Function
    occurrences: list[Occurrence]
    bindings: list[GraphBinding]


def changed_line(old: list[str], new: list[str]) -> int | None:
    """The 1-based number of the only line that differs (None unless exactly one does)."""
    if len(old) != len(new):
        return None
    changed = None
    for i, (a, b) in enumerate(zip(old, new)):
        if a is not b and a != b:
            if changed is not None:
                return None
            changed = i + 1
    return changed


def patch_statement(previous: Any, source: SourceText) -> StatementPatch | None:
    """`previous` is the last DocumentAnalysis; `source` the new text."""
    if previous.diagnostics or previous.source is None or previous.parse_state is None:
        return None
    line = changed_line(previous.source.lines, source.lines)
    if line is None:
        return None
    old_text, new_text = previous.source.lines[line - 1], source.lines[line - 1]
    if any("#[" in t or _DEFINITION_START.match(t) for t in (old_text, new_text)):
        return None       # the metadata section or a definition boundary moves
    start = _STATEMENT_START.match(new_text)
    if start is None or _STATEMENT_START.match(old_text) is None:
        return None
    definition = previous.definition_at(line)
    if definition is None or definition.status != "ok" or definition.graph_bindings is None \
            or not isinstance(definition.good, Function):
        return None
    return _Patch(previous, source, definition, line).run(start.group(1), old_text, new_text)


class _Patch:
    def __init__(self, previous: Any, source: SourceText, definition: Any, line: int):
        self.previous, self.source, self.definition = previous, source, definition
        # The IR's spans, the bindings and the fragment parse use the lines of the last
        # full parse (symbols/lines.py); occurrences are placed at the line now.
        self.text_line, self.line = line, previous.line_map.to_parsed(line)
        self.fn: Function = definition.good
        self.above = [b for b in definition.graph_bindings if b.line < self.line]
        here = [b for b in definition.graph_bindings if b.line == self.line]
        self.old = here[0] if len(here) == 1 else None

    def run(self, graph_id: str, old_text: str, new_text: str) -> StatementPatch | None:
        old = self.old
        if old is None or old.name != graph_id or old.node.span is None \
                or old.node.span.line != self.line \
                or sum(b.node is old.node for b in self.definition.graph_bindings) != 1:
            return None
        # Graph ids bound but never used are not in the IR: no patch keeps track of them.
        if any(b.node.checked_type is None for b in self.definition.graph_bindings):
            return None
        # The old line must have been a whole statement by itself, or the new line's
        # parse would not stand for it.
        before = self._parse(old_text, graph_id)
        parsed = self._parse(new_text, graph_id)
        if before is None or parsed is None:
            return None
        value, records, state, padded = parsed
        fresh, uses = _untyped_nodes(value)
        if not fresh or fresh[-1] is not value or value.span is None \
                or value.span.line != self.line:
            return None
        # Whatever the old line used, the new one must use too: a node that loses its
        # last use leaves the IR (and the index loses its types and op names).
        if not _untyped_nodes(before[0])[1] <= uses:
            return None
        if not self._check(fresh) or \
                type_text(value.checked_type) != type_text(old.node.checked_type):
            return None
        function, replaced = _substitute(self.fn, old.node, value)
        name = self.definition.range.name
        here = records_to_occurrences(records, name, True, state)
        here += IROccurrences(SourceText(padded, self.source.source_name)).of_nodes(
            fresh, name, True)
        moved = self.text_line - self.line
        if moved:
            here = [o.shifted(moved, self.source.source_name) for o in here]
        occurrences = [o for o in self.definition.occurrences if o.span.line != self.text_line]
        occurrences += here
        bindings = [GraphBinding(b.line, b.name, b.symbol_id,
                                 value if b is old else replaced.get(id(b.node), b.node))
                    for b in self.definition.graph_bindings]
        return StatementPatch(name, function, occurrences, bindings)

    def _state(self) -> RecordingState:
        """A parse state as the full parse's was when it reached this line."""
        prev: RecordingState = self.previous.parse_state
        state = RecordingState(self.source.source_name, self.source.text)
        state.globals = dict(prev.globals)
        state.types = dict(prev.types)
        state.constructors = dict(prev.constructors)
        state.op_nodes = dict(prev.op_nodes)
        state.meta_table, state.meta_broken = prev.meta_table, prev.meta_broken
        state.meta_cache = dict(prev.meta_cache)
        state._local_ids, state._vars = dict(prev._local_ids), list(prev._vars)
        for tv in self.fn.type_params:
            state.type_params.bind(tv.name_hint, tv)
        for param in self.fn.params:
            state.locals.bind(param.name_hint, param)
        for b in self.above:
            state.graph[int(b.name[1:])] = b.node
            state._graph_ids[b.name] = b.symbol_id
        return state

    def _parse(self, text: str, graph_id: str
               ) -> tuple[Expr, list[NameRecord], RecordingState, str] | None:
        """The line as `%N = value;` followed by `%N` on a line of its own: the value,
        and the line's name records (with the old symbol key for `%N`)."""
        state = self._state()
        padded = "\n" * (self.line - 1) + text + "\n" + graph_id
        value = parse_fragment(padded, state)
        if value is None or state.diag.diagnostics or state.pending_meta_attrs \
                or len(state.types) != len(self.previous.parse_state.types):
            return None
        records = [r for r in state.records if r.span.line == self.line]
        definitions = [r for r in records if r.is_definition]
        if len(definitions) != 1 or definitions[0].name != graph_id \
                or definitions[0].kind != "graph":
            return None
        defined = self.previous.parse_state.functions
        for r in records:
            if r.kind == "global":
                gv = state.globals.get(r.name[1:])
                if gv not in defined:
                    return None       # a full parse reports it undefined
            elif r.kind == "type":
                gv = state.types.get(r.name)
            else:
                continue
            if gv.span is None or gv.span.line == self.line:
                return None           # named where first written: this line may move it
        records = [r._replace(symbol_id=self.old.symbol_id) if r.is_definition else r
                   for r in records]
        return value, records, state, padded

    def _check(self, fresh: list[Expr]) -> bool:
        """Type-check the new nodes alone: the typed nodes they use become typed
        parameters, the module's other functions their signatures. Sets the types."""
        copies: dict[int, Expr] = {}
        params: dict[int, Var] = {}
        for node in fresh:
            kids = node.children()
            if not kids:
                copies[id(node)] = node
                continue
            new = []
            for kid in kids:
                copy = copies.get(id(kid))
                if copy is None:
                    if _is_leaf(kid):
                        copy = kid
                    else:
                        copy = params.get(id(kid))
                        if copy is None:
                            copy = params[id(kid)] = Var(f"used{len(params)}", kid.checked_type)
                new.append(copy)
            copies[id(node)] = node.with_children(new)
        functions: dict[GlobalVar, Function] = {}
        for gv in self.previous.module.functions:
            if isinstance(gv.checked_type, FuncType):
                functions[gv] = stand_in(gv.checked_type)
        probe = GlobalVar("__edited_statement")
        functions[probe] = Function(tuple(params.values()), copies[id(fresh[-1])])
        mod = IRModule(functions, self.previous.module.type_definitions,
                       self.source.source_name, {self.source.source_name: self.source.text})
        if check_module(mod)[1]:
            return False
        for node in fresh:
            if node.checked_type is None:
                node.set_checked_type(copies[id(node)].checked_type)
        return all(node.checked_type is not None for node in fresh)


def _is_leaf(node: Expr) -> bool:
    """Shared nodes with no type of their own: resolved per module by the checker."""
    return isinstance(node, (Op, GlobalVar, Constructor))


def _untyped_nodes(root: Expr) -> tuple[list[Expr], set[int]]:
    """The nodes a fragment parse created (untyped), in post-order, and the ids of the
    typed nodes of the rest of the function they use (which are not entered)."""
    out: list[Expr] = []
    uses: set[int] = set()
    done: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        if expanded:
            done.add(id(node))
            out.append(node)
            continue
        if _is_leaf(node):
            continue
        if node.checked_type is not None:
            uses.add(id(node))
            continue
        stack.append((node, True))
        for kid in reversed(node.children()):
            if id(kid) not in done:
                stack.append((kid, False))
    return out, uses


def _substitute(fn: Function, old: Expr, new: Expr) -> tuple[Function, dict[int, Expr]]:
    """`fn` with `new` in place of `old`; the rebuilt nodes keep their old types (the
    caller has checked that `new` has the type of `old`). Returns the old -> new map.

    The parser gives some nodes a span from the start or to the end of an operand's
    (`%1.0` starts where `%1`'s value does, a tuple ends where its last field does),
    so such ends at `old`'s move to `new`'s, as a full parse would place them."""
    done: dict[int, Expr] = {}
    replaced: dict[int, Expr] = {}
    start = (old.span.line, old.span.column)
    end = (old.span.end_line, old.span.end_column)
    for node in post_order(fn):
        if node is old:
            done[id(node)] = new
            continue
        kids = node.children()
        rebuilt = node.with_children([done[id(k)] for k in kids]) if kids else node
        if rebuilt is not node:
            span = rebuilt.span
            if span is not None and ((span.line, span.column) == start
                                     or (span.end_line, span.end_column) == end):
                rebuilt = dataclasses.replace(rebuilt, span=_moved(span, start, end, new.span))
            if node.checked_type is not None:
                rebuilt.set_checked_type(node.checked_type)
            replaced[id(node)] = rebuilt
        done[id(node)] = rebuilt
    return done[id(fn)], replaced


def _moved(span: Span, start: tuple[int, int], end: tuple[int, int], new: Span) -> Span:
    line, column, end_line, end_column = span.line, span.column, span.end_line, span.end_column
    if (line, column) == start:
        line, column = new.line, new.column
    if (end_line, end_column) == end:
        end_line, end_column = new.end_line, new.end_column
    return Span(span.source_name, line, column, end_line, end_column)
