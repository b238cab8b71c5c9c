"""Type inference (`infer.py`), pattern coverage, and the checked module.

`check_module(mod)` infers every expression's type and returns the module with
`checked_type` set on every node, with all diagnostics (errors and warnings);
`infer_types(mod)` does the same and raises `DiagnosticError` on errors.
"""
from __future__ import annotations

from ..ir.diagnostics import Diagnostic, DiagnosticContext, DiagnosticError, Severity
from ..ir.expr import Constructor, Expr, Function, GlobalVar, Let, Match, Op, pattern_vars
from ..ir.module import IRModule
from ..ir.traverse import post_order
from .infer import Inferencer, with_type_args


def check_module(mod: IRModule, *, type_args: bool = False
                 ) -> tuple[IRModule, list[Diagnostic]]:
    """`type_args=True` also records `Call.type_args` as TVM's InferType does
    (`with_type_args`): the instantiated type arguments of calls to polymorphic globals,
    constructors and local functions, and the argument types of operator calls. The calls
    on those paths are new nodes, so it is asked for only where they are read (passes that
    specialise polymorphic calls: Defunctionalization)."""
    diag = DiagnosticContext(mod.source_name, mod.sources.get(mod.source_name, ""))
    inf = Inferencer(mod, diag, op_type_args=type_args)
    inf.run()
    if not diag.has_errors:
        _report_unknown_vars(inf, mod)
    if not diag.has_errors:
        _set_checked_types(inf, mod)
        if type_args:
            return with_type_args(mod, inf), diag.sorted()
    return mod.copy(), diag.sorted()


def infer_types(mod: IRModule, *, type_args: bool = False) -> IRModule:
    typed, diagnostics = check_module(mod, type_args=type_args)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        raise DiagnosticError(diagnostics, mod.sources)
    return typed


def is_typed(mod: IRModule) -> bool:
    """Whether every function of `mod` already carries its type. IR nodes are immutable
    and a checked type is set once, on the whole function at a time, so a typed function
    is typed throughout; a pass that changes a function makes a new, untyped one."""
    return all(fn.checked_type is not None for fn in mod.functions.values())


def _binding_vars(fn: Function, nodes: list[Expr]) -> list:
    out = list(fn.params)
    for node in nodes:
        if isinstance(node, Function) and node is not fn:
            out.extend(node.params)
        elif isinstance(node, Let):
            out.append(node.var)
        elif isinstance(node, Match):
            for clause in node.clauses:
                out.extend(pattern_vars(clause.lhs))
    return out


def _report_unknown_vars(inf: Inferencer, mod: IRModule) -> None:
    solver = inf.solver
    for fn in mod.functions.values():
        nodes = post_order(fn)
        bound_ops = {id(n.var): n.value.name for n in nodes
                     if isinstance(n, Let) and isinstance(n.value, Op)}
        for var in _binding_vars(fn, nodes):
            if solver.is_complete(inf.var_type(var)):
                continue
            op = bound_ops.get(id(var))
            if op is not None:       # `multiply;` is `let %_ = multiply; ...`
                inf.report.error(f"operator `{op}` is not called: an operator is not a value; "
                                 f"call it with its arguments, `{op}(...)`", var.span,
                                 code="cannot-infer")
                continue
            name = var.name_hint or "_"
            inf.report.error(f"cannot infer the type of `%{name}`; annotate it", var.span,
                             code="cannot-infer")


def _set_checked_types(inf: Inferencer, mod: IRModule) -> None:
    resolve = inf.solver.resolve
    for gv, fn in mod.functions.items():
        nodes = post_order(fn)
        for node in nodes:
            if isinstance(node, Op) or node.checked_type is not None:
                continue     # ops are shared by every module; types are set once
            if isinstance(node, (GlobalVar, Constructor)):
                continue
            node.set_checked_type(resolve(inf.types[id(node)]))
        for var in _binding_vars(fn, nodes):
            if var.checked_type is None:
                var.set_checked_type(resolve(inf.var_type(var)))
        if gv.checked_type is None:
            gv.set_checked_type(resolve(inf.signatures[gv.name_hint]))
