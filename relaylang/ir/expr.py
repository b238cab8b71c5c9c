"""Relay expressions and patterns (TVM's include/tvm/relay/expr.h, adt.h).

Every expression lists its sub-expressions once, in evaluation order, through
`children()`; `with_children(new)` rebuilds the node from new children and
returns the node itself when nothing changed, so unchanged subgraphs stay
shared. Binding occurrences (function parameters, the variable of a `Let`,
pattern variables) are not children: they are definitions, not uses.

`checked_type` is filled in once by type inference (`set_checked_type`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Sequence

from .node import IR_NODE, Node

if TYPE_CHECKING:
    import numpy as np

    from .attrs import Attrs, DictAttrs
    from .types import GlobalTypeVar, Type, TypeVar


@dataclass(**IR_NODE)
class Expr(Node):
    checked_type: "Type | None" = field(default=None, kw_only=True)

    def children(self) -> tuple[Expr, ...]:
        return ()

    def with_children(self, new: Sequence[Expr]) -> Expr:
        return self

    def set_checked_type(self, ty: "Type") -> None:
        """Record the inferred type; done once, by `typing/`."""
        object.__setattr__(self, "checked_type", ty)

    def __str__(self) -> str:
        """The Relay text (`print(expr)`, as TVM's); `repr` stays short: `<Call at ...>`."""
        from .text import astext
        return astext(self)


def _same(old: Sequence[Expr], new: Sequence[Expr]) -> bool:
    return len(old) == len(new) and all(a is b for a, b in zip(old, new))


# ---------------------------------------------------------------- leaves


@dataclass(**IR_NODE)
class Var(Expr):
    """A local variable; identity is the variable (two `%x` may differ)."""

    name_hint: str
    type_annotation: "Type | None" = None
    virtual_device: Any = None


@dataclass(**IR_NODE)
class GlobalVar(Expr):
    """The name of a global function; one object per name per module."""

    name_hint: str


@dataclass(**IR_NODE)
class Constant(Expr):
    """A tensor constant; `data` is a numpy array (0-d for scalars)."""

    data: "np.ndarray"


@dataclass(**IR_NODE)
class Op(Expr):
    """A primitive operator, looked up in the registry by `name` (`op.get`)."""

    name: str


@dataclass(**IR_NODE)
class Constructor(Expr):
    """An ADT constructor; `tag` is its position in its type's definition."""

    name: str
    inputs: "tuple[Type, ...]"
    belong_to: "GlobalTypeVar"
    tag: int = 0


# ---------------------------------------------------------------- composites


@dataclass(**IR_NODE)
class Tuple(Expr):
    fields: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.fields

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if _same(self.fields, new):
            return self
        return Tuple(tuple(new), span=self.span)


@dataclass(**IR_NODE)
class TupleGetItem(Expr):
    tuple_value: Expr
    index: int

    def children(self) -> tuple[Expr, ...]:
        return (self.tuple_value,)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if new[0] is self.tuple_value:
            return self
        return TupleGetItem(new[0], self.index, span=self.span)


@dataclass(**IR_NODE)
class Call(Expr):
    op: Expr
    args: tuple[Expr, ...]
    attrs: "Attrs | None" = None
    type_args: "tuple[Type, ...]" = ()

    def children(self) -> tuple[Expr, ...]:
        return (self.op, *self.args)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if new[0] is self.op and _same(self.args, new[1:]):
            return self
        return Call(new[0], tuple(new[1:]), self.attrs, self.type_args, span=self.span)


@dataclass(**IR_NODE)
class Let(Expr):
    """`let %var = value; body`. `var` is in scope in `value` (recursion) and `body`."""

    var: Var
    value: Expr
    body: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.value, self.body)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if new[0] is self.value and new[1] is self.body:
            return self
        return Let(self.var, new[0], new[1], span=self.span)


