"""Editor queries over a `DocumentAnalysis`: hover, definition, references, rename,
call hierarchy (outline queries, symbols and folding, are in symbols/outline.py and
re-exported here).

Pure functions: positions in and spans out are 1-based lines and code-point
columns (relaylang/ir/span.py); the server converts to LSP's UTF-16 positions.
Each query is a lookup in the analysis' `SymbolIndex`, never a scan of the text.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ..ir.span import Span
from ..ir.types import TypeData
from ..syntax.build_base import RESERVED
from .symbols.docs import (
    attribute_markdown,
    constructor_result,
    constructor_text,
    op_markdown,
    type_definition_text,
)
from .symbols.index import Occurrence
from .symbols.outline import (
    DocSymbol,
    WorkspaceSymbol,
    document_symbols,
    extent,
    folding_ranges,
    workspace_symbols,
)

if TYPE_CHECKING:
    from .analysis import DocumentAnalysis

__all__ = ["DocSymbol", "WorkspaceSymbol", "calls_from", "calls_to", "definition",
           "document_symbols", "folding_ranges", "highlights", "hover", "prepare_call_hierarchy",
           "prepare_rename", "references", "rename", "workspace_symbols"]

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_/]*(?:\.[A-Za-z_][A-Za-z0-9_/]*)*\Z")
RENAMEABLE = ("local", "global")


def _code(text: str) -> str:
    return f"```relay\n{text}\n```"


def _unknown_type(a: DocumentAnalysis, occ: Occurrence) -> str:
    state = a.definitions.get(occ.container or "")
    if state is not None and state.status != "ok":
        return "type not known: this definition has errors"
    return "type not known"


def _constructor(a: DocumentAnalysis, name: str) -> tuple[object, TypeData] | None:
    for data in a.module.type_definitions.values():
        for ctor in data.constructors:
            if ctor.name == name:
                return ctor, data
    return None


def hover(a: DocumentAnalysis, line: int, col: int) -> tuple[str, Span] | None:
    """Markdown for the token at (line, col) and the token's span."""
    occ = a.index.at(line, col)
    if occ is None:
        return None
    text = _hover_text(a, occ)
    return (text, occ.span) if text is not None else None


def _hover_text(a: DocumentAnalysis, occ: Occurrence) -> str | None:
    kind, ty = occ.kind, occ.type_text
    if kind in ("local", "graph"):
        role = "binding" if occ.is_definition else "use"
        if ty is None:
            return f"{_code(occ.name)}\n\n{kind} {role}; {_unknown_type(a, occ)}"
        return f"{_code(f'{occ.name}: {ty}')}\n\n{kind} {role}"
    if kind == "global":
        return _code(f"def {occ.name}: {ty}") if ty else \
            f"{_code('def ' + occ.name)}\n\n{_unknown_type(a, occ)}"
    if kind == "op":
        return op_markdown(occ.name, ty)
    if kind == "attribute":
        op_name = (occ.symbol_id or "").split(":")[1] if occ.symbol_id else ""
        return attribute_markdown(op_name, occ.name)
    if kind == "number":
        return _code(f"{occ.name}: {ty}") if ty else _code(occ.name)
    if kind == "constructor":
        found = _constructor(a, occ.name)
        if found is None:
            return _code(occ.name)
        ctor, data = found
        head = f"{constructor_text(ctor)}: {constructor_result(data)}"
        here = f"\n\nthis use: `{ty}`" if ty else ""
        return f"{_code(head)}\n\nconstructor of `{data.header.name_hint}`{here}"
    if kind == "type":
        for data in a.module.type_definitions.values():
            if data.header.name_hint == occ.name:
                return _code(type_definition_text(data))
        return _code(f"type {occ.name}")
    return None


def definition(a: DocumentAnalysis, line: int, col: int) -> Span | None:
    occ = a.index.at(line, col)
    if occ is None:
        return None
    target = a.index.definition_of(occ)
    return target.span if target is not None else None


def references(a: DocumentAnalysis, line: int, col: int,
               include_declaration: bool = True) -> list[Span]:
    occ = a.index.at(line, col)
    if occ is None or occ.symbol_id is None:
        return []
    return [o.span for o in a.index.references_of(occ, include_declaration)]


