"""Numeric and string literals, and dtype spellings (LANGUAGE.md §2.5, §2.6, §5.2).

The lexer matches TVM's greedy number shape (a minus run, a body over
`[0-9.eE+-]`, an optional `i`/`f` width suffix); this module decides what a
matched literal means and rejects the ones TVM rejects (`1.5`, `1i8`,
`2147483648i32`, `65505f16`).
"""
from __future__ import annotations

import math
import re
from functools import lru_cache

from ..ir.dtype import canonical_dtype

_INT_BODY = re.compile(r"[0-9]+\Z")
_FLOAT_BODY = re.compile(r"[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]+)?\Z")
_SPECIAL = re.compile(r"(inf|nan)f(16|32|64)?\Z")

_INT_RANGE = {16: (-(1 << 15), (1 << 15) - 1), 32: (-(1 << 31), (1 << 31) - 1),
              64: (-(1 << 63), (1 << 63) - 1)}
_FLOAT_MAX = {16: 65504.0, 32: 3.4028234663852886e38, 64: math.inf}


class LiteralError(ValueError):
    """A literal that has no meaning; the message says why and how to write it."""


@lru_cache(maxsize=4096)   # models repeat the same few literals (`1f`, `-1`, `1e-05f`)
def parse_number(text: str) -> tuple[int | float, str]:
    """The value and dtype of a numeric literal token: `-5` -> (-5, "int32")."""
    body = text.lstrip("-")
    negative = (len(text) - len(body)) % 2 == 1
    special = _SPECIAL.match(body)
    if special:
        value = math.inf if special.group(1) == "inf" else math.nan
        return (-value if negative else value), "float" + (special.group(2) or "32")
    cut = min((i for i in (body.find("i"), body.find("f")) if i >= 0), default=len(body))
    digits, suffix = body[:cut], body[cut:]
    if not suffix:
        if not _INT_BODY.match(digits):
            hint = f" (a float needs the `f` suffix: `{text}f`)" if _FLOAT_BODY.match(digits) else ""
            raise LiteralError(f"invalid integer literal `{text}`{hint}")
        value = -int(digits) if negative else int(digits)
        for bits in (32, 64):
            low, high = _INT_RANGE[bits]
            if low <= value <= high:
                return value, f"int{bits}"
        raise LiteralError(f"integer literal `{text}` does not fit in 64 bits")
    kind, width_text = suffix[0], suffix[1:]
    if width_text not in ("", "16", "32", "64"):
        raise LiteralError(f"invalid width `{width_text}` in literal `{text}`: "
                           f"only {kind}16, {kind}32 and {kind}64 exist "
                           "(other dtypes come from the metadata section)")
    bits = int(width_text or 32)
    if kind == "i":
        if not _INT_BODY.match(digits):
            raise LiteralError(f"invalid integer literal `{text}`")
        value = -int(digits) if negative else int(digits)
        low, high = _INT_RANGE[bits]
        if not low <= value <= high:
            raise LiteralError(f"integer literal `{text}` is unrepresentable in width {bits}")
        return value, f"int{bits}"
    if not _FLOAT_BODY.match(digits):
        raise LiteralError(f"invalid floating point literal `{text}`")
    fvalue = float(digits)
    if fvalue > _FLOAT_MAX[bits]:
        raise LiteralError(f"floating point literal `{text}` is unrepresentable in width {bits}")
    return (-fvalue if negative else fvalue), f"float{bits}"


def parse_index(text: str) -> int:
    """A projection index: a non-negative integer without suffix (`%t.0`)."""
    if not _INT_BODY.match(text):
        raise LiteralError(f"a tuple projection needs a non-negative integer index, got `{text}`")
    return int(text)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "'": "'", "0": "\0",
            "a": "\a", "b": "\b", "f": "\f", "v": "\v", "?": "?"}
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|[\s\S])")


def _unescape(m: re.Match[str]) -> str:
    code = m.group(1)
    if code[0] == "x" and len(code) > 1:    # a bare `\x` (no hex digit) is an unknown escape
        return chr(int(code[1:], 16))
    if code[0] in "01234567":
        return chr(int(code, 8))
    # An unknown escape keeps its backslash: TVM's lexer had no escapes at all.
    return _ESCAPES.get(code, "\\" + code)


def parse_string(token_text: str) -> str:
    """The value of a string token (quotes included), decoding the printer's C escapes."""
    inner = token_text[1:-1]
    return _ESCAPE.sub(_unescape, inner) if "\\" in inner else inner


def quote_string(value: str) -> str:
    """A string literal that `parse_string` reads back as `value`."""
    out = []
    for ch in value:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 32 or ord(ch) == 127:
            out.append(f"\\x{ord(ch):02x}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def parse_dtype(name: str) -> str | None:
    """The canonical spelling of a dtype (`float` -> `float32`), or None if invalid."""
    return canonical_dtype(name)


def is_dtype_name(name: str) -> bool:
    """Names that type position reads as dtypes (LANGUAGE.md §5.2)."""
    return name.startswith(("int", "uint", "float", "bool"))
