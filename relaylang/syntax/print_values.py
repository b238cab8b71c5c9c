"""What the printer writes besides the expression graph: literals, names, types, patterns,
attribute values, and the meta table they fill.

Mirrors the leaf, type and attribute parts of TVM's src/relay/printer/relay_text_printer.cc
(`AllocVar`, `GetUniqueName`, `VisitType_`, `VisitPattern_`, `PrintAttributeValue`) and
src/support/scalars.cc (`NDArrayScalarToString`). Where TVM printed text its own parser could
not read back (LANGUAGE.md §11.9), we print what ours reads: floats exactly (shortest form that
round-trips, not six digits), names that lex again, strings with the escapes `parse_string`
decodes.

Types, patterns and attribute values are trees; they are rendered with an explicit stack
(`_render`), never by recursion.
"""
from __future__ import annotations

import numbers
import re
from typing import Any, Callable, Iterable

from ..ir.attrs import Attrs, DictAttrs
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.node import AnyDim, MetaObject
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
)
from .literals import is_dtype_name, quote_string

RESERVED = frozenset({"def", "fn", "let", "if", "else", "type", "extern", "match", "free_var",
                      "ref", "ref_read", "ref_write"})

# Scalar dtypes with a literal spelling (LANGUAGE.md §2.5), and their suffixes.
_SUFFIX = {"int16": "i16", "int32": "", "int64": "i64",
           "float16": "f16", "float32": "f", "float64": "f64"}

# Kinds TVM annotates with `/* ty=... */` (PrintOptionalInfo).
_ANNOTATED = (Constant, Call, Var, Function, Tuple, TupleGetItem)

_PLAIN_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class _Raw(str):
    """Text to copy to the output as is (as opposed to a `str` attribute value to quote)."""


# ------------------------------------------------------------------ literals


def float_text(text: str, suffix: str) -> str:
    """A float literal from Python/numpy's shortest spelling: `3.0` -> `3f`, `inf` -> `inff`."""
    if text.endswith(".0"):
        text = text[:-2]
    return text + suffix


def scalar_literal(data: Any) -> str | None:
    """The literal for a 0-d array of a dtype that has one (`42i64`, `0.5f`), else None."""
    if getattr(data, "ndim", None) != 0:
        return None
    dtype = str(data.dtype)
    if dtype == "bool":
        return "True" if bool(data) else "False"
    suffix = _SUFFIX.get(dtype)
    if suffix is None:
        return None
    if dtype.startswith("int"):
        return f"{int(data)}{suffix}"
    # str() of a numpy float scalar is the shortest text that reads back as that width.
    return float_text(str(data[()]), suffix)


def float_attr(value: float) -> str:
    """An attribute double: exact (Python's repr) with TVM's `f` suffix."""
    return float_text(repr(float(value)), "f")


# ------------------------------------------------------------------ names


def _ident_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def legal_name(hint: str, prefix: str) -> str:
    """`hint` made into an identifier the lexer reads back.

    Characters outside `[A-Za-z0-9_]` become `_`, except `.` and `/` between identifier
    parts (`bn.weight`, `conv1/weight`); a name that does not start with a letter or `_`
    gets `prefix` in front (TVM's `v`); a reserved word gets a trailing `_`.
    """
    if _PLAIN_NAME.match(hint) and hint not in RESERVED:
        return hint
    out: list[str] = []
    for i, ch in enumerate(hint):
        after = hint[i + 1] if i + 1 < len(hint) else ""
        between = bool(out) and _ident_char(out[-1]) and _ident_char(after)
        if _ident_char(ch):
            out.append(ch)
        elif ch == "/" and between:
            out.append(ch)
        elif ch == "." and between and not after.isdigit():
            out.append(ch)
        else:
            out.append("_")
    name = "".join(out)
    if not name or not (name[0].isalpha() or name[0] == "_"):
        name = prefix + name
    if name in RESERVED:
        name += "_"
    return name


def unique_name(name: str, taken: dict[str, int]) -> str:
    """TVM's `GetUniqueName`: the second `x` is `x1`, then `x2`, skipping names in use."""
    count = taken.get(name)
    if count is not None:
        while True:
            count += 1
            candidate = f"{name}{count}"
            if candidate not in taken:
                break
        taken[name] = count
        name = candidate
    taken[name] = 0
    return name