def highlights(a: DocumentAnalysis, line: int, col: int) -> list[Span]:
    return references(a, line, col, include_declaration=True)


# ---------------------------------------------------------------- rename


def prepare_rename(a: DocumentAnalysis, line: int, col: int) -> Span | None:
    """The span to rename (a local or a global, where it is defined in this text)."""
    occ = a.index.at(line, col)
    if occ is None or occ.kind not in RENAMEABLE or occ.symbol_id is None:
        return None
    if a.index.definition_of(occ) is None:
        return None     # an unresolved name: renaming would not rename what it means
    return occ.span


def rename(a: DocumentAnalysis, line: int, col: int, new_name: str) -> list[tuple[Span, str]]:
    """Edits renaming the symbol at (line, col) to `new_name` (with or without its sigil).
    ValueError (with a message for people) when that is not possible."""
    occ = a.index.at(line, col)
    if occ is None or prepare_rename(a, line, col) is None:
        raise ValueError("only local variables and global functions defined here can be renamed")
    sigil = occ.name[0]
    bare = new_name[1:] if new_name.startswith(sigil) else new_name
    if not _NAME.match(bare):
        raise ValueError(f"`{new_name}` is not a valid name: a name starts with a letter or `_` "
                         "and continues with letters, digits, `_`, `/` or `.`")
    if bare in RESERVED:
        raise ValueError(f"`{bare}` is a reserved word")
    new_text = sigil + bare
    if new_text == occ.name:
        return []
    clash = _clash(a, occ, new_text)
    if clash is not None:
        raise ValueError(clash)
    return [(o.span, new_text) for o in a.index.references_of(occ, True)]


def _clash(a: DocumentAnalysis, occ: Occurrence, new_text: str) -> str | None:
    if occ.kind == "global":
        for d in a.index.definitions("global"):
            if d.name == new_text:
                return f"a global function `{new_text}` already exists (line {d.span.line})"
        return None
    # A local: another local of that name in the same definition could capture or be
    # captured by the renamed one (shadowing); refuse rather than change meaning.
    for other in a.index.occurrences:
        if other.kind == "local" and other.name == new_text and \
                other.container == occ.container and other.symbol_id != occ.symbol_id:
            return (f"`{new_text}` is already used in `{occ.container}` (line "
                    f"{other.span.line}); renaming could change which variable a name means")
    return None


# ---------------------------------------------------------------- call hierarchy


def _global_name(name: str) -> str:
    return name if name.startswith("@") else "@" + name


def prepare_call_hierarchy(a: DocumentAnalysis, line: int, col: int
                           ) -> tuple[str, Span, Span] | None:
    """(name, span of the whole definition, span of its name) of the global at (line, col)."""
    occ = a.index.at(line, col)
    if occ is None or occ.kind != "global":
        return None
    return global_item(a, occ.name)


def global_item(a: DocumentAnalysis, name: str) -> tuple[str, Span, Span] | None:
    name = _global_name(name)
    state = a.definitions.get(name)
    target = next((o for o in a.index.of_symbol("global:" + name[1:]) if o.is_definition), None)
    if state is None or target is None:
        return None
    return name, extent(a, state), target.span


def calls_from(a: DocumentAnalysis, global_name: str) -> list[tuple[str, list[Span]]]:
    """The globals `global_name` refers to, each with the spans of those references."""
    caller = _global_name(global_name)
    out: dict[str, list[Span]] = {}
    for occ in a.index.occurrences:
        if occ.kind == "global" and not occ.is_definition and occ.container == caller:
            out.setdefault(occ.name, []).append(occ.span)
    return list(out.items())


def calls_to(a: DocumentAnalysis, global_name: str) -> list[tuple[str, list[Span]]]:
    """The globals that refer to `global_name`, each with the spans of those references."""
    callee = _global_name(global_name)
    out: dict[str, list[Span]] = {}
    for occ in a.index.of_symbol("global:" + callee[1:]):
        if not occ.is_definition and occ.container is not None:
            out.setdefault(occ.container, []).append(occ.span)
    return list(out.items())
