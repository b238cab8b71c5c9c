"""Variable analyses: free, bound and all variables and type variables of an expression.

Mirrors TVM's `VarVisitor` and `TypeVarEVisitor` (apache/tvm:
src/relay/analysis/util.cc, behind `relay.analysis.free_vars` and friends).
As there, a variable is bound if any binder in the expression binds it
(function parameters, `let` variables, pattern variables; function and
`FuncType` type parameters), and free if it occurs but nothing binds it.
Well-formed IR binds each variable once and uses it only in scope, so this
is the scoped notion without the per-scope bookkeeping. Results are in order
of first occurrence (a binder occurs where it binds).

One iterative pre-order walk, memoised by identity: linear in the size of
the DAG, whatever its depth.
"""
from __future__ import annotations

from .expr import Call, Clause, Constructor, Expr, Function, Let, Match, Pattern, Var, pattern_vars
from .types import FuncType, Type, TypeVar, type_children


def free_vars(expr: Expr) -> list[Var]:
    """Local variables used in `expr` that nothing in `expr` binds."""
    found = _Collector(expr)
    return [v for k, v in found.vars.items() if k not in found.bound]


def bound_vars(expr: Expr) -> list[Var]:
    """Every variable `expr` binds: parameters, `let` variables, pattern variables."""
    return list(_Collector(expr).bound.values())


def all_vars(expr: Expr) -> list[Var]:
    """Every local variable occurring in `expr`, bound or free."""
    return list(_Collector(expr).vars.values())


def free_type_vars(expr_or_type: Expr | Type) -> list[TypeVar]:
    """Type variables occurring in the types of `expr_or_type` that it does not bind.

    Type parameters of functions and of `FuncType`s bind; so do an ADT's
    parameters, which is why constructors' input types are not looked at.
    """
    found = _Collector(expr_or_type)
    return [t for k, t in found.type_vars.items() if k not in found.bound_type_vars]


def bound_type_vars(expr_or_type: Expr | Type) -> list[TypeVar]:
    return list(_Collector(expr_or_type).bound_type_vars.values())


def all_type_vars(expr_or_type: Expr | Type) -> list[TypeVar]:
    return list(_Collector(expr_or_type).type_vars.values())


class _Collector:
    """Walks an expression once, recording variables and type variables by identity."""

    def __init__(self, root: Expr | Type):
        self.vars: dict[int, Var] = {}
        self.bound: dict[int, Var] = {}
        self.type_vars: dict[int, TypeVar] = {}
        self.bound_type_vars: dict[int, TypeVar] = {}
        self.seen: set[int] = set()           # expressions visited
        self.seen_types: set[int] = set()     # types visited
        if isinstance(root, Type):
            self.scan_type(root)
        else:
            self.walk(root)

    def walk(self, root: Expr) -> None:
        # Stack items are expressions, or a clause's pattern: its variables are
        # bound when the walk reaches the clause, before its right-hand side.
        stack: list[Expr | Pattern] = [root]
        while stack:
            item = stack.pop()
            if isinstance(item, Pattern):
                for v in pattern_vars(item):
                    self.bind(v)
            elif id(item) not in self.seen:
                self.seen.add(id(item))
                self.visit(item, stack)

    def visit(self, e: Expr, stack: list[Expr | Pattern]) -> None:
        if isinstance(e, Var):
            self.vars.setdefault(id(e), e)
            self.scan_type(e.type_annotation)
        elif isinstance(e, Function):
            for tv in e.type_params:
                self.bind_type_var(tv)
            for p in e.params:
                self.bind(p)
            self.scan_type(e.ret_type)
            stack.append(e.body)
        elif isinstance(e, Let):
            self.bind(e.var)
            stack += (e.body, e.value)
        elif isinstance(e, Match):
            for clause in reversed(e.clauses):
                stack += _clause_items(clause)
            stack.append(e.data)
        elif isinstance(e, Constructor):
            pass    # its inputs use the ADT's own type parameters
        else:
            if isinstance(e, Call):
                for t in e.type_args:
                    self.scan_type(t)
            stack.extend(reversed(e.children()))

    def bind(self, v: Var) -> None:
        self.vars.setdefault(id(v), v)
        self.bound.setdefault(id(v), v)
        if id(v) not in self.seen:
            self.seen.add(id(v))
            self.scan_type(v.type_annotation)

    def bind_type_var(self, tv: TypeVar) -> None:
        self.type_vars.setdefault(id(tv), tv)
        self.bound_type_vars.setdefault(id(tv), tv)
        self.seen_types.add(id(tv))

    def scan_type(self, root: Type | None) -> None:
        stack = [root]
        while stack:
            t = stack.pop()
            if t is None or id(t) in self.seen_types:
                continue
            self.seen_types.add(id(t))
            if isinstance(t, TypeVar):
                self.type_vars.setdefault(id(t), t)
                continue
            if isinstance(t, FuncType):
                for tv in t.type_params:
                    self.bind_type_var(tv)
            stack.extend(reversed(type_children(t)))


def _clause_items(clause: Clause) -> tuple[Expr, Pattern]:
    # Pushed in this order so that the pattern is popped (and binds) first.
    return clause.rhs, clause.lhs
