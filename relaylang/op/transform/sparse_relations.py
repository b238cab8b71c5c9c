"""Type relation of sparse_to_dense (TVM v0.19's SparseToDenseRel in
src/relay/op/tensor/transform.cc), shared with dyn.sparse_to_dense
(relaylang/op/dyn/relations.py) for the checks of the sparse inputs.

sparse_indices: integers, 0-D (one position on axis 0), 1-D (n positions on axis 0) or
2-D (n rows of k <= rank leading coordinates); sparse_values: 0-D (one value for every
position) or 1-D with one value per position; default_value: a scalar. The result has
`output_shape` and the values' dtype (the default value is cast to it, as topi's
if_then_else does).
"""
from __future__ import annotations

from typing import Any

from ...ir.types import TensorType, Type
from ..relation import TypeRelError, tensor
from ..shape_rules import all_known, expect_int_dtype, expect_scalar, is_int


def check_sparse_inputs(args: list[Type], rank: int | None) -> TensorType:
    """The checks of both relations on (sparse_indices, sparse_values, default_value); the
    values' type. `rank`: the output's rank when known."""
    indices = tensor(args, 0, "sparse_indices")
    values = tensor(args, 1, "sparse_values")
    default = tensor(args, 2, "default_value")
    expect_int_dtype(indices, "sparse_indices", 0)
    if len(indices.shape) > 2:
        raise TypeRelError(f"sparse_indices must be 0-D, 1-D or 2-D, got rank "
                           f"{len(indices.shape)}", arg=0)
    if len(values.shape) > 1:
        raise TypeRelError(f"sparse_values must be 0-D or 1-D, got rank {len(values.shape)}",
                           arg=1)
    expect_scalar(default, "default_value", 2)
    n = 1 if not indices.shape else indices.shape[0]
    if values.shape and is_int(values.shape[0]) and is_int(n) and values.shape[0] != n:
        raise TypeRelError(f"sparse_values has {values.shape[0]} values for {n} sparse "
                           f"indices", arg=1, dim=0)
    if rank is not None:
        if rank == 0:
            raise TypeRelError("output_shape must have at least one dimension")
        k = indices.shape[1] if len(indices.shape) == 2 else 1
        if is_int(k) and k > rank:
            raise TypeRelError(f"sparse_indices rows have {k} coordinates but the output has "
                               f"rank {rank}", arg=0, dim=1)
    return values


def sparse_to_dense_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    shape = tuple(attrs.output_shape or ())
    for d in shape:
        if not is_int(d) or d < 0:
            raise TypeRelError(f"output_shape must hold non-negative integers, got "
                               f"{list(shape)}")
    values = check_sparse_inputs(args, len(shape))
    return TensorType(shape, values.dtype)
