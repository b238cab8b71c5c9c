"""Building Relay IR from Python, with TVM's names (`relay.var`, `relay.const`, ...).

The IR node classes (`expr.py`, `types.py`) are frozen dataclasses that want
exact field types: tuples, not lists; a `Type`, not a dtype string. These
constructors take what a Python user naturally writes (lists, shapes, dtype
strings, numpy arrays, Python numbers), check it, and build the node, so a
mistake fails here with a message rather than later in a pass.

`Function`, `Tuple`, `Call`, ... are spelled like classes because TVM's are
classes, and code written against TVM says `isinstance(e, relay.Function)`.
Calling one builds the IR node of the same name in `expr.py`;
`isinstance(node, Function)` asks whether `node` is such a node (`_NodeBuilder`).
Operator calls are built by the generated functions of `relaylang.op.make`
(`rl.nn.conv2d(x, w, strides=(2, 2))`), which check attributes against the
op's schema; this module stays in the IR layer and knows nothing of ops.
"""
from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from typing import Any

from . import expr as _expr
from . import types as _types
from .attrs import Attrs, DictAttrs
from .dtype import CARRIED, canonical_dtype
from .node import AnyDim, MetaObject
from .span import Span

__all__ = ["Call", "Function", "GlobalVar", "If", "Let", "RefCreate", "RefRead", "RefWrite",
           "TensorType", "Tuple", "TupleGetItem", "TupleType", "const", "var"]


# ---------------------------------------------------------------- checks


def _lowp_source(value: Any) -> Any:
    """`value` as an array to convert to a low-precision dtype: a NumPy array as it is
    (ml_dtypes' arrays converted by value), Python numbers as float64 or int64."""
    import numpy as np
    a = getattr(value, "dtype", None)
    try:
        if a is not None and a.kind in "biuf":
            return np.asarray(value)
        if a is not None:                      # ml_dtypes' float8/int4 arrays, bfloat16
            from .bfloat16 import BFLOAT16
            if a == BFLOAT16:
                return np.asarray(value)
            kind = "int64" if "int" in a.name else "float32"
            return np.asarray(value).astype(kind)
        return np.array(value, dtype=None)
    except (TypeError, ValueError) as e:
        raise TypeError(f"const: cannot make a tensor of {value!r}: {e}") from None


def _check_dtype(dtype: Any, what: str = "dtype") -> str:
    if not isinstance(dtype, str):
        raise TypeError(f"{what} must be a dtype string such as \"float32\", got {dtype!r}")
    canonical = canonical_dtype(dtype)
    if canonical is None:
        raise ValueError(f"{what} {dtype!r} is not a dtype (e.g. \"float32\", \"int8\", \"bool\")")
    return canonical


def _check_shape(shape: Any) -> tuple[_types.Dim, ...]:
    if isinstance(shape, (str, bytes, Mapping)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"shape must be a list or tuple of dimensions, got {shape!r}")
    shape = tuple(shape)
    dims: list[_types.Dim] = []
    for dim in shape:
        if isinstance(dim, (AnyDim, MetaObject)):
            dims.append(dim)
            continue
        if isinstance(dim, bool):
            raise TypeError(f"shape {shape!r}: a dimension is an integer, got {dim!r}")
        try:
            value = operator.index(dim)     # int, numpy integers
        except TypeError:
            raise TypeError(f"shape {shape!r}: a dimension is an integer or `ANY`, "
                            f"got {dim!r}") from None
        if value < 0:
            raise ValueError(f"shape {shape!r}: dimensions are >= 0 (use relaylang.ir.ANY "
                             "for a dimension known only at run time)")
        dims.append(value)
    return tuple(dims)


def _check_expr(value: Any, what: str) -> _expr.Expr:
    if not isinstance(value, _expr.Expr):
        hint = " (wrap numbers and arrays with const())" if not isinstance(value, str) else ""
        raise TypeError(f"{what} must be a Relay expression{hint}, got {type(value).__name__}")
    return value


