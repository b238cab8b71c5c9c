"""Block comments nested deeper than the grammar's lexer spells out (LANGUAGE.md §2.2).

Block comments nest, and a regular expression cannot count: grammar/relay.lark
skips comments nested up to 8 deep in one lexer match, which covers everything
written by hand or printed at no cost. When the lexer stops at a `/*` it could
not skip, the parser (parser.py) asks `deep_comment_at` whether that is a
comment that does end, and `blank_block_comments` turns every block comment
from there on into spaces (newlines kept, so every position stays where it
was) before parsing again. A comment that never ends is left alone, so the
lexer reports it as unterminated, as before.
"""
from __future__ import annotations

import re

from lark.exceptions import UnexpectedInput, UnexpectedToken

# What can hold `/*` without starting a comment, as grammar/relay.lark lexes it: a
# string, a line comment, a meta reference or directive, a number, and a name (`/`
# is a name character, so `%a/*` is the name `a/` then `*`).
_TOKENS = re.compile(r"""
    "(?:[^"\\]|\\[\s\S])*"
  | //[^\n]*
  | meta\[[^\]\[\s]*\]\[[0-9]+\]
  | \#\[[^\]]*\]
  | [0-9][0-9.eE+\-]*(?:[if][0-9.eE+\-]*)?
  | [%@]?[A-Za-z_][A-Za-z0-9_/]*(?:\.[A-Za-z_][A-Za-z0-9_/]*)*
  | (?P<open>/\*)
""", re.VERBOSE)
_NESTING = re.compile(r"/\*|\*/")
_NOT_NEWLINE = re.compile(r"[^\r\n]+")


def comment_end(text: str, start: int) -> int | None:
    """End of the block comment opening at `start` (after its matching `*/`), or None."""
    depth = 0
    for m in _NESTING.finditer(text, start):
        depth += 1 if m.group() == "/*" else -1
        if depth == 0:
            return m.end()
    return None


def blank_block_comments(text: str) -> str:
    """`text`, which starts at a token boundary, with its block comments turned into
    spaces; line breaks stay, so lines and columns do not move."""
    pieces: list[str] = []
    done = 0
    pos = 0
    while True:
        m = _TOKENS.search(text, pos)
        if m is None:
            break
        if m.group("open") is None:
            pos = m.end()
            continue
        end = comment_end(text, m.start())
        if end is None:             # unterminated: the lexer reports it
            break
        pieces.append(text[done:m.start()])
        pieces.append(_NOT_NEWLINE.sub(lambda r: " " * len(r.group()), text[m.start():end]))
        done = pos = end
    pieces.append(text[done:])
    return "".join(pieces)


def deep_comment_at(e: UnexpectedInput, text: str) -> int | None:
    """Where the syntax error `e` in `text` is a block comment the lexer could not skip
    but that does end (nested too deep for the grammar), or None."""
    pos = getattr(e, "pos_in_stream", None)
    if isinstance(e, UnexpectedToken):
        pos = getattr(e.token, "start_pos", pos)
    if not isinstance(pos, int):
        return None
    # An unskippable `/*` lexes as `/` then `*`, so the error may be at the `*`.
    for start in (pos, pos - 1):
        if start >= 0 and text.startswith("/*", start) and comment_end(text, start) is not None:
            return start
    return None


# ------------------------------------------------------------------ scanning comments
# For the formatter (format.py), which carries comments over to the printed text: where
# each comment is, and the text with comments and string contents blanked, in which braces
# are the program's own.

_SCAN = re.compile(r"""
    (?P<string>"(?:[^"\\]|\\[\s\S])*")
  | (?P<line>//[^\n]*)
  | meta\[[^\]\[\s]*\]\[[0-9]+\]
  | \#\[[^\]]*\]
  | [0-9][0-9.eE+\-]*(?:[if][0-9.eE+\-]*)?
  | [%@]?[A-Za-z_][A-Za-z0-9_/]*(?:\.[A-Za-z_][A-Za-z0-9_/]*)*
  | (?P<open>/\*)
""", re.VERBOSE)


class Comment:
    """A comment at text[start:end] (a `//` comment ends before its line break)."""

    __slots__ = ("end", "start", "text")

    def __init__(self, start: int, end: int, text: str):
        self.start, self.end, self.text = start, end, text

    @property
    def is_block(self) -> bool:
        return self.text.startswith("/*")

    def __repr__(self) -> str:
        return f"Comment({self.start}, {self.end}, {self.text!r})"


def scan_comments(text: str, stop: int | None = None) -> list[Comment]:
    """The comments of `text[:stop]`, in order; an unterminated block comment is not one
    (the parser reports it)."""
    limit = len(text) if stop is None else stop
    out: list[Comment] = []
    pos = 0
    while pos < limit:
        m = _SCAN.search(text, pos, limit)
        if m is None:
            break
        if m.group("line") is not None:
            body = m.group().rstrip("\r \t")
            out.append(Comment(m.start(), m.start() + len(body), body))
        elif m.group("open") is not None:
            end = comment_end(text, m.start())
            if end is None:
                break
            out.append(Comment(m.start(), end, text[m.start():end]))
            pos = end
            continue
        pos = m.end()
    return out


def code_skeleton(text: str, comments: list[Comment]) -> str:
    """`text` with its comments turned into spaces (line breaks kept) and the insides of
    its string literals into `x`, so that every brace left is code and positions stay."""
    pieces: list[str] = []
    done = 0
    for c in comments:
        pieces.append(text[done:c.start])
        pieces.append(_NOT_NEWLINE.sub(lambda r: " " * len(r.group()), text[c.start:c.end]))
        done = c.end
    pieces.append(text[done:])
    blanked = "".join(pieces)
    return _STRING.sub(lambda m: '"' + re.sub(r"[^\r\n]", "x", m.group()[1:-1]) + '"', blanked)


_STRING = re.compile(r'"(?:[^"\\\n]|\\[\s\S])*"')
