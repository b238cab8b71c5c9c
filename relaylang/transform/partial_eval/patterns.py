"""Patterns and types for PartialEvaluate: static matching and fresh residual binders.

TVM's `PartialEvaluator::VisitPattern_` (src/relay/transforms/partial_eval.cc): a
pattern against a partially static value matches, does not match, or is unknown
until run time; iterative here (patterns nest as deep as the values they take apart).
"""
from __future__ import annotations

from ...ir.analysis import free_type_vars
from ...ir.expr import (
    Constructor,
    Expr,
    Match,
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    Var,
    map_pattern_vars,
)
from ...ir.types import Type
from .values import PStatic, SConstructed, STuple

MATCH, NO_MATCH, UNKNOWN = "match", "no match", "unknown"


def erase_type(ty: Type | None, own: frozenset[int]) -> Type | None:
    """`ty`, or None (left to inference) if it mentions type variables bound elsewhere: the
    type parameters of a function unfolded into a caller are not in scope there."""
    if ty is None or any(id(tv) not in own for tv in free_type_vars(ty)):
        return None
    return ty


def _same_constructor(a: Constructor, b: Constructor) -> bool:
    return a is b or (a.name == b.name and a.tag == b.tag)


def match_static(pattern: Pattern, value: PStatic) -> tuple[str, list[tuple[Var, PStatic]]]:
    """Whether `value` matches `pattern` as far as it is known, and what that binds."""
    status, binds = MATCH, []
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(p, PatternVar):
            binds.append((p.var, v))
        elif isinstance(p, (PatternConstructor, PatternTuple)):
            s = v.static
            if isinstance(p, PatternConstructor) and isinstance(s, SConstructed):
                if not _same_constructor(p.constructor, s.ctor):
                    return NO_MATCH, []
            elif not (isinstance(p, PatternTuple) and isinstance(s, STuple)):
                status = UNKNOWN
                continue
            stack.extend(zip(p.patterns, s.fields))      # type: ignore[union-attr]
    return status, binds


def choose_clause(e: Match, data: PStatic, env: dict[int, PStatic]) -> Expr | None:
    """The right-hand side a static `data` certainly takes (its variables bound in `env`),
    or None when that is not known before run time (or no clause matches: a run-time error
    the residual `match` keeps)."""
    for clause in e.clauses:
        status, binds = match_static(clause.lhs, data)
        if status == UNKNOWN:
            return None
        if status == MATCH:
            for var, value in binds:
                env[id(var)] = value
            return clause.rhs
    return None


def fresh_pattern(root: Pattern, tscope: frozenset[int]
                  ) -> tuple[Pattern, list[tuple[Var, Var]]]:
    """`root` with fresh pattern variables (annotations kept if in scope), and the renaming."""
    renamed: list[tuple[Var, Var]] = []

    def fresh(old: Var) -> Var:
        new = Var(old.name_hint, erase_type(old.type_annotation, tscope), span=old.span)
        renamed.append((old, new))
        return new
    return map_pattern_vars(root, fresh), renamed
