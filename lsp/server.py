"""The Relay language server: pygls wiring of the analysis, navigation and editing help.

Every feature is a thin handler (handlers_*.py): it converts LSP positions to spans
(positions.py), asks a pure function of relaylang/ide/ (analysis, navigation, editing,
completion), and converts the answer back. Analysis runs on
a worker thread (worker.py); requests that need it await the analysis of the
text the editor has now. Completion and signature help are lexical and read
the live text directly, so they answer while an analysis is still running.
"""
from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from relaylang.ide.analysis import analyze
from relaylang.ide.prefix_scan import PrefixScanner
from relaylang.ide.workspace import WorkspaceFiles

from .diagnostics import to_lsp_diagnostic
from .positions import LineIndex
from .worker import AnalysisWorker, IdleCollector


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("relaylang")
    except PackageNotFoundError:        # running from a checkout that is not installed
        return "unknown"


class RelayLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("relay-lsp", _version(),
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental)
        self._worker: AnalysisWorker | None = None
        self.files = WorkspaceFiles(analyze)
        # Per open document: the last completion/signature scan, resumed after each edit.
        self._scanners: dict[str, PrefixScanner] = {}
        self._last_index: LineIndex | None = None

    @property
    def encoding(self) -> str:
        enc = self.workspace.position_encoding
        return str(getattr(enc, "value", enc) or "utf-16")

    @property
    def worker(self) -> AnalysisWorker:
        if self._worker is None:
            self._worker = AnalysisWorker(analyze, self._publish, asyncio.get_running_loop(),
                                          IdleCollector())
        return self._worker

    def submit(self, uri: str) -> None:
        doc = self.workspace.get_text_document(uri)
        self.worker.submit(uri, doc.version or 0, doc.source)

    def _publish(self, analysis: Any) -> None:
        diagnostics = [to_lsp_diagnostic(d, self.index_of(analysis.text), analysis.uri,
                                         own_source=analysis.uri)
                       for d in analysis.diagnostics]
        self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
            uri=analysis.uri, diagnostics=diagnostics, version=analysis.version))

    async def analysis(self, uri: str) -> tuple[Any, LineIndex] | None:
        """The analysis of `uri`'s current text (or the last one) and its line index."""
        a = await self.worker.current(uri)
        return None if a is None else (a, self.index_of(a.text))

    def index_of(self, text: str) -> LineIndex:
        """The line index of `text`; the last one is reused while the text is the same
        string (a completion and a publish of one version share it)."""
        last = self._last_index
        if last is None or last.text is not text or last.encoding != self.encoding:
            last = self._last_index = LineIndex(text, self.encoding)
        return last

    def scanner(self, uri: str) -> PrefixScanner:
        """The prefix scanner of `uri`'s completion and signature help requests."""
        found = self._scanners.get(uri)
        if found is None:
            found = self._scanners[uri] = PrefixScanner()
        return found

    def forget(self, uri: str) -> None:
        self._scanners.pop(uri, None)


def register_sync(server: RelayLanguageServer) -> None:
    """Document synchronisation: open, change and close feed the analysis worker."""
    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: RelayLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.submit(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: RelayLanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
        ls.submit(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: RelayLanguageServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.worker.close(uri)
        ls.forget(uri)
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: RelayLanguageServer, params: Any) -> None:
        if ls._worker is not None:
            ls._worker.stop()
