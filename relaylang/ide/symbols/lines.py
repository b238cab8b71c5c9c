"""Lines added or removed without touching a token: move the analysis, keep the IR.

Pressing Enter at the end of a line, or deleting a blank or `//` comment line,
changes no token, so nothing parses, types or resolves differently: every
occurrence below the edit moves by the number of lines added or removed, and
the definitions' line ranges with them. The IR is kept as it is, with the
spans of the parse that built it; `LineMap` says where those lines are in the
text now (symbols/outline.py reads IR spans through it, and a later one-line
patch parses in the IR's lines, symbols/incremental.py). A full analysis starts
again from the identity map.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from typing import NamedTuple

from ...ir.span import Span
from .defs import DefinitionRange, definition_ranges

# A line without tokens: blank, or a line comment that cannot open or close a block
# comment or a string (those could make other lines tokens, or no longer tokens).
_TOKEN_FREE = re.compile(r"[ \t\r]*(//(?:(?!/\*|\*/)[^\"])*)?")
MAX_MOVES = 64          # beyond this many moves since the last full parse, parse again


class LineMap:
    """Lines of IR spans (as parsed) -> lines of the current text: a list of segments
    (first parsed line, lines moved from there on), applied in order."""

    __slots__ = ("_deltas", "_starts")

    def __init__(self, segments: tuple[tuple[int, int], ...] = ()):
        self._starts = [s for s, _ in segments]
        self._deltas = [d for _, d in segments]

    @property
    def moves(self) -> int:
        return len(self._starts)

    def to_text(self, line: int) -> int:
        i = bisect_right(self._starts, line) - 1
        return line if i < 0 else line + self._deltas[i]

    def to_parsed(self, line: int) -> int:
        """The parsed line now at text line `line` (a line with tokens)."""
        out = line
        for start, delta in zip(self._starts, self._deltas):
            if start + delta <= line:
                out = line - delta
        return out

    def span(self, span: Span) -> Span:
        if not self._starts:
            return span
        return Span(span.source_name, self.to_text(span.line), span.column,
                    self.to_text(span.end_line), span.end_column)

    def moved(self, after: int, delta: int) -> LineMap:
        """This map, then text lines below `after` moved by `delta`."""
        segments = [(1, 0)] + list(zip(self._starts, self._deltas))
        first = None       # the first parsed line now below `after`
        for i, (start, d) in enumerate(segments):
            end = segments[i + 1][0] - 1 if i + 1 < len(segments) else None
            x = max(start, after - d + 1)
            if end is None or x <= end:
                first = x
                break
        out: list[tuple[int, int]] = []
        for start, d in segments:
            if start < first:
                out.append((start, d))
        out.append((first, self.to_text(first) - first + delta))
        out += [(start, d + delta) for start, d in segments if start > first]
        return LineMap(tuple((s, d) for s, d in out if (s, d) != (1, 0)))


class LineMove(NamedTuple):
    after: int                        # lines below this one (in the old text) moved
    delta: int                        # by this many lines
    ranges: list[DefinitionRange]     # the definitions' line ranges now


def token_free_move(old: list[str], new: list[str], old_ranges: list[DefinitionRange],
                    new_text: str) -> LineMove | None:
    """The move, if the lines `old` and `new` differ only by lines without tokens
    (`old_ranges`: the definitions of `old`)."""
    if old == new:
        return None
    shortest = min(len(old), len(new))
    prefix = 0
    while prefix < shortest and old[prefix] == new[prefix]:
        prefix += 1
    suffix = 0
    while suffix < shortest - prefix and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    removed, added = old[prefix:len(old) - suffix], new[prefix:len(new) - suffix]
    if not all(_TOKEN_FREE.fullmatch(line) for line in removed + added):
        return None
    # A line with an odd number of quotes: a string may run across lines somewhere.
    if any(line.count('"') % 2 for line in old):
        return None
    ranges = definition_ranges(new_text)
    if [(r.name, r.kind) for r in old_ranges] != [(r.name, r.kind) for r in ranges]:
        return None
    return LineMove(prefix + len(removed), len(added) - len(removed), ranges)
