"""Relay types (TVM's include/tvm/ir/type.h and relay/type.h).

`TensorType` dimensions are `int`, `ANY` (`?`) or a `MetaObject` (a symbolic
dimension from the metadata table). Type variables and incomplete types are
compared by identity; everything else structurally (`ir/equal.py`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .node import IR_NODE, AnyDim, MetaObject, Node

if TYPE_CHECKING:
    from .expr import Constructor

Dim = int | AnyDim | MetaObject


@dataclass(**IR_NODE)
class Type(Node):
    pass


@dataclass(**IR_NODE)
class TensorType(Type):
    shape: tuple[Dim, ...]
    dtype: str

    @property
    def is_scalar(self) -> bool:
        return not self.shape


@dataclass(**IR_NODE)
class TupleType(Type):
    fields: tuple[Type, ...]


@dataclass(**IR_NODE)
class TypeVar(Type):
    """A type parameter (`def @f[A]`); identity is the variable."""

    name_hint: str


@dataclass(**IR_NODE)
class GlobalTypeVar(Type):
    """The name of an ADT (`type List[A] {...}`); one object per name per module."""

    name_hint: str


@dataclass(**IR_NODE)
class TypeCall(Type):
    """An ADT applied to type arguments: `List[float32]`, or `Opaque[]` with none."""

    func: Type
    args: tuple[Type, ...]


@dataclass(**IR_NODE)
class FuncType(Type):
    arg_types: tuple[Type, ...]
    ret_type: Type
    type_params: tuple[TypeVar, ...] = ()


@dataclass(**IR_NODE)
class RefType(Type):
    value: Type


@dataclass(**IR_NODE)
class IncompleteType(Type):
    """`_`: a type to be inferred."""


@dataclass(**IR_NODE)
class TypeData(Node):
    """An ADT definition: `type Name[params] { constructors }`."""

    header: GlobalTypeVar
    type_params: tuple[TypeVar, ...]
    constructors: tuple[Constructor, ...]


def scalar_type(dtype: str) -> TensorType:
    return TensorType((), dtype)


def type_children(t: Type) -> tuple[Type, ...]:
    """The immediate sub-types of `t` (for iterative walks over types)."""
    if isinstance(t, TupleType):
        return t.fields
    if isinstance(t, FuncType):
        return (*t.arg_types, t.ret_type)
    if isinstance(t, TypeCall):
        return (t.func, *t.args)
    if isinstance(t, RefType):
        return (t.value,)
    return ()
