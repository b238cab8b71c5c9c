"""UnCPS: call CPS functions with the identity continuation (TVM's `UnCPS` in to_cps.cc).

A CPS function `fn [T..., answer](%p..., %k: fn (R) -> answer) -> answer`
becomes a direct-style one, `fn [T...](%p...) -> R`, that applies it to
`fn (%x: R) -> R { %x }`. The pass does this for every global ToCPS made: the
CPS version keeps its body under the name `@<name>_cps` (the globals call each
other there, in CPS) and `@<name>` becomes the direct-style entry point.

    def @f[answer](%n: int32, %k: fn (int32) -> answer) -> answer { %k(%n) }
      ==>
    def @f(%n: int32) -> int32 { @f_cps(%n, fn (%x: int32) -> int32 { %x }) }
    def @f_cps[answer](%n: int32, %k: fn (int32) -> answer) -> answer { %k(%n) }

Only first-order globals get a direct-style entry: one whose parameters or
result are (or hold) functions would expose CPS closures, whose types mention
the answer type, so such a global stays in CPS under its own name (TVM's
UnCPS is shallow in the same way, and leaves the answer type free).
Precondition: the module is ToCPS output (a global not of that shape is left
as it is).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Call, Expr, Function, GlobalVar, Var
from ...ir.module import IRModule
from ...ir.traverse import rewrite
from ...ir.types import FuncType, Type, TypeVar, map_type, type_children
from ..pass_infra import ModulePass, PassContext, register_pass


def cps_result_type(fn: Function) -> Type | None:
    """`R` when `fn` has ToCPS's shape `[..., answer](..., %k: fn (R) -> answer) -> answer`."""
    if not fn.params or not fn.type_params:
        return None
    answer, k = fn.type_params[-1], fn.params[-1].type_annotation
    if fn.ret_type is not answer or not isinstance(k, FuncType) or len(k.arg_types) != 1:
        return None
    return k.arg_types[0] if k.ret_type is answer else None


def first_order(fn: Function) -> bool:
    """No parameter (but `%k`) nor the result mentions the answer type: no closures in or out.
    Each type node is visited once: types share sub-types (`((%a, %a), (%a, %a))`'s type
    is a DAG), which a walk of the type as a tree would visit exponentially often."""
    answer = fn.type_params[-1]
    roots = [p.type_annotation for p in fn.params[:-1]] + [cps_result_type(fn)]
    stack = [t for t in roots if t is not None]
    seen: set[int] = set()
    while stack:
        t = stack.pop()
        if t is answer:
            return False
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.extend(type_children(t))
    return True


def un_cps_function(callee: Expr, fn: Function) -> Function:
    """A direct-style function applying `callee` (whose definition is `fn`) to the identity."""
    ret = cps_result_type(fn)
    if ret is None:
        raise ValueError("UnCPS needs a function of the shape ToCPS produces")
    # Type parameters of its own: two globals sharing TypeVar objects would not survive
    # printing and parsing (each definition binds its own).
    type_params = tuple(TypeVar(tv.name_hint, span=tv.span) for tv in fn.type_params[:-1])
    fresh = {id(old): new for old, new in zip(fn.type_params, type_params)}

    def own(t: Type | None) -> Type | None:
        return None if t is None else map_type(t, lambda u: fresh.get(id(u)))
    params = tuple(Var(p.name_hint, own(p.type_annotation), span=p.span) for p in fn.params[:-1])
    ret = own(ret)
    x = Var("x", ret)
    identity = Function((x,), x, ret)
    body = Call(callee, (*params, identity), span=fn.span)
    return Function(params, body, ret, type_params, span=fn.span)


@register_pass
@dataclass(frozen=True)
class UnCPS(ModulePass):
    name: ClassVar[str] = "UnCPS"
    opt_level: ClassVar[int] = 1

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        names = {gv.name_hint for gv in mod.functions}
        cps = {id(gv): GlobalVar(_free_name(gv.name_hint + "_cps", names), span=gv.span)
               for gv, fn in mod.functions.items()
               if cps_result_type(fn) is not None and first_order(fn)}

        def rename(old: Expr, new: Expr) -> Expr | None:
            return cps.get(id(old))

        out: dict[GlobalVar, Function] = {}
        for gv, fn in mod.functions.items():
            if id(gv) not in cps:
                # Still in CPS (it returns a function, or is higher order): its calls of
                # converted globals must reach their CPS versions, now named `_cps`.
                kept = rewrite(fn, rename)
                assert isinstance(kept, Function)
                out[gv] = kept
                continue
            new_gv = GlobalVar(gv.name_hint, span=gv.span)
            out[new_gv] = un_cps_function(cps[id(gv)], fn)
            renamed = rewrite(fn, rename)
            assert isinstance(renamed, Function)
            out[cps[id(gv)]] = renamed
        return IRModule(out, mod.type_definitions, mod.source_name, mod.sources)


def _free_name(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name
