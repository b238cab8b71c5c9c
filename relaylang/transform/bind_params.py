"""BindParams: turn named parameters of the entry function into constants.

TVM's `relay.build_module.bind_params_by_name` (src/relay/backend/utils.cc
`BindParamsByName`): the weights of a model become `Constant`s, so that later
passes (FoldConstant) and the run see them as data, not as inputs.

    def @main(%x: Tensor[(2), float32], %w: Tensor[(2), float32]) { add(%x, %w) }
      --BindParams({"w": array([1, 2], float32)})-->
    def @main(%x: Tensor[(2), float32]) { add(%x, meta[relay.Constant][0]) }

Unlike TVM, a name that is not a parameter is an error rather than ignored,
and each array is checked against the parameter's annotated type.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ..ir.expr import Constant, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.text import type_text
from ..ir.traverse import rewrite
from ..ir.types import TensorType, Type
from .pass_infra import ModulePass, PassContext

if TYPE_CHECKING:
    import numpy as np


class BindParamsError(ValueError):
    """A parameter that cannot be bound: unknown name, or an array of the wrong type."""



def param_names(fn: Function) -> str:
    return ", ".join("%" + p.name_hint for p in fn.params) or "none"


def find_param(fn: Function, name: str) -> Var | None:
    """The parameter of `fn` called `name` (a leading `%` is allowed).

    The printer makes local names unique across a whole module by appending a
    counter (LANGUAGE.md §11.3), so `%n` of `@main` may be printed as `%n1` when
    another function used `%n` first; failing an exact match, `name` followed by
    digits is accepted when exactly one parameter is spelled so."""
    name = name.removeprefix("%")
    exact = [p for p in fn.params if p.name_hint == name]
    if exact:
        return exact[0]
    suffixed = re.compile(re.escape(name) + r"\d+")
    renamed = [p for p in fn.params if suffixed.fullmatch(p.name_hint)]
    return renamed[0] if len(renamed) == 1 else None


def param_type(var: Var) -> Type | None:
    """The declared type of a parameter: its annotation, else the inferred type if known."""
    return var.type_annotation if var.type_annotation is not None else var.checked_type


def _dtype_name(dtype: np.dtype) -> str:
    """The Relay dtype of an array's dtype (the carriers of ir/bfloat16.py and ir/lowp.py:
    one field named after it)."""
    return dtype.names[0] if dtype.kind == "V" and dtype.names else str(dtype)


def _array_type(array: np.ndarray) -> TensorType:
    return TensorType(tuple(int(n) for n in array.shape), _dtype_name(array.dtype))


def _fits(array: np.ndarray, ty: TensorType) -> bool:
    """`?` and symbolic dimensions accept any extent."""
    return _dtype_name(array.dtype) == ty.dtype and array.ndim == len(ty.shape) and all(
        not isinstance(d, int) or d == n for d, n in zip(ty.shape, array.shape))


def check_array(var: Var, value: Any, where: str) -> np.ndarray:
    """`value` as an array for parameter `var`, or BindParamsError naming both types."""
    import numpy as np
    ty = param_type(var)
    if ty is not None and not isinstance(ty, TensorType):
        raise BindParamsError(f"{where}: parameter %{var.name_hint} has type {type_text(ty)}; "
                              "only tensor parameters can be bound to arrays")
    if isinstance(value, np.ndarray):
        array = value
    else:
        try:
            array = np.asarray(value, dtype=ty.dtype if ty is not None else None)
        except (TypeError, ValueError, OverflowError) as e:
            raise BindParamsError(f"{where}: cannot make an array for parameter "
                                  f"%{var.name_hint} of {value!r}: {e}") from e
    if ty is not None and not _fits(array, ty):
        raise BindParamsError(f"{where}: parameter %{var.name_hint} has type {type_text(ty)}, "
                              f"but the array bound to it is {type_text(_array_type(array))}")
    return array


class BindParams(ModulePass):
    """Replace the named parameters of `@entry` by constants holding the given arrays.

    Not in the registry: its option is a table of arrays, not text."""

    name: ClassVar[str] = "BindParams"
    opt_level: ClassVar[int] = 0

    def __init__(self, params: Mapping[str, Any], entry: str = "main"):
        self.params = dict(params)
        self.entry = entry

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        where = f"BindParams(@{self.entry})"
        try:
            gv = mod.get_global_var(self.entry)
        except KeyError:
            raise BindParamsError(f"{where}: the module has no function @{self.entry}") from None
        fn = mod.functions[gv]
        bound = self._constants(fn, where)
        if not bound:
            return mod
        body = rewrite(fn.body, lambda old, new: bound.get(id(old)))
        kept = tuple(p for p in fn.params if id(p) not in bound)
        new_fn = Function(kept, body, fn.ret_type, fn.type_params, fn.attrs, span=fn.span)
        return _replace_function(mod, gv, new_fn)

    def _constants(self, fn: Function, where: str) -> dict[int, Expr]:
        """The constant for each bound parameter, by the parameter's identity."""
        bound: dict[int, Expr] = {}
        for name, value in self.params.items():
            var = find_param(fn, name)
            if var is None:
                raise BindParamsError(f"{where}: no parameter %{name.removeprefix('%')} "
                                      f"(parameters: {param_names(fn)})")
            if id(var) in bound:
                raise BindParamsError(f"{where}: parameter %{var.name_hint} is bound twice")
            bound[id(var)] = Constant(check_array(var, value, where), span=var.span)
        return bound

    def __repr__(self) -> str:
        return f"BindParams([{', '.join(self.params)}], entry={self.entry!r})"


def _replace_function(mod: IRModule, gv: GlobalVar, fn: Function) -> IRModule:
    """`mod` with `fn` in place of `gv`'s function, under a fresh GlobalVar.

    The signature changed, and a GlobalVar's `checked_type` is set once; a fresh
    one gets the new type. Uses of the old one (recursion, other callers) are
    renamed to it, so a caller passing the removed arguments is a type error."""
    new_gv = GlobalVar(gv.name_hint, span=gv.span)

    def rename(old: Expr, new: Expr) -> Expr | None:
        return new_gv if old is gv else None

    functions: dict[GlobalVar, Function] = {}
    for key, f in mod.functions.items():
        f = fn if key is gv else f
        renamed = rewrite(f, rename)
        assert isinstance(renamed, Function)
        functions[new_gv if key is gv else key] = renamed
    return IRModule(functions, mod.type_definitions, mod.source_name, mod.sources)
