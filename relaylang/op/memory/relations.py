"""Relations of the memory family, as TVM's AllocStorageRel, AllocTensorRel and KillRel
(src/relay/op/memory/memory.cc). TVM's relations ICHECK their inputs (an internal error
on bad input); here each check is a TypeRelError at the argument."""
from __future__ import annotations

from typing import Any

from ...ir.expr import Constant
from ...ir.types import (
    STORAGE_TYPE_NAME,
    GlobalTypeVar,
    TensorType,
    TupleType,
    Type,
    TypeCall,
)
from ..relation import TypeRelError, is_known, tensor, type_str

STORAGE_NAME = STORAGE_TYPE_NAME


def storage_type() -> TypeCall:
    """`Storage[]`: core.rly's `extern type Storage`, applied to no arguments."""
    return TypeCall(GlobalTypeVar(STORAGE_NAME), ())


def is_storage(t: Type) -> bool:
    return (isinstance(t, TypeCall) and not t.args and isinstance(t.func, GlobalTypeVar)
            and t.func.name_hint == STORAGE_NAME)


def _int64_scalar(args: list[Type], i: int, what: str) -> None:
    t = tensor(args, i, what)
    if t.shape != () or t.dtype != "int64":
        raise TypeRelError(f"{what} must be an int64 scalar, got {type_str(t)}", arg=i)


def alloc_storage_rel(args: list[Type], attrs: Any) -> Type | None:
    """(size: int64, shape: Tensor, alignment: int64) -> Storage[]."""
    if not all(is_known(a) for a in args):
        return None
    _int64_scalar(args, 0, "size")
    tensor(args, 1, "shape")
    _int64_scalar(args, 2, "alignment")
    return storage_type()


def alloc_tensor_rel(args: list[Type], attrs: Any) -> Type | None:
    """(storage: Storage[], offset: Tensor, shape: Tensor) -> Tensor[const_shape or
    assert_shape, dtype]. TVM leaves the result unconstrained when only assert_shape is
    given (its relation returns before assigning); here assert_shape is the result's shape."""
    if not all(is_known(a) for a in args):
        return None
    if not is_storage(args[0]):
        raise TypeRelError(f"storage must be Storage[], got {type_str(args[0])}", arg=0)
    tensor(args, 1, "offset")
    shape = tensor(args, 2, "shape")
    if len(shape.shape) > 1 or (shape.shape and not isinstance(shape.shape[0], int)):
        raise TypeRelError(f"shape must be a 1-d tensor of known length, got "
                           f"{type_str(shape)}", arg=2)
    rank = shape.shape[0] if shape.shape else 0
    const = attrs.const_shape
    if isinstance(const, Constant):
        data = const.data
        if data.ndim != 1 or data.dtype.kind not in "iu" or data.dtype.itemsize not in (4, 8):
            raise TypeRelError(f"const_shape must be a 1-d int32 or int64 constant, got "
                               f"{data.dtype} of shape {data.shape}")
        if len(data) != rank:
            raise TypeRelError(f"const_shape has {len(data)} dimensions but the shape "
                               f"argument has {rank}", arg=2)
        return TensorType(tuple(int(d) for d in data), attrs.dtype)
    if const is not None:
        raise TypeRelError("const_shape must be a relay.Constant (`meta[relay.Constant][i]`)")
    if attrs.assert_shape is None:
        raise TypeRelError("memory.alloc_tensor needs const_shape or assert_shape")
    if len(attrs.assert_shape) != rank:
        raise TypeRelError(f"assert_shape has {len(attrs.assert_shape)} dimensions but the "
                           f"shape argument has {rank}", arg=2)
    return TensorType(tuple(attrs.assert_shape), attrs.dtype)


def kill_rel(args: list[Type], attrs: Any) -> Type | None:
    """KillRel: whatever is freed, the result is `()` (TVM: "should only support tensors")."""
    return TupleType(())
