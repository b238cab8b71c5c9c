"""Structural equality and structural hashing of IR, both iterative.

Mirrors TVM's `StructuralEqual` / `StructuralHash` (apache/tvm:
src/node/structural_equal.cc, structural_hash.cc) with the relay nodes'
`SEqualReduce` / `SHashReduce` methods (include/tvm/relay/expr.h, adt.h,
function.h, include/tvm/ir/type.h):

- Binding occurrences (function and type parameters, `let` variables, pattern
  variables) are paired with the binding occurrence on the other side; uses
  must then agree with that pairing (alpha-equivalence).
- Free variables must be the same object, or with `map_free_vars` are paired
  on first meeting, consistently in both directions.
- Graph nodes (calls, lets, ifs, functions, non-empty tuples, refs, matches,
  variables) keep a bijective memo between the two sides, so sharing must match:
  `%0 = f(%x); add(%0, %0)` differs from `add(f(%x), f(%x))`. Constants, types,
  `TupleGetItem` and names compare by value whatever their sharing, as in TVM.
- `span` and `checked_type` are ignored.

Both walks use explicit stacks (no recursion) and memoise by node identity,
so 100,000-deep programs and DAGs with heavy sharing take linear time.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

from .attrs import Attrs, DictAttrs
from .expr import (Call, Clause, Constant, Constructor, Function, GlobalVar, If, Let, Match, Op,
                   PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate,
                   RefRead, RefWrite, Tuple, TupleGetItem, Var)
from .module import IRModule
from .node import AnyDim, MetaObject, Node
from .types import (FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                    TypeCall, TypeData, TypeVar)

# Nodes whose sharing is part of their meaning (TVM's `MarkGraphNode`); the
# empty tuple is not one (it is a constant in TVM).
_GRAPH = frozenset({Var, TypeVar, Call, Let, If, Function, Tuple, RefCreate, RefRead, RefWrite,
                    Match})
_PLAIN = frozenset({int, bool, str, type(None), AnyDim, MetaObject})    # compared with ==
_SCALAR = _PLAIN | {float}
# Leaves equal to themselves in any context (nothing in them can be bound).
_BY_VALUE = frozenset({Op, GlobalVar, GlobalTypeVar, Constructor, Constant})
_NAN_HASH = hash("relaylang.nan")


def _attrs(attrs: Attrs | None) -> Attrs | None:
    # A function or call with no attributes means the same as one with an empty
    # dictionary of them: both become None.
    if isinstance(attrs, DictAttrs) and not attrs.entries and attrs.attrs_type_key is None:
        return None
    return attrs


def _lookup(table: dict[type, Any], kind: type) -> Any:
    """The handler for `kind`, or for its nearest base class (cached)."""
    handler = table.get(kind)
    if handler is None:
        handler = next((table[b] for b in kind.__mro__ if b in table), table[object])
        table[kind] = handler
    return handler


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether `a` and `b` are the same program up to renaming of bound variables."""
    return _Equal(map_free_vars).run(a, b)


def structural_hash(node: Any, map_free_vars: bool = False) -> int:
    """A hash consistent with `structural_equal` (equal values hash alike)."""
    return _Hasher(map_free_vars).run(node)


# ================================================================ equality

Task = tuple[bool, Any, Any]          # (is_definition, lhs, rhs)
_DONE: list[Task] = []


def _vals(*pairs: tuple[Any, Any]) -> list[Task]:
    # Absent fields on both sides (no annotation, no attributes) need no task.
    return [(False, x, y) for x, y in pairs if x is not None or y is not None]


def _seq(xs: tuple[Any, ...], ys: tuple[Any, ...], define: bool = False) -> list[Task] | None:
    if len(xs) != len(ys):
        return None
    return [(define, x, y) for x, y in zip(xs, ys)] if xs else _DONE


def _join(*parts: list[Task] | None) -> list[Task] | None:
    out: list[Task] = []
    for part in parts:
        if part is None:
            return None
        out.extend(part)
    return out


