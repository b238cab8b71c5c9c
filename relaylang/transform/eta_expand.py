"""EtaExpand: wrap constructors and globals used as values in functions
(TVM's src/relay/transforms/eta_expand.cc).

A constructor or global function that is passed around rather than called becomes a
function that calls it. Callees stay as they are, so a second run changes nothing.

    def @main() {                          def @main() {
        @map(@double, %xs)     ==>       @map(fn (%eta_expand_param: int32) -> int32 {
    }                                        @double(%eta_expand_param)
                                           }, %xs)                 (expand_global_var=True)

With `expand_constructor=True` a value `Cons` becomes
`fn (%p0, %p1) { Cons(%p0, %p1) }`. Unlike TVM, the new function is not polymorphic
(TVM wrote `fn [A](%p0: A, %p1: List[A]) -> List[A]`): a local function is not
instantiated at its uses here, so parameter types that mention the callee's type
parameters are left for inference; others (`int32`) are kept. Unlike TVM (which refuses
both options off), with neither option the pass changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.expr import Call, Constructor, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.traverse import rewrite
from ..ir.types import Type, TypeCall, TypeVar, map_type
from .pass_infra import ModulePass, PassContext, register_pass

PARAM = "eta_expand_param"


@register_pass
@dataclass(frozen=True)
class EtaExpand(ModulePass):
    name: ClassVar[str] = "EtaExpand"
    opt_level: ClassVar[int] = 1
    expand_constructor: bool = False
    expand_global_var: bool = False

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = mod.copy()
        for gv, fn in mod.functions.items():
            new = eta_expand(fn, mod, self.expand_constructor, self.expand_global_var)
            assert isinstance(new, Function)
            out.functions[gv] = new
        return out


def eta_expand(expr: Expr, mod: IRModule, constructors: bool, globals_: bool) -> Expr:
    """`expr` with every constructor / global (as chosen) in a non-callee position wrapped."""
    def wrap(node: Expr) -> Expr:
        if constructors and isinstance(node, Constructor):
            return _expand_constructor(node, mod)
        if globals_ and isinstance(node, GlobalVar) and node in mod.functions:
            return _expand_global(node, mod.functions[node])
        return node

    def step(old: Expr, new: Expr) -> Expr | None:
        kids = new.children()
        # A callee (`op` of a Call) is applied already: only the other children are values.
        start = 1 if isinstance(new, Call) else 0
        wrapped = list(kids[:start]) + [wrap(k) for k in kids[start:]]
        if all(a is b for a, b in zip(kids, wrapped)):
            return None
        return new.with_children(wrapped)

    out = rewrite(expr, step)
    return wrap(out)


def _monomorphic(ty: Type | None, type_params: tuple[TypeVar, ...]) -> Type | None:
    """`ty`, or None when it mentions a type parameter: inference then fills it in."""
    if ty is None or not type_params:
        return ty
    ids = {id(tv) for tv in type_params}
    mentions = []
    map_type(ty, lambda t: mentions.append(t) if id(t) in ids else None)
    return None if mentions else ty


def _expand_constructor(ctor: Constructor, mod: IRModule) -> Function:
    data = mod.type_definitions.get(ctor.belong_to)
    type_params = data.type_params if data is not None else ()
    params = tuple(Var(PARAM, _monomorphic(t, type_params)) for t in ctor.inputs)
    ret = TypeCall(ctor.belong_to, ()) if not type_params else None
    return Function(params, Call(ctor, params), ret)


def _expand_global(gv: GlobalVar, fn: Function) -> Function:
    params = tuple(Var(PARAM, _monomorphic(p.type_annotation, fn.type_params))
                   for p in fn.params)
    return Function(params, Call(gv, params), _monomorphic(fn.ret_type, fn.type_params))
