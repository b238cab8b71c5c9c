"""Editing-help handlers: completion, signature help, semantic tokens, inlay hints,
formatting, code actions and the `relay.previewPass` and `relay.showGraph` commands."""
from __future__ import annotations

import asyncio
import re
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from relaylang.ide.preview import OFFERED_PASSES, preview_pass

from . import editing

if TYPE_CHECKING:
    from .server import RelayLanguageServer

PREVIEW_COMMAND = "relay.previewPass"
SHOW_GRAPH_COMMAND = "relay.showGraph"

_COMPLETION_KINDS = {
    "op": lsp.CompletionItemKind.Function, "global": lsp.CompletionItemKind.Function,
    "constructor": lsp.CompletionItemKind.EnumMember, "local": lsp.CompletionItemKind.Variable,
    "attribute": lsp.CompletionItemKind.Property, "keyword": lsp.CompletionItemKind.Keyword,
    "command": lsp.CompletionItemKind.Text, "type": lsp.CompletionItemKind.Class,
}
_DEF_LINE = re.compile(r"^def @([A-Za-z_][A-Za-z0-9_/.]*)", re.MULTILINE)
_ITEM_START = re.compile(r"^[ \t]*(?:def|type|extern)\b", re.MULTILINE)


def _definition_start(text: str, offset: int) -> int:
    """Where the top-level definition holding `offset` starts (0 before the first one).

    Completion and signature help scan the text lexically up to the cursor; starting at
    the definition keeps an unclosed bracket in an earlier, broken definition from
    leaking its scope into this one, and skips scanning the definitions above. Globals
    and types defined above still come from the last analysis' module.
    """
    found = 0
    for m in _ITEM_START.finditer(text, 0, offset):
        found = m.start()
    return found


def _enclosing_function(text: str, line0: int) -> str | None:
    """The `def @name` whose header is the last one at or above 0-based line `line0`."""
    upto = sum(len(line) + 1 for line in text.split("\n")[:line0 + 1])
    found = [m.group(1) for m in _DEF_LINE.finditer(text, 0, upto)]
    return found[-1] if found else None


def _parameter_offsets(sig: Any) -> list[tuple[int, int]]:
    """Each parameter's [start, end) in the label, found left to right after the `(` (a bare
    substring would highlight `data` inside `data_layout=...` too)."""
    out, at = [], sig.label.find("(") + 1
    for p in sig.parameters:
        start = sig.label.find(p, at)
        if start < 0:
            start = sig.label.find(p)
        out.append((start, start + len(p)))
        at = start + len(p)
    return out


def register_editing(server: RelayLanguageServer) -> None:
    _register_completion(server)
    _register_tokens_and_hints(server)
    _register_formatting(server)
    _register_code_actions(server)


def _register_completion(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION,
                    lsp.CompletionOptions(trigger_characters=["%", "@", ".", "(", ",", ":"]))
    def completion(ls: RelayLanguageServer, params: lsp.CompletionParams) -> lsp.CompletionList:
        from relaylang.ide.completion import complete
        doc = ls.workspace.get_text_document(params.text_document.uri)
        index = ls.index_of(doc.source)
        offset = index.offset(params.position)
        last = ls.worker.last(params.text_document.uri)
        start = _definition_start(doc.source, offset)
        found = complete(doc.source[start:], offset - start,
                         module=last.module if last is not None else None,
                         scanner=ls.scanner(params.text_document.uri))
        end = index.position_at(offset)
        items = [lsp.CompletionItem(
            label=c.label, kind=_COMPLETION_KINDS.get(c.kind), detail=c.detail or None,
            documentation=lsp.MarkupContent(kind=lsp.MarkupKind.Markdown, value=c.doc)
            if c.doc else None, sort_text=f"{i:05d}",
            text_edit=lsp.TextEdit(range=lsp.Range(index.position_at(start + c.replace_start),
                                                   end), new_text=c.label))
            for i, c in enumerate(found)]
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_SIGNATURE_HELP,
                    lsp.SignatureHelpOptions(trigger_characters=["(", ","],
                                             retrigger_characters=["="]))
    def signature_help(ls: RelayLanguageServer,
                       params: lsp.SignatureHelpParams) -> lsp.SignatureHelp | None:
        from relaylang.ide.signature import signature_at
        doc = ls.workspace.get_text_document(params.text_document.uri)
        offset = ls.index_of(doc.source).offset(params.position)
        start = _definition_start(doc.source, offset)
        sig = signature_at(doc.source[start:], offset - start,
                           ls.scanner(params.text_document.uri))
        if sig is None:
            return None
        info = lsp.SignatureInformation(label=sig.label, parameters=[
            lsp.ParameterInformation(label=span) for span in _parameter_offsets(sig)])
        return lsp.SignatureHelp(signatures=[info], active_signature=0,
                                 active_parameter=sig.active_parameter)


def _register_tokens_and_hints(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, editing.LEGEND)
    async def semantic_tokens(ls: RelayLanguageServer,
                              params: lsp.SemanticTokensParams) -> lsp.SemanticTokens | None:
        found = await ls.analysis(params.text_document.uri)
        if found is None:
            return None
        a, index = found
        return lsp.SemanticTokens(data=editing.semantic_tokens(a.index.occurrences, index))

    @server.feature(lsp.TEXT_DOCUMENT_INLAY_HINT)
    async def inlay_hints(ls: RelayLanguageServer,
                          params: lsp.InlayHintParams) -> list[lsp.InlayHint] | None:
        found = await ls.analysis(params.text_document.uri)
        if found is None:
            return None
        a, index = found
        return editing.inlay_hints(a.index.bindings(), index, params.range)