class _Equal:
    def __init__(self, map_free_vars: bool):
        self.map_free_vars = map_free_vars
        self.lhs: dict[int, Any] = {}       # graph node on the left -> its partner
        self.rhs: dict[int, Any] = {}       # and back: the pairing is a bijection
        self.pairs: set[tuple[int, int]] = set()   # non-graph node pairs already compared

    def run(self, a: Any, b: Any) -> bool:
        stack: list[Task] = [(False, a, b)]
        while stack:
            define, x, y = stack.pop()
            tasks = self.define(x, y) if define else self.compare(x, y)
            if tasks is None:
                return False
            stack.extend(reversed(tasks))
        return True

    def pair(self, x: Any, y: Any) -> bool | None:
        """Record x <-> y. True: a new pair; False: already paired so; None: a conflict."""
        ix, iy = id(x), id(y)
        seen = self.lhs.get(ix)
        if seen is not None:
            return False if seen is y else None
        if iy in self.rhs:
            return None
        self.lhs[ix] = y
        self.rhs[iy] = x
        return True

    def compare(self, x: Any, y: Any) -> list[Task] | None:
        kind = type(x)
        if kind is not type(y):
            return None
        if kind in _PLAIN:
            return _DONE if x == y else None
        if kind in _GRAPH:
            if kind is not Tuple or x.fields or y.fields:
                fresh = self.pair(x, y)
                if not fresh:
                    return None if fresh is None else _DONE
        elif kind in _BY_VALUE and x is y:
            return _DONE
        elif isinstance(x, Node):
            # Not a graph node: sharing is irrelevant, but a pair compared once
            # need not be compared again (keeps shared types linear).
            key = (id(x), id(y))
            if key in self.pairs:
                return _DONE
            self.pairs.add(key)
        return (_EQ.get(kind) or _lookup(_EQ, kind))(self, x, y)

    def define(self, x: Any, y: Any) -> list[Task] | None:
        """A binding occurrence: pair the two variables, then compare their annotations."""
        if type(x) is not type(y):
            return None
        fresh = self.pair(x, y)
        if not fresh:
            return None if fresh is None else _DONE
        if isinstance(x, Var):
            return _vals((x.type_annotation, y.type_annotation),
                         (x.virtual_device, y.virtual_device))
        return _DONE


# ---------------------------------------------------------------- equality: one rule per kind
# Each rule receives two values of the same class and returns the sub-comparisons
# still to make (definitions first, in binding order), or None when they differ.


def _same(ok: bool) -> list[Task] | None:
    return _DONE if ok else None


def _eq_var(eq: _Equal, x: Var, y: Var) -> list[Task] | None:
    # Reached only at a first meeting that is not a definition: a free variable.
    if not eq.map_free_vars and x is not y:
        return None
    return _vals((x.type_annotation, y.type_annotation), (x.virtual_device, y.virtual_device))


def _eq_constant(eq: _Equal, x: Constant, y: Constant) -> list[Task] | None:
    # Bitwise, as TVM compares NDArrays: NaN equals NaN, 0.0 differs from -0.0.
    a, b = x.data, y.data
    return _same(a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes())


def _eq_call(eq: _Equal, x: Call, y: Call) -> list[Task] | None:
    return _join(_vals((x.op, y.op)), _seq(x.args, y.args),
                 _vals((_attrs(x.attrs), _attrs(y.attrs))), _seq(x.type_args, y.type_args))


def _eq_function(eq: _Equal, x: Function, y: Function) -> list[Task] | None:
    # Type parameters first: the parameters' annotations may use them.
    return _join(_seq(x.type_params, y.type_params, define=True),
                 _seq(x.params, y.params, define=True),
                 _vals((x.ret_type, y.ret_type), (_attrs(x.attrs), _attrs(y.attrs)),
                       (x.body, y.body)))


def _eq_match(eq: _Equal, x: Match, y: Match) -> list[Task] | None:
    if x.complete != y.complete:
        return None
    return _join(_vals((x.data, y.data)), _seq(x.clauses, y.clauses))


def _eq_pattern_constructor(eq: _Equal, x: PatternConstructor,
                            y: PatternConstructor) -> list[Task] | None:
    return _join(_vals((x.constructor, y.constructor)), _seq(x.patterns, y.patterns))


