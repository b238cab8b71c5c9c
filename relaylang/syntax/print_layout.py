"""Layout for the printer: `Block`s of lines, nested scopes, and the final text.

TVM's printer builds a `Doc` (src/relay/printer/doc.cc) of text and newline atoms and
indents a body by rewriting its newlines (`Doc::Indent`, `Doc::Brace`). Here text is built
as pieces: strings and `Block`s that hold lines (lists of pieces), and `layout` writes them
once, at the end, with an explicit stack, each Block's lines one level deeper than the line
holding it. Indentation stops growing at MAX_INDENT levels: TVM never printed programs that
deep, and a 10,000-deep `if` would otherwise be hundreds of megabytes of spaces.

Scope blocks also form the tree in which the printer finds where a node used in several
scopes must be bound (`common_scope`).
"""
from __future__ import annotations

from typing import Any, Iterator

MAX_INDENT = 64
_SECTION = 32

Pieces = list[Any]   # str | Block


class Block:
    """Lines laid out as `open`, each line one level deeper, then `close` (TVM's Doc::Brace).

    Blocks that hold a scope (function body, branch, arm, parenthesised let) know their
    parent scope, so that a node used in several scopes is bound in their common ancestor.
    `up` is the last ancestor of the previous section of _SECTION depths, so that finding a
    common ancestor costs depth/_SECTION + _SECTION steps, not depth.
    """

    __slots__ = ("open", "close", "items", "parent", "depth", "up")

    def __init__(self, open_: str, close: str, parent: Block | None = None):
        self.open = open_
        self.close = close
        self.items: list[Pieces] = []
        self.parent = parent
        self.depth: int = 0
        self.up: Block | None = None
        if parent is not None:
            self.depth = parent.depth + 1
            self.up = parent if self.depth % _SECTION == 0 else parent.up


def common_scope(a: Block, b: Block) -> Block:
    while a.up is not b.up:
        if a.depth >= b.depth:
            a = a.up  # type: ignore[assignment]
        else:
            b = b.up  # type: ignore[assignment]
    while a is not b:
        if a.depth >= b.depth:
            a = a.parent  # type: ignore[assignment]
        else:
            b = b.parent  # type: ignore[assignment]
    return a


class _Line:
    __slots__ = ("pieces", "level")

    def __init__(self, pieces: Pieces, level: int):
        self.pieces = pieces
        self.level = level


def _indent(level: int) -> str:
    return "  " * min(level, MAX_INDENT)


def _expand(block: Block, level: int) -> Iterator[object]:
    yield block.open
    for item in block.items:
        yield "\n" + _indent(level + 1)
        yield _Line(item, level + 1)
    yield "\n" + _indent(level) + block.close


def layout(lines: list[Pieces]) -> str:
    """Lines at the outermost level, joined by newlines, every Block laid out in place."""
    def top() -> Iterator[object]:
        for i, line in enumerate(lines):
            if i:
                yield "\n"
            yield _Line(line, 0)

    out: list[str] = []
    stack: list[tuple[Iterator[object], int]] = [(top(), 0)]
    while stack:
        pieces, level = stack[-1]
        for piece in pieces:
            if isinstance(piece, str):
                out.append(piece)
            elif isinstance(piece, Block):
                stack.append((_expand(piece, level), level))
                break
            else:
                stack.append((iter(piece.pieces), piece.level))  # type: ignore[attr-defined]
                break
        else:
            stack.pop()
    return "".join(out)


def join(items: list[Pieces]) -> Pieces:
    """The items separated by commas."""
    out: Pieces = []
    for i, item in enumerate(items):
        if i:
            out.append(", ")
        out.extend(item)
    return out
