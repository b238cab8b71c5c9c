"""Inline: replace calls of globals marked `Inline=1` by their bodies.

Mirrors TVM's src/relay/transforms/inline.cc (`relay.transform.Inline`). A
global function carrying the attribute `Inline=1` is inlined at every call
site `@f(args)` whose own callees are all inlinable too (TVM's CanInline: a global
mentioning a global that is not inlinable is not inlined); a function on a cycle of
the call graph (recursive, directly or through others) never is. Afterwards an inlined
global nothing references any more is dropped, except `@main` and the globals nothing
referenced before the pass (TVM keeps those "entry" functions, marked or not).

As in TVM, a global with `Compiler=...` or `Extern=1` (its code comes from elsewhere)
is not opened: its calls become calls of a copy of the function, attributes and all,
and an inlinable global used as a value (not called) becomes a copy of the function.

    def @sq(%x: float32, Inline=1) -> float32 {        def @main(%y: float32) -> float32 {
      multiply(%x, %x)                                    let %x1 = add(%y, 1f);
    }                                          ==>        multiply(%x1, %x1)
    def @main(%y: float32) -> float32 {                 }
      @sq(add(%y, 1f))
    }

An atomic argument (variable, constant, global, operator, constructor) is
substituted; any other is bound by a fresh `let` so it is evaluated once, in
argument order, before the body. Every binder of the inlined body gets a fresh
`Var`, so inlining one function twice never shares binders. Polymorphic
functions (with type parameters) are left alone: their annotations mention
type variables that would be unbound at the call site.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.analysis import bound_vars
from ..ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    Let,
    Match,
    Op,
    Var,
    map_pattern_vars,
)
from ..ir.module import IRModule
from ..ir.traverse import post_order, rewrite
from .pass_infra import ModulePass, PassContext, register_pass

ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)


@register_pass
@dataclass(frozen=True)
class Inline(ModulePass):
    """Inline the non-recursive globals marked `Inline=1` and drop them when unused."""

    name: ClassVar[str] = "Inline"
    opt_level: ClassVar[int] = 1

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return inline(mod)


def inline(mod: IRModule) -> IRModule:
    """`mod` with the inlinable globals' calls replaced by their bodies."""
    graph = call_graph(mod)
    marked = [gv for gv, fn in mod.functions.items() if _marked(fn)]
    candidates = {gv for gv in marked
                  if not mod.functions[gv].type_params and not _on_cycle(graph, gv)}
    changed = True
    while changed:               # TVM's CanInline: every callee must be inlinable too
        changed = False
        for gv in sorted(candidates, key=lambda g: g.name_hint):
            if any(c not in candidates for c in graph[gv]):
                candidates.discard(gv)
                changed = True
    if not candidates:
        return mod
    mentioned = {c for gv, callees in graph.items() for c in callees if c != gv}
    entries = {gv for gv in mod.functions if gv not in mentioned}
    expanded: dict[GlobalVar, Function] = {}
    for gv in _callees_first(graph, candidates):
        expanded[gv] = _inline_calls(mod.functions[gv], expanded)
    out = mod.copy()
    out.functions = {gv: expanded.get(gv) or _inline_calls(fn, expanded)
                     for gv, fn in mod.functions.items()}
    return _drop_unused(out, candidates - entries)


def _marked(fn: Function) -> bool:
    return fn.attrs is not None and bool(fn.attrs.get("Inline", 0))


def call_graph(mod: IRModule) -> dict[GlobalVar, list[GlobalVar]]:
    """For each global, the globals its body mentions (called or as a value)."""
    by_name = {gv.name_hint: gv for gv in mod.functions}
    graph: dict[GlobalVar, list[GlobalVar]] = {}
    for gv, fn in mod.functions.items():
        names = {n.name_hint for n in post_order(fn) if isinstance(n, GlobalVar)}
        graph[gv] = [by_name[n] for n in sorted(names) if n in by_name]
    return graph


def _on_cycle(graph: dict[GlobalVar, list[GlobalVar]], start: GlobalVar) -> bool:
    # A worklist search from `start`'s callees back to `start`: the graph may be cyclic.
    seen: set[str] = set()
    work = list(graph[start])
    while work:
        gv = work.pop()
        if gv.name_hint == start.name_hint:
            return True
        if gv.name_hint not in seen:
            seen.add(gv.name_hint)
            work.extend(graph.get(gv, ()))
    return False