def _eq_func_type(eq: _Equal, x: FuncType, y: FuncType) -> list[Task] | None:
    return _join(_seq(x.type_params, y.type_params, define=True),
                 _seq(x.arg_types, y.arg_types), _vals((x.ret_type, y.ret_type)))


def _eq_type_data(eq: _Equal, x: TypeData, y: TypeData) -> list[Task] | None:
    if x.header.name_hint != y.header.name_hint or len(x.constructors) != len(y.constructors):
        return None
    ctors = [_join(_vals((a, b)), _seq(a.inputs, b.inputs))
             for a, b in zip(x.constructors, y.constructors)]
    return _join(_seq(x.type_params, y.type_params, define=True), *ctors)


def _eq_attrs(eq: _Equal, x: Attrs, y: Attrs) -> list[Task] | None:
    if isinstance(x, DictAttrs):
        assert isinstance(y, DictAttrs)
        if x.attrs_type_key != y.attrs_type_key or len(x.entries) != len(y.entries):
            return None
        if any(kx != ky for (kx, _), (ky, _) in zip(x.entries, y.entries)):
            return None
        return [(False, vx, vy) for (_, vx), (_, vy) in zip(x.entries, y.entries)]
    return [(False, getattr(x, f.name), getattr(y, f.name)) for f in dataclasses.fields(x)]


def _eq_module(eq: _Equal, x: IRModule, y: IRModule) -> list[Task] | None:
    # Globals are matched by name; a module is a set of definitions, not a sequence.
    fx, fy = _functions_by_name(x), _functions_by_name(y)
    tx, ty = _types_by_name(x), _types_by_name(y)
    if fx.keys() != fy.keys() or tx.keys() != ty.keys():
        return None
    return [(False, tx[n], ty[n]) for n in tx] + [(False, fx[n], fy[n]) for n in fx]


def _eq_float(eq: _Equal, x: float, y: float) -> list[Task] | None:
    return _same(x == y or (x != x and y != y))


def _eq_other(eq: _Equal, x: Any, y: Any) -> list[Task] | None:
    # Values outside the IR vocabulary (numpy scalars, ...): Python equality.
    try:
        return _same(x is y or bool(x == y))
    except (TypeError, ValueError):
        return None


def _functions_by_name(mod: IRModule) -> dict[str, Function]:
    return {gv.name_hint: fn for gv, fn in mod.functions.items()}


def _types_by_name(mod: IRModule) -> dict[str, TypeData]:
    return {gtv.name_hint: data for gtv, data in mod.type_definitions.items()}


_EQ: dict[type, Callable[[_Equal, Any, Any], list[Task] | None]] = {
    Var: _eq_var,
    TypeVar: lambda eq, x, y: _same(eq.map_free_vars or x is y),
    GlobalVar: lambda eq, x, y: _same(x.name_hint == y.name_hint),
    GlobalTypeVar: lambda eq, x, y: _same(x.name_hint == y.name_hint),
    Op: lambda eq, x, y: _same(x.name == y.name),
    Constructor: lambda eq, x, y: _same(x.name == y.name and x.tag == y.tag
                                        and x.belong_to.name_hint == y.belong_to.name_hint),
    Constant: _eq_constant,
    Tuple: lambda eq, x, y: _seq(x.fields, y.fields),
    TupleGetItem: lambda eq, x, y: (_vals((x.tuple_value, y.tuple_value))
                                    if x.index == y.index else None),
    Call: _eq_call,
    Let: lambda eq, x, y: [(True, x.var, y.var), (False, x.value, y.value),
                           (False, x.body, y.body)],
    If: lambda eq, x, y: _vals((x.cond, y.cond), (x.true_branch, y.true_branch),
                               (x.false_branch, y.false_branch)),
    Function: _eq_function,
    RefCreate: lambda eq, x, y: _vals((x.value, y.value)),
    RefRead: lambda eq, x, y: _vals((x.ref, y.ref)),
    RefWrite: lambda eq, x, y: _vals((x.ref, y.ref), (x.value, y.value)),
    Match: _eq_match,
    Clause: lambda eq, x, y: _vals((x.lhs, y.lhs), (x.rhs, y.rhs)),
    PatternWildcard: lambda eq, x, y: _DONE,
    PatternVar: lambda eq, x, y: [(True, x.var, y.var)],
    PatternConstructor: _eq_pattern_constructor,
    PatternTuple: lambda eq, x, y: _seq(x.patterns, y.patterns),
    TensorType: lambda eq, x, y: (_seq(x.shape, y.shape) if x.dtype == y.dtype else None),
    TupleType: lambda eq, x, y: _seq(x.fields, y.fields),
    FuncType: _eq_func_type,
    TypeCall: lambda eq, x, y: _join(_vals((x.func, y.func)), _seq(x.args, y.args)),
    RefType: lambda eq, x, y: _vals((x.value, y.value)),
    IncompleteType: lambda eq, x, y: _DONE,
    TypeData: _eq_type_data,
    Attrs: _eq_attrs,
    IRModule: _eq_module,
    tuple: lambda eq, x, y: _seq(x, y),
    float: _eq_float,
    object: _eq_other,
}


