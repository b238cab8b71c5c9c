"""Relations of the vm family, as TVM's ShapeOfRel, InvokeTVMOpRel and ReshapeTensorRel
(src/relay/op/vm/vm.cc). TVM's relations ICHECK their inputs; here a mismatch is a
TypeRelError at the argument. InvokeTVMOpRel unifies the argument tuples with the
primitive's signature; a relation here returns the result only, so the tuples are
checked for equality with the signature instead."""
from __future__ import annotations

from typing import Any

from ...ir.equal import structural_equal
from ...ir.types import FuncType, TensorType, TupleType, Type
from ..relation import TypeRelError, is_known, tensor, type_str
from ..transform.shape_relations import shape_of_rel


def vm_shape_of_rel(args: list[Type], attrs: Any) -> Type | None:
    """ShapeOfRel, shared with `shape_of`."""
    return shape_of_rel(args, attrs)


def _function(args: list[Type], i: int, what: str) -> FuncType | None:
    t = args[i]
    if not is_known(t):
        return None
    if not isinstance(t, FuncType):
        raise TypeRelError(f"{what} must be a function, got {type_str(t)}", arg=i)
    return t


def _matches(expected: Type, got: Type, arg: int, what: str) -> None:
    if not structural_equal(expected, got):
        raise TypeRelError(f"{what} must have type {type_str(expected)}, got {type_str(got)}",
                           arg=arg)


def invoke_tvm_op_rel(args: list[Type], attrs: Any) -> Type | None:
    """(op: fn(A...) -> R, ins: (A...), outs: R as a tuple) -> ()."""
    func = _function(args, 0, "op")
    if func is None or not is_known(args[1]) or not is_known(args[2]):
        return None
    for i, what in ((1, "ins"), (2, "outs")):
        if not isinstance(args[i], TupleType):
            raise TypeRelError(f"{what} must be a tuple, got {type_str(args[i])}", arg=i)
    ret = func.ret_type
    outs = TupleType((ret,)) if isinstance(ret, TensorType) else ret
    if not isinstance(outs, TupleType):
        raise TypeRelError(f"op must return a tensor or a tuple, got {type_str(ret)}", arg=0)
    _matches(TupleType(func.arg_types), args[1], 1, "ins")
    _matches(outs, args[2], 2, "outs")
    return TupleType(())


def reshape_tensor_rel(args: list[Type], attrs: Any) -> Type | None:
    """ReshapeTensorRel: Tensor[newshape, dtype of data]. Like TVM, it does not compare the
    element counts (newshape may hold `?`); `shape` must be a tensor."""
    if not is_known(args[0]) or not is_known(args[1]):
        return None
    data = tensor(args, 0, "data")
    tensor(args, 1, "shape")
    if attrs.newshape is None:
        raise TypeRelError("vm.reshape_tensor needs newshape")
    return TensorType(tuple(attrs.newshape), data.dtype)
