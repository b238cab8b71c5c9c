"""`relay fmt`: the canonical layout of a module, keeping the comments people wrote.

The layout is the printer's (syntax/printer.py). Comments are not part of the IR, so the
formatter carries them over itself, by position: the printer says which IR node each
statement line prints (`TextPrinter.anchors`), the node's span says where it was in the
source, and comments.py says where each comment was. Inside a definition:

  * a comment on its own line(s) stays before the statement that follows it in its block
    (`{ ... }`), re-indented;
  * a comment after the code on its line (a `//` comment, or a one-line `/* */`) stays
    after that statement, on the same line;
  * a comment with no statement after it in its block stays at the end of the block
    (before its final expression if one follows);
  * a comment inside an expression, with code on both sides (`add(%x, /* c */ %y)`), or a
    multi-line comment after code, moves to its own line before the statement;
  * a comment in a definition's head (`def @f(%x, // c`) moves before the definition.

Outside definitions, the comments before the version header stay first, the comments
between definitions go before the definition that follows them (definitions are printed
types first, then functions, each by name), and those after the last definition stay
last. A comment that cannot be placed is reported by line (`Formatted.unplaced`) and not
written; `relay fmt -i` then refuses to rewrite the file.
"""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from ..ir.expr import Function
from ..ir.module import IRModule
from ..ir.types import TypeData
from .comments import Comment, code_skeleton, scan_comments
from .parser import parse
from .print_layout import MAX_INDENT, Block
from .printer import astext

_COMMENT_LINE = re.compile(r"^\s*(//.*|/\*.*\*/\s*)$")
# `#[import "NAME"]` lines (imports.py): the imported definitions print as the directive.
_IMPORT_LINE = re.compile(r'^[ \t]*#\[\s*import\s+"([^"\]]*)"\s*\]', re.MULTILINE)
_METADATA = re.compile(r"^[ \t]*#\[metadata\]", re.MULTILINE)
_VERSION = re.compile(r"#\[\s*version")
_SEPARATORS = re.compile(r"[()\[\]{};,]")


@dataclass
class Formatted:
    text: str
    dropped_comments: int           # comments not written (the lines are in `unplaced`)
    unplaced: list[int] = field(default_factory=list)


def _leading_comments(lines: list[str], first_line: int) -> list[str]:
    """The comment lines directly above 1-based line `first_line` (blank lines allowed)."""
    out: list[str] = []
    i = first_line - 2
    while i >= 0 and (_COMMENT_LINE.match(lines[i]) or not lines[i].strip()):
        out.append(lines[i].rstrip())
        i -= 1
    while out and not out[-1].strip():
        out.pop()
    return list(reversed(out))


def _own_definitions(module: IRModule, source_name: str) -> IRModule:
    """`module` without the definitions `#[import]` brought in from other files."""
    def own(node: Function | TypeData) -> bool:
        return node.span is None or node.span.source_name == source_name
    return IRModule({gv: fn for gv, fn in module.functions.items() if own(fn)},
                    {gtv: d for gtv, d in module.type_definitions.items() if own(d)},
                    module.source_name, module.sources)


# ------------------------------------------------------------------ the source


class _Source:
    """Positions in the source text: line starts, the comments, and for any offset the
    innermost `{` around it (-1: none)."""

    def __init__(self, text: str, stop: int):
        self.text = text
        self.line_starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.comments = scan_comments(text, stop)
        # the metadata section after `stop` (megabytes of base64) holds no code
        self.code = code_skeleton(text[:stop], self.comments) + text[stop:]
        self.brace_pos: list[int] = []       # every brace, in order
        self.inner: list[int] = []           # the innermost open `{` just after it
        self.match: dict[int, int] = {}      # `{` -> its `}`
        stack: list[int] = []
        for m in re.finditer(r"[{}]", self.code[:stop]):
            if m.group() == "{":
                stack.append(m.start())
            elif stack:
                self.match[stack.pop()] = m.start()
            self.brace_pos.append(m.start())
            self.inner.append(stack[-1] if stack else -1)

    def offset(self, line: int, column: int) -> int:
        return self.line_starts[line - 1] + column - 1

    def block_of(self, pos: int) -> int:
        """The innermost `{` open at `pos` (-1 if none)."""
        i = bisect.bisect_left(self.brace_pos, pos) - 1
        return self.inner[i] if i >= 0 else -1

    def line_bounds(self, pos: int) -> tuple[int, int]:
        i = bisect.bisect_right(self.line_starts, pos) - 1
        start = self.line_starts[i]
        end = self.text.find("\n", pos)
        return start, len(self.text) if end < 0 else end

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self.line_starts, pos)

    def code_before(self, c: Comment) -> bool:
        start, _ = self.line_bounds(c.start)
        return bool(self.code[start:c.start].strip())

    def code_after(self, c: Comment) -> bool:
        _, end = self.line_bounds(c.end)
        return bool(self.code[c.end:end].strip())

    def next_code(self, pos: int) -> str:
        m = re.compile(r"\S").search(self.code, pos)
        return m.group() if m else ""

    def column(self, pos: int) -> int:
        return pos - self.line_bounds(pos)[0]


