"""Type checking for the language server: the largest set of definitions that checks.

`check_module` sets inferred types only on a module without errors, so one
definition with a type error would leave every other one untyped. `TypeRounds`
sets the failing definitions aside and checks the rest again, with stand-ins
(last good signatures) for functions that do not parse.
"""
from __future__ import annotations

import re

from ...ir.diagnostics import Diagnostic, Severity
from ...ir.expr import Function, GlobalVar, Var
from ...ir.module import IRModule
from ...ir.types import FuncType, GlobalTypeVar, TypeData
from ...typing import check_module
from .defs import RangeTable

# Errors that only say "the definition you broke is missing": the syntax error in it is
# the one to show.
_CASCADES = (re.compile(r"undefined global function `(@[^`]+)`"),
             re.compile(r"unknown type `([^`]+)`: no `type"),
             re.compile(r"`(@[^`]+)` is not defined in this module"))


def is_error(d: Diagnostic) -> bool:
    return d.severity is Severity.ERROR or d.severity is Severity.BUG


def cascade_of(d: Diagnostic, names: set[str]) -> bool:
    for pattern in _CASCADES:
        m = pattern.search(d.message)
        if m is not None and m.group(1) in names:
            return True
    return False


class TypeRounds:
    """Type-check the definitions that parsed; find the largest set that checks cleanly.

    Round 1 checks them all (its diagnostics are the ones published). If it has errors,
    the definitions they point into are set aside, and the rest is checked again with the
    last good signatures of the functions that do not parse standing in (so calls to them
    still type-check); a third round, without stand-ins, drops whatever still fails.
    """

    def __init__(self, uri: str, text: str, table: RangeTable,
                 imported: IRModule | None = None):
        self.uri, self.text, self.table = uri, text, table
        # What `#[import]` brought in (library definitions, checked with the text's own).
        self.imported = imported if imported is not None else IRModule()

    def check(self, fns: dict[GlobalVar, Function], types: dict[GlobalTypeVar, TypeData]
              ) -> list[Diagnostic]:
        mod = IRModule({**self.imported.functions, **fns},
                       {**self.imported.type_definitions, **types}, self.uri,
                       {**self.imported.sources, self.uri: self.text})
        return check_module(mod)[1]

    def hit(self, diags: list[Diagnostic], cascades: set[str] = frozenset()) -> set[int | None]:
        """The definitions errors point into (cascades of missing `cascades` aside)."""
        return {self.table.of_span(d.span) for d in diags
                if is_error(d) and not cascade_of(d, cascades)}

    def run(self, clean: dict[int, tuple[GlobalVar, Function]],
            kept: dict[GlobalVar, Function], types: dict[GlobalTypeVar, TypeData]
            ) -> tuple[set[int], list[Diagnostic]]:
        first = self.check(dict(clean.values()), types)
        if not any(is_error(d) for d in first):
            return set(clean), first
        # Calls of a function that did not parse are checked against its stand-in.
        typed = set(clean) - self.hit(first, {"@" + gv.name_hint for gv in kept})
        fns = {**{clean[i][0]: clean[i][1] for i in typed}, **kept}
        second = self.check(fns, types)
        if any(is_error(d) for d in second):
            typed -= self.hit(second)
            if any(is_error(d) for d in self.check(dict(clean[i] for i in typed), types)):
                typed = set()
        return typed, first


def stand_in(signature: FuncType) -> Function:
    """A function with this signature and no body to check (its result is a free variable
    of the result type)."""
    params = tuple(Var(f"arg{i}", t) for i, t in enumerate(signature.arg_types))
    return Function(params, Var("result", signature.ret_type), signature.ret_type,
                    signature.type_params)
