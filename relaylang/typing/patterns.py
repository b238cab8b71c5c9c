"""Typing `match` patterns, and checking that a complete match covers every value.

Patterns are typed top-down against the scrutinee's type with an explicit
stack. Coverage uses Maranget's usefulness algorithm ("Warnings for pattern
matching", 2007) in match_check.py: a `match` (not `match?`) that misses
values is an error naming one it misses; a clause that can never be reached
is a warning.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir.diagnostics import Diagnostic
from ..ir.expr import Match, Pattern, PatternConstructor, PatternTuple, PatternVar
from ..ir.span import Span
from ..ir.types import FuncType, TupleType, Type
from .match_check import missing_value, unreachable_clauses

if TYPE_CHECKING:
    from .infer import Inferencer


class PatternTyper:
    def __init__(self, inferencer: Inferencer):
        self.inf = inferencer

    def check(self, pattern: Pattern, expected: Type, data_span: Span | None) -> None:
        inf = self.inf
        stack: list[tuple[Pattern, Type]] = [(pattern, expected)]
        while stack:
            p, want = stack.pop()
            if isinstance(p, PatternVar):
                inf.unify(inf.var_type(p.var), want, p.span, f"pattern variable `%{p.var.name_hint}`")
            elif isinstance(p, PatternTuple):
                fields = tuple(inf.solver.fresh() for _ in p.patterns)
                inf.unify(TupleType(fields), want, p.span or data_span, "this tuple pattern")
                stack.extend(zip(p.patterns, fields))
            elif isinstance(p, PatternConstructor):
                ctor = p.constructor
                ft = inf.instantiate(_constructor_type(inf, ctor))
                if len(ft.arg_types) != len(p.patterns):
                    inf.report.error(f"constructor `{ctor.name}` has {len(ft.arg_types)} field"
                                     f"{'s' if len(ft.arg_types) != 1 else ''}, the pattern gives "
                                     f"{len(p.patterns)}", p.span, code="arity")
                    continue
                inf.unify(ft.ret_type, want, p.span or data_span,
                          f"the value matched by `{ctor.name}`")
                stack.extend(zip(p.patterns, ft.arg_types))

    def check_exhaustive(self, node: Match) -> None:
        inf = self.inf
        ctors_of = inf.mod.type_definitions
        for index in unreachable_clauses(node, ctors_of):
            clause = node.clauses[index]
            inf.report.diag.emit(Diagnostic.warning(
                "this clause can never match: the clauses above it cover every value it matches",
                clause.lhs.span or clause.span or node.span, code="unreachable-clause"))
        if node.complete:
            example = missing_value(node, ctors_of)
            if example is not None:
                inf.report.error(f"this match does not cover every value: `{example}` is not "
                                 "matched (add a clause, or write `match?` for a partial match)",
                                 node.span, code="non-exhaustive-match")


def _constructor_type(inf: Inferencer, ctor) -> FuncType:
    data = inf.mod.type_definitions.get(ctor.belong_to)
    params = data.type_params if data is not None else ()
    from ..ir.types import TypeCall
    return FuncType(ctor.inputs, TypeCall(ctor.belong_to, tuple(params)), tuple(params))