def _callees_first(graph: dict[GlobalVar, list[GlobalVar]],
                   candidates: set[GlobalVar]) -> list[GlobalVar]:
    """The candidates in an order where each comes after the candidates it calls."""
    order: list[GlobalVar] = []
    done: set[GlobalVar] = set()
    for root in sorted(candidates, key=lambda g: g.name_hint):
        stack: list[tuple[GlobalVar, bool]] = [(root, False)]
        while stack:
            gv, expanded = stack.pop()
            if expanded:
                order.append(gv)
            elif gv not in done:
                done.add(gv)
                stack.append((gv, True))
                stack += [(c, False) for c in graph[gv] if c in candidates and c not in done]
    return order


def _external(fn: Function) -> bool:
    """Code from elsewhere (TVM's attr::kCompiler, attr::kExtern): never opened."""
    return fn.attrs is not None and (fn.attrs.get("Compiler") is not None
                                     or bool(fn.attrs.get("Extern", 0)))


def _inline_calls(fn: Function, expanded: dict[GlobalVar, Function]) -> Function:
    """`fn` with each call of an already expanded candidate replaced by a fresh copy of
    its body (of the function itself when external), and each other mention of one by a
    fresh copy of the function."""
    def value(e: Expr) -> Expr:
        if isinstance(e, GlobalVar) and e in expanded:
            return copy_fresh(expanded[e], {})
        return e

    def visit(old: Expr, new: Expr) -> Expr | None:
        kids = new.children()
        if isinstance(new, Call) and isinstance(new.op, GlobalVar) and new.op in expanded:
            callee = expanded[new.op]
            if len(callee.params) == len(new.args):
                args = tuple(value(a) for a in new.args)
                if _external(callee):
                    return new.with_children([copy_fresh(callee, {}), *args])
                return inline_call(callee, args)
        start = 1 if isinstance(new, Call) and isinstance(new.op, GlobalVar) else 0
        values = list(kids[:start]) + [value(k) for k in kids[start:]]
        if all(a is b for a, b in zip(kids, values)):
            return None
        return new.with_children(values)
    return rewrite(fn, visit)  # type: ignore[return-value]


def inline_call(callee: Function, args: tuple[Expr, ...]) -> Expr:
    """The body of `callee` applied to `args`: atomic ones substituted, others let-bound."""
    subst: dict[int, Expr] = {}
    lets: list[tuple[Var, Expr]] = []
    for param, arg in zip(callee.params, args):
        if isinstance(arg, ATOMIC):
            subst[id(param)] = arg
        else:
            fresh = Var(param.name_hint, param.type_annotation, span=param.span)
            subst[id(param)] = fresh
            lets.append((fresh, arg))
    body = copy_fresh(callee.body, subst)
    for var, value in reversed(lets):
        body = Let(var, value, body)
    return body


def copy_fresh(expr: Expr, subst: dict[int, Expr]) -> Expr:
    """`expr` with variables replaced per `subst` and every binder it holds made fresh."""
    subst = dict(subst)
    for v in bound_vars(expr):
        if id(v) not in subst:
            subst[id(v)] = Var(v.name_hint, v.type_annotation, v.virtual_device, span=v.span)
    return substitute(expr, subst)


def substitute(expr: Expr, subst: dict[int, Expr]) -> Expr:
    """`expr` with variables (uses and binders) replaced per `subst`, keyed by id."""
    def var(v: Var) -> Var:
        new = subst.get(id(v), v)
        return new if isinstance(new, Var) else v

    def visit(old: Expr, new: Expr) -> Expr | None:
        if isinstance(old, Var):
            return subst.get(id(old))
        if isinstance(new, Let) and var(new.var) is not new.var:
            return Let(var(new.var), new.value, new.body, span=new.span)
        if isinstance(new, Function) and any(var(p) is not p for p in new.params):
            return Function(tuple(map(var, new.params)), new.body, new.ret_type,
                            new.type_params, new.attrs, span=new.span)
        if isinstance(new, Match):
            clauses = tuple(Clause(map_pattern_vars(c.lhs, var), c.rhs, span=c.span)
                            for c in new.clauses)
            return Match(new.data, clauses, new.complete, span=new.span)
        return None
    return rewrite(expr, visit)


def _drop_unused(mod: IRModule, marked: set[GlobalVar]) -> IRModule:
    """Drop marked globals no kept function (transitively) mentions; `@main` stays."""
    graph = call_graph(mod)
    kept = {gv for gv in mod.functions if gv not in marked or gv.name_hint == "main"}
    work = list(kept)
    while work:
        for callee in graph[work.pop()]:
            if callee not in kept:
                kept.add(callee)
                work.append(callee)
    if len(kept) == len(mod.functions):
        return mod
    out = mod.copy()
    out.functions = {gv: fn for gv, fn in mod.functions.items() if gv in kept}
    return out
