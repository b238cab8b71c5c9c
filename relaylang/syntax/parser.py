"""`parse` and `parse_expr`: Relay text to IR (TVM's src/relay/parser/parser.cc).

Lark's LALR parser with the contextual lexer runs grammar/relay.lark with the
callbacks of builder.py inlined, so IR is built during parsing; the parser is
built once per process, and its callback table is made direct then
(`direct_callbacks`: no generic wrappers, rules hashed in C). The `#[metadata]` section is split off before lexing
and decoded as JSON. After a syntax error the parse resumes at the next
top-level `def`/`type`/`extern`, so one parse reports an error per broken
definition.
"""
from __future__ import annotations

import os
import re
import threading
from collections.abc import Mapping
from operator import itemgetter
from pathlib import Path
from typing import Any, NamedTuple

from lark import Lark
from lark.exceptions import UnexpectedInput, UnexpectedToken
from lark.grammar import Rule

try:        # Lark's callback wrappers (lark/parse_tree_builder.py), made direct below
    from lark.parse_tree_builder import (
        ChildFilter,
        ChildFilterLALR,
        ChildFilterLALR_NoPlaceholders,
        ExpandSingleChild,
    )
except ImportError:         # another Lark 1.x layout: its wrappers are kept as they are
    ChildFilter = None      # type: ignore[assignment,misc]

from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.expr import Expr, Var
from ..ir.module import IRModule
from ..ir.span import Span
from .builder import Builder
from .builder_state import ParseState
from .comments import blank_block_comments, deep_comment_at
from .imports import load_imports
from .syntax_errors import describe_syntax_error

_METADATA = re.compile(r"^[^\n]*?#\[[ \t\r\n]*metadata[ \t\r\n]*\]", re.M)
_DEFINITION_START = re.compile(r"^[ \t]*(def|type|extern)\b", re.M)
# The name a top-level `def @f` or `type T` defines (parse_in_module's first guess).
_DEFINITION_NAME = re.compile(r"^[ \t]*(?:def[ \t]+@|type[ \t]+)([A-Za-z_][\w.]*)", re.M)

_lock = threading.Lock()
_parser: tuple[Lark, Builder] | None = None


