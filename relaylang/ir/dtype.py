"""Dtype spellings (LANGUAGE.md §5.2): canonical names, element widths and kinds.

Shared by the parser (dtypes in types and attributes) and the op relations.
"""
from __future__ import annotations

import re

_DTYPE = re.compile(r"(bool|int|uint|float|bfloat)(\d*)(?:x(\d+))?\Z")
_BITS = {"int": {1, 4, 8, 16, 32, 64}, "uint": {1, 4, 8, 16, 32, 64},
         "float": {8, 16, 32, 64}, "bfloat": {16}}


def canonical_dtype(name: str) -> str | None:
    """TVM's spelling of a dtype (`float` -> `float32`), or None if `name` is not one."""
    m = _DTYPE.match(name)
    if not m:
        return None
    kind, bits_text, lanes_text = m.groups()
    lanes = int(lanes_text) if lanes_text else 1
    if lanes < 1 or (kind == "bool" and bits_text):
        return None
    suffix = f"x{lanes}" if lanes > 1 else ""        # TVM prints one lane without `x1`
    if kind == "bool":
        return "bool" + suffix
    bits = int(bits_text) if bits_text else 32     # LANGUAGE.md §5.2: no width means 32
    return f"{kind}{bits}{suffix}" if bits in _BITS[kind] else None


def dtype_bits(dtype: str) -> int:
    """Total bits of one element (bool is 1 bit, as in TVM)."""
    m = _DTYPE.match(dtype)
    assert m, dtype
    bits = 1 if m.group(1) == "bool" else int(m.group(2) or 32)
    return bits * int(m.group(3) or 1)


def dtype_kind(dtype: str) -> str:
    """'bool', 'int', 'uint' or 'float' (bfloat counts as float)."""
    kind = dtype.rstrip("0123456789x")
    return "float" if kind == "bfloat" else kind
