"""Generated call builders: one Python function per registered op, in TVM's shape.

    from relaylang.op import make
    y = make.nn.conv2d(x, w, strides=(2, 2), padding=(1, 1))   # also rl.nn.conv2d
    z = make.add(y, make.nn.relu(y))                           # also rl.add

Nothing here lists op names: a namespace (`nn`, `image`, `annotation`, the root)
is a lazy view of the registry, so an op registered later gets its builder on
first use. The op `nn.conv2d` is `conv2d` in namespace `nn`; a dotted name with
more parts makes nested namespaces. A name that is both an op and a namespace
resolves to the op.

A builder takes the op's inputs positionally (or by their registered names,
`OpDef.input_names`) and its attributes as keywords only, checked and converted
by `make_attrs`, the parser's checker, so Python and text accept the same
attributes. TVM's Python API also takes some attributes positionally
(`relay.reshape(x, (2, 3))`); here that is an error that names the keyword,
because positional order is easy to get wrong across ops.

Inputs that are not expressions are converted, as `relay.concatenate` and
`relay.nn.pad` do in TVM: a list or tuple holding at least one expression (or
empty) becomes a `Tuple` (`rl.concatenate([a, b], axis=1)`); a number, bool,
numpy array or list of numbers becomes `const(value)` with const's dtype rule
(int -> int32, float -> float32), so `rl.add(x, 1.0)` works for float32 `x`;
give `const(v, dtype)` for any other dtype. Attribute values may be lists or
numpy scalars; they are converted to the tuples and Python numbers of the schema.

Every mistake raises `OpCallError` (a `TypeError`) naming the op, the offending
input or keyword, and what is accepted.
"""
import dataclasses as _dataclasses
import difflib as _difflib
import inspect as _inspect
import keyword as _keyword
import sys as _sys
from typing import Any as _Any
from typing import Callable as _Callable

from ..ir import builder as _builder
from ..ir.attrs import AttrError as _AttrError
from ..ir.attrs import make_attrs as _make_attrs
from ..ir.expr import Call as _Call
from ..ir.expr import Expr as _Expr
from ..ir.expr import Tuple as _TupleNode
from .registry import OpDef as _OpDef
from .registry import all_ops as _all_ops
from .registry import get as _get_op
from .registry import get_op_def as _get_op_def
from .signature import op_doc_line as _op_doc_line
from .signature import signature_of as _signature_of

__all__ = ["OpCallError", "OpNamespace", "get_builder", "namespace"]


class OpCallError(TypeError):
    """Arguments an op's builder does not accept. `op_name` is the op; `key` the input or
    attribute at fault (None when it is the number of inputs)."""

    def __init__(self, op_name: str, key: "str | None", message: str):
        super().__init__(message)
        self.op_name = op_name
        self.key = key
        self.message = message


# ---------------------------------------------------------------- arguments


def _is_numpy(value: _Any) -> bool:
    # numpy arrays, numpy scalars: recognised without importing numpy.
    return type(value).__module__ == "numpy"


def _is_data(value: _Any) -> bool:
    """A value `const()` can wrap: numbers, bools, numpy data, lists of them."""
    if isinstance(value, (bool, int, float)) or _is_numpy(value):
        return True
    if isinstance(value, (list, tuple)):
        return all(_is_data(v) for v in value)     # nesting is as deep as the tensor's rank
    return False


def _to_input(value: _Any, op_name: str, input_name: str) -> _Expr:
    if isinstance(value, _Expr):
        return value
    if isinstance(value, (list, tuple)) and (not value or not _is_data(value)):
        fields = [_to_input(v, op_name, f"{input_name}[{i}]") for i, v in enumerate(value)]
        return _TupleNode(tuple(fields))
    if _is_data(value):
        try:
            return _builder.const(value)
        except (TypeError, ValueError) as e:
            raise OpCallError(op_name, input_name, f"{op_name}(): input `{input_name}`: {e}") \
                from None
    raise OpCallError(op_name, input_name,
                      f"{op_name}(): input `{input_name}` must be a Relay expression (or a "
                      f"number, list or numpy array, wrapped with const()), got "
                      f"{type(value).__name__}")


def _attr_value(value: _Any) -> _Any:
    """A Python attribute value as the schema's checker expects it: lists as tuples,
    numpy scalars and arrays as Python numbers and tuples, numpy dtypes as strings."""
    if isinstance(value, list):
        return tuple(_attr_value(v) for v in value)    # nested at most a few levels
    if isinstance(value, tuple):
        return tuple(_attr_value(v) for v in value)
    np = _sys.modules.get("numpy")
    if np is not None:
        if isinstance(value, np.dtype) or (isinstance(value, type)
                                           and issubclass(value, np.generic)):
            return np.dtype(value).name
        if isinstance(value, (np.ndarray, np.generic)):
            return _attr_value(value.tolist())
    return value


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _ticked(names: "list[str] | tuple[str, ...]") -> str:
    return ", ".join(f"`{n}`" for n in names) or "none"


