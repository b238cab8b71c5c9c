"""CallLoweredRel (src/relay/op/call/call.cc): (func: fn(A...) -> R, call_args: (A...)) -> R.
TVM unifies the argument tuple with the function's parameters; here they are compared."""
from __future__ import annotations

from typing import Any

from ...ir.equal import structural_equal
from ...ir.types import FuncType, TupleType, Type
from ..relation import TypeRelError, is_known, type_str


def call_lowered_rel(args: list[Type], attrs: Any) -> Type | None:
    func, call_args = args
    if not is_known(func) or not is_known(call_args):
        return None
    if not isinstance(func, FuncType):
        raise TypeRelError(f"func must be a function, got {type_str(func)}", arg=0)
    if not isinstance(call_args, TupleType):
        raise TypeRelError(f"call_args must be a tuple, got {type_str(call_args)}", arg=1)
    expected = TupleType(func.arg_types)
    if not func.type_params and not structural_equal(expected, call_args):
        raise TypeRelError(f"call_args must have type {type_str(expected)}, got "
                           f"{type_str(call_args)}", arg=1)
    return func.ret_type
