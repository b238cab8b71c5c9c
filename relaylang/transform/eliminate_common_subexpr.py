"""EliminateCommonSubexpr: compute equal operator calls once
(TVM's src/relay/transforms/eliminate_common_subexpr.cc).

Two calls of the same operator with the same argument nodes (after merging) and
equal attributes compute the same value; the later one is replaced by the
earlier one, which then has two users. Equal scalar constants count as the same
argument, as are tuple literals with the same fields (TVM's IsEquivalent), and `%t.0` of
the same tuple twice is merged too.

    def @main(%x: float32) {                 def @main(%x: float32) {
      %0 = add(%x, 1f);                         %0 = add(%x, 1f);
      %1 = add(%x, 1f);            ==>          multiply(%0, %0)
      multiply(%0, %1)                        }
    }

What is never merged:
  * calls of stateful operators (`nn.dropout`): two calls are two draws;
  * calls of anything but an operator (globals, closures, constructors), and
    calls without arguments, as in TVM;
  * a call into an equal one that does not dominate it. Each node gets a scope:
    the function body, or an `if` branch / `match` clause inside it (a shared
    node belongs to the innermost scope enclosing all its users). A call merges
    only into an earlier call whose scope is its own or an enclosing one of the
    same function, never from one branch into another, never across a
    function boundary (a closure would capture a value computed outside it).

Option `fskip`: a Python callable `fskip(call) -> bool`; calls for which it
returns True are left alone (TVM's `fskip`). It cannot be given from pass text
(`-p EliminateCommonSubexpr`), only from Python:
`EliminateCommonSubexpr(fskip=lambda c: c.op.name == "add")`.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..analysis import op_is_stateful
from ..ir.equal import structural_equal
from ..ir.expr import Call, Constant, Expr, Function, If, Match, Op, Tuple, TupleGetItem
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque
from ..ir.traverse import post_order
from .pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class EliminateCommonSubexpr(FunctionPass):
    """Merge equal operator calls of each global function (the module docstring says which)."""

    name: ClassVar[str] = "EliminateCommonSubexpr"
    opt_level: ClassVar[int] = 3
    fskip: Callable[[Expr], bool] | None = None

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        out = eliminate_common_subexpr(fn, self.fskip)
        assert isinstance(out, Function)
        return out


# ---------------------------------------------------------------- scopes


class _Scope:
    """A region that runs as a whole or not at all: a function body, a branch, a clause."""

    __slots__ = ("depth", "parent")

    def __init__(self, parent: _Scope | None):
        self.parent = parent
        self.depth = 0 if parent is None else parent.depth + 1

    def encloses(self, other: _Scope) -> bool:
        """Whether `other` is this scope or nested in it (within one function)."""
        while other.depth > self.depth and other.parent is not None:
            other = other.parent
        return other is self


def _common(a: _Scope, b: _Scope) -> _Scope | None:
    """The innermost scope enclosing both, or None when they are in different functions."""
    while a.depth > b.depth and a.parent is not None:
        a = a.parent
    while b.depth > a.depth and b.parent is not None:
        b = b.parent
    while a is not b:
        if a.parent is None or b.parent is None:
            return None
        a, b = a.parent, b.parent
    return a


def _child_scopes(node: Expr, scope: _Scope) -> list[tuple[Expr, _Scope]]:
    """Each child of `node` with the scope it runs in."""
    if isinstance(node, If):
        return [(node.cond, scope), (node.true_branch, _Scope(scope)),
                (node.false_branch, _Scope(scope))]
    if isinstance(node, Match):
        return [(node.data, scope)] + [(c.rhs, _Scope(scope)) for c in node.clauses]
    if isinstance(node, Function):
        return [(node.body, _Scope(None))]      # a new function: nothing merges across it
    return [(c, scope) for c in node.children()]


def node_scopes(root: Expr) -> dict[int, _Scope | None]:
    """id(node) -> its scope; None for a node used from two functions (never merged)."""
    order = post_order(root)
    scopes: dict[int, _Scope | None] = {id(root): _Scope(None)}
    for node in reversed(order):              # every user before the nodes it uses
        scope = scopes[id(node)]
        if scope is None:                     # so are its children: never merged either
            for child in node.children():
                scopes[id(child)] = None
            continue
        for child, child_scope in _child_scopes(node, scope):
            if id(child) not in scopes:
                scopes[id(child)] = child_scope
            else:
                known = scopes[id(child)]
                scopes[id(child)] = None if known is None else _common(known, child_scope)
    return scopes


# ---------------------------------------------------------------- merging


def _scalar(expr: Expr) -> Any:
    """A hashable stand-in for a scalar constant, or None."""
    if isinstance(expr, Constant) and np.ndim(expr.data) == 0:
        return ("scalar", str(expr.data.dtype), expr.data.tobytes())
    return None


def _arg_key(expr: Expr) -> Any:
    """An argument's stand-in: equal scalars are one argument, and so are tuple literals
    whose fields are (TVM's IsEquivalent; tuples may nest: no recursion)."""
    if not isinstance(expr, Tuple):
        return _scalar(expr) or id(expr)
    keys: dict[int, Any] = {}
    for n in post_order(expr, lambda n: n.fields if isinstance(n, Tuple) else ()):
        keys[id(n)] = ("tuple", tuple(keys[id(f)] for f in n.fields)) \
            if isinstance(n, Tuple) else (_scalar(n) or id(n))
    return keys[id(expr)]


def _key(node: Expr, fskip: Callable[[Expr], bool] | None) -> Any:
    """What two mergeable nodes share, or None when `node` is never merged."""
    if isinstance(node, Call):
        op = node.op
        if not isinstance(op, Op) or not node.args or op_is_stateful(op):
            return None
        if fskip is not None and fskip(node):
            return None
        return ("call", op.name, tuple(_arg_key(a) for a in node.args))
    if isinstance(node, TupleGetItem):
        return ("item", id(node.tuple_value), node.index)
    return None          # as TVM, constants themselves are not merged (calls compare them)


def _same(a: Expr, b: Expr) -> bool:
    if isinstance(a, Call) and isinstance(b, Call):
        return structural_equal(a.attrs, b.attrs) and \
            structural_equal(tuple(a.type_args), tuple(b.type_args))
    return True


def eliminate_common_subexpr(expr: Expr, fskip: Callable[[Expr], bool] | None = None) -> Expr:
    """`expr` with each mergeable node replaced by an earlier equal one that dominates it."""
    scopes = node_scopes(expr)
    seen: dict[Any, list[Expr]] = {}       # key -> earlier rebuilt nodes with that key
    done: dict[int, Expr] = {}
    for node in post_order(expr):
        kids = node.children()
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        scope = scopes[id(node)]
        key = _key(rebuilt, fskip) if scope is not None else None
        if key is not None:
            rebuilt = _merge(rebuilt, scope, seen.setdefault(key, []), scopes)
        done[id(node)] = rebuilt
    return done[id(expr)]


def _merge(node: Expr, scope: _Scope, candidates: list[Expr],
           scopes: dict[int, _Scope | None]) -> Expr:
    for earlier in candidates:
        where = scopes[id(earlier)]
        if where is not None and where.encloses(scope) and _same(node, earlier):
            return earlier
    scopes[id(node)] = scope                # a rebuilt node keeps its original's scope
    candidates.append(node)
    return node