# ================================================================ hashing
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


def _plain_hash(x: Any) -> int:
    try:
        if isinstance(x, float) and x != x:
            return _NAN_HASH        # hash(nan) depends on the object, NaN == NaN here
        return hash((type(x).__name__, x))
    except (TypeError, ValueError):
        return hash(type(x).__name__)


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
        if kind in _SCALAR:
            hashes.append(_plain_hash(x))
            defines.append(False)
            return
        memo = self.memo.get(id(x))
        if memo is not None and isinstance(x, Node):
            hashes.append(memo)
            defines.append(False)
            return
        literal, children = (_HASH.get(kind) or _lookup(_HASH, kind))(self, x)
        graph = kind in _GRAPH and (kind is not Tuple or bool(x.fields))
        if children:
            mode = _MODE_GRAPH if graph else _MODE_PLAIN
            stack.append((_EXIT, (x, literal, len(children), mode)))
            stack.extend(reversed(children))
            return
        h = hash(literal)           # a leaf: no need to come back
        if isinstance(x, Node):
            self.memo[id(x)] = h
        hashes.append(h)
        defines.append(False)

    def define(self, v: Var | TypeVar, stack: list[tuple[int, Any]], hashes: list[int],
               defines: list[bool]) -> None:
        self.bound += 1
        self.memo[id(v)] = hash(("bound", self.bound))
        literal = ("def", type(v).__name__)
        if isinstance(v, Var) and (v.type_annotation is not None or v.virtual_device is not None):
            stack.append((_EXIT, (v, literal, 2, _MODE_DEF)))
            stack += ((_ENTER, v.virtual_device), (_ENTER, v.type_annotation))
        else:
            hashes.append(hash(literal))
            defines.append(True)

    def leave(self, item: tuple[Any, tuple[Any, ...], int, int], hashes: list[int],
              defines: list[bool]) -> None:
        x, literal, n, mode = item
        start = len(hashes) - n
        h = hash((literal, *hashes[start:]))
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
            _kids(x.op, *x.args, _attrs(x.attrs), *x.type_args))


def _h_function(h: _Hasher, x: Function) -> Recipe:
    return (("Function", len(x.type_params), len(x.params)),
            _defs(x.type_params) + _defs(x.params)
            + _kids(x.ret_type, _attrs(x.attrs), x.body))


def _h_constant(h: _Hasher, x: Constant) -> Recipe:
    a = x.data
    return ("Constant", a.dtype.str, a.shape, a.tobytes()), []


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
    fns, types = _functions_by_name(x), _types_by_name(x)
    fn_names, type_names = sorted(fns), sorted(types)
    return (("IRModule", tuple(fn_names), tuple(type_names)),
            _kids(*(types[n] for n in type_names), *(fns[n] for n in fn_names)))


def _h_tuple(h: _Hasher, x: tuple[Any, ...]) -> Recipe:
    if all(type(v) in _SCALAR for v in x):
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
