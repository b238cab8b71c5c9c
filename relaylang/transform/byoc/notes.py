"""Reporting diagnostics that do not stop a pass (a pattern that matched nothing).

A pass never prints: it hands the `Diagnostic` to the pass context it runs under. Who
listens is the caller's choice: an instrument with a `report_diagnostic(d)` method
(`CollectDiagnostics`), or a list or `DiagnosticContext` in `PassContext.config
["diagnostics"]` (TVM's PassContext carries a `diag_ctx`). Unheard, a note is dropped.
"""
from __future__ import annotations

from typing import Any

from ...ir.diagnostics import Diagnostic, DiagnosticContext, Severity
from ...ir.span import Span
from ..pass_infra import PassContext, PassInstrument


class CollectDiagnostics(PassInstrument):
    """An instrument that keeps the diagnostics passes report, in order."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def report_diagnostic(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)


def report(ctx: PassContext, diagnostic: Diagnostic) -> None:
    for inst in ctx.instruments:
        hook = getattr(inst, "report_diagnostic", None)
        if hook is not None:
            hook(diagnostic)
    sink: Any = ctx.config.get("diagnostics") if isinstance(ctx.config, dict) else None
    if isinstance(sink, DiagnosticContext):
        sink.emit(diagnostic)
    elif isinstance(sink, list):
        sink.append(diagnostic)


def note(ctx: PassContext, message: str, span: Span | None = None) -> None:
    report(ctx, Diagnostic(Severity.NOTE, message, span))


def warning(ctx: PassContext, message: str, span: Span | None = None) -> None:
    report(ctx, Diagnostic(Severity.WARNING, message, span))


def render_notes(file: str, sources: dict[str, str], notes: Any, color: bool = False) -> str:
    """What `relay build --byoc` and `relay opt` print for the passes' notes: located
    ones rendered with their source line, others as `FILE: SEVERITY: MESSAGE`, and the
    patterns that matched nothing in one line (a target's table has many)."""
    import re

    from ...ir.diagnostics import render
    lines: list[str] = []
    unmatched: list[str] = []
    for d in notes:
        found = re.match(r"MergeComposite: pattern `([^`]+)` .* matched nothing$", d.message)
        if found and d.span is None:
            unmatched.append(found.group(1))
        elif d.span is not None:
            lines.append(render(d, sources, color=color))
        else:
            lines.append(f"{file}: {d.severity}: {d.message}")
    if unmatched:
        names = ", ".join(f"`{n}`" for n in unmatched)
        what = "pattern matched" if len(unmatched) == 1 else "patterns matched"
        lines.append(f"{file}: note: MergeComposite: {len(unmatched)} {what} nothing: {names}")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
