"""Structural hashing of IR, iterative: a hash consistent with equal.py's equality.

Mirrors TVM's `StructuralHash` (apache/tvm: src/node/structural_hash.cc) with the
relay nodes' `SHashReduce` methods (include/tvm/relay/expr.h, adt.h, function.h,
include/tvm/ir/type.h): values that `structural_equal` finds equal hash alike.
`span` and `checked_type` are ignored. The walk uses explicit stacks (no
recursion) and memoises by node identity, so 100,000-deep programs and DAGs with
heavy sharing take linear time.

The hash is the same in every process (as TVM's): the tuning database stores kernels
under it (backend/llvm/knobs.kernel_key). Python's own `hash` of a string or bytes
changes with PYTHONHASHSEED, and of None or a type object with the address, so every
literal goes through `_stable`, which hashes those by their contents (BLAKE2b) and
leaves Python's hash only to ints, floats and tuples of those (deterministic).
"""
from __future__ import annotations

import dataclasses
import enum
import functools
import hashlib
from typing import Any, Callable

from .attrs import Attrs, DictAttrs
from .expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    PatternWildcard,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from .module import IRModule
from .node import Node
from .structural_common import (
    GRAPH_KINDS,
    SCALAR_KINDS,
    functions_by_name,
    lookup_handler,
    norm_attrs,
    types_by_name,
)
from .types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    TypeCall,
    TypeData,
    TypeVar,
)

_NAN_HASH = 0x6E616E          # "nan": hash(nan) depends on the object, NaN == NaN here
_NONE_HASH = 0x4E6F6E65       # "None": hash(None) is its address before Python 3.12


@functools.lru_cache(maxsize=1 << 16)
def _text_hash(text: str) -> int:
    data = text.encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little", signed=True)


def _stable(x: Any) -> int:
    """A hash of a literal (nested tuples of str, bytes, int, float, bool, None, enums)
    that does not depend on the process (see the module docstring)."""
    kind = type(x)
    if kind is int or kind is bool or kind is float:
        return _NAN_HASH if x != x else hash(x)
    if kind is str:
        return _text_hash(x)
    if kind is tuple:
        return hash(tuple(_stable(v) for v in x))
    if x is None:
        return _NONE_HASH
    if isinstance(x, (bytes, bytearray, memoryview)):
        return int.from_bytes(hashlib.blake2b(bytes(x), digest_size=8).digest(), "little",
                              signed=True)
    if isinstance(x, enum.Enum):
        return _stable((kind.__name__, x.name))
    if isinstance(x, str):
        return _text_hash(str(x))
    if isinstance(x, int):
        return hash(int(x))
    if isinstance(x, float):
        return _stable(float(x))
    return hash(x)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with `structural_equal` (equal values hash alike)."""
    return _Hasher(map_free_vars).run(node)


# Post-order: a node's hash combines a literal (its kind and scalar fields) with
# its children's hashes. Definitions number bound variables in visiting order
# (de Bruijn-like), so alpha-equivalent programs hash alike; a use hashes as the
# number of its binder. Graph nodes are memoised by identity (their sharing is
# compared, so both sides hit the memo at the same places); other nodes only when
# nothing below them defines a variable, so that a shared polymorphic `FuncType`
# numbers its type parameters as often on either side.

_ENTER, _DEF, _EXIT = 0, 1, 2
Child = tuple[int, Any]                        # (_ENTER or _DEF, value)
Recipe = tuple[tuple[Any, ...], list[Child]]   # (literal, children)
_MODE_PLAIN, _MODE_GRAPH, _MODE_DEF = 0, 1, 2


def _kids(*values: Any) -> list[Child]:
    return [(_ENTER, v) for v in values]


def _defs(values: tuple[Any, ...]) -> list[Child]:
    return [(_DEF, v) for v in values]


@functools.lru_cache(maxsize=1 << 16)
def _literal_hash(literal: Any) -> int:
    """`_stable` of a node's literal, memoised: most literals repeat ("Call", 2, 0)."""
    return _stable(literal)


def _plain_hash(x: Any) -> int:
    try:
        return _stable((type(x).__name__, x))
    except (TypeError, ValueError):
        return _stable(type(x).__name__)


