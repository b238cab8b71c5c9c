"""Structural equality of IR, iterative.

Mirrors TVM's `StructuralEqual` (apache/tvm: src/node/structural_equal.cc) with
the relay nodes' `SEqualReduce` methods (include/tvm/relay/expr.h, adt.h,
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

The walk uses an explicit stack (no recursion) and memoises by node identity,
so 100,000-deep programs and DAGs with heavy sharing take linear time.
`structural_hash`, consistent with this equality, is in hash.py and re-exported here.
"""
from __future__ import annotations

import dataclasses
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
from .hash import structural_hash
from .module import IRModule
from .node import Node
from .structural_common import (
    GRAPH_KINDS,
    PLAIN_KINDS,
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

__all__ = ["structural_equal", "structural_hash"]

# Leaves equal to themselves in any context (nothing in them can be bound).
_BY_VALUE = frozenset({Op, GlobalVar, GlobalTypeVar, Constructor, Constant})


def structural_equal(a: Any, b: Any, map_free_vars: bool = False) -> bool:
    """Whether `a` and `b` are the same program up to renaming of bound variables."""
    return _Equal(map_free_vars).run(a, b)


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
        if kind in PLAIN_KINDS:
            return _DONE if x == y else None
        if kind in GRAPH_KINDS:
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
        return (_EQ.get(kind) or lookup_handler(_EQ, kind))(self, x, y)

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
                 _vals((norm_attrs(x.attrs), norm_attrs(y.attrs))), _seq(x.type_args, y.type_args))


def _eq_function(eq: _Equal, x: Function, y: Function) -> list[Task] | None:
    # Type parameters first: the parameters' annotations may use them.
    return _join(_seq(x.type_params, y.type_params, define=True),
                 _seq(x.params, y.params, define=True),
                 _vals((x.ret_type, y.ret_type), (norm_attrs(x.attrs), norm_attrs(y.attrs)),
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
    fx, fy = functions_by_name(x), functions_by_name(y)
    tx, ty = types_by_name(x), types_by_name(y)
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
