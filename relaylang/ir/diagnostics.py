"""Diagnostics: what every stage reports, and how people see it.

A stage collects `Diagnostic`s into a `DiagnosticContext` and raises
`DiagnosticError` (carrying all of them) when it cannot go on; it never prints.
The CLI renders them rustc-style; the language server converts the same
objects to LSP diagnostics. A diagnostic's `code` (a key of
diagnostic_codes.CODES) is set where it is made and names its class for
editors; the CLI text leaves it out, so golden `.err` files do not depend on it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from .diagnostic_codes import CODES
from .span import Span


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    HELP = "help"
    BUG = "bug"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class Note:
    message: str
    span: Span | None = None


@dataclass(frozen=True, slots=True)
class Diagnostic:
    severity: Severity
    message: str
    span: Span | None
    notes: tuple[Note, ...] = ()
    code: str | None = None

    def __post_init__(self) -> None:
        if self.code is not None and self.code not in CODES:
            # A programming error at the emission site, caught by its first test.
            raise ValueError(f"diagnostic code {self.code!r} is not in diagnostic_codes.CODES")

    @staticmethod
    def error(message: str, span: Span | None, *notes: Note, code: str | None = None) -> Diagnostic:
        return Diagnostic(Severity.ERROR, message, span, tuple(notes), code)

    @staticmethod
    def warning(message: str, span: Span | None, *notes: Note,
                code: str | None = None) -> Diagnostic:
        return Diagnostic(Severity.WARNING, message, span, tuple(notes), code)

    def short(self) -> str:
        """`LINE:COL: message`, the form golden `.err` files use."""
        where = f"{self.span.line}:{self.span.column}: " if self.span else ""
        return f"{where}{self.message}"

    def __str__(self) -> str:
        where = f"{self.span}: " if self.span else ""
        return f"{where}{self.severity}: {self.message}"


class DiagnosticError(Exception):
    """Raised when a stage reported errors; `.diagnostics` holds all of them.

    `sources` maps source names to their text, so the error can be rendered
    with source lines wherever it is caught.
    """

    def __init__(self, diagnostics: list[Diagnostic], sources: dict[str, str] | None = None):
        self.diagnostics = list(diagnostics)
        self.sources = dict(sources or {})
        errors = sum(d.severity is Severity.ERROR for d in self.diagnostics)
        first = str(self.diagnostics[0]) if self.diagnostics else "no diagnostics"
        more = f" (and {errors - 1} more errors)" if errors > 1 else ""
        super().__init__(first + more)

    def render(self, color: bool = False) -> str:
        return render_all(self.diagnostics, self.sources, color=color)


@dataclass
class DiagnosticContext:
    """Collects diagnostics for one source text."""

    source_name: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def emit(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def error(self, message: str, span: Span | None, *notes: Note,
              code: str | None = None) -> None:
        self.emit(Diagnostic.error(message, span, *notes, code=code))

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise self.as_error()

    def sorted(self) -> list[Diagnostic]:
        """The diagnostics in source order (those without a span first)."""
        return sorted(self.diagnostics, key=_position)

    def as_error(self) -> DiagnosticError:
        return DiagnosticError(self.sorted(), {self.source_name: self.text})


def _position(d: Diagnostic) -> tuple[int, int]:
    return (d.span.line, d.span.column) if d.span else (0, 0)


# ---------------------------------------------------------------- rendering

_COLORS = {Severity.ERROR: "\x1b[1;31m", Severity.WARNING: "\x1b[1;33m",
           Severity.NOTE: "\x1b[1;36m", Severity.HELP: "\x1b[1;32m", Severity.BUG: "\x1b[1;35m"}


def _snippet(span: Span, text: str | None) -> list[str]:
    if text is None:
        return []
    lines = text.splitlines()
    if not 1 <= span.line <= len(lines):
        return []
    src = lines[span.line - 1].expandtabs(1)
    end = span.end_column if span.end_line == span.line else len(src) + 1
    width = max(1, min(end, len(src) + 1) - span.column)
    gutter = " " * len(str(span.line))
    return [f"{gutter} |", f"{span.line} | {src}", f"{gutter} | {' ' * (span.column - 1)}{'^' * width}"]


def render(d: Diagnostic, sources: dict[str, str], color: bool = False) -> str:
    """`file:line:col: error: message`, then the source line with carets, then notes."""
    head, reset = (_COLORS[d.severity], "\x1b[0m") if color else ("", "")
    where = f"{d.span}: " if d.span else ""
    out = [f"{where}{head}{d.severity}{reset}: {d.message}"]
    if d.span:
        out += _snippet(d.span, sources.get(d.span.source_name))
    for note in d.notes:
        where = f"{note.span}: " if note.span else ""
        out.append(f"{where}note: {note.message}")
        if note.span:
            out += _snippet(note.span, sources.get(note.span.source_name))
    return "\n".join(out)


def render_all(diagnostics: list[Diagnostic], sources: dict[str, str], color: bool = False) -> str:
    return "\n".join(render(d, sources, color) for d in diagnostics)
