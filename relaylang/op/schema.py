"""Declaring attribute schemas (the op families use `attrs_schema`).

A schema mirrors one TVM attrs struct (`TVM_DECLARE_ATTRS` in
include/tvm/relay/attrs/*.h): same field names, in the order of the
`TVM_ATTR_FIELD` list (the printer writes fields in that order), and the same
defaults (the printer omits fields equal to their default). How TVM's field
types map onto annotations:

    int, double, bool, std::string, String    int, float, bool, str
    DataType                                  DType; NullValue<DataType>() is ""
                                              (TVM prints a void dtype as "")
    IndexExpr / Array<IndexExpr>              IndexExpr / tuple[IndexExpr, ...]
    Integer / Array<Integer>                  int / tuple[int, ...]
    any ObjectRef (arrays, Integer, ...)      `X | None`: TVM accepts None for it
    a field without set_default               no default: required, always printed
                                              (which is why TVM prints `units=None`)
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from ..ir.attrs import Attrs

A = TypeVar("A", bound=type[Attrs])

# kw_only: a required field may follow defaulted ones, as in TVM's field lists.
_SCHEMA: Callable[[A], A] = dataclass(frozen=True, slots=True, kw_only=True)


def attrs_schema(cls: A) -> A:
    """Class decorator for an attribute schema (a frozen, slotted, keyword-only dataclass)."""
    return _SCHEMA(cls)