def grammar_path() -> Path:
    """grammar/relay.lark: inside the installed package, or at the top of a checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "grammar" / "relay.lark", here.parent / "grammar" / "relay.lark"):
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("grammar/relay.lark is missing from the installation")


def _get_parser() -> tuple[Lark, Builder]:
    global _parser
    if _parser is None:
        builder = Builder()
        options: dict[str, Any] = {}
        if not os.environ.get("RELAYLANG_PURE_PYTHON"):
            try:
                import lark_cython
                options["_plugins"] = lark_cython.plugins
            except ImportError:     # optional speed-up (the `fast` extra)
                pass
        lark = Lark(grammar_path().read_text(), parser="lalr", lexer="contextual",
                    start=["start_module", "start_expr", "start_definitions"],
                    transformer=builder, maybe_placeholders=True,
                    # Lark keeps the LALR tables in a per-user file of the temp folder, keyed
                    # by a hash of grammar and options: 100 ms less at every start-up.
                    cache=True, **options)
        direct_callbacks(lark.parser.parser_conf.callbacks)
        _parser = (lark, builder)
    return _parser


class _IdentityRule(Rule):
    """A grammar rule hashed and compared by identity, in C. The LALR loop hashes the
    rule of every reduction (the callback lookup) and compares it with the end state;
    Lark's `Rule` does both in Python. One parser's rules are distinct objects, so
    identity is the same equality there."""

    __slots__ = ()
    __hash__ = object.__hash__
    __eq__ = object.__eq__
    __ne__ = object.__ne__


def direct_callbacks(callbacks: dict[Any, Any]) -> None:
    """Lark's per-rule callbacks without its generic wrappers, in place (the parser holds
    this dict): a rule that passes its one child through (`?call: atom_head`) becomes
    `itemgetter`, and a child filter (dropping punctuation, adding `[x]` placeholders)
    becomes one generated expression that builds the same list. Rules whose children
    splice an inlined rule keep Lark's wrappers. The callbacks see exactly what they
    saw before."""
    if ChildFilter is None:
        return
    items = [(rule, _direct(rule, f)) for rule, f in callbacks.items()]
    callbacks.clear()
    for rule, _ in items:
        if type(rule) is Rule:
            rule.__class__ = _IdentityRule      # hashes change: the dict is refilled below
    callbacks.update(items)


def _direct(rule: Any, f: Any) -> Any:
    # Lark nests them as filter(ExpandSingleChild(callback)), each part optional.
    if not isinstance(rule, Rule):
        return f
    plain = [f"s[{i}]" for i in range(len(rule.expansion))]
    if isinstance(f, ChildFilterLALR_NoPlaceholders):
        if any(expand for _, expand in f.to_include):
            return f
        items = [f"s[{i}]" for i, _ in f.to_include]
        inner = f.node_builder
    elif isinstance(f, ChildFilterLALR):
        if any(expand for _, expand, _ in f.to_include):
            return f
        items = []
        for i, _, nones in f.to_include:
            items += ["None"] * nones + [f"s[{i}]"]
        items += ["None"] * f.append_none
        inner = f.node_builder
    elif isinstance(f, ChildFilter):
        return f
    else:
        items, inner = plain, f
    if isinstance(inner, ExpandSingleChild):
        if len(items) == 1:         # the one child is the value
            return itemgetter(int(items[0][2:-1])) if items[0] != "None" else f
        inner = inner.node_builder  # never one child: never expanded
    if items == plain:
        return inner
    return eval(f"lambda s: callback([{', '.join(items)}])", {"callback": inner})


def _split_metadata(text: str) -> tuple[str, str | None, int]:
    """(Relay text, metadata JSON or None, line where the JSON starts)."""
    for m in _METADATA.finditer(text):
        if "//" in m.group(0):       # inside a line comment
            continue
        start = m.end()
        return text[:m.start() + m.group(0).index("#")], text[start:], text.count("\n", 0, start) + 1
    return text, None, 0


def _load_metadata(state: ParseState, json_text: str | None, line: int, text: str,
                   supplied: dict[str, list[Any]] | None) -> dict[str, list[Any]] | None:
    table: dict[str, list[Any]] | None = None
    if json_text is not None and json_text.strip():
        from .metadata import MetadataError, decode_metadata
        try:
            table = decode_metadata(json_text)
        except MetadataError as e:
            column = e.column if e.line > 1 else e.column + len(text.split("\n")[line - 1]) - len(
                json_text.split("\n")[0])
            at = Span(state.source_name, line + e.line - 1, max(column, 1), line + e.line - 1,
                      max(column, 1) + 1)
            state.diag.error(f"malformed metadata section: {e.message}", at, code="metadata")
            state.meta_broken = True     # its references are not reported again
            table = {}
    if supplied:
        table = {k: list(v) for k, v in (table or {}).items()}
        for key, objects in supplied.items():
            table.setdefault(key, []).extend(objects)
    return table


def _run(text: str, source_name: str, metadata: dict[str, list[Any]] | None,
         expression: bool, state: ParseState | None = None) -> tuple[Any, ParseState]:
    body, json_text, json_line = _split_metadata(text)
    if state is None:
        state = ParseState(source_name, text, expression=expression)
    state.meta_table = _load_metadata(state, json_text, json_line, text, metadata)
    if not expression:
        load_imports(body, state)       # before taking the lock: a library is parsed too
    lark, builder = _get_parser()
    with _lock:
        builder.state = state
        try:
            if expression:
                result = _parse_expression(lark, body, state)
            else:
                _parse_definitions(lark, body, state)
                result = None
        finally:
            builder.state = ParseState(source_name, "")
    module = state.finish()
    return (result if expression else module), state


def _parse_expression(lark: Lark, body: str, state: ParseState) -> Expr | None:
    blanked = False
    while True:
        try:
            return lark.parse(body, start="start_expr")
        except UnexpectedInput as e:
            comment = None if blanked else deep_comment_at(e, body)
            if comment is not None:
                body, blanked = body[:comment] + blank_block_comments(body[comment:]), True
                continue
            state.diag.emit(_syntax_diagnostic(e, body, state, lark))
            return None


# Syntax errors reported for one text before giving up, as compilers do: past the first
# few, more are mostly consequences of earlier ones.
MAX_SYNTAX_ERRORS = 100


def _parse_definitions(lark: Lark, body: str, state: ParseState,
                       start: str = "start_module") -> None:
    """Parse `body` from rule `start`; after a syntax error, report it and carry on
    from the next definition (rule start_definitions).

    Only the text from the resume point is parsed again, behind a block comment holding
    as many line breaks as there are lines before it (a resume point starts a line; the
    lexer skips a comment in one step), so positions stay those of `body` and each error
    costs the text it re-reads, not the whole input."""
    offset, lines, errors, blanked = 0, 0, 0, False
    while True:
        source = body if offset == 0 else _lines_before(lines) + body[offset:]
        try:
            lark.parse(source, start=start)
            return
        except UnexpectedInput as e:
            shift = offset - (len(source) - (len(body) - offset))   # body pos - source pos
            comment = None if blanked else deep_comment_at(e, source)
            if comment is not None:
                comment += shift
                body, blanked = body[:comment] + blank_block_comments(body[comment:]), True
                continue
            diagnostic = _syntax_diagnostic(e, source, state, lark)
            errors += 1
            if errors > MAX_SYNTAX_ERRORS:
                state.diag.error(f"too many syntax errors ({MAX_SYNTAX_ERRORS} reported); "
                                 "the rest of the text is not checked", diagnostic.span,
                                 code="syntax")
                return
            state.diag.emit(diagnostic)
            resume = _DEFINITION_START.search(body, max(_error_pos(e, source) + shift + 1,
                                                        offset + 1))
            if resume is None:
                return
            state.reset_scopes()
            state.pending_meta_attrs.clear()
            lines += body.count("\n", offset, resume.start())
            start, offset = "start_definitions", resume.start()


def _lines_before(lines: int) -> str:
    """Text that takes `lines` (at least 1) whole lines and holds no token."""
    return "/*" + "\n" * (lines - 1) + "*/\n"


def _error_pos(e: UnexpectedInput, text: str) -> int:
    pos = getattr(e, "pos_in_stream", None)
    if pos is None and isinstance(e, UnexpectedToken):
        pos = getattr(e.token, "start_pos", None)
    return pos if isinstance(pos, int) and pos >= 0 else len(text)


def _syntax_diagnostic(e: UnexpectedInput, text: str, state: ParseState, lark: Lark) -> Diagnostic:
    message, span = describe_syntax_error(e, text, state.source_name, lark)
    return Diagnostic.error(message, span, code="syntax")


# ---------------------------------------------------------------- public API


def parse(text: str, source_name: str = "from_string",
          metadata: dict[str, list[Any]] | None = None) -> IRModule:
    """Module text (LANGUAGE.md §3.1) to an `IRModule`; `DiagnosticError` on errors."""
    module, state = _run(text, source_name, metadata, expression=False)
    state.diag.raise_if_errors()
    return module


def parse_expr(text: str, source_name: str = "string",
               metadata: dict[str, list[Any]] | None = None) -> Expr:
    """Expression text (LANGUAGE.md §3.2) to an `Expr`; `DiagnosticError` on errors."""
    expr, state = _run(text, source_name, metadata, expression=True)
    state.diag.raise_if_errors()
    return expr


def parse_with_diagnostics(text: str, source_name: str = "from_string",
                           metadata: dict[str, list[Any]] | None = None, *,
                           state: ParseState | None = None
                           ) -> tuple[IRModule, list[Diagnostic]]:
    """Whatever parsed, and every diagnostic, without raising (for editors).

    `state`, a fresh `ParseState(source_name, text)` or a subclass, is the one the
    parse builds into: a caller that subclasses it sees every binding and lookup
    (the language server records name positions this way)."""
    module, state = _run(text, source_name, metadata, expression=False, state=state)
    return module, state.diag.sorted()


def parse_fragment(text: str, state: ParseState) -> Expr | None:
    """One expression parsed into an existing `state`: names resolve in its scopes and
    tables as they stand, diagnostics go to `state.diag`, and no module-wide checks run
    (the caller has the rest of the module). Token positions are those in `text`, so a
    caller places a piece of a larger document by padding it with the newlines before it.
    None after a syntax error. Used to re-parse one edited statement (lsp/)."""
    lark, builder = _get_parser()
    with _lock:
        builder.state = state
        try:
            return _parse_expression(lark, text, state)
        finally:
            builder.state = ParseState(state.source_name, "")


__all__ = [
    "DiagnosticError",
    "grammar_path",
    "parse",
    "parse_expr",
    "parse_fragment",
    "parse_in_module",
    "parse_with_diagnostics",
]


# ---------------------------------------------------------------- parsing inside a module


class ModuleInput(NamedTuple):
    """What `parse_in_module` read."""

    items: IRModule              # the definitions of the text (new or replacing ones)
    expr: Expr | None            # the expression (expression=True; None after an error)
    replaced: frozenset[str]     # globals and types of the module the text redefines
    diagnostics: list[Diagnostic]


def parse_in_module(text: str, module: IRModule, source_name: str = "<input>", *,
                    expression: bool = False, local_vars: Mapping[str, Var] | None = None,
                    metadata: dict[str, list[Any]] | None = None) -> ModuleInput:
    """Module items, or an expression, read as if written inside `module` (TVM's
    `init_module`): its globals, type names and constructors resolve to its own IR
    objects, and `local_vars` are in scope around an expression. Nothing of `module`
    is printed or parsed again. Spans and diagnostics are those of `text` itself
    (`source_name`); no version header is needed, a metadata section is read.

    A definition of a name `module` already has replaces it: the text gets its own
    GlobalVar (a node's types are set once, so a changed signature needs a new
    one), and a redefined type keeps its header but gets new constructors; the
    module's objects of those names are not visible to the text. `module` is not
    changed."""
    existing = {gv.name_hint for gv in module.functions} | \
        {gtv.name_hint for gtv in module.type_definitions}

    def redefined(found: ModuleInput) -> frozenset[str]:
        return frozenset(existing & ({gv.name_hint for gv in found.items.functions}
                                     | {gtv.name_hint for gtv in found.items.type_definitions}))

    # The definition heads of the text name what it redefines, so one parse usually
    # confirms the guess; a head the scan misread (one inside a comment) costs one more
    # pass from what the parse found. The names a text defines do not depend on which
    # module names it sees, so that pass agrees with itself.
    replaced = frozenset(existing & set(_DEFINITION_NAME.findall(text)))
    found = _parse_in(text, module, source_name, expression, local_vars, metadata, replaced)
    if redefined(found) != replaced:
        replaced = redefined(found)
        found = _parse_in(text, module, source_name, expression, local_vars, metadata, replaced)
    return found


def _parse_in(text: str, module: IRModule, source_name: str, expression: bool,
              local_vars: Mapping[str, Var] | None, metadata: dict[str, list[Any]] | None,
              replaced: frozenset[str]) -> ModuleInput:
    body, json_text, json_line = _split_metadata(text)
    state = ParseState(source_name, text, expression=expression)
    state.use_context(module, skip_globals=replaced, skip_constructors_of=replaced)
    for name, var in (local_vars or {}).items():
        state.locals.bind(name, var)
    state.meta_table = _load_metadata(state, json_text, json_line, text, metadata)
    if not expression:
        load_imports(body, state)
    lark, builder = _get_parser()
    expr = None
    with _lock:
        builder.state = state
        try:
            if expression:
                expr = _parse_expression(lark, body, state)
            else:
                _parse_items(lark, body, state)
        finally:
            builder.state = ParseState(source_name, "")
    items = state.finish()
    return ModuleInput(items, expr, replaced, state.diag.sorted())


_VERSION_FIRST = re.compile(r"\A(\s|//[^\n]*\n|/\*.*?\*/)*#\[\s*version", re.S)


def _parse_items(lark: Lark, body: str, state: ParseState) -> None:
    """`_parse_definitions` without requiring the version header (it is allowed)."""
    start = "start_module" if _VERSION_FIRST.match(body) else "start_definitions"
    _parse_definitions(lark, body, state, start)
