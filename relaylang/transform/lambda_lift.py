"""LambdaLift: turn every local closure into a global function.

Mirrors TVM's src/relay/transforms/lambda_lift.cc (`relay.transform.LambdaLift`).
Each `fn` inside a global's body becomes a new global `@<enclosing>_lifted_<n>`.
A closure without free variables is replaced by the global itself; one that
captures variables becomes a global taking the captured variables and
returning the closure (marked `Closure=1`), and the closure site becomes a
call of it with the captured variables:

    def @main(%y: float32) -> float32 {         def @main(%y: float32) -> float32 {
      let %f = fn (%z: float32) -> float32 {      let %f = @main_lifted_0(%y);
        add(%z, %y)                               %f(1f)
      };                                  ==>   }
      %f(1f)                                    def @main_lifted_0(%y1: float32) {
    }                                             fn (%z: float32, Closure=1) -> float32 {
                                                    add(%z, %y1)
                                                  }
                                                }

A recursive let-bound closure (`let %loop = fn ... %loop(...)`) refers to
itself inside the lifted global as a call of that global with its captured
variables. Closures are lifted innermost first, so a closure capturing an
inner closure's captures captures them in turn. A global whose body is
directly a `Closure=1` function is already lifted (that inner function is
left in place), which keeps the pass idempotent; `Primitive=1` functions
stay. A lifted global gets its own copy of any node it shared with the enclosing
function (graph form allows that sharing; two globals cannot express it in text).
Captured variables lacking annotations take their inferred types, so
the module is type-checked first (and again after, to type the new nodes).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from ..ir.analysis import bound_vars, free_type_vars, free_vars
from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Constant, Constructor, Expr, Function, GlobalVar, Let, Op, Var
from ..ir.module import IRModule
from ..ir.traverse import post_order, rewrite
from ..ir.types import FuncType, Type, TypeVar, map_type
from .infer_type import InferType
from .inline import substitute
from .pass_infra import ModulePass, PassContext, register_pass

_ATOMS = (Var, GlobalVar, Op, Constructor, Constant)


@register_pass
@dataclass(frozen=True)
class LambdaLift(ModulePass):
    """Lift every local closure to a global function."""

    name: ClassVar[str] = "LambdaLift"
    opt_level: ClassVar[int] = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        # Typed before (captured variables take their inferred types) and after (the new
        # nodes get theirs, so the output prints alike whether or not it is run again).
        infer = InferType()
        return infer.transform_module(lambda_lift(infer.transform_module(mod, ctx)), ctx)


def lambda_lift(mod: IRModule) -> IRModule:
    """`mod` with each local closure moved to a new global after its enclosing one."""
    names = {gv.name_hint for gv in mod.functions}
    out = mod.copy()
    out.functions = {}
    for gv, fn in mod.functions.items():
        lifter = _Lifter(gv.name_hint, names)
        out.functions[gv] = lifter.lift_in(fn)
        out.functions.update(lifter.lifted)
    return out


def _has_attr(fn: Function, key: str) -> bool:
    return fn.attrs is not None and bool(fn.attrs.get(key, 0))


def _with_attr(attrs: DictAttrs | None, key: str, value: object) -> DictAttrs:
    entries = tuple((k, v) for k, v in (attrs.entries if attrs else ()) if k != key)
    return DictAttrs(entries + ((key, value),))


class _Lifter:
    """Lifts the closures of one global; `lifted` holds the new globals in order."""

    def __init__(self, enclosing: str, names: set[str]):
        self.enclosing = enclosing
        self.names = names          # every global name taken so far, shared across globals
        self.lifted: dict[GlobalVar, Function] = {}
        self.letrec: dict[int, Var] = {}    # id(closure) -> the let variable it is bound to

    def lift_in(self, fn: Function) -> Function:
        keep = {id(fn)}
        if isinstance(fn.body, Function) and _has_attr(fn.body, "Closure"):
            keep.add(id(fn.body))           # the shape this pass itself produces
        for node in post_order(fn):
            if isinstance(node, Let) and isinstance(node.value, Function):
                self.letrec[id(node.value)] = node.var

        def visit(old: Expr, new: Expr) -> Expr | None:
            if isinstance(old, Function) and id(old) not in keep \
                    and not _has_attr(old, "Primitive"):
                return self.lift(old, new)  # type: ignore[arg-type]
            return None
        return rewrite(fn, visit)  # type: ignore[return-value]

    def fresh_name(self) -> str:
        n = 0
        while f"{self.enclosing}_lifted_{n}" in self.names:
            n += 1
        name = f"{self.enclosing}_lifted_{n}"
        self.names.add(name)
        return name

    def lift(self, old: Function, new: Function) -> Expr:
        """Register `new` (inner closures already lifted) as a global; return its use."""
        rec = self.letrec.get(id(old))
        free = free_vars(new)
        captured = [v for v in free if v is not rec]
        gv = GlobalVar(self.fresh_name())
        params = tuple(Var(v.name_hint, v.type_annotation or v.checked_type, span=v.span)
                       for v in captured)
        subst: dict[int, Expr] = {id(v): p for v, p in zip(captured, params)}
        if rec is not None and any(v is rec for v in free):
            subst[id(rec)] = Call(gv, params) if params else gv
        body: Function = _unshared(substitute(new, subst))  # type: ignore[assignment]
        type_params = tuple(free_type_vars(new))
        if params:
            inner = Function(body.params, body.body, body.ret_type, body.type_params,
                             _with_attr(body.attrs, "Closure", 1), span=body.span)
            # The closure's inferred type as the result: a checker meeting a call of a
            # polymorphic global before its definition needs its full signature.
            self.lifted[gv] = _own_type_params(
                Function(params, inner, old.checked_type, type_params, span=body.span))
            return Call(gv, tuple(captured))
        self.lifted[gv] = _own_type_params(
            Function(body.params, body.body, body.ret_type or _ret_type(old),
                     type_params + body.type_params, body.attrs, span=body.span))
        return gv


def _unshared(fn: Expr) -> Expr:
    """`fn` rebuilt with nodes of its own. A graph node shared between a closure body and
    its enclosing function (DAG form allows it) would otherwise be shared by two globals,
    which text cannot say: printed and parsed back, each global gets its own copy. Sharing
    inside `fn` stays; variables, constants, globals and operators are atoms, kept."""
    done: dict[int, Expr] = {}
    for node in post_order(fn):
        if isinstance(node, _ATOMS):
            done[id(node)] = node
            continue
        kids = node.children()
        new = node.with_children([done[id(c)] for c in kids]) if kids else node
        done[id(node)] = dataclasses.replace(new) if new is node else new
    return done[id(fn)]


def _ret_type(fn: Function) -> Type | None:
    ty = fn.checked_type
    return ty.ret_type if isinstance(ty, FuncType) else None


def _own_type_params(fn: Function) -> Function:
    """`fn` with fresh type parameters: a lifted closure of a polymorphic global must not
    share the enclosing global's `TypeVar` objects (each definition binds its own)."""
    if not fn.type_params:
        return fn
    tmap = {id(tv): TypeVar(tv.name_hint, span=tv.span) for tv in fn.type_params}

    def retype(t: Type | None) -> Type | None:
        return None if t is None else map_type(t, lambda n: tmap.get(id(n)))
    subst: dict[int, Expr] = {
        id(v): Var(v.name_hint, retype(v.type_annotation), v.virtual_device, span=v.span)
        for v in bound_vars(fn)}

    def visit(old: Expr, new: Expr) -> Expr | None:
        if isinstance(new, Function):
            return Function(new.params, new.body, retype(new.ret_type),
                            tuple(retype(t) for t in new.type_params), new.attrs, span=new.span)
        if isinstance(new, Call) and new.type_args:
            return Call(new.op, new.args, new.attrs, tuple(map(retype, new.type_args)),
                        span=new.span)
        return None
    return substitute(rewrite(fn, visit), subst)  # type: ignore[return-value]
