"""The top-level definitions of a document as line ranges, found from the text alone.

A definition starts at a line beginning with `def`, `type` or `extern` (the
parser resumes after a syntax error at the same places, syntax/parser.py) and
runs to the line before the next one, or to the `#[metadata]` section. Ranges
exist even for definitions that do not parse, which is what lets a broken
definition be matched, by name, with its last good version.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from ...ir.span import Span

_NAME = r"[A-Za-z_][A-Za-z0-9_/]*(?:\.[A-Za-z_][A-Za-z0-9_/]*)*"
_START = re.compile(r"^[ \t]*(?:def|type|extern)\b", re.MULTILINE)
_FUNCTION = re.compile(r"[ \t]*def\s+@(" + _NAME + ")")
_TYPE = re.compile(r"[ \t]*(?:extern\s+)?type\s+(" + _NAME + ")")
_METADATA = re.compile(r"^[^\n]*?#\[[ \t\r\n]*metadata[ \t\r\n]*\]", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class DefinitionRange:
    name: str            # `@main` for a function, `List` for a type; `<line N>` if unnamed
    kind: str            # function, type
    start_line: int      # 1-based, inclusive
    end_line: int        # inclusive


def _body_end(text: str) -> int:
    # Only lines with a `#[` can start the section: find those first (a scan of every
    # line with the pattern costs milliseconds on a model).
    pos = text.find("#[")
    while pos != -1:
        m = _METADATA.match(text, text.rfind("\n", 0, pos) + 1)
        if m is not None and "//" not in m.group(0):
            return m.start()
        pos = text.find("#[", pos + 2)
    return len(text)


def definition_ranges(text: str) -> list[DefinitionRange]:
    end = _body_end(text)
    last_line = text.count("\n", 0, end) + (0 if end < len(text) else 1)
    starts: list[tuple[int, str, str]] = []
    line, pos = 1, 0
    for m in _START.finditer(text, 0, end):
        line += text.count("\n", pos, m.start())
        pos = m.start()
        fn = _FUNCTION.match(text, m.start())
        ty = None if fn else _TYPE.match(text, m.start())
        if fn:
            starts.append((line, "@" + fn.group(1), "function"))
        elif ty:
            starts.append((line, ty.group(1), "type"))
        else:
            starts.append((line, f"<line {line}>", "function"))
    out = []
    for i, (first, name, kind) in enumerate(starts):
        stop = starts[i + 1][0] - 1 if i + 1 < len(starts) else max(last_line, first)
        out.append(DefinitionRange(name, kind, first, stop))
    return out


class RangeTable:
    """Which definition a line belongs to (None before the first one)."""

    def __init__(self, ranges: list[DefinitionRange]):
        self.ranges = ranges
        self._starts = [r.start_line for r in ranges]

    def index_at(self, line: int) -> int | None:
        i = bisect_right(self._starts, line) - 1
        if i < 0 or line > self.ranges[i].end_line:
            return None
        return i

    def of_span(self, span: Span | None) -> int | None:
        return None if span is None else self.index_at(span.line)