def _check_type(value: Any, what: str) -> _types.Type | None:
    if value is not None and not isinstance(value, _types.Type):
        raise TypeError(f"{what} must be a Relay type (e.g. TensorType((1, 3), \"float32\")) "
                        f"or None, got {type(value).__name__}")
    return value


def _as_tuple(values: Any, what: str) -> tuple[Any, ...]:
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__iter__"):
        raise TypeError(f"{what} must be a list or tuple, got {type(values).__name__}")
    return tuple(values)


# ---------------------------------------------------------------- classes that build


class _NodeBuilder(type):
    """Metaclass of the builders spelled like classes: `isinstance(x, Function)` and
    `issubclass` answer for the IR node class the builder makes (`_node`), so TVM-style
    type tests keep working although calling the builder returns that node class."""

    _node: type

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, cls._node)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, cls._node)


# ---------------------------------------------------------------- leaves


def var(name_hint: str, type_annotation: _types.Type | str | None = None,
        shape: Sequence[int] | None = None, dtype: str = "float32",
        span: Span | None = None) -> _expr.Var:
    """A local variable, as TVM's `relay.var`.

    `shape` (with `dtype`) annotates it as a tensor (`shape=()` is a scalar); a dtype
    string as `type_annotation` annotates a scalar of that dtype; a `Type` is used
    as given; with neither, the variable is unannotated and inference decides.
    Giving both `shape` and `type_annotation` is an error, as in TVM.
    """
    if not isinstance(name_hint, str):
        raise TypeError(f"var: name_hint must be a string, got {type(name_hint).__name__}")
    if shape is not None and type_annotation is not None:
        raise ValueError(f"var {name_hint!r}: give either type_annotation or shape, not both")
    if shape is not None:
        type_annotation = _types.TensorType(_check_shape(shape), _check_dtype(dtype))
    elif isinstance(type_annotation, str):
        type_annotation = _types.TensorType((), _check_dtype(type_annotation, "type_annotation"))
    else:
        _check_type(type_annotation, f"var {name_hint!r}: type_annotation")
    return _expr.Var(name_hint, type_annotation, span=span)


# TVM's `relay.const`: Python ints and floats (and numpy's 64-bit defaults) become 32-bit.
_NARROW = {"int64": "int32", "float64": "float32"}


def const(value: Any, dtype: str | None = None, span: Span | None = None) -> _expr.Constant:
    """A tensor constant, as TVM's `relay.const`.

    `value` is a numpy array or scalar, a Python number or bool, or a (nested) list
    of them. Without `dtype`, TVM's rule applies: int -> int32, float -> float32,
    bool -> bool, and likewise for numpy int64/float64 data; other numpy dtypes are
    kept. The data is copied, so later changes to `value` do not change the IR.
    """
    import numpy as np

    if isinstance(value, (_expr.Expr, str, bytes)) or value is None:
        raise TypeError(f"const: value must be a number, bool, list or numpy array, "
                        f"got {type(value).__name__}")
    np_dtype = _check_dtype(dtype) if dtype is not None else None
    if np_dtype == "bfloat16":          # numpy_support's carrier, rounded from float32
        from .bfloat16 import to_bfloat16
        try:
            data = np.array(value, dtype=np.float32, order="C")
        except (TypeError, ValueError) as e:
            raise TypeError(f"const: cannot make a tensor of {value!r}: {e}") from None
        return _expr.Constant(np.asarray(to_bfloat16(data), order="C"), span=span)
    if np_dtype in CARRIED:             # ir/lowp.py's carriers, converted from the numbers
        from .lowp import lowp_name, to_lowp
        data = value if lowp_name(getattr(value, "dtype", None)) else _lowp_source(value)
        return _expr.Constant(np.array(to_lowp(data, np_dtype), order="C"), span=span)
    try:
        data = np.array(value, dtype=np_dtype, order="C")
    except (TypeError, ValueError) as e:
        raise TypeError(f"const: cannot make a tensor of {value!r}: {e}") from None
    if data.dtype == object or data.dtype.kind not in "biuf":
        raise TypeError(f"const: value must hold numbers or bools, got dtype {data.dtype}")
    if np_dtype is None and str(data.dtype) in _NARROW:
        data = data.astype(_NARROW[str(data.dtype)])
    return _expr.Constant(data, span=span)