def _register_formatting(server: RelayLanguageServer) -> None:
    async def run(ls: RelayLanguageServer, uri: str,
                  window: lsp.Range | None) -> list[lsp.TextEdit] | None:
        text = ls.workspace.get_text_document(uri).source
        index, name = ls.index_of(text), to_fs_path(uri) or uri
        try:
            if window is None:
                return await asyncio.to_thread(editing.format_document, text, name, index)
            return await asyncio.to_thread(editing.format_range, text, name, index, window)
        except editing.FormattingRefused as e:
            ls.window_show_message(lsp.ShowMessageParams(
                type=lsp.MessageType.Warning, message=f"relay: not formatted: {e}"))
            return None

    @server.feature(lsp.TEXT_DOCUMENT_FORMATTING)
    async def formatting(ls: RelayLanguageServer,
                         params: lsp.DocumentFormattingParams) -> list[lsp.TextEdit] | None:
        return await run(ls, params.text_document.uri, None)

    @server.feature(lsp.TEXT_DOCUMENT_RANGE_FORMATTING)
    async def range_formatting(ls: RelayLanguageServer, params: lsp.DocumentRangeFormattingParams
                               ) -> list[lsp.TextEdit] | None:
        return await run(ls, params.text_document.uri, params.range)


def _can_show_documents(ls: Any) -> bool:
    """Whether the client said it handles `window/showDocument` (LSP 3.16)."""
    caps = getattr(ls, "client_capabilities", None)
    window = getattr(caps, "window", None)
    show = getattr(window, "show_document", None)
    return bool(getattr(show, "support", False))


def _register_code_actions(server: RelayLanguageServer) -> None:
    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.RefactorRewrite]))
    async def code_actions(ls: RelayLanguageServer,
                           params: lsp.CodeActionParams
                           ) -> list[lsp.CodeAction | lsp.Command] | None:
        uri = params.text_document.uri
        found = await ls.analysis(uri)
        if found is None:
            return None
        a, index = found
        actions: list[lsp.CodeAction | lsp.Command] = list(
            editing.annotation_actions(a.index.bindings(), index, uri, params.range))
        function = _enclosing_function(a.text, params.range.start.line)
        if function is not None:
            # Plain commands: every client runs them, and clients built on pygls mistake a
            # CodeAction that carries only a command for a malformed Command.
            actions += [lsp.Command(title=f"Preview {name} on @{function}",
                                    command=PREVIEW_COMMAND, arguments=[uri, name, function])
                        for name in OFFERED_PASSES]
            actions += [lsp.Command(title=f"Show graph of @{function}",
                                    command=SHOW_GRAPH_COMMAND, arguments=[uri, function]),
                        lsp.Command(title=f"Show graph of @{function} after FuseOps",
                                    command=SHOW_GRAPH_COMMAND,
                                    arguments=[uri, function, "FuseOps"])]
        return actions

    @server.command(SHOW_GRAPH_COMMAND)
    async def show_graph(ls: Any, *args: Any) -> dict[str, Any]:
        """Arguments: document URI, function name, pipeline (optional: passes to run first,
        as `relay opt -p` reads them). Writes the function's dataflow graph as one
        self-contained HTML page (relaylang/viz/, as `relay viz -o F.html` draws it) and
        returns {"path": the file written or None, "error": why not, or None}."""
        if len(args) not in (2, 3) or not all(isinstance(x, str) for x in args):
            raise ValueError(f"{SHOW_GRAPH_COMMAND} expects (uri, function[, pipeline]); "
                             f"got {list(args)!r}")
        from relaylang.viz import VizError, write_html_for
        uri, function = args[0], args[1]
        after = args[2] if len(args) == 3 and args[2] else None
        text = ls.workspace.get_text_document(uri).source
        path = to_fs_path(uri) or uri
        try:
            out = await asyncio.to_thread(write_html_for, text, path, function, after)
        except VizError as e:
            return {"path": None, "error": str(e)}
        if _can_show_documents(ls):          # the client opens it in the browser
            from pathlib import Path
            try:
                await ls.window_show_document_async(lsp.ShowDocumentParams(
                    uri=Path(out).resolve().as_uri(), external=True))
            except Exception:     # noqa: BLE001, S110 -- the page is written; showing it is
                pass              # a bonus (the client may refuse or fail to open it)
        return {"path": out, "error": None}

    @server.command(PREVIEW_COMMAND)
    async def preview(ls: Any, *args: Any) -> dict[str, Any]:
        """Arguments: document URI, pipeline (`FoldConstant` or `A,B{x=1}`), function name
        (optional). Returns what `relay opt FILE -p PIPELINE` prints (relaylang/ide/preview.py):
        {"output": its stdout, "errors": its stderr, "exitCode", "function": the definition
        of the function in the output (None if absent or not asked)}."""
        if len(args) not in (2, 3) or not all(isinstance(x, str) for x in args):
            raise ValueError(f"{PREVIEW_COMMAND} expects (uri, pipeline[, function]); "
                             f"got {list(args)!r}")
        uri, pipeline = args[0], args[1]
        function = args[2] if len(args) == 3 else None
        text = ls.workspace.get_text_document(uri).source
        path = to_fs_path(uri) or uri
        found = await asyncio.to_thread(preview_pass, text, path, pipeline, function)
        return {"output": found.output, "errors": found.errors, "exitCode": found.exit_code,
                "function": found.function}