def _render(root: object, expand: Callable[[Any], list[Any]]) -> str:
    """Render a tree left to right: `expand(node)` gives its pieces, `_Raw` text or subtrees."""
    out: list[str] = []
    stack = [root]
    while stack:
        item = stack.pop()
        if isinstance(item, _Raw):
            out.append(item)
        else:
            stack.extend(reversed(expand(item)))
    return "".join(out)


def _commas(items: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        if out:
            out.append(_Raw(", "))
        out.append(item)
    return out


def attr_exprs(attrs: object) -> list[Expr]:
    """The expressions inside attribute values, in print order (they print as graph nodes)."""
    if not isinstance(attrs, Attrs):
        return []
    out: list[Expr] = []
    stack = [value for _, value in reversed(attrs.non_default_items())]
    while stack:
        value = stack.pop()
        if isinstance(value, Expr):
            out.append(value)
        elif isinstance(value, tuple):
            stack.extend(reversed(value))
    return out


class ValuePrinter:
    """Names, the meta table, and every printed form that is not an expression graph."""

    def __init__(self) -> None:
        self.meta: dict[str, list[object]] = {}
        self._meta_index: dict[object, int] = {}      # MetaObject (by equality) -> index
        self._const_index: dict[int, int] = {}        # id(Constant) -> index
        self._names: dict[str, int] = {}               # local names, unique over the whole text
        self.var_names: dict[int, str] = {}
        self._noted: set[int] = set()                  # nodes whose `/* ty= */` is printed
        self._type_names: dict[str, int] = {}
        self._type_var_names: dict[int, str] = {}

    def begin_definition(self) -> None:
        """Start a definition: type parameters are named afresh (every def may have its `A`),
        and variables and annotations are per definition; local names stay unique."""
        self._type_names = {}
        self._type_var_names = {}
        self.var_names = {}
        self._noted = set()

    # -------------------------------------------------------------- meta table
    def meta_ref(self, obj: MetaObject) -> str:
        index = self._meta_index.get(obj)
        if index is None:
            entries = self.meta.setdefault(obj.type_key, [])
            index = self._meta_index[obj] = len(entries)
            entries.append(obj)
        return f"meta[{obj.type_key}][{index}]"

    def constant_text(self, const: Constant) -> str:
        literal = scalar_literal(const.data)
        if literal is not None:
            return literal
        index = self._const_index.get(id(const))
        if index is None:
            entries = self.meta.setdefault("relay.Constant", [])
            index = self._const_index[id(const)] = len(entries)
            entries.append(const.data)
        return f"meta[relay.Constant][{index}]"

    # -------------------------------------------------------------- variables
    def var_def(self, var: Var) -> str:
        """A binding occurrence: `%x {virtual_device=...}: T /* ty=T */`, naming `var`."""
        name = self.var_names.get(id(var))
        if name is None:
            name = self.var_names[id(var)] = "%" + unique_name(legal_name(var.name_hint, "v"),
                                                               self._names)
        text = name
        if var.virtual_device is not None:
            text += f" {{virtual_device={self.attr_value(var.virtual_device)}}}"
        if var.type_annotation is not None:
            text += ": " + self.type_text(var.type_annotation)
        return text + self.type_note(var)

    def type_note(self, node: Expr) -> str:
        """TVM's ` /* ty=T */` after a node, once per node, when its type is known."""
        if node.checked_type is None or not isinstance(node, _ANNOTATED) or id(node) in self._noted:
            return ""
        self._noted.add(id(node))
        return f" /* ty={self.type_text(node.checked_type)} */"

    def type_var_name(self, tv: TypeVar) -> str:
        name = self._type_var_names.get(id(tv))
        if name is None:
            base = legal_name(tv.name_hint, "T")
            if is_dtype_name(base) or base in ("Tensor", "_"):
                base = "T" + base            # would read as a dtype or a keyword
            name = self._type_var_names[id(tv)] = unique_name(base, self._type_names)
        return name

    # -------------------------------------------------------------- types
    def type_text(self, ty: Type) -> str:
        return _render(ty, self._type_pieces)

    def _type_pieces(self, ty: Any) -> list[Any]:
        if isinstance(ty, TensorType):
            if not ty.shape and is_dtype_name(ty.dtype):
                return [_Raw(ty.dtype)]
            # `bfloat16` written bare reads as an ADT name (LANGUAGE.md §5.2)
            dims = ", ".join(self._dim(d) for d in ty.shape)
            return [_Raw(f"Tensor[({dims}), {ty.dtype}]")]
        if isinstance(ty, TupleType):
            tail = ",)" if len(ty.fields) == 1 else ")"
            return [_Raw("("), *_commas(ty.fields), _Raw(tail)]
        if isinstance(ty, FuncType):
            head = "fn "
            if ty.type_params:
                head += "[" + ", ".join(self.type_var_name(tv) for tv in ty.type_params) + "]"
            return [_Raw(head + "("), *_commas(ty.arg_types), _Raw(") -> "), ty.ret_type]
        if isinstance(ty, TypeCall):       # `S` for an ADT without parameters, as TVM printed it
            if not ty.args:
                return [ty.func]
            return [ty.func, _Raw("["), *_commas(ty.args), _Raw("]")]
        if isinstance(ty, TypeVar):
            return [_Raw(self.type_var_name(ty))]
        if isinstance(ty, GlobalTypeVar):
            return [_Raw(ty.name_hint)]
        if isinstance(ty, IncompleteType):
            return [_Raw("_")]
        if isinstance(ty, RefType):
            return [_Raw("ref("), ty.value, _Raw(")")]
        raise TypeError(f"cannot print type {ty!r}")

    def _dim(self, dim: object) -> str:
        if isinstance(dim, AnyDim):
            return "?"
        if isinstance(dim, MetaObject):
            return self.meta_ref(dim)
        return str(int(dim))  # type: ignore[call-overload]

    # -------------------------------------------------------------- patterns
    def pattern_text(self, pattern: Pattern) -> str:
        return _render(pattern, self._pattern_pieces)

    def _pattern_pieces(self, p: Any) -> list[Any]:
        if isinstance(p, PatternWildcard):
            return [_Raw("_")]
        if isinstance(p, PatternVar):
            return [_Raw(self.var_def(p.var))]
        if isinstance(p, PatternConstructor):
            if not p.patterns:
                return [_Raw(p.constructor.name)]
            return [_Raw(p.constructor.name + "("), *_commas(p.patterns), _Raw(")")]
        if isinstance(p, PatternTuple):
            return [_Raw("("), *_commas(p.patterns), _Raw(")")]
        raise TypeError(f"cannot print pattern {p!r}")

    # -------------------------------------------------------------- attributes
    def attr_value(self, value: object, expr_text: Callable[[Expr], str] | None = None) -> str:
        """`1`, `0.5f`, `True`, `"s"`, `None`, `[a, b]`, `?`, `meta[K][i]`, or an expression."""
        def pieces(v: Any) -> list[Any]:
            if isinstance(v, tuple):
                return [_Raw("["), *_commas(v), _Raw("]")]
            if isinstance(v, Expr):
                if expr_text is None:
                    raise TypeError("an expression attribute value needs the expression printer")
                return [_Raw(expr_text(v))]
            return [_Raw(self._attr_scalar(v))]
        return _render(value, pieces)

    def _attr_scalar(self, v: object) -> str:
        if v is None:
            return "None"
        if isinstance(v, bool) or type(v).__name__ in ("bool", "bool_"):   # numpy's too
            return "True" if v else "False"
        if isinstance(v, str):
            return quote_string(v)
        if isinstance(v, numbers.Integral):
            return str(int(v))
        if isinstance(v, numbers.Real):
            return float_attr(float(v))
        if isinstance(v, AnyDim):
            return "?"
        if isinstance(v, MetaObject):
            return self.meta_ref(v)
        raise TypeError(f"cannot print attribute value {v!r}")

    def attr_items(self, attrs: object, expr_text: Callable[[Expr], str] | None) -> list[str]:
        """`key=value` for the attributes a call or function prints (schema order, non-default);
        a non-operator call's attributes end with `attrs_type_key="..."`."""
        if attrs is None:
            return []
        if isinstance(attrs, MetaObject):       # an opaque attrs object: a trailing argument
            return [self.meta_ref(attrs)]
        if not isinstance(attrs, Attrs):
            raise TypeError(f"cannot print attributes {attrs!r}")
        out = [f"{key}={self.attr_value(value, expr_text)}"
               for key, value in attrs.non_default_items()]
        if isinstance(attrs, DictAttrs) and attrs.attrs_type_key is not None:
            out.append(f"attrs_type_key={quote_string(attrs.attrs_type_key)}")
        return out


__all__ = ["RESERVED", "ValuePrinter", "attr_exprs", "float_attr", "float_text", "legal_name",
           "scalar_literal", "unique_name"]
