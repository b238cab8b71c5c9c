"""relaylang `Diagnostic`s -> LSP diagnostics: range, severity, code, related information.

The range is the span converted to the negotiated position encoding
(positions.py). Notes with a span become `relatedInformation` (where the
conflicting type was declared, the first definition of a duplicate, ...);
notes without one are appended to the message, as the CLI prints them.

The code is the one the stage set where it made the diagnostic (a key of
relaylang/ir/diagnostic_codes.py), so rewording a message never changes
what editors filter on; a diagnostic made without one gets the stage-neutral
`error` / `warning`.
"""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp

from relaylang.ir.diagnostics import Diagnostic, Severity

from .positions import LineIndex

SOURCE = "relay"

_SEVERITY = {
    Severity.ERROR: lsp.DiagnosticSeverity.Error,
    Severity.BUG: lsp.DiagnosticSeverity.Error,
    Severity.WARNING: lsp.DiagnosticSeverity.Warning,
    Severity.NOTE: lsp.DiagnosticSeverity.Information,
    Severity.HELP: lsp.DiagnosticSeverity.Hint,
}


def diagnostic_code(d: Diagnostic) -> str:
    if d.code is not None:
        return d.code
    return "warning" if d.severity is Severity.WARNING else "error"


def _note_uri(source_name: str, uri: str, own_source: str | None) -> str:
    """Where a note's span lives: this document unless it names another file."""
    if own_source is None or source_name in (own_source, uri) or not source_name:
        return uri
    if "://" in source_name or source_name.startswith("file:"):
        return source_name
    path = Path(source_name)
    return path.as_uri() if path.is_absolute() else uri


def to_lsp_diagnostic(d: Diagnostic, index: LineIndex, uri: str,
                      own_source: str | None = None) -> lsp.Diagnostic:
    """One LSP diagnostic; `own_source` is the source name the analysis gave this document."""
    if d.span is not None:
        where = index.range(d.span)
    else:
        where = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
    related: list[lsp.DiagnosticRelatedInformation] = []
    message = d.message
    for note in d.notes:
        if note.span is None:
            message += f"\nnote: {note.message}"
            continue
        related.append(lsp.DiagnosticRelatedInformation(
            location=lsp.Location(uri=_note_uri(note.span.source_name, uri, own_source),
                                  range=index.range(note.span)),
            message=note.message))
    return lsp.Diagnostic(range=where, message=message, severity=_SEVERITY[d.severity],
                          code=diagnostic_code(d), source=SOURCE,
                          related_information=related or None)


def to_lsp_diagnostics(diagnostics: list[Diagnostic], text: str, uri: str,
                       own_source: str | None = None,
                       encoding: str = "utf-16") -> list[lsp.Diagnostic]:
    index = LineIndex(text, encoding)
    return [to_lsp_diagnostic(d, index, uri, own_source) for d in diagnostics]
