"""Navigation handlers: hover, definition, references, highlights, rename, symbols,
folding and call hierarchy. Each converts the LSP position to a 1-based code-point
(line, column), asks relaylang/ide/navigation.py, and converts the spans it returns."""
from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.uris import to_fs_path

from relaylang.ide import navigation

from .positions import LineIndex

if TYPE_CHECKING:
    from .server import RelayLanguageServer

_SYMBOL_KINDS = {
    "function": lsp.SymbolKind.Function, "global": lsp.SymbolKind.Function,
    "type": lsp.SymbolKind.Enum, "constructor": lsp.SymbolKind.EnumMember,
    "local": lsp.SymbolKind.Variable, "graph": lsp.SymbolKind.Variable,
    "param": lsp.SymbolKind.Variable, "parameter": lsp.SymbolKind.Variable,
    "let": lsp.SymbolKind.Variable, "variable": lsp.SymbolKind.Variable,
}


def symbol_kind(kind: Any) -> lsp.SymbolKind:
    if isinstance(kind, lsp.SymbolKind):
        return kind
    return _SYMBOL_KINDS.get(str(kind), lsp.SymbolKind.Variable)


async def _at(ls: RelayLanguageServer, uri: str, position: lsp.Position
              ) -> tuple[Any, LineIndex, int, int] | None:
    """The analysis of `uri`, its line index, and `position` as 1-based (line, column)."""
    found = await ls.analysis(uri)
    if found is None:
        return None
    a, index = found
    line, col = index.location(position)
    return a, index, line, col


def register_navigation(server: RelayLanguageServer) -> None:
    _register_lookups(server)
    _register_rename(server)
    _register_outline(server)
    _register_call_hierarchy(server)


def _register_lookups(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: RelayLanguageServer, params: lsp.HoverParams) -> lsp.Hover | None:
        at = await _at(ls, params.text_document.uri, params.position)
        found = navigation.hover(at[0], at[2], at[3]) if at else None
        if at is None or found is None:
            return None
        markdown, span = found
        return lsp.Hover(contents=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=markdown),
                         range=at[1].range(span))

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: RelayLanguageServer,
                         params: lsp.DefinitionParams) -> lsp.Location | None:
        uri = params.text_document.uri
        at = await _at(ls, uri, params.position)
        span = navigation.definition(at[0], at[2], at[3]) if at else None
        return lsp.Location(uri=uri, range=at[1].range(span)) if at and span else None

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    async def references(ls: RelayLanguageServer,
                         params: lsp.ReferenceParams) -> list[lsp.Location] | None:
        uri = params.text_document.uri
        at = await _at(ls, uri, params.position)
        if at is None:
            return None
        spans = navigation.references(at[0], at[2], at[3],
                                      params.context.include_declaration)
        return [lsp.Location(uri=uri, range=at[1].range(s)) for s in spans]

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_HIGHLIGHT)
    async def highlights(ls: RelayLanguageServer, params: lsp.DocumentHighlightParams
                         ) -> list[lsp.DocumentHighlight] | None:
        at = await _at(ls, params.text_document.uri, params.position)
        if at is None:
            return None
        return [lsp.DocumentHighlight(range=at[1].range(s), kind=lsp.DocumentHighlightKind.Text)
                for s in navigation.highlights(at[0], at[2], at[3])]


def _register_rename(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_RENAME)
    async def prepare_rename(ls: RelayLanguageServer,
                             params: lsp.PrepareRenameParams) -> lsp.Range | None:
        at = await _at(ls, params.text_document.uri, params.position)
        span = navigation.prepare_rename(at[0], at[2], at[3]) if at else None
        return at[1].range(span) if at and span else None

    @server.feature(lsp.TEXT_DOCUMENT_RENAME, lsp.RenameOptions(prepare_provider=True))
    async def rename(ls: RelayLanguageServer,
                     params: lsp.RenameParams) -> lsp.WorkspaceEdit | None:
        uri = params.text_document.uri
        at = await _at(ls, uri, params.position)
        if at is None:
            return None
        try:
            edits = navigation.rename(at[0], at[2], at[3], params.new_name)
        except ValueError as e:
            raise JsonRpcException(str(e), code=int(lsp.LSPErrorCodes.RequestFailed)) from e
        return lsp.WorkspaceEdit(changes={uri: [
            lsp.TextEdit(range=at[1].range(span), new_text=text) for span, text in edits]})


def _document_symbol(s: Any, index: LineIndex) -> lsp.DocumentSymbol:
    """A DocSymbol tree as LSP's, without recursion (outlines nest: functions in lets)."""
    def make(d: Any) -> lsp.DocumentSymbol:
        return lsp.DocumentSymbol(name=d.name, kind=symbol_kind(d.kind),
                                  range=index.range(d.span),
                                  selection_range=index.range(d.selection_span),
                                  detail=d.detail or None, children=[])
    root = make(s)
    stack = [(s, root)]
    while stack:
        src, out = stack.pop()
        for child in src.children or ():
            made = make(child)
            out.children.append(made)       # type: ignore[union-attr]
            stack.append((child, made))
    return root