def _attr_fields(opdef: _OpDef) -> list[str]:
    """The attribute keywords of an op: schema fields, less those that repeat an input
    (arange's start/stop/step are given as inputs)."""
    if opdef.attrs is None:
        return []
    return [f.name for f in _dataclasses.fields(opdef.attrs)
            if f.name not in opdef.input_names]


def _did_you_mean(key: str, options: list[str]) -> str:
    close = _difflib.get_close_matches(key, options, n=1)
    return f"; did you mean `{close[0]}`?" if close else ""


def _input_names(opdef: _OpDef) -> tuple[str, ...]:
    if len(opdef.input_names) == opdef.num_inputs:
        return opdef.input_names
    return tuple(f"arg{i}" for i in range(max(opdef.num_inputs, 0)))


def _bind_inputs(opdef: _OpDef, args: tuple, kwargs: dict[str, _Any]) -> list[_Expr]:
    """The call's arguments; consumes the keywords that name inputs."""
    name = opdef.name
    if opdef.num_inputs < 0:        # variadic: every positional argument, or one list of them
        values = list(args[0]) if len(args) == 1 and isinstance(args[0], list) else list(args)
        return [_to_input(v, name, f"argument {i}") for i, v in enumerate(values)]
    names = _input_names(opdef)
    inputs_text = f"{_plural(len(names), 'input')} ({', '.join(names) or 'none'})"
    if len(args) > len(names):
        fields = _attr_fields(opdef)
        hint = (f"; attributes are keywords: {', '.join(f + '=...' for f in fields)}"
                if fields else "")
        raise OpCallError(name, None, f"{name}() takes {inputs_text} but "
                          f"{len(args)} positional arguments were given{hint}")
    values = list(args)
    for given in names[:len(args)]:
        if given in kwargs:
            raise OpCallError(name, given, f"{name}() got input `{given}` both positionally "
                              "and as a keyword")
    missing = []
    for rest in names[len(args):]:
        if rest in kwargs:
            values.append(kwargs.pop(rest))
        else:
            missing.append(rest)
    if missing:
        raise OpCallError(name, missing[0], f"{name}() is missing "
                          f"{_plural(len(missing), 'input')} {_ticked(missing)}: it takes "
                          f"{inputs_text}")
    return [_to_input(v, name, n) for v, n in zip(values, names)]


def _make_call_attrs(opdef: _OpDef, kwargs: dict[str, _Any]) -> _Any:
    name = opdef.name
    if opdef.attrs is None:
        if kwargs:
            key = next(iter(kwargs))
            raise OpCallError(name, key, f"{name}() takes no attributes, got `{key}`"
                              + _did_you_mean(key, list(_input_names(opdef))))
        return None
    values = {key: _attr_value(v) for key, v in kwargs.items()}
    try:
        return _make_attrs(opdef.attrs, values, name)
    except _AttrError as e:
        message = e.message if f"`{name}`" in e.message else f"{name}(): {e.message}"
        fields = _attr_fields(opdef)
        key = e.key
        if key is None:     # a missing required attribute: the one the message names
            key = next((f for f in fields if f"`{f}`" in e.message), None)
        elif key not in fields:
            message += _did_you_mean(key, fields + list(_input_names(opdef)))
        raise OpCallError(name, key, message) from None


def _build_call(opdef: _OpDef, args: tuple, kwargs: dict[str, _Any]) -> _Call:
    kwargs = dict(kwargs)
    inputs = _bind_inputs(opdef, args, kwargs)
    attrs = _make_call_attrs(opdef, kwargs)
    return _Call(_get_op(opdef.name), tuple(inputs), attrs)


# ---------------------------------------------------------------- generated functions


def _none_when_omitted(schema: type) -> set[str]:
    """The fields without a default that read an omitted value as None (`units` of
    nn.dense): optional for the caller, although TVM always prints them."""
    values = {name: None for name, default in schema.field_defaults()
              if default is _dataclasses.MISSING}
    while values:
        try:
            _make_attrs(schema, values)
            break
        except _AttrError as e:
            if e.key not in values:     # a field that rejects None, now missing: done
                break
            del values[e.key]
    return set(values)


