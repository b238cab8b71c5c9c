"""Checks that a module is first-order over tensors (NoLowering otherwise) and collects
its primitive functions; type helpers (tensor leaves, tuple structure)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ....ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ....ir.types import TensorType, TupleType, Type
from ..lower import SUPPORTED_DTYPES, NoLowering

# ---------------------------------------------------------------- types

def _is_primitive(fn: Any) -> bool:
    return isinstance(fn, Function) and fn.attrs is not None and any(
        k == "Primitive" and int(v) == 1 for k, v in fn.attrs.entries)


def _type_of(e: Expr) -> Type | None:
    t = e.checked_type
    if t is None and isinstance(e, Var):
        t = e.type_annotation
    return t


def _leaves(t: Type | None, what: str, span: Any) -> list[tuple[tuple[int, ...], str]]:
    """The tensor leaves (shape, dtype) of a tensor / tuple type, in order."""
    if t is None:
        raise NoLowering(what, span, "untyped expression (run InferType)")
    out: list[tuple[tuple[int, ...], str]] = []
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, TupleType):
            stack.extend(reversed(x.fields))
        elif isinstance(x, TensorType):
            shape = []
            for d in x.shape:
                if not isinstance(d, int) or isinstance(d, bool):
                    raise NoLowering(what, span, f"dimension {d} is not static (`?` shapes "
                                     "are not compiled natively)")
                shape.append(int(d))
            if x.dtype not in SUPPORTED_DTYPES:
                raise NoLowering(what, span, f"dtype {x.dtype} is not supported natively")
            out.append((tuple(shape), x.dtype))
        else:
            raise NoLowering(what, span, f"{_describe(x)} is not a tensor or a tuple of "
                             "tensors: only first-order programs over tensors compile natively")
    return out


def _describe(t: Type) -> str:
    from ....ir.types import FuncType, GlobalTypeVar, RefType, TypeCall, TypeVar
    if isinstance(t, RefType):
        return "a reference (ref type)"
    if isinstance(t, (TypeCall, GlobalTypeVar)):
        return "an ADT value"
    if isinstance(t, FuncType):
        return "a function value (fn type)"
    if isinstance(t, TypeVar):
        return "a value of polymorphic type"
    return f"a value of type {type(t).__name__}"


def _structure(t: Type, counter: list[int]) -> Any:
    """The type as a nested tuple of leaf indices (iterative)."""
    if not isinstance(t, TupleType):
        counter[0] += 1
        return counter[0] - 1
    # build nested tuples without recursion
    root: list[Any] = []
    stack: list[tuple[TupleType, list[Any], int]] = [(t, root, 0)]
    while stack:
        tt, acc, i = stack.pop()
        if i == len(tt.fields):
            if stack:
                stack[-1][1].append(tuple(acc))
            continue
        stack.append((tt, acc, i + 1))
        f = tt.fields[i]
        if isinstance(f, TupleType):
            stack.append((f, [], 0))
        else:
            acc.append(counter[0])
            counter[0] += 1
    return tuple(root)


def _rebuild(structure: Any, leaves: list[Any]) -> Any:
    if isinstance(structure, int):
        return leaves[structure]
    stack: list[tuple[tuple, list[Any], int]] = [(structure, [], 0)]
    result: Any = None
    while stack:
        s, acc, i = stack.pop()
        if i == len(s):
            value = tuple(acc)
            if stack:
                stack[-1][1].append(value)
            else:
                result = value
            continue
        stack.append((s, acc, i + 1))
        x = s[i]
        if isinstance(x, int):
            acc.append(leaves[x])
        else:
            stack.append((x, [], 0))
    return result


def _nbytes(shape: tuple[int, ...], dtype: str) -> int:
    from ..codegen import elem_size
    n = 1
    for d in shape:
        n *= d
    return n * elem_size(dtype)


# ---------------------------------------------------------------- analysis

@dataclass
class _FnInfo:
    name: str
    gv: GlobalVar
    fn: Function
    param_leaves: list[list[tuple[tuple[int, ...], str]]]
    ret_leaves: list[tuple[tuple[int, ...], str]]
    ret_structure: Any
    self_tail: bool
    symbol: str = ""
    entry_symbol: str = ""


class _Analysis:
    """Checks that the functions are first-order, collects primitive functions (by node
    identity) and the global call graph."""

    def __init__(self, mod: Any):
        self.mod = mod
        self.prim_fns: dict[int, Function] = {}     # id(Function or raw op Call) -> Function
        self.infos: dict[str, _FnInfo] = {}

    def function(self, gv: GlobalVar) -> list[str]:
        """Check @gv; returns the globals it calls."""
        fn = self.mod[gv]
        name = gv.name_hint
        if not isinstance(fn, Function):
            raise NoLowering("@" + name, getattr(fn, "span", None), "not a function")
        if fn.type_params:
            raise NoLowering("@" + name, fn.span, "polymorphic functions are not compiled "
                             "natively")
        params = [_leaves(_type_of(p), f"@{name} parameter %{p.name_hint}", p.span)
                  for p in fn.params]
        ret_t = fn.body.checked_type or fn.ret_type
        ret = _leaves(ret_t, f"@{name} result", fn.span)
        structure = _structure(ret_t, [0])
        callees: list[str] = []
        bound: set[int] = {id(p) for p in fn.params}
        prim_vars: set[int] = set()
        seen: set[int] = set()
        stack: list[Expr] = [fn.body]
        while stack:
            e = stack.pop()
            if id(e) in seen:
                continue
            seen.add(id(e))
            span = e.span
            if isinstance(e, Var):
                if id(e) in prim_vars:
                    raise NoLowering("function value", span, f"%{e.name_hint} is a function "
                                     "used as a value")
                if id(e) not in bound:
                    raise NoLowering("variable", span, f"free variable %{e.name_hint}")
                _leaves(_type_of(e), f"%{e.name_hint}", span)
            elif isinstance(e, Constant):
                import numpy as np
                if str(np.asarray(e.data).dtype) not in SUPPORTED_DTYPES:
                    raise NoLowering("constant", span, f"dtype {np.asarray(e.data).dtype}")
            elif isinstance(e, Tuple):
                stack.extend(e.fields)
            elif isinstance(e, TupleGetItem):
                stack.append(e.tuple_value)
            elif isinstance(e, Let):
                if isinstance(e.value, Function):
                    if not _is_primitive(e.value):
                        raise NoLowering("closure", e.value.span, "closures (local functions) "
                                         "are not compiled natively")
                    prim_vars.add(id(e.var))
                    self.prim_fns[id(e.value)] = e.value
                else:
                    _leaves(_type_of(e.var) or e.value.checked_type, f"%{e.var.name_hint}",
                            e.var.span)
                    stack.append(e.value)
                bound.add(id(e.var))
                stack.append(e.body)
            elif isinstance(e, If):
                _leaves(e.checked_type, "if", span)
                stack.extend((e.cond, e.true_branch, e.false_branch))
            elif isinstance(e, Call):
                op = e.op
                _leaves(e.checked_type, "call", span)
                if isinstance(op, Function) and _is_primitive(op):
                    self.prim_fns[id(op)] = op
                elif isinstance(op, Var) and id(op) in prim_vars:
                    pass
                elif isinstance(op, GlobalVar):
                    if op.name_hint not in self.mod:
                        raise NoLowering("@" + op.name_hint, span, "unknown global")
                    callee = self.mod[op.name_hint]
                    if getattr(callee, "attrs", None) is not None and \
                            callee.attrs.get("Compiler") is not None:
                        # a BYOC partitioned function: called like a kernel (an extern
                        # slot when `compile_program(externs=...)` takes it), not compiled
                        for p in callee.params:
                            _leaves(_type_of(p), f"@{op.name_hint} parameter", span)
                        self.prim_fns[id(e)] = callee
                    else:
                        callees.append(op.name_hint)
                elif isinstance(op, Op):
                    self.prim_fns[id(e)] = _wrap_op(e)
                elif isinstance(op, Constructor):
                    raise NoLowering(op.name, span, "ADT constructors are not compiled "
                                     "natively")
                elif isinstance(op, Function):
                    raise NoLowering("closure", op.span, "closures (local functions) are "
                                     "not compiled natively")
                else:
                    raise NoLowering("function value", span, "calls of function values "
                                     "are not compiled natively")
                stack.extend(e.args)
            elif isinstance(e, Function):
                what = "function value" if _is_primitive(e) else "closure"
                raise NoLowering(what, span, "functions as values (closures) are not "
                                 "compiled natively")
            elif isinstance(e, GlobalVar):
                raise NoLowering("@" + e.name_hint, span, "a global function used as a value "
                                 "(higher-order) is not compiled natively")
            elif isinstance(e, Match):
                raise NoLowering("match", span, "ADTs and `match` are not compiled natively")
            elif isinstance(e, Constructor):
                raise NoLowering(e.name, span, "ADT constructors are not compiled natively")
            elif isinstance(e, (RefCreate, RefRead, RefWrite)):
                raise NoLowering("reference", span, "references are not compiled natively")
            else:
                raise NoLowering(type(e).__name__, span, "not compiled natively")
        self.infos[name] = _FnInfo(name, gv, fn, params, ret, structure,
                                   _has_self_tail_call(fn, name))
        return callees


def _wrap_op(call: Call) -> Function:
    """A primitive function around a bare op call (its arguments become parameters)."""
    params = tuple(Var(f"p{k}", _type_of(a), span=a.span) for k, a in enumerate(call.args))
    body = Call(call.op, params, call.attrs, call.type_args, span=call.span)
    body.set_checked_type(call.checked_type)
    return Function(params, body, call.checked_type, span=call.span)


def _has_self_tail_call(fn: Function, name: str) -> bool:
    stack: list[Expr] = [fn.body]
    while stack:
        e = stack.pop()
        if isinstance(e, If):
            stack.extend((e.true_branch, e.false_branch))
        elif isinstance(e, Let):
            stack.append(e.body)
        elif isinstance(e, Call) and isinstance(e.op, GlobalVar) and e.op.name_hint == name:
            return True
    return False