class GlobalVar(metaclass=_NodeBuilder):
    """`GlobalVar("f")`: the name of a global function (`@f`).

    One object per name per module: use the same object for the module's key
    (`IRModule.from_expr(..., functions={gv: fn})`) and for calls to it."""

    _node = _expr.GlobalVar

    def __new__(cls, name_hint: str, span: Span | None = None) -> _expr.GlobalVar:
        if not isinstance(name_hint, str):
            raise TypeError(f"GlobalVar: name_hint must be a string, got {name_hint!r}")
        return _expr.GlobalVar(name_hint.removeprefix("@"), span=span)


# ---------------------------------------------------------------- composites


class Tuple(metaclass=_NodeBuilder):
    """`Tuple([a, b])`: a tuple expression `(%a, %b)`."""

    _node = _expr.Tuple

    def __new__(cls, fields: Sequence[_expr.Expr], span: Span | None = None) -> _expr.Tuple:
        items = _as_tuple(fields, "Tuple fields")
        for i, item in enumerate(items):
            _check_expr(item, f"Tuple field {i}")
        return _expr.Tuple(items, span=span)


class TupleGetItem(metaclass=_NodeBuilder):
    """`TupleGetItem(t, i)`: field `i` of a tuple, `%t.i`."""

    _node = _expr.TupleGetItem

    def __new__(cls, tuple_value: _expr.Expr, index: int,
                span: Span | None = None) -> _expr.TupleGetItem:
        _check_expr(tuple_value, "TupleGetItem tuple_value")
        if isinstance(index, bool):
            raise TypeError("TupleGetItem: index must be an integer, got a bool")
        try:
            position = operator.index(index)
        except TypeError:
            raise TypeError(f"TupleGetItem: index must be an integer, got {index!r}") from None
        if position < 0:
            raise ValueError(f"TupleGetItem: index must be >= 0, got {position}")
        return _expr.TupleGetItem(tuple_value, position, span=span)


class Call(metaclass=_NodeBuilder):
    """`Call(callee, args, attrs=None, type_args=None)`: a call of a function, global,
    constructor or op node. For operators prefer the generated builders
    (`relaylang.nn.conv2d(...)`), which make and check the attributes."""

    _node = _expr.Call

    def __new__(cls, op: _expr.Expr, args: Sequence[_expr.Expr], attrs: Attrs | None = None,
                type_args: Sequence[_types.Type] | None = None,
                span: Span | None = None) -> _expr.Call:
        _check_expr(op, "Call callee")
        items = _as_tuple(args, "Call args")
        for i, item in enumerate(items):
            _check_expr(item, f"Call argument {i}")
        if attrs is not None and not isinstance(attrs, Attrs):
            raise TypeError(f"Call attrs must be an Attrs object or None, got "
                            f"{type(attrs).__name__} (op calls: use the op's builder, e.g. "
                            "relaylang.nn.conv2d(x, w, strides=(2, 2)))")
        targs = _as_tuple(type_args or (), "Call type_args")
        for i, t in enumerate(targs):
            _check_type(t, f"Call type argument {i}")
        return _expr.Call(op, items, attrs, targs, span=span)


class Let(metaclass=_NodeBuilder):
    """`Let(var, value, body)`: `let %var = value; body`."""

    _node = _expr.Let

    def __new__(cls, var: _expr.Var, value: _expr.Expr, body: _expr.Expr,
                span: Span | None = None) -> _expr.Let:
        if not isinstance(var, _expr.Var):
            raise TypeError(f"Let: the bound variable must be a Var (relaylang.var(...)), "
                            f"got {type(var).__name__}")
        _check_expr(value, "Let value")
        _check_expr(body, "Let body")
        return _expr.Let(var, value, body, span=span)