def _python_signature(opdef: _OpDef) -> "_inspect.Signature | None":
    """What `help()` and editors show: inputs, then keyword-only attributes."""
    P = _inspect.Parameter
    if opdef.num_inputs < 0:
        params = [P("args", P.VAR_POSITIONAL)]
    else:
        params = [P(n, P.POSITIONAL_OR_KEYWORD) for n in _input_names(opdef)]
    if opdef.attrs is not None:
        optional = _none_when_omitted(opdef.attrs)
        for field, default in opdef.attrs.field_defaults():
            if field in opdef.input_names:
                continue
            if default is _dataclasses.MISSING:
                default = None if field in optional else P.empty
            params.append(P(field, P.KEYWORD_ONLY, default=default))
    if any(not p.name.isidentifier() or _keyword.iskeyword(p.name) for p in params):
        return None
    try:
        return _inspect.Signature(params, return_annotation=_Call)
    except ValueError:      # e.g. an input and an attribute of the same name
        return None


def _docstring(opdef: _OpDef) -> str:
    label = _signature_of(opdef).label
    body = opdef.doc.strip() or _op_doc_line(opdef)
    schema = (f"Attributes are keyword-only, checked against {opdef.attrs.type_key}."
              if opdef.attrs is not None else "The op takes no attributes.")
    return (f"{label} -> Call\n\n{body}\n\nBuilds a call of the `{opdef.name}` op. Inputs are "
            "Relay expressions; numbers, numpy arrays and lists of them are wrapped with "
            f"const(), lists of expressions with Tuple. {schema}")


def _generate(opdef: _OpDef) -> _Callable[..., _Call]:
    def build(*args: _Any, **kwargs: _Any) -> _Call:
        return _build_call(opdef, args, kwargs)

    short = opdef.name.rsplit(".", 1)[-1]
    build.__name__ = short
    build.__qualname__ = opdef.name
    build.__module__ = __name__
    build.__doc__ = _docstring(opdef)
    signature = _python_signature(opdef)
    if signature is not None:
        build.__signature__ = signature    # type: ignore[attr-defined]
    build.op_name = opdef.name             # type: ignore[attr-defined]
    return build


_BUILDERS: "dict[str, tuple[_OpDef, _Callable[..., _Call]]]" = {}


def get_builder(op_name: str) -> _Callable[..., _Call]:
    """The generated builder of the registered op `op_name` (KeyError if unknown)."""
    opdef = _get_op_def(op_name)
    if opdef is None:
        raise KeyError(f"no registered op {op_name!r}")
    cached = _BUILDERS.get(op_name)
    if cached is None or cached[0] is not opdef:
        cached = _BUILDERS[op_name] = (opdef, _generate(opdef))
    return cached[1]


# ---------------------------------------------------------------- namespaces


class OpNamespace:
    """A lazy view of the ops whose names start with `path + "."` (`path == ""`: the
    ops without a namespace). Attributes are builders or nested namespaces, read from
    the registry on each access, so ops registered later are found."""

    __slots__ = ("_path",)

    def __init__(self, path: str):
        self._path = path

    @property
    def _prefix(self) -> str:
        return self._path + "." if self._path else ""

    def _members(self) -> dict[str, bool]:
        """Each name in this namespace -> True for an op, False for a nested namespace."""
        prefix = self._prefix
        members: dict[str, bool] = {}
        for opdef in _all_ops():
            if opdef.name.startswith(prefix):
                head, dot, _ = opdef.name[len(prefix):].partition(".")
                members[head] = members.get(head, False) or not dot
        return members

    def _lookup(self, name: str) -> _Any:
        full = self._prefix + name
        if _get_op_def(full) is not None:
            return get_builder(full)
        if not name.startswith("_") and any(o.name.startswith(full + ".") for o in _all_ops()):
            return namespace(full)
        where = f"op namespace {self._path!r}" if self._path else "the root op namespace"
        suggestion = _difflib.get_close_matches(name, list(self._members()), n=3)
        hint = f"; did you mean {' or '.join(f'`{s}`' for s in suggestion)}?" if suggestion else ""
        raise AttributeError(f"{where} has no op {full!r}{hint}")

    def __getattr__(self, name: str) -> _Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._lookup(name)

    def __dir__(self) -> list[str]:
        return sorted(self._members())

    def __repr__(self) -> str:
        return f"<op namespace {self._path or '(root)'}>"


_NAMESPACES: dict[str, OpNamespace] = {}


def namespace(path: str) -> OpNamespace:
    """The namespace of ops named `path.*` (`""`: the root). Always the same object."""
    ns = _NAMESPACES.get(path)
    if ns is None:
        ns = _NAMESPACES[path] = OpNamespace(path)
    return ns


def __getattr__(name: str) -> _Any:
    # Module attributes are the root namespace: `make.add`, `make.nn.conv2d`.
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return namespace("")._lookup(name)


def __dir__() -> list[str]:
    return sorted(set(__all__) | set(namespace("")._members()))
