"""Relay types (TVM's include/tvm/ir/type.h and relay/type.h).

`TensorType` dimensions are `int`, `ANY` (`?`) or a `MetaObject` (a symbolic
dimension from the metadata table). Type variables and incomplete types are
compared by identity; everything else structurally (`ir/equal.py`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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


# core.rly's `extern type Storage`, the type of memory.alloc_storage's result (TVM's memory
# planning imports core.rly with it). Its name is always known to the parser, as if
# declared: a pass that binds a storage value to a typed variable (a kernel's parameter,
# a continuation's) prints an annotation `Storage[]` that must parse back.
STORAGE_TYPE_NAME = "Storage"
BUILTIN_TYPE_NAMES = frozenset({STORAGE_TYPE_NAME})


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


def with_type_children(t: Type, children: list[Type]) -> Type:
    """`t` with new immediate sub-types (in `type_children` order)."""
    if isinstance(t, TupleType):
        return TupleType(tuple(children), span=t.span)
    if isinstance(t, FuncType):
        return FuncType(tuple(children[:-1]), children[-1], t.type_params, span=t.span)
    if isinstance(t, TypeCall):
        return TypeCall(children[0], tuple(children[1:]), span=t.span)
    if isinstance(t, RefType):
        return RefType(children[0], span=t.span)
    return t


def map_type(t: Type, leaf: Callable[[Type], Type | None]) -> Type:
    """Rebuild `t` bottom-up, replacing each node for which `leaf` returns a type.
    Unchanged sub-types stay the same objects."""
    done: dict[int, Type] = {}
    stack: list[tuple[Type, bool]] = [(t, False)]
    while stack:
        node, expanded = stack.pop()
        if id(node) in done:
            continue
        replaced = leaf(node)
        if replaced is not None:
            done[id(node)] = replaced
            continue
        kids = type_children(node)
        if not kids:
            done[id(node)] = node
        elif not expanded:
            stack.append((node, True))
            stack.extend((k, False) for k in kids if id(k) not in done)
        else:
            new = [done[id(k)] for k in kids]
            same = all(a is b for a, b in zip(kids, new))
            done[id(node)] = node if same else with_type_children(node, new)
    return done[id(t)]


def tuple_leaves(t: Type) -> list[Type]:
    """The non-tuple types of a (nested) tuple type in order, or `[t]` for any other
    type: a tuple-typed value's tensors (iterative: tuples may nest deeply)."""
    out: list[Type] = []
    stack = [t]
    while stack:
        u = stack.pop()
        if isinstance(u, TupleType):
            stack.extend(reversed(u.fields))
        else:
            out.append(u)
    return out


def from_tuple_leaves(t: Type, leaves: Sequence[Any]) -> Any:
    """The value of type `t` (tuples as Python tuples) from its leaves in the order of
    `tuple_leaves(t)` (iterative)."""
    if not isinstance(t, TupleType):
        return leaves[0]
    it = iter(leaves)
    # (field types, values so far) per open tuple
    stack: list[tuple[tuple[Type, ...], list[Any]]] = [(t.fields, [])]
    while True:
        fields, values = stack[-1]
        if len(values) == len(fields):
            stack.pop()
            done = tuple(values)
            if not stack:
                return done
            stack[-1][1].append(done)
            continue
        f = fields[len(values)]
        if isinstance(f, TupleType):
            stack.append((f.fields, []))
        else:
            values.append(next(it))