@dataclass(**IR_NODE)
class If(Expr):
    cond: Expr
    true_branch: Expr
    false_branch: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.true_branch, self.false_branch)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if _same(self.children(), new):
            return self
        return If(new[0], new[1], new[2], span=self.span)


@dataclass(**IR_NODE)
class Function(Expr):
    params: tuple[Var, ...]
    body: Expr
    ret_type: "Type | None" = None
    type_params: "tuple[TypeVar, ...]" = ()
    attrs: "DictAttrs | None" = None

    def children(self) -> tuple[Expr, ...]:
        return (self.body,)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if new[0] is self.body:
            return self
        return Function(self.params, new[0], self.ret_type, self.type_params, self.attrs,
                        span=self.span)


@dataclass(**IR_NODE)
class RefCreate(Expr):
    value: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.value,)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        return self if new[0] is self.value else RefCreate(new[0], span=self.span)


@dataclass(**IR_NODE)
class RefRead(Expr):
    ref: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.ref,)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        return self if new[0] is self.ref else RefRead(new[0], span=self.span)


@dataclass(**IR_NODE)
class RefWrite(Expr):
    ref: Expr
    value: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.ref, self.value)

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if new[0] is self.ref and new[1] is self.value:
            return self
        return RefWrite(new[0], new[1], span=self.span)


# ---------------------------------------------------------------- match


@dataclass(**IR_NODE)
class Pattern(Node):
    pass


@dataclass(**IR_NODE)
class PatternWildcard(Pattern):
    pass


@dataclass(**IR_NODE)
class PatternVar(Pattern):
    var: Var


@dataclass(**IR_NODE)
class PatternConstructor(Pattern):
    constructor: Constructor
    patterns: tuple[Pattern, ...] = ()


@dataclass(**IR_NODE)
class PatternTuple(Pattern):
    patterns: tuple[Pattern, ...] = ()


@dataclass(**IR_NODE)
class Clause(Node):
    lhs: Pattern
    rhs: Expr


@dataclass(**IR_NODE)
class Match(Expr):
    """`match (data) { clauses }`; `complete=False` is `match?`."""

    data: Expr
    clauses: tuple[Clause, ...]
    complete: bool = True

    def children(self) -> tuple[Expr, ...]:
        return (self.data, *(c.rhs for c in self.clauses))

    def with_children(self, new: Sequence[Expr]) -> Expr:
        if _same(self.children(), new):
            return self
        clauses = tuple(c if c.rhs is rhs else Clause(c.lhs, rhs, span=c.span)
                        for c, rhs in zip(self.clauses, new[1:]))
        return Match(new[0], clauses, self.complete, span=self.span)


def pattern_vars(pattern: Pattern) -> list[Var]:
    """The variables a pattern binds, left to right (iterative)."""
    out: list[Var] = []
    stack = [pattern]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternVar):
            out.append(p.var)
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            stack.extend(reversed(p.patterns))
    return out


def map_pattern_vars(root: Pattern, new_var: Callable[[Var], Var]) -> Pattern:
    """`root` rebuilt with each variable `v` replaced by `new_var(v)`, spans kept
    (iterative post-order; `new_var` sees the variables right to left)."""
    done: dict[int, Pattern] = {}
    stack: list[tuple[Pattern, bool]] = [(root, False)]
    while stack:
        p, ready = stack.pop()
        if isinstance(p, PatternVar):
            done[id(p)] = PatternVar(new_var(p.var), span=p.span)
        elif not isinstance(p, (PatternConstructor, PatternTuple)):
            done[id(p)] = p
        elif not ready:
            stack.append((p, True))
            stack += [(c, False) for c in p.patterns]
        else:
            kids = tuple(done[id(c)] for c in p.patterns)
            if isinstance(p, PatternConstructor):
                done[id(p)] = PatternConstructor(p.constructor, kids, span=p.span)
            else:
                done[id(p)] = PatternTuple(kids, span=p.span)
    return done[id(root)]
