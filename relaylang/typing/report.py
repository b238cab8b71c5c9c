"""Type errors worded for people: what was expected, what was found, and where
the expectation came from (a note at the parameter or annotation)."""
from __future__ import annotations

from ..ir.expr import Constructor, Expr, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.span import Span
from ..ir.types import Type
from ..syntax.diagnostics import DiagnosticContext, Note
from .solver import Solver


def type_text(solver: Solver, t: Type) -> str:
    from ..syntax.printer import astext
    return astext(solver.resolve(t))


class Reporter:
    def __init__(self, diag: DiagnosticContext, solver: Solver):
        self.diag = diag
        self.solver = solver

    def error(self, message: str, span: Span | None, *notes: Note) -> None:
        self.diag.error(message, span, *notes)

    def mismatch(self, what: str, expected: Type, actual: Type, detail: str,
                 span: Span | None, *notes: Note) -> None:
        self.error(f"type mismatch in {what}: expected {type_text(self.solver, expected)}, "
                   f"found {type_text(self.solver, actual)} ({detail.strip()})", span, *notes)

    @staticmethod
    def callee_name(callee: Expr) -> str:
        if isinstance(callee, GlobalVar):
            return f"`@{callee.name_hint}`"
        if isinstance(callee, Var):
            return f"`%{callee.name_hint}`"
        if isinstance(callee, Constructor):
            return f"constructor `{callee.name}`"
        return "the called function"

    @staticmethod
    def definition_note(callee: Expr, mod: IRModule) -> tuple[Note, ...]:
        if isinstance(callee, GlobalVar) and callee in mod.functions:
            fn = mod.functions[callee]
            if fn.span is not None:
                return (Note(f"`@{callee.name_hint}` is defined here", fn.span),)
        if isinstance(callee, Constructor) and callee.span is not None:
            return (Note(f"`{callee.name}` is declared here", callee.span),)
        return ()

    @staticmethod
    def param_note(callee: Expr, index: int, mod: IRModule) -> tuple[Note, ...]:
        if isinstance(callee, GlobalVar) and callee in mod.functions:
            params = mod.functions[callee].params
            if index < len(params) and params[index].span is not None:
                p = params[index]
                return (Note(f"parameter `%{p.name_hint}` of `@{callee.name_hint}` is declared "
                             "here", p.span),)
        return ()
