"""The base of every IR node, and the opaque objects of the metadata table.

IR nodes are frozen, slotted dataclasses with `eq=False, repr=False`: generated
`__eq__`/`__hash__`/`__repr__` would recurse into children (RecursionError on
deep graphs, O(n) hashes). Identity is sharing; structural equality lives in
`ir/equal.py`.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .span import Span

IR_NODE = dict(frozen=True, slots=True, eq=False, repr=False)


@dataclass(**IR_NODE)
class Node:
    span: Span | None = field(default=None, kw_only=True)

    def __repr__(self) -> str:
        # Shallow on purpose: never recurse into children.
        return f"<{type(self).__name__} at {self.span or hex(id(self))}>"


@dataclass(frozen=True, slots=True)
class MetaObject:
    """An object of the metadata table that relaylang does not interpret.

    TVM printed references such as `meta[VirtualDevice][0]` or
    `meta[tir.SizeVar][0]`; their objects are carried through parsing and
    printing unchanged. `payload` is the object's JSON subtree (TVM's node
    layout with references inlined) as canonical JSON text, so that two
    objects are equal exactly when they serialise the same.
    """

    type_key: str
    payload: str

    def __repr__(self) -> str:
        return f"MetaObject({self.type_key!r})"


@dataclass(frozen=True, slots=True)
class AnyDim:
    """A dimension unknown until run time, written `?`."""

    def __repr__(self) -> str:
        return "?"


ANY = AnyDim()