def _span_start(node: Any, src: _Source, source_name: str) -> int | None:
    span = getattr(node, "span", None)
    if span is None or span.source_name != source_name:
        return None
    return src.offset(span.line, span.column)


def _definition_end(node: Any, start: int, src: _Source, source_name: str) -> int:
    """Where a definition's text ends: its closing brace (a type's `{ ... }` is not in
    its span), or its span's end."""
    if isinstance(node, TypeData) and node.constructors:
        i = bisect.bisect_left(src.brace_pos, start)
        if i < len(src.brace_pos) and src.brace_pos[i] in src.match:
            return src.match[src.brace_pos[i]] + 1
    span = node.span
    return src.offset(span.end_line, span.end_column)


# ------------------------------------------------------------------ rendering


def _indent(level: int) -> str:
    return "  " * min(level, MAX_INDENT)


def _comment_lines(c: Comment, src: _Source, level: int) -> str:
    """The comment as one layout line at `level`: continuation lines of a block comment
    keep their indentation relative to its first line."""
    parts = c.text.split("\n")
    if len(parts) == 1:
        return c.text
    col = src.column(c.start)
    out = [parts[0].rstrip()]
    for part in parts[1:]:
        part = part.rstrip("\r")
        rest = part[col:] if part[:col].strip() == "" else part.lstrip()
        out.append((_indent(level) + rest).rstrip() if rest.strip() else "")
    return "\n".join(out)


class _Item:
    __slots__ = ("after", "before", "block", "children", "level", "pieces", "pos")

    def __init__(self, pieces: list, block: Block | None, level: int, pos: int | None):
        self.pieces, self.block, self.level, self.pos = pieces, block, level, pos
        self.before: list[str] = []
        self.after: list[str] = []
        self.children: list[Block] = []       # `{` blocks written directly in the item


