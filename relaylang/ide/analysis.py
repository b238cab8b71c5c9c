"""What an editor knows about one document: diagnostics, IR, symbols.

`analyze(text, uri, version, previous)` is pure and thread-safe: the language
server (lsp/) runs it off the event loop and throws away results for superseded
versions.

    analyze(text)  ->  parse with recovery (one error per broken definition)
                   ->  type-check the definitions that parsed
                   ->  index every name occurrence (symbols/parse.py, symbols/ir.py)

Analysis survives errors, per top-level definition (symbols/defs.py): a
definition that does not parse keeps its last good IR and index entries from
`previous`, matched by name and moved by the line offset of the definition in
the new text (entries whose token is no longer there are dropped); one that
parses but does not type-check is indexed from the new text, with the types of
its last good version. Type checking sets types only on a module without
errors, so the definitions with type errors are checked apart from the rest
(at most three rounds; see `TypeRounds`, symbols/check.py).

Incremental: given `previous`, an edit of one graph statement (`%N = ...;`) of
a clean document is re-analysed alone when it keeps the statement's type
(symbols/incremental.py): a 2,000-line model is one definition, so this is the
common case while editing one. Lines added or removed without tokens move the
analysis (symbols/lines.py); the same text again reuses it. Every other edit,
and any edit of a text with diagnostics, gets the full analysis.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..ir.diagnostics import Diagnostic
from ..ir.expr import Function, GlobalVar
from ..ir.module import IRModule
from ..ir.types import FuncType, GlobalTypeVar, TypeData
from .symbols.check import TypeRounds, cascade_of, is_error, stand_in
from .symbols.defs import DefinitionRange, RangeTable, definition_ranges
from .symbols.incremental import GraphBinding, patch_statement
from .symbols.index import Occurrence, SymbolIndex
from .symbols.ir import IROccurrences, SourceText
from .symbols.lines import MAX_MOVES, LineMap, token_free_move
from .symbols.parse import NameRecord, RecordingState, parse_recording, records_to_occurrences


@dataclass
class DefinitionState:
    """One top-level definition of the current text, and the IR that stands for it."""

    range: DefinitionRange
    status: str                       # ok, type_error, syntax_error
    occurrences: list[Occurrence]
    good: Function | TypeData | None  # the IR the module holds for it: current or last good
    good_key: GlobalVar | GlobalTypeVar | None = None
    parsed: Function | TypeData | None = None     # this text's IR, when the definition parsed
    # Its `%N = ...;` statements, when a one-line edit can be re-analysed alone (a clean
    # function whose only locals are its parameters); see symbols/incremental.py.
    graph_bindings: list[GraphBinding] | None = None


@dataclass
class DocumentAnalysis:
    uri: str
    version: int | None
    text: str
    diagnostics: list[Diagnostic]
    module: IRModule
    index: SymbolIndex
    definitions: dict[str, DefinitionState] = field(default_factory=dict)
    source: SourceText | None = None
    parse_state: RecordingState | None = None     # module-wide names, for re-parsing a line
    # IR spans keep the lines of the parse that built the IR: where those lines are now.
    line_map: LineMap = field(default_factory=LineMap)

    def definition_at(self, line: int) -> DefinitionState | None:
        for state in self.definitions.values():
            if state.range.start_line <= line <= state.range.end_line:
                return state
        return None


def analyze(text: str, uri: str, version: int | None = None,
            previous: DocumentAnalysis | None = None, *,
            incremental: bool = True) -> DocumentAnalysis:
    """`incremental=False` always analyses the whole text (benchmarks and tests compare
    the two: they must give the same result)."""
    if incremental and previous is not None and previous.uri == uri \
            and not previous.diagnostics and previous.source is not None:
        if text == previous.text:
            return dataclasses.replace(previous, version=version)
        quick = _patched(previous, text, version) or _moved(previous, text, version)
        if quick is not None:
            return quick
    return _Analysis(text, uri, previous).run(version)


def _moved(previous: DocumentAnalysis, text: str, version: int | None
           ) -> DocumentAnalysis | None:
    """The previous analysis moved past lines added or removed without tokens
    (symbols/lines.py), or None."""
    if previous.line_map.moves >= MAX_MOVES:
        return None
    source = SourceText(text, previous.uri)
    move = token_free_move(previous.source.lines, source.lines,
                           [d.range for d in previous.definitions.values()], text)
    if move is None:
        return None
    uri, definitions = previous.uri, {}
    ranges = {r.name: r for r in move.ranges}
    for name, d in previous.definitions.items():
        if d.range.end_line <= move.after and ranges[name] == d.range:
            definitions[name] = d
            continue
        occs = [o.shifted(move.delta, uri) if o.span.line > move.after else o
                for o in d.occurrences]
        definitions[name] = dataclasses.replace(d, range=ranges[name], occurrences=occs)
    module = IRModule(previous.module.functions, previous.module.type_definitions, uri,
                      {uri: text})
    index = SymbolIndex(o for d in definitions.values() for o in d.occurrences)
    return DocumentAnalysis(uri, version, text, [], module, index, definitions, source,
                            previous.parse_state,
                            previous.line_map.moved(move.after, move.delta))


def _patched(previous: DocumentAnalysis, text: str, version: int | None
             ) -> DocumentAnalysis | None:
    """The previous analysis with one edited statement re-analysed (symbols/incremental.py),
    or None when the edit needs a full analysis."""
    source = SourceText(text, previous.uri)
    patch = patch_statement(previous, source)
    if patch is None:
        return None
    old = previous.definitions[patch.name]
    definitions = dict(previous.definitions)
    definitions[patch.name] = DefinitionState(old.range, "ok", patch.occurrences, patch.function,
                                              old.good_key, patch.function, patch.bindings)
    functions = {gv: (patch.function if fn is old.good else fn)
                 for gv, fn in previous.module.functions.items()}
    module = IRModule(functions, previous.module.type_definitions, previous.uri,
                      {previous.uri: text})
    index = SymbolIndex(o for d in definitions.values() for o in d.occurrences)
    return DocumentAnalysis(previous.uri, version, text, [], module, index, definitions, source,
                            previous.parse_state, previous.line_map)


class _Analysis:
    def __init__(self, text: str, uri: str, previous: DocumentAnalysis | None):
        self.text, self.uri, self.previous = text, uri, previous
        self.source = SourceText(text, uri)
        self.table = RangeTable(definition_ranges(text))
        self.names = {r.name for r in self.table.ranges}
        self.first_range: dict[str, int] = {}
        for i, r in enumerate(self.table.ranges):
            self.first_range.setdefault(r.name, i)

    def run(self, version: int | None) -> DocumentAnalysis:
        parsed, parse_diags, state = parse_recording(self.text, self.uri)
        self.state = state
        parse_diags = [d for d in parse_diags if not cascade_of(d, self.names)]
        broken = {self.table.of_span(d.span) for d in parse_diags if is_error(d)}
        functions = self._by_range(parsed.functions.items(), "@")
        types = self._by_range(parsed.type_definitions.items(), "")
        clean = {i: kv for i, kv in functions.items() if i not in broken}
        good_types = {k: v for i, (k, v) in types.items() if i not in broken}
        good_types.update(self._kept_types(good_types))
        kept = self._kept_functions(set(clean))
        typed, type_diags = TypeRounds(self.uri, self.text, self.table,
                                       self._imported()).run(clean, kept, good_types)
        type_diags = [d for d in type_diags if not cascade_of(d, self.names)]

        records = self._records_by_range(state.records)
        ir_occurrences = IROccurrences(self.source)
        definitions: dict[str, DefinitionState] = {}
        for i, r in enumerate(self.table.ranges):
            if self.first_range[r.name] != i:
                continue      # a duplicate definition: the parser reported it
            current = functions.get(i) or types.get(i)
            if i in clean or (i in types and i not in broken):
                ok = i in typed or i in types
                occs = records_to_occurrences(records.get(i, []), r.name, ok, state)
                if i in functions:
                    occs += ir_occurrences.of_function(current[1], r.name, ok)
                status = "ok" if ok else "type_error"
                if not ok:
                    occs = self._types_from_previous(r.name, occs)
                definitions[r.name] = self._state(r, status, occs, current if ok else None)
                definitions[r.name].parsed = current[1]
                if ok and i in functions:
                    definitions[r.name].graph_bindings = _graph_bindings(
                        records.get(i, []), current[1])
            else:
                definitions[r.name] = self._carried(r, records.get(i, []), state)
        module = self._module(definitions)
        index = SymbolIndex(o for d in definitions.values() for o in d.occurrences)
        return DocumentAnalysis(self.uri, version, self.text,
                                sorted(parse_diags + type_diags, key=_position), module, index,
                                definitions, self.source, state)

    # ------------------------------------------------------------ pieces
    def _by_range(self, items: Any, sigil: str) -> dict[int, tuple[Any, Any]]:
        out: dict[int, tuple[Any, Any]] = {}
        for key, ir in items:
            i = self.table.of_span(ir.span)
            if i is not None and self.table.ranges[i].name == sigil + key.name_hint:
                out.setdefault(i, (key, ir))
        return out

    def _previous(self, name: str) -> DefinitionState | None:
        return self.previous.definitions.get(name) if self.previous is not None else None

    def _kept_functions(self, clean: set[int]) -> dict[GlobalVar, Function]:
        """Stand-ins for the functions that did not parse: their last good signatures, keyed
        by this parse's GlobalVar where it has one (calls in the new text resolve to it).
        Signatures, not the old bodies: those refer to the old parse's type definitions."""
        kept: dict[GlobalVar, Function] = {}
        for name, i in self.first_range.items():
            prev = self._previous(name)
            if i in clean or prev is None or not isinstance(prev.good, Function):
                continue
            signature = prev.good_key.checked_type if prev.good_key is not None else None
            if isinstance(signature, FuncType):
                gv = self.state.globals.get(name[1:]) or GlobalVar(name[1:])
                kept[gv] = stand_in(signature)
        return kept

    def _kept_types(self, current: dict[GlobalTypeVar, TypeData]) -> dict[GlobalTypeVar, TypeData]:
        have = {k.name_hint for k in current}
        kept = {}
        for name in self.first_range:
            prev = self._previous(name)
            if name not in have and prev is not None and isinstance(prev.good, TypeData):
                kept[prev.good_key] = prev.good
        return kept

    def _records_by_range(self, records: list[NameRecord]) -> dict[int, list[NameRecord]]:
        out: dict[int, list[NameRecord]] = {}
        for rec in records:
            i = self.table.index_at(rec.span.line)
            if i is not None:
                out.setdefault(i, []).append(rec)
        return out

    def _state(self, r: DefinitionRange, status: str, occs: list[Occurrence],
               current: tuple[Any, Any] | None) -> DefinitionState:
        if current is not None:
            return DefinitionState(r, status, occs, current[1], current[0])
        prev = self._previous(r.name)
        if prev is not None and prev.good is not None:
            return DefinitionState(r, status, occs, prev.good, prev.good_key)
        return DefinitionState(r, status, occs, None)

    def _carried(self, r: DefinitionRange, records: list[NameRecord],
                 state: RecordingState) -> DefinitionState:
        """A definition that does not parse: its last good entries, moved to where it is now."""
        prev = self._previous(r.name)
        if prev is None or not prev.occurrences:
            occs = records_to_occurrences(records, r.name, False, state)
            occs += self._header_name(r)
            return self._state(r, "syntax_error", occs, None)
        delta = r.start_line - prev.range.start_line
        occs = []
        for occ in prev.occurrences:
            line = occ.span.line + delta
            if r.start_line <= line <= r.end_line and \
                    self.source.token_at(line, occ.span.column, occ.name):
                occs.append(occ.shifted(delta, self.uri))
        return self._state(r, "syntax_error", occs, None)

    def _header_name(self, r: DefinitionRange) -> list[Occurrence]:
        """The name in the header of a definition that never parsed, as its definition
        (so that uses elsewhere still lead to it)."""
        kind, symbol = ("global", "global:" + r.name[1:]) if r.kind == "function" else \
            ("type", "type:" + r.name)
        text = self.source.lines[r.start_line - 1]
        column = text.find(r.name) + 1
        if column == 0 or not self.source.token_at(r.start_line, column, r.name):
            return []
        return [Occurrence(self.source.span(r.start_line, column, len(r.name)), r.name, kind,
                           True, symbol, container=r.name)]

    def _types_from_previous(self, name: str, occs: list[Occurrence]) -> list[Occurrence]:
        """Types for a definition with type errors: those of the same tokens (same name, same
        role, same ordinal) in its last good version."""
        prev = self._previous(name)
        if prev is None:
            return occs
        known: dict[tuple[str, bool, int], Occurrence] = {}
        count: dict[tuple[str, bool], int] = {}
        for occ in sorted(prev.occurrences, key=lambda o: (o.span.line, o.span.column)):
            k = (occ.name, occ.is_definition)
            count[k] = count.get(k, 0) + 1
            known[(*k, count[k])] = occ
        count.clear()
        out = []
        for occ in sorted(occs, key=lambda o: (o.span.line, o.span.column)):
            k = (occ.name, occ.is_definition)
            count[k] = count.get(k, 0) + 1
            old = known.get((*k, count[k]))
            if occ.type_text is None and old is not None and old.type_text is not None:
                occ = occ.with_type(old.type_text, None)
            out.append(occ)
        return out

    def _imported(self) -> IRModule:
        """The definitions `#[import]` brought in (the same objects in every parse)."""
        fns: dict[GlobalVar, Function] = {}
        types: dict[GlobalTypeVar, TypeData] = {}
        sources: dict[str, str] = {}
        for library in self.state.imported:
            fns.update(library.functions)
            types.update(library.type_definitions)
            sources.update(library.sources)
        return IRModule(fns, types, self.uri, sources)

    def _module(self, definitions: dict[str, DefinitionState]) -> IRModule:
        imported = self._imported()
        fns: dict[GlobalVar, Function] = dict(imported.functions)
        types: dict[GlobalTypeVar, TypeData] = dict(imported.type_definitions)
        for d in definitions.values():
            if isinstance(d.good, Function):
                key = self.state.globals.get(d.range.name[1:]) or d.good_key
                fns[key] = d.good
            elif isinstance(d.good, TypeData):
                types[d.good.header] = d.good
        return IRModule(fns, types, self.uri, {self.uri: self.text})


def _graph_bindings(records: list[NameRecord], fn: Function) -> list[GraphBinding] | None:
    """The graph statements of `fn`, if its only locals are its parameters (a line can
    then be re-parsed in a scope of parameters and graph ids alone)."""
    params = {id(p) for p in fn.params}
    out = []
    for rec in records:
        if rec.kind == "local" and rec.is_definition and id(rec.target) not in params:
            return None
        if rec.kind == "graph" and rec.is_definition:
            out.append(GraphBinding(rec.span.line, rec.name, rec.symbol_id, rec.target))
    return out


def _position(d: Diagnostic) -> tuple[int, int]:
    return (d.span.line, d.span.column) if d.span else (0, 0)
