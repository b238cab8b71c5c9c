"""Dtype spellings (LANGUAGE.md §5.2): canonical names, element widths and kinds.

Shared by the parser (dtypes in types and attributes) and the op relations.
"""
from __future__ import annotations

import re

_DTYPE = re.compile(r"(bool|int|uint|float|bfloat)(\d*)(?:x(\d+))?\Z")
_BITS = {"int": {1, 2, 4, 8, 16, 32, 64}, "uint": {1, 2, 4, 8, 16, 32, 64},
         "float": {8, 16, 32, 64}, "bfloat": {16}}
# The low-precision floats of TVM and ml_dtypes (ir/lowp.py carries their values):
# name -> bits. Written as they are; no lanes.
LOWP_FLOATS = {"float8_e4m3fn": 8, "float8_e4m3fnuz": 8, "float8_e5m2": 8,
               "float8_e5m2fnuz": 8, "float8_e8m0fnu": 8, "float4_e2m1fn": 4}
# The dtypes NumPy has no dtype for, carried in structured dtypes (ir/bfloat16.py,
# ir/lowp.py): bfloat16, the low-precision floats, and the 4- and 2-bit integers.
CARRIED = frozenset({"bfloat16", *LOWP_FLOATS, "int4", "uint4", "int2", "uint2"})


def canonical_dtype(name: str) -> str | None:
    """TVM's spelling of a dtype (`float` -> `float32`), or None if `name` is not one."""
    if name in LOWP_FLOATS:
        return name
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
    if dtype in LOWP_FLOATS:
        return LOWP_FLOATS[dtype]
    m = _DTYPE.match(dtype)
    assert m, dtype
    bits = 1 if m.group(1) == "bool" else int(m.group(2) or 32)
    return bits * int(m.group(3) or 1)


def dtype_kind(dtype: str) -> str:
    """'bool', 'int', 'uint' or 'float' (bfloat and the low-precision floats count as
    float)."""
    if dtype in LOWP_FLOATS:
        return "float"
    kind = dtype.rstrip("0123456789x")
    return "float" if kind == "bfloat" else kind
