"""Turning Lark's syntax errors into messages people can act on.

Lark reports the unexpected token and the set of terminals the parser could
have accepted; this module names both in the language's own terms and
recognises the common mistakes (LANGUAGE.md §12.2) with a message of their own.
"""
from __future__ import annotations

import re
from typing import Any

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..ir.span import Span

_EXTERN_HEAD = re.compile(r"\bextern\s+type\s+[A-Za-z_][A-Za-z0-9_]*\s*(\[[^\]]*\])?\s*\Z")

_TERMINAL_NAMES = {
    "IDENT": "an identifier", "LOCAL": "a local variable (`%name`)",
    "GLOBAL": "a global (`@name`)", "GRAPH": "a graph binding (`%0`)",
    "NUMBER": "a number", "STRING": "a string", "META": "a meta reference (`meta[K][i]`)",
    "VERSION": "the version header", "BINOP": "an infix operator", "$END": "end of input",
    "IMPORT": 'an import (`#[import "prelude"]`)',
}
# Terminals worth listing in "expected ..." (the rest would only be noise).
_LISTED = ["LOCAL", "IDENT", "GLOBAL", "GRAPH", "NUMBER", "STRING", "META", "RPAR", "RBRACE",
           "RSQB", "COMMA", "SEMICOLON", "COLON", "EQUAL", "LBRACE", "LPAR", "__ANON_0",
           "__ANON_1", "ELSE", "$END"]


# A terminal that stands for several of the others (grammar/relay.lark: a whole graph
# binding on one line); errors are told in terms of its first token, `%N`.
_INTERNAL = {"FAST_CALL_STMT"}
_GRAPH_ID = re.compile(r"%[0-9]+")


def _plain_token(tok: Any) -> Any:
    """`tok`, or for a FAST_CALL_STMT token the GRAPH token it starts with: what the lexer
    reads there when the whole statement is not one token."""
    if getattr(tok, "type", None) not in _INTERNAL:
        return tok
    from lark import Token
    value = _GRAPH_ID.match(tok.value).group()
    return Token("GRAPH", value, tok.start_pos, tok.line, tok.column, tok.line,
                 tok.column + len(value), tok.start_pos + len(value))


def _terminal_name(name: str, lark: Lark) -> str:
    if name in _TERMINAL_NAMES:
        return _TERMINAL_NAMES[name]
    for term in lark.terminals:
        if term.name == name and type(term.pattern).__name__ == "PatternStr":
            return f"`{term.pattern.value}`"
    return name


def _found(tok: Any, lark: Lark) -> str:
    if tok.type == "$END":
        return "end of input"
    kind = _TERMINAL_NAMES.get(tok.type)
    if kind is None:
        return f"`{tok.value}`"
    return f"{kind.split(' (')[0].removeprefix('a ').removeprefix('an ')} `{tok.value}`"


def _expected(expected: set[str], lark: Lark) -> str:
    expected = expected - _INTERNAL
    names = [_terminal_name(n, lark) for n in _LISTED if n in expected]
    if not names:
        names = sorted(_terminal_name(n, lark) for n in expected)[:6]
    if len(names) > 6:
        names = names[:6] + ["..."]
    return ", ".join(names)


def _unexpected_token(e: UnexpectedToken, lark: Lark) -> str:
    tok, expected = _plain_token(e.token), set(e.expected) - _INTERNAL
    if tok.type == "IDENT" and "LOCAL" in expected and "IDENT" not in expected:
        return (f"expected a local variable, found identifier `{tok.value}`: "
                f"local variables are written `%{tok.value}`")
    if tok.type == "IDENT" and tok.value in ("True", "False") and "LOCAL" in expected:
        return f"expected a local variable, found `{tok.value}`"
    if tok.type == "VERSION":
        return "the version header must come first, before any definition"
    if tok.type == "MATCH" or tok.type == "MATCH_PARTIAL":
        return "a `match` cannot be an operand; put it in parentheses: `(match (...) {...})`"
    if tok.type == "LBRACE" and "BINOP" not in expected and "LBRACE" not in expected:
        return "a block `{ ... }` cannot appear here; put it in parentheses"
    if tok.type in ("DEF", "TYPE", "EXTERN") and "RBRACE" in expected:
        return f"unexpected `{tok.value}`: is a `}}` missing before it?"
    return f"unexpected {_found(tok, lark)}; expected {_expected(expected, lark)}"


def _unexpected_character_at(text: str, pos: int) -> str:
    return _describe_character(text, pos)[0]


def _unexpected_character(e: UnexpectedCharacters, text: str) -> tuple[str, int]:
    return _describe_character(text, e.pos_in_stream)


def _describe_character(text: str, pos: int) -> tuple[str, int]:
    rest = text[pos:pos + 2]
    if rest.startswith('"'):
        return "unterminated string literal", 1
    if rest.startswith("/*"):
        return "unterminated block comment (block comments nest: is a `*/` missing?)", 2
    if rest.startswith("#["):
        end = text.find("]", pos)
        body = text[pos:end + 1] if end >= 0 else text[pos:pos + 12]
        return (f"unknown directive `{body}`: only `#[version = \"0.0.5\"]` and `#[metadata]` "
                "exist", len(body))
    if rest.startswith("#"):
        return "`#` must start a directive `#[...]`; comments are `//` or `/* */`", 1
    if rest.startswith("\r"):
        return "a carriage return must be followed by a line feed", 1
    if rest[:1] in "%@":
        return f"`{rest[:1]}` must be followed immediately by a name", 1
    ch = rest[:1]
    return f"unexpected character `{ch}` ({'U+%04X' % ord(ch)})" if ch else "unexpected input", 1


def describe_syntax_error(e: UnexpectedInput, text: str, source_name: str,
                          lark: Lark) -> tuple[str, Span]:
    if isinstance(e, UnexpectedCharacters):
        message, width = _unexpected_character(e, text)
        return message, Span(source_name, e.line, e.column, e.line, e.column + width)
    if isinstance(e, UnexpectedToken):
        tok = _plain_token(e.token)
        if tok.type == "$END":
            line = text.count("\n") + 1
            column = len(text) - (text.rfind("\n") + 1) + 1
            expected = _expected(set(e.expected), lark)
            return (f"unexpected end of input; expected {expected}",
                    Span(source_name, line, column, line, column + 1))
        span = Span(source_name, tok.line, tok.column, tok.end_line or tok.line,
                    tok.end_column or tok.column + 1)
        pos = getattr(tok, "start_pos", None)
        if isinstance(pos, int):
            # An unclosed `/*` lexes as `/` then `*` (the contextual lexer falls back).
            for start in (pos, pos - 1):
                if start >= 0 and text.startswith("/*", start):
                    line = text.count("\n", 0, start) + 1
                    column = start - (text.rfind("\n", 0, start) + 1) + 1
                    return (_unexpected_character_at(text, start),
                            Span(source_name, line, column, line, column + 2))
            if tok.type == "LBRACE" and _EXTERN_HEAD.search(text, 0, pos):
                return "an external type may not have constructors", span
        return _unexpected_token(e, lark), span
    if isinstance(e, UnexpectedEOF):
        line = text.count("\n") + 1
        return "unexpected end of input", Span(source_name, line, 1, line, 2)
    return str(e).splitlines()[0], Span(source_name, 1, 1, 1, 2)
