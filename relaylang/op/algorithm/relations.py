"""Type relations of the algorithm family (TVM v0.19's ArgsortRel, TopKRel, UniqueRel,
ArgWhereRel). `unique` and `argwhere` give `?` for the lengths the values decide."""
from __future__ import annotations

from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, choice, tensor
from ..shape_rules import all_known, axis_of, dim_prod, int_dtype, is_int


def _index_dtype(dtype: str) -> str:
    dtype = dtype or "int32"
    if not int_dtype(dtype):
        raise TypeRelError(f"dtype of the indices must be an integer dtype, got {dtype}")
    return dtype


def _data(args: list[Type]) -> TensorType:
    data = tensor(args, 0, "data")
    if not data.shape:
        raise TypeRelError("data must have rank 1 or more, got a scalar", arg=0)
    return data


def argsort_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = _data(args)
    axis_of(attrs.axis, len(data.shape))
    return TensorType(data.shape, _index_dtype(attrs.dtype))


def sort_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = _data(args)
    axis_of(attrs.axis, len(data.shape))
    return TensorType(data.shape, data.dtype)


def topk_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = _data(args)
    axis = axis_of(attrs.axis, len(data.shape))
    choice(attrs.ret_type, ("both", "values", "indices"), "ret_type")
    n = data.shape[axis]
    k = attrs.k
    if k is None or k < 1:
        size = n
    else:
        if is_int(n) and k > n:
            raise TypeRelError(f"k = {k} is larger than the axis ({n} elements)", arg=0)
        size = k
    shape = data.shape[:axis] + (size,) + data.shape[axis + 1:]
    values = TensorType(shape, data.dtype)
    indices = TensorType(shape, _index_dtype(attrs.dtype))
    if attrs.ret_type == "values":
        return values
    if attrs.ret_type == "indices":
        return indices
    return TupleType((values, indices))


def unique_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    if attrs.axis is None:
        n = dim_prod(data.shape)
        values = TensorType((ANY,), data.dtype)
    else:
        if not data.shape:
            raise TypeRelError("unique along an axis needs data of rank 1 or more", arg=0)
        axis = axis_of(attrs.axis, len(data.shape))
        n = data.shape[axis]
        values = TensorType(data.shape[:axis] + (ANY,) + data.shape[axis + 1:], data.dtype)
    fields = [values, TensorType((ANY,), "int32"), TensorType((n,), "int32"),
              TensorType((1,), "int32")]
    if attrs.return_counts:
        fields.append(TensorType((ANY,), "int32"))
    return TupleType(tuple(fields))


def argwhere_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    cond = tensor(args, 0, "condition")
    return TensorType((ANY, len(cond.shape)), "int32")
