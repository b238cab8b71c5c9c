"""Type relations of the external calls: `call_dps_packed` from its attributes, an extern
op from the relation given at its registration."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.types import TensorType, Type
from ..relation import TypeRelError, is_known, type_str


def call_dps_packed_rel(args: list[Type], attrs: Any) -> Type | None:
    for i, a in enumerate(args):
        if not is_known(a):
            return None
        if not isinstance(a, TensorType):
            raise TypeRelError(f"call_dps_packed passes tensors, got {type_str(a)}", arg=i)
    if any(not isinstance(d, int) or d < 0 for d in attrs.out_shape):
        raise TypeRelError(f"out_shape must be non-negative integers, got "
                           f"{list(attrs.out_shape)}")
    return TensorType(tuple(int(d) for d in attrs.out_shape), attrs.out_dtype)


def extern_relation(name: str, relation: Callable[..., Type]
                    ) -> Callable[[list[Type], Any], Type | None]:
    """The registry's relation (args, attrs) -> type around a user's relation(*types)."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not all(is_known(a) for a in args):
            return None
        try:
            out = relation(*args)
        except (ValueError, TypeError) as e:
            raise TypeRelError(f"{name}: {e}") from None
        if not isinstance(out, Type):
            raise TypeRelError(f"the relation of {name} returned {out!r}, not a type")
        return out
    rel.__name__ = f"extern_rel[{name}]"
    return rel
