"""Attributes of calls and functions.

An operator's attribute schema is a frozen dataclass deriving from `Attrs`
(declared in `relaylang/op/`); its field order is the order the printer writes
fields in and its defaults are the values the printer leaves out. Function
attributes (`Primitive=1`) and the attributes of non-operator calls
(`attrs_type_key="..."`) are an ordered `DictAttrs`.

Attribute values as the parser produces them: `int`, `float`, `bool`, `str`,
`None`, `tuple` (written `[a, b]`, nested), `MetaObject` (`meta[K][i]`),
`ANY` (`?`) and expressions (`@f`, `%x`). `make_attrs` checks and converts
such values against a schema's field annotations.
"""
from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass
from typing import Any, Callable, ClassVar

from .node import AnyDim, MetaObject

# Annotation vocabulary for schema fields (besides int, float, bool, str, object,
# `X | None` and `tuple[X, ...]`).
IndexExpr = typing.Union[int, AnyDim, MetaObject]   # a shape dimension
DType = typing.NewType("DType", str)                # a dtype spelling, written as a string


@dataclass(frozen=True, slots=True)
class Attrs:
    """Base of operator attribute schemas."""

    type_key: ClassVar[str] = "Attrs"

    @classmethod
    def field_defaults(cls) -> list[tuple[str, Any]]:
        """(name, default) for each field, in schema order."""
        out = []
        for f in dataclasses.fields(cls):
            if f.default is not dataclasses.MISSING:
                out.append((f.name, f.default))
            elif f.default_factory is not dataclasses.MISSING:
                out.append((f.name, f.default_factory()))
            else:
                out.append((f.name, dataclasses.MISSING))
        return out

    def items(self) -> list[tuple[str, Any]]:
        return [(f.name, getattr(self, f.name)) for f in dataclasses.fields(self)]

    def non_default_items(self) -> list[tuple[str, Any]]:
        """The fields the printer writes: those that differ from their default."""
        return [(name, getattr(self, name)) for name, default in self.field_defaults()
                if default is dataclasses.MISSING or not _same_value(getattr(self, name), default)]


@dataclass(frozen=True, slots=True)
class DictAttrs(Attrs):
    """An ordered key/value dictionary: function attributes, or the attributes of a
    non-operator call (then `attrs_type_key` names the attribute type to build)."""

    entries: tuple[tuple[str, Any], ...] = ()
    attrs_type_key: str | None = None

    type_key: ClassVar[str] = "DictAttrs"

    def get(self, key: str, default: Any = None) -> Any:
        for k, v in self.entries:
            if k == key:
                return v
        return default

    def items(self) -> list[tuple[str, Any]]:
        return list(self.entries)

    def non_default_items(self) -> list[tuple[str, Any]]:
        return list(self.entries)


def _same_value(a: Any, b: Any) -> bool:
    # bool is an int subclass: True must not equal a default of 1.
    if type(a) is not type(b) and (isinstance(a, bool) or isinstance(b, bool)):
        return False
    return a == b


class AttrError(Exception):
    """A wrong attribute: `key` is the offending key (None for the whole set)."""

    def __init__(self, key: str | None, message: str):
        super().__init__(message)
        self.key = key
        self.message = message


# ---------------------------------------------------------------- validation

Coerce = Callable[[Any], Any]


