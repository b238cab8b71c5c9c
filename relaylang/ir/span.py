"""Source locations: every IR node and every diagnostic carries a `Span`.

Lines and columns are 1-based; `end_column` points one past the last character
of the span (as Lark's tokens do), so a one-character token at column 5 has
`column=5, end_column=6`. A `NamedTuple`: immutable, compared by value, and
cheap to create (the parser makes one per token it keeps).
"""
from __future__ import annotations

from typing import NamedTuple


class Span(NamedTuple):
    source_name: str
    line: int
    column: int
    end_line: int
    end_column: int

    def merge(self, other: Span | None) -> Span:
        """The span from the start of `self` to the end of `other`."""
        if other is None:
            return self
        return Span(self.source_name, self.line, self.column, other.end_line, other.end_column)

    def __str__(self) -> str:
        return f"{self.source_name}:{self.line}:{self.column}"