def _register_outline(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbols(ls: RelayLanguageServer, params: lsp.DocumentSymbolParams
                               ) -> list[lsp.DocumentSymbol] | None:
        found = await ls.analysis(params.text_document.uri)
        if found is None:
            return None
        a, index = found
        return [_document_symbol(s, index) for s in navigation.document_symbols(a)]

    @server.feature(lsp.TEXT_DOCUMENT_FOLDING_RANGE)
    async def folding(ls: RelayLanguageServer,
                      params: lsp.FoldingRangeParams) -> list[lsp.FoldingRange] | None:
        found = await ls.analysis(params.text_document.uri)
        if found is None:
            return None
        return [lsp.FoldingRange(start_line=first - 1, end_line=last - 1,
                                 kind=lsp.FoldingRangeKind.Region)
                for first, last in navigation.folding_ranges(found[0])]

    @server.feature(lsp.WORKSPACE_SYMBOL)
    async def workspace_symbols(ls: RelayLanguageServer, params: lsp.WorkspaceSymbolParams
                                ) -> list[lsp.WorkspaceSymbol]:
        open_docs = [a for uri in list(ls.workspace.text_documents)
                     if (a := ls.worker.last(uri)) is not None]
        roots = [Path(p) for p in _folder_paths(ls)]
        on_disk = await asyncio.to_thread(ls.files.analyses, roots,
                                          set(ls.workspace.text_documents))
        analyses = {a.uri: a for a in [*on_disk, *open_docs]}
        out = []
        for sym in navigation.workspace_symbols(list(analyses.values()), params.query):
            a = analyses[sym.uri]
            out.append(lsp.WorkspaceSymbol(
                name=sym.name, kind=symbol_kind(sym.kind), container_name=sym.container,
                location=lsp.Location(uri=sym.uri,
                                      range=LineIndex(a.text, ls.encoding).range(sym.span))))
        return out


def _folder_paths(ls: RelayLanguageServer) -> list[str]:
    uris = [f.uri for f in ls.workspace.folders.values()] or \
        ([ls.workspace.root_uri] if ls.workspace.root_uri else [])
    return [p for uri in uris if (p := to_fs_path(uri))]


def _register_call_hierarchy(server: RelayLanguageServer) -> None:
    def item(uri: str, index: LineIndex, found: tuple[str, Any, Any]) -> lsp.CallHierarchyItem:
        name, whole, selection = found
        return lsp.CallHierarchyItem(name=name, kind=lsp.SymbolKind.Function, uri=uri,
                                     range=index.range(whole),
                                     selection_range=index.range(selection), data=name)

    @server.feature(lsp.TEXT_DOCUMENT_PREPARE_CALL_HIERARCHY)
    async def prepare(ls: RelayLanguageServer, params: lsp.CallHierarchyPrepareParams
                      ) -> list[lsp.CallHierarchyItem] | None:
        uri = params.text_document.uri
        at = await _at(ls, uri, params.position)
        found = navigation.prepare_call_hierarchy(at[0], at[2], at[3]) if at else None
        return [item(uri, at[1], found)] if at and found else None

    async def related(ls: RelayLanguageServer, item_: lsp.CallHierarchyItem,
                      calls: Any) -> list[tuple[lsp.CallHierarchyItem, list[lsp.Range]]] | None:
        """The globals `calls(analysis, name)` names (callers or callees), each with the
        ranges of its call sites."""
        found = await ls.analysis(item_.uri)
        if found is None:
            return None
        a, index = found
        out = []
        for other, spans in calls(a, item_.name):
            target = navigation.global_item(a, other)
            if target is not None:
                out.append((item(item_.uri, index, target), [index.range(s) for s in spans]))
        return out

    @server.feature(lsp.CALL_HIERARCHY_INCOMING_CALLS)
    async def incoming(ls: RelayLanguageServer, params: lsp.CallHierarchyIncomingCallsParams
                       ) -> list[lsp.CallHierarchyIncomingCall] | None:
        found = await related(ls, params.item, navigation.calls_to)
        return None if found is None else [
            lsp.CallHierarchyIncomingCall(from_=caller, from_ranges=ranges)
            for caller, ranges in found]

    @server.feature(lsp.CALL_HIERARCHY_OUTGOING_CALLS)
    async def outgoing(ls: RelayLanguageServer, params: lsp.CallHierarchyOutgoingCallsParams
                       ) -> list[lsp.CallHierarchyOutgoingCall] | None:
        found = await related(ls, params.item, navigation.calls_from)
        return None if found is None else [
            lsp.CallHierarchyOutgoingCall(to=callee, from_ranges=ranges)
            for callee, ranges in found]