def _describe(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return "a float"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "None"
    if isinstance(value, tuple):
        return "a list"
    if isinstance(value, MetaObject):
        return f"a meta[{value.type_key}] reference"
    if isinstance(value, AnyDim):
        return "`?`"
    return "an expression"


class _Mismatch(Exception):
    def __init__(self, expected: str):
        self.expected = expected


def _coercer(annotation: Any) -> tuple[Coerce, str]:
    """A converter for values of `annotation`, and a description of what it accepts."""
    if annotation is int:
        def to_int(v: Any) -> int:
            if isinstance(v, int) and not isinstance(v, bool):
                return v
            raise _Mismatch("an integer")
        return to_int, "an integer"
    if annotation is float:
        def to_float(v: Any) -> float:
            if isinstance(v, (int, float)) and not isinstance(v, bool):
                return float(v)
            raise _Mismatch("a number")
        return to_float, "a number"
    if annotation is bool:
        def to_bool(v: Any) -> bool:
            if isinstance(v, bool):
                return v
            if isinstance(v, int) and v in (0, 1):
                return bool(v)
            raise _Mismatch("a boolean")
        return to_bool, "a boolean"
    if annotation is str or annotation is DType:
        what = "a dtype string" if annotation is DType else "a string"

        def to_str(v: Any) -> str:
            if isinstance(v, str):
                return v
            raise _Mismatch(what)
        return to_str, what
    if annotation is IndexExpr:
        def to_dim(v: Any) -> Any:
            if (isinstance(v, int) and not isinstance(v, bool)) or isinstance(v, (AnyDim, MetaObject)):
                return v
            raise _Mismatch("a dimension")
        return to_dim, "a dimension"
    if annotation is AnyDim or annotation is MetaObject:
        what = "`?`" if annotation is AnyDim else "a meta reference"

        def to_exact(v: Any) -> Any:
            if isinstance(v, annotation):
                return v
            raise _Mismatch(what)
        return to_exact, what
    if annotation is object or annotation is Any:
        return (lambda v: v), "any value"
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(annotation) if a is not type(None)]
        allows_none = len(options) < len(typing.get_args(annotation))
        inner = [_coercer(a) for a in options]
        is_dim = set(options) == {int, AnyDim, MetaObject}
        what = ("a dimension" if is_dim else " or ".join(w for _, w in inner)) \
            + (" or None" if allows_none else "")

        def to_union(v: Any) -> Any:
            if v is None and allows_none:
                return None
            for conv, _ in inner:
                try:
                    return conv(v)
                except _Mismatch:
                    pass
            raise _Mismatch(what)
        return to_union, what
    if origin is tuple:
        args = typing.get_args(annotation)
        elem, elem_what = _coercer(args[0])
        what = "a list of " + ("lists" if elem_what.startswith("a list")
                               else elem_what.removeprefix("a ").removeprefix("an ") + "s")

        def to_tuple(v: Any) -> tuple:
            if not isinstance(v, tuple):
                raise _Mismatch(what)
            return tuple(elem(x) for x in v)
        return to_tuple, what
    raise TypeError(f"unsupported attribute annotation {annotation!r}")


_SCHEMA_CACHE: dict[type, dict[str, tuple[Coerce, str]]] = {}


def _schema_coercers(schema: type[Attrs]) -> dict[str, tuple[Coerce, str]]:
    table = _SCHEMA_CACHE.get(schema)
    if table is None:
        hints = typing.get_type_hints(schema, globalns=vars(__import__(schema.__module__, fromlist=["_"])) | globals())
        table = {f.name: _coercer(hints[f.name]) for f in dataclasses.fields(schema)}
        _SCHEMA_CACHE[schema] = table
    return table


def make_attrs(schema: type[Attrs], values: dict[str, Any], op_name: str = "") -> Attrs:
    """Build `schema` from parsed values; `AttrError` names the first bad key."""
    table = _schema_coercers(schema)
    kwargs = {}
    for key, value in values.items():
        entry = table.get(key)
        if entry is None:
            known = ", ".join(table) or "none"
            where = f"`{op_name}`" if op_name else schema.__name__
            raise AttrError(key, f"unknown attribute `{key}` for {where} (its attributes: {known})")
        conv, what = entry
        try:
            kwargs[key] = conv(value)
        except _Mismatch:
            raise AttrError(key, f"attribute `{key}` expects {what}, got {_describe(value)}") from None
    for name, default in schema.field_defaults():
        if default is dataclasses.MISSING and name not in kwargs:
            # TVM requires fields declared without a default (and so always prints them,
            # `units=None`); where None is a valid value we read an omitted one as None.
            try:
                kwargs[name] = table[name][0](None)
            except _Mismatch:
                raise AttrError(None, f"missing required attribute `{name}`") from None
    return schema(**kwargs)