class If(metaclass=_NodeBuilder):
    """`If(cond, true_branch, false_branch)`: `if (cond) { ... } else { ... }`."""

    _node = _expr.If

    def __new__(cls, cond: _expr.Expr, true_branch: _expr.Expr, false_branch: _expr.Expr,
                span: Span | None = None) -> _expr.If:
        _check_expr(cond, "If cond")
        _check_expr(true_branch, "If true_branch")
        _check_expr(false_branch, "If false_branch")
        return _expr.If(cond, true_branch, false_branch, span=span)


class Function(metaclass=_NodeBuilder):
    """`Function(params, body, ret_type=None, type_params=None, attrs=None)`: `fn (...) {...}`.

    `attrs` is a dict (or `DictAttrs`) of function attributes, e.g. `{"Primitive": 1}`."""

    _node = _expr.Function

    def __new__(cls, params: Sequence[_expr.Var], body: _expr.Expr,
                ret_type: _types.Type | None = None,
                type_params: Sequence[_types.TypeVar] | None = None,
                attrs: Mapping[str, Any] | DictAttrs | None = None,
                span: Span | None = None) -> _expr.Function:
        params_t = _as_tuple(params, "Function params")
        for i, p in enumerate(params_t):
            if not isinstance(p, _expr.Var):
                raise TypeError(f"Function parameter {i} must be a Var (relaylang.var(...)), "
                                f"got {type(p).__name__}")
        _check_expr(body, "Function body")
        _check_type(ret_type, "Function ret_type")
        tparams = _as_tuple(type_params or (), "Function type_params")
        for t in tparams:
            if not isinstance(t, _types.TypeVar):
                raise TypeError(f"Function type_params must be TypeVars, got {type(t).__name__}")
        if attrs is None or isinstance(attrs, DictAttrs):
            fn_attrs = attrs
        elif isinstance(attrs, Mapping):
            fn_attrs = DictAttrs(tuple(attrs.items())) if attrs else None
        else:
            raise TypeError(f"Function attrs must be a dict or DictAttrs, got "
                            f"{type(attrs).__name__}")
        return _expr.Function(params_t, body, ret_type, tparams, fn_attrs, span=span)


class RefCreate(metaclass=_NodeBuilder):
    """`RefCreate(value)`: `ref(value)`, a new mutable reference."""

    _node = _expr.RefCreate

    def __new__(cls, value: _expr.Expr, span: Span | None = None) -> _expr.RefCreate:
        return _expr.RefCreate(_check_expr(value, "RefCreate value"), span=span)


class RefRead(metaclass=_NodeBuilder):
    """`RefRead(ref)`: `ref_read(ref)`."""

    _node = _expr.RefRead

    def __new__(cls, ref: _expr.Expr, span: Span | None = None) -> _expr.RefRead:
        return _expr.RefRead(_check_expr(ref, "RefRead ref"), span=span)


class RefWrite(metaclass=_NodeBuilder):
    """`RefWrite(ref, value)`: `ref_write(ref, value)`."""

    _node = _expr.RefWrite

    def __new__(cls, ref: _expr.Expr, value: _expr.Expr,
                span: Span | None = None) -> _expr.RefWrite:
        return _expr.RefWrite(_check_expr(ref, "RefWrite ref"),
                              _check_expr(value, "RefWrite value"), span=span)


# ---------------------------------------------------------------- types


class TensorType(metaclass=_NodeBuilder):
    """`TensorType(shape, dtype="float32")`, as TVM's `relay.TensorType`."""

    _node = _types.TensorType

    def __new__(cls, shape: Sequence[int], dtype: str = "float32",
                span: Span | None = None) -> _types.TensorType:
        return _types.TensorType(_check_shape(shape), _check_dtype(dtype), span=span)


class TupleType(metaclass=_NodeBuilder):
    """`TupleType([t1, t2])`, as TVM's `relay.TupleType`."""

    _node = _types.TupleType

    def __new__(cls, fields: Sequence[_types.Type], span: Span | None = None) -> _types.TupleType:
        items = _as_tuple(fields, "TupleType fields")
        for i, t in enumerate(items):
            if not isinstance(t, _types.Type):
                raise TypeError(f"TupleType field {i} must be a Relay type, got "
                                f"{type(t).__name__}")
        return _types.TupleType(items, span=span)