class _Hasher:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.memo: dict[int, int] = {}
        self.bound = 0          # binders numbered so far
        self.free = 0           # free variables met so far (with map_free_vars)

    def run(self, root: Any) -> int:
        # Two parallel value stacks: child hashes, and whether the child's subtree
        # defines a variable.
        hashes: list[int] = []
        defines: list[bool] = []
        stack: list[tuple[int, Any]] = [(_ENTER, root)]
        while stack:
            op, item = stack.pop()
            if op == _EXIT:
                self.leave(item, hashes, defines)
            elif op == _ENTER:
                self.enter(item, stack, hashes, defines)
            else:
                self.define(item, stack, hashes, defines)
        return hashes[-1]

    def enter(self, x: Any, stack: list[tuple[int, Any]], hashes: list[int],
              defines: list[bool]) -> None:
        kind = type(x)
        if kind in SCALAR_KINDS:
            hashes.append(_plain_hash(x))
            defines.append(False)
            return
        memo = self.memo.get(id(x))
        if memo is not None and isinstance(x, Node):
            hashes.append(memo)
            defines.append(False)
            return
        literal, children = (_HASH.get(kind) or lookup_handler(_HASH, kind))(self, x)
        graph = kind in GRAPH_KINDS and (kind is not Tuple or bool(x.fields))
        if children:
            mode = _MODE_GRAPH if graph else _MODE_PLAIN
            stack.append((_EXIT, (x, literal, len(children), mode)))
            stack.extend(reversed(children))
            return
        h = _literal_hash(literal)  # a leaf: no need to come back
        if isinstance(x, Node):
            self.memo[id(x)] = h
        hashes.append(h)
        defines.append(False)

    def define(self, v: Var | TypeVar, stack: list[tuple[int, Any]], hashes: list[int],
               defines: list[bool]) -> None:
        self.bound += 1
        self.memo[id(v)] = _stable(("bound", self.bound))
        literal = ("def", type(v).__name__)
        if isinstance(v, Var) and (v.type_annotation is not None or v.virtual_device is not None):
            stack.append((_EXIT, (v, literal, 2, _MODE_DEF)))
            stack += ((_ENTER, v.virtual_device), (_ENTER, v.type_annotation))
        else:
            hashes.append(_literal_hash(literal))
            defines.append(True)

    def leave(self, item: tuple[Any, tuple[Any, ...], int, int], hashes: list[int],
              defines: list[bool]) -> None:
        x, literal, n, mode = item
        start = len(hashes) - n
        h = hash((_literal_hash(literal), *hashes[start:]))
        has_def = mode == _MODE_DEF or True in defines[start:]
        del hashes[start:], defines[start:]
        if mode == _MODE_GRAPH or (mode == _MODE_PLAIN and not has_def
                                    and isinstance(x, Node)):
            self.memo[id(x)] = h
        hashes.append(h)
        defines.append(has_def and mode != _MODE_GRAPH)

    def free_var(self, x: Var | TypeVar) -> tuple[Any, ...]:
        if self.map_free_vars:
            self.free += 1
            return ("free", self.free)
        return ("free", id(x))


# ---------------------------------------------------------------- hashing: one recipe per kind


def _h_call(h: _Hasher, x: Call) -> Recipe:
    return (("Call", len(x.args), len(x.type_args)),
            _kids(x.op, *x.args, norm_attrs(x.attrs), *x.type_args))


def _h_function(h: _Hasher, x: Function) -> Recipe:
    return (("Function", len(x.type_params), len(x.params)),
            _defs(x.type_params) + _defs(x.params)
            + _kids(x.ret_type, norm_attrs(x.attrs), x.body))


def _h_constant(h: _Hasher, x: Constant) -> Recipe:
    a = x.data
    # the contents as a digest: the literal stays small (the literal memo keeps it)
    digest = hashlib.blake2b(a.tobytes(), digest_size=16).digest()
    return ("Constant", a.dtype.str, a.shape, digest), []