class _Placer:
    """Places one definition's comments in its printed pieces (TextPrinter.module_text's
    `decorate`)."""

    def __init__(self, src: _Source, source_name: str,
                 inside: dict[int, list[Comment]], outside: dict[int, list[Comment]],
                 trailing: dict[int, list[Comment]]):
        self.src, self.source_name = src, source_name
        self.inside, self.outside, self.trailing = inside, outside, trailing
        self.unplaced: list[Comment] = []
        self.placed = 0

    def __call__(self, node: Any, lines: list, anchors: dict[int, Any]) -> None:
        src = self.src
        start = _span_start(node, src, self.source_name)
        top = _Item(lines[0], None, 0, start)
        head: list[str] = [_comment_lines(c, src, 0) for c in self.outside.get(id(node), [])]
        tails = [c.text for c in self.trailing.get(id(node), [])]
        self.placed += len(head) + len(tails)
        comments = self.inside.get(id(node), [])
        if comments:
            head += self._place(top, comments, anchors)
        lines[:0] = [[text] for text in head]
        for text in tails:
            lines[-1].append("  " + text)

    # ---------------------------------------------------------------- one definition
    def _place(self, top: _Item, comments: list[Comment], anchors: dict[int, Any]) -> list[str]:
        src = self.src
        items = self._items(top, anchors)
        by_block: dict[int, list[_Item]] = {}      # source `{` -> anchored items in it
        for item in items:
            if item.pos is not None and item is not top:
                by_block.setdefault(src.block_of(item.pos), []).append(item)
        for group in by_block.values():
            group.sort(key=lambda it: it.pos)
        block_starts = {blk: [it.pos for it in group] for blk, group in by_block.items()}
        block_items: dict[int, list[_Item]] = {}   # printed Block -> its items
        for item in items:
            if item.block is not None:
                block_items.setdefault(id(item.block), []).append(item)
        ends: dict[int, list[str]] = {}            # printed Block -> comments at its end
        head: list[str] = []
        for c in comments:
            blk = src.block_of(c.start)
            group = by_block.get(blk, [])
            starts = block_starts.get(blk, [])
            before, after = src.code_before(c), src.code_after(c)
            if blk < 0 or (top.pos is not None and blk < top.pos):
                head.append(_comment_lines(c, src, 0))           # in the definition's head
                self.placed += 1
                continue
            if before:
                i = bisect.bisect_right(starts, c.start) - 1
                if i >= 0 and self._follows(group[i].pos, c.start):
                    prev = group[i]
                    if not after and "\n" not in c.text:
                        prev.after.append(c.text)                 # trailing
                    else:
                        prev.before.append(_comment_lines(c, src, prev.level))
                    continue
            i = bisect.bisect_left(starts, c.end)
            if i < len(group):
                nxt = group[i]
                nxt.before.append(_comment_lines(c, src, nxt.level))
                continue
            block = self._printed_block(blk, group, items, top)
            if block is None:
                self.unplaced.append(c)
                continue
            members = block_items.get(id(block), [])
            closing = src.next_code(c.end) == "}"
            if before and not after and closing and members and "\n" not in c.text:
                members[-1].after.append(c.text)        # after a final `%x` (no anchor)
            elif not closing and members:                           # before the final one
                last = members[-1]
                last.before.append(_comment_lines(c, src, last.level))
            else:
                level = members[0].level if members else self._level_of(block, items) + 1
                ends.setdefault(id(block), []).append(_comment_lines(c, src, level))
        self._write(items, block_items, ends)
        return head

    def _follows(self, pos: int, end: int) -> bool:
        """Whether the code in [pos, end) is one statement, maybe with its `;` or `,`
        (what a comment at `end` comes after): no top-level separator with code after it."""
        depth = 0
        code = self.src.code
        last = -1
        for m in _SEPARATORS.finditer(code, pos, end):
            ch = m.group()
            if ch in "([{":
                depth += 1
            elif ch in ")]}":
                depth -= 1
            elif depth == 0:
                last = m.end()
        return last < 0 or not code[last:end].strip()

    def _items(self, top: _Item, anchors: dict[int, Any]) -> list[_Item]:
        """Every line of the printed definition, with the source position of what it
        prints, the Block holding it and its indentation level."""
        out = [top]
        stack: list[tuple[list, _Item]] = [(top.pieces, top)]
        while stack:
            pieces, owner = stack.pop()
            for piece in pieces:
                if not isinstance(piece, Block):
                    continue
                if piece.open == "{":
                    owner.children.append(piece)
                for line in piece.items:
                    node = anchors.get(id(line))
                    pos = _span_start(node, self.src, self.source_name) if node is not None \
                        else None
                    item = _Item(line, piece, owner.level + 1, pos)
                    out.append(item)
                    stack.append((line, item))
        return out

    def _level_of(self, block: Block, items: list[_Item]) -> int:
        for item in items:
            if any(b is block for b in item.children):
                return item.level
        return 0

    def _printed_block(self, blk: int, group: list[_Item], items: list[_Item],
                       top: _Item) -> Block | None:
        """The printed Block of the source block opened at `blk`."""
        if group:
            return group[-1].block
        src = self.src
        parent = src.block_of(blk)
        # the statement the block belongs to: the last line that starts before the brace
        # in the enclosing block (the definition's line at the top)
        if top.children and (parent < 0 or (top.pos is not None and parent < top.pos)):
            return top.children[-1]             # the definition's body (or a type's block)
        owners = [it for it in items if it.pos is not None and it.pos <= blk and it.children
                  and it is not top and src.block_of(it.pos) == parent]
        for owner in sorted(owners, key=lambda it: it.pos, reverse=True):
            # the block is the owner's k-th: count the blocks it opens before this one
            k = sum(1 for p in src.brace_pos[bisect.bisect_left(src.brace_pos, owner.pos):
                                             bisect.bisect_left(src.brace_pos, blk)]
                    if src.code[p] == "{" and src.block_of(p + 1) == p
                    and src.block_of(p) == parent)
            if k < len(owner.children):
                return owner.children[k]
        return None

    def _write(self, items: list[_Item], block_items: dict[int, list[_Item]],
               ends: dict[int, list[str]]) -> None:
        for item in items:
            for text in item.after:
                item.pieces.append("  " + text)
                self.placed += 1
        blocks = {id(it.block): it.block for it in items if it.block is not None}
        for key, block in blocks.items():
            members = {id(it.pieces): it for it in block_items.get(key, [])}
            new: list = []
            for line in block.items:
                it = members.get(id(line))
                if it is not None:
                    new.extend([text] for text in it.before)
                    self.placed += len(it.before)
                new.append(line)
            extra = ends.get(key, [])
            new.extend([text] for text in extra)
            self.placed += len(extra)
            block.items[:] = new
        # a Block reached by no item (an empty one) still gets its end comments
        for key, extra in ends.items():
            if key not in blocks:
                for item in items:
                    for b in item.children:
                        if id(b) == key:
                            b.items.extend([text] for text in extra)
                            self.placed += len(extra)


