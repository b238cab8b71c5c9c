"""EtaExpand: wrap constructors and globals used as values in functions
(TVM's src/relay/transforms/eta_expand.cc).

A constructor or global function that is passed around rather than called becomes a
function that calls it. Callees stay as they are, so a second run changes nothing.

    def @main() {                          def @main() {
        @map(@double, %xs)     ==>       @map(fn (%eta_expand_param: int32) -> int32 {
    }                                        @double(%eta_expand_param)
                                           }, %xs)                 (expand_global_var=True)

With `expand_constructor=True` a value `Cons` becomes, as in TVM, a polymorphic function
over fresh copies of its type's parameters:
`fn [A](%eta_expand_param: A, %eta_expand_param: List[A]) -> List[A] { Cons(...) }`.
A global keeps its parameter annotations, return type and type parameters (fresh copies).
Unlike TVM (which refuses both options off), with neither option the pass changes
nothing; unlike TVM, a global that is called is not expanded (TVM wraps callees too).
"""
from __future__ import annotations

from collections.abc import Callable
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


def _fresh(type_params: tuple[TypeVar, ...]) -> tuple[tuple[TypeVar, ...], Callable[..., Type | None]]:
    """Fresh copies of `type_params` and a function putting them into a type (TVM's
    type_var_replacer_)."""
    fresh = tuple(TypeVar(tv.name_hint) for tv in type_params)
    by_id = {id(old): new for old, new in zip(type_params, fresh)}

    def put(ty: Type | None) -> Type | None:
        return None if ty is None else map_type(ty, lambda t: by_id.get(id(t)))
    return fresh, put


def _expand_constructor(ctor: Constructor, mod: IRModule) -> Function:
    data = mod.type_definitions.get(ctor.belong_to)
    type_params, put = _fresh(data.type_params if data is not None else ())
    params = tuple(Var(PARAM, put(t)) for t in ctor.inputs)
    return Function(params, Call(ctor, params), TypeCall(ctor.belong_to, type_params),
                    type_params)


def _expand_global(gv: GlobalVar, fn: Function) -> Function:
    type_params, put = _fresh(fn.type_params)
    params = tuple(Var(PARAM, put(p.type_annotation)) for p in fn.params)
    return Function(params, Call(gv, params), put(fn.ret_type), type_params)