def _h_type_data(h: _Hasher, x: TypeData) -> Recipe:
    ctors: list[Child] = []
    for c in x.constructors:
        ctors += _kids(c, c.inputs)
    return (("TypeData", x.header.name_hint, len(x.type_params), len(x.constructors)),
            _defs(x.type_params) + ctors)


def _h_attrs(h: _Hasher, x: Attrs) -> Recipe:
    if isinstance(x, DictAttrs):
        return (("DictAttrs", x.attrs_type_key, tuple(k for k, _ in x.entries)),
                _kids(*(v for _, v in x.entries)))
    fields = dataclasses.fields(x)
    return ((type(x).__qualname__, tuple(f.name for f in fields)),
            _kids(*(getattr(x, f.name) for f in fields)))


def _h_module(h: _Hasher, x: IRModule) -> Recipe:
    fns, types = functions_by_name(x), types_by_name(x)
    fn_names, type_names = sorted(fns), sorted(types)
    return (("IRModule", tuple(fn_names), tuple(type_names)),
            _kids(*(types[n] for n in type_names), *(fns[n] for n in fn_names)))


def _h_tuple(h: _Hasher, x: tuple[Any, ...]) -> Recipe:
    if all(type(v) in SCALAR_KINDS for v in x):
        # Shapes and most attribute lists: no need to visit each element.
        return ("tuple", len(x), *(_plain_hash(v) for v in x)), []
    return ("tuple", len(x)), _kids(*x)


def _h_other(h: _Hasher, x: Any) -> Recipe:
    return ("value", _plain_hash(x)), []


_HASH: dict[type, Callable[[_Hasher, Any], Recipe]] = {
    Var: lambda h, x: (h.free_var(x), _kids(x.type_annotation, x.virtual_device)),
    TypeVar: lambda h, x: (h.free_var(x), []),
    GlobalVar: lambda h, x: (("GlobalVar", x.name_hint), []),
    GlobalTypeVar: lambda h, x: (("GlobalTypeVar", x.name_hint), []),
    Op: lambda h, x: (("Op", x.name), []),
    Constructor: lambda h, x: (("Constructor", x.name, x.tag, x.belong_to.name_hint), []),
    Constant: _h_constant,
    Tuple: lambda h, x: (("Tuple", len(x.fields)), _kids(*x.fields)),
    TupleGetItem: lambda h, x: (("TupleGetItem", x.index), _kids(x.tuple_value)),
    Call: _h_call,
    Let: lambda h, x: (("Let",), _defs((x.var,)) + _kids(x.value, x.body)),
    If: lambda h, x: (("If",), _kids(x.cond, x.true_branch, x.false_branch)),
    Function: _h_function,
    RefCreate: lambda h, x: (("RefCreate",), _kids(x.value)),
    RefRead: lambda h, x: (("RefRead",), _kids(x.ref)),
    RefWrite: lambda h, x: (("RefWrite",), _kids(x.ref, x.value)),
    Match: lambda h, x: (("Match", x.complete, len(x.clauses)), _kids(x.data, *x.clauses)),
    Clause: lambda h, x: (("Clause",), _kids(x.lhs, x.rhs)),
    PatternWildcard: lambda h, x: (("PatternWildcard",), []),
    PatternVar: lambda h, x: (("PatternVar",), _defs((x.var,))),
    PatternConstructor: lambda h, x: (("PatternConstructor",), _kids(x.constructor, x.patterns)),
    PatternTuple: lambda h, x: (("PatternTuple",), _kids(x.patterns)),
    TensorType: lambda h, x: (("TensorType", x.dtype), _kids(x.shape)),
    TupleType: lambda h, x: (("TupleType", len(x.fields)), _kids(*x.fields)),
    FuncType: lambda h, x: (("FuncType", len(x.type_params), len(x.arg_types)),
                            _defs(x.type_params) + _kids(*x.arg_types, x.ret_type)),
    TypeCall: lambda h, x: (("TypeCall", len(x.args)), _kids(x.func, *x.args)),
    RefType: lambda h, x: (("RefType",), _kids(x.value)),
    IncompleteType: lambda h, x: (("IncompleteType",), []),
    TypeData: _h_type_data,
    Attrs: _h_attrs,
    IRModule: _h_module,
    tuple: _h_tuple,
    object: _h_other,
}
