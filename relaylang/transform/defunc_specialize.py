"""Helpers of Defunctionalization (`defunctionalization.py`): function types in
types, instantiating a polymorphic signature at a call's type arguments, and
cloning a polymorphic global at concrete types (TVM's `Specialize` with
`DeDup`, in src/relay/transforms/defunctionalization.cc).
"""
from __future__ import annotations

from collections.abc import Callable

from ..ir.analysis import bound_vars
from ..ir.expr import Call, Expr, Function, Var
from ..ir.traverse import rewrite
from ..ir.types import FuncType, Type, TypeVar, map_type, type_children
from ..syntax.printer import astext
from .inline import substitute


def has_func_type(t: Type | None) -> bool:
    """Whether `t` is or contains a function type (iterative)."""
    stack = [t] if t is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, FuncType):
            return True
        stack.extend(type_children(node))
    return False


def is_higher_order(ft: FuncType) -> bool:
    return any(has_func_type(a) for a in ft.arg_types) or has_func_type(ft.ret_type)


def type_key(t: Type) -> str:
    """Types as text: equal texts are the same concrete type (TVM keys its maps alike)."""
    return astext(t)


def substitution(params: tuple[TypeVar, ...], args: tuple[Type, ...]) -> Callable[[Type], Type]:
    """The map replacing each type parameter by its argument, applied to whole types."""
    table = {id(p): a for p, a in zip(params, args)}

    def apply(t: Type) -> Type:
        return map_type(t, lambda n: table.get(id(n)))
    return apply


def instantiate(ft: FuncType, type_args: tuple[Type, ...]) -> FuncType:
    """`ft` at the given type arguments, without type parameters (TVM's InstFuncType)."""
    sub = substitution(ft.type_params, type_args)
    return FuncType(tuple(sub(a) for a in ft.arg_types), sub(ft.ret_type))


def specialize(fn: Function, type_args: tuple[Type, ...], param_type: Callable[[Type], Type],
               var_types: dict[int, Type]) -> Function:
    """A fresh copy of `fn` at `type_args`: type parameters substituted everywhere (binder
    annotations, inner result types, calls' type arguments), every binder a new variable.
    Each parameter is annotated `param_type(its concrete type)`, which is where a function
    parameter becomes its encoding; `var_types` learns every new binder's concrete type,
    for closures that later capture it."""
    sub = substitution(fn.type_params, type_args)

    def retype(t: Type | None) -> Type | None:
        return None if t is None else sub(t)

    renamed: dict[int, Expr] = {}
    params = set(map(id, fn.params))
    for v in bound_vars(fn):
        concrete = sub(v.checked_type if v.checked_type is not None else v.type_annotation)
        if id(v) in params:
            concrete = param_type(concrete)
            new = Var(v.name_hint, concrete, v.virtual_device, span=v.span)
        else:
            new = Var(v.name_hint, retype(v.type_annotation), v.virtual_device, span=v.span)
        var_types[id(new)] = concrete
        renamed[id(v)] = new

    def visit(old: Expr, new: Expr) -> Expr | None:
        if isinstance(new, Function) and new is not fn and new.ret_type is not None:
            return Function(new.params, new.body, retype(new.ret_type), new.type_params,
                            new.attrs, span=new.span)
        if isinstance(new, Call) and new.type_args:
            return Call(new.op, new.args, new.attrs, tuple(sub(t) for t in new.type_args),
                        span=new.span)
        return None
    body = substitute(rewrite(fn.body, visit), renamed)
    return Function(tuple(renamed[id(p)] for p in fn.params), body,  # type: ignore[misc]
                    retype(fn.ret_type), (), fn.attrs, span=fn.span)