# ------------------------------------------------------------------ the module


def format_text(text: str, source_name: str = "from_string") -> Formatted:
    """Parse `text` and print it canonically with its comments; DiagnosticError if it does
    not parse."""
    module = _own_definitions(parse(text, source_name=source_name), source_name)
    imports = [f'#[import "{name}"]' for name in dict.fromkeys(_IMPORT_LINE.findall(text))]
    meta = _METADATA.search(text)
    stop = meta.start() if meta else len(text)
    src = _Source(text, stop)
    lines = text.splitlines()

    version = _VERSION.search(src.code)
    header: list[str] = []
    header_end = 0
    if version is not None:
        header_end = version.start()
        line_start = src.line_bounds(header_end)[0]
        for c in reversed(src.comments):     # a comment running into the header's line
            if c.start < line_start < c.end:   # goes with what follows the header
                line_start = src.line_bounds(c.start)[0]
        if not src.code[:line_start].strip():     # only comments before the header line
            header_end = line_start
            header = [line.rstrip() for line in text[:line_start].split("\n")]
            while header and not header[0].strip():
                header.pop(0)
            while header and not header[-1].strip():
                header.pop()
            header = [line.lstrip("\ufeff") for line in header]
        else:
            header = _leading_comments(lines, src.line_of(version.start()))
    comments = [c for c in src.comments if c.start >= header_end]

    # Each definition's text, in source order.
    regions: list[tuple[int, int, Any]] = []
    for node in [*module.type_definitions.values(), *module.functions.values()]:
        start = _span_start(node, src, source_name)
        if start is not None:
            regions.append((start, _definition_end(node, start, src, source_name), node))
    regions.sort(key=lambda r: r[0])
    inside: dict[int, list[Comment]] = {}
    outside: dict[int, list[Comment]] = {}
    trailing: dict[int, list[Comment]] = {}
    trailer: list[Comment] = []
    starts = [r[0] for r in regions]
    for c in comments:
        i = bisect.bisect_right(starts, c.start) - 1
        if i >= 0 and c.start < regions[i][1]:
            inside.setdefault(id(regions[i][2]), []).append(c)
        elif i >= 0 and src.line_of(c.start) == src.line_of(regions[i][1] - 1) \
                and "\n" not in c.text:
            trailing.setdefault(id(regions[i][2]), []).append(c)   # `} // the end`
        elif i + 1 < len(regions):
            outside.setdefault(id(regions[i + 1][2]), []).append(c)
        else:
            trailer.append(c)

    placer = _Placer(src, source_name, inside, outside, trailing)
    printed = astext(module, decorate=placer).split("\n")
    printed[1:1] = imports      # after the version header
    out = header + printed
    if trailer:                 # after the last definition, before any metadata section
        at = next((i for i, line in enumerate(out) if line.startswith("#[metadata]")),
                  len(out))
        body, rest = out[:at], out[at:]
        while body and not body[-1].strip():
            body.pop()
        out = body + [""] + [_comment_lines(c, src, 0) for c in trailer] + [""] * bool(rest) \
            + rest
        placer.placed += len(trailer)
    result = "\n".join(out)
    if not result.endswith("\n"):
        result += "\n"
    unplaced = [src.line_of(c.start) for c in placer.unplaced]
    placed_all = placer.placed + len(placer.unplaced) == len(comments)
    if not placed_all or ((comments or header) and not _parses(result, source_name)):
        # never write text that lost a comment or does not read back
        unplaced = sorted({src.line_of(c.start) for c in comments}) or [1]
    return Formatted(result, len(unplaced), unplaced)


def _parses(text: str, source_name: str) -> bool:
    from ..ir.diagnostics import DiagnosticError
    try:
        parse(text, source_name=source_name)
    except DiagnosticError:
        return False
    return True
