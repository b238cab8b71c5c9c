"""Reduction operators: schemas, which axes a call reduces, type relations.

Mirrors TVM's src/relay/op/tensor/reduce.cc (every reduction is kCommReduce;
GetReduceAxes, ReduceShapeImpl, ReduceRel, GenericReduceRel<ArgReduceAttrs>,
VarianceRel) and the schemas of include/tvm/relay/attrs/reduce.h. The NumPy
kernels are in `reduce_kernels.py`, bound lazily.

Axis semantics as TVM's GetReduceAxes: `axis` None *or empty* reduces every
axis; negative axes count from the end; `exclude=True` reduces exactly the
axes not listed. Where TVM would crash or misbehave (a repeated axis, argmax
of a scalar) the relation reports an error instead.

`logsumexp` and `std` are not here on purpose: in TVM they are Python helpers
built from max/exp/sum/log and `variance`/`sqrt`, not registered operators,
so TVM's parser rejects them and TVM never prints them.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..ir.attrs import Attrs
from ..ir.types import TensorType, Type
from .elemwise import ANY_DTYPE, BOOL, DTypeRule, check_dtype, numpy_kernel, same_dtype
from .registry import OpDef, OpPattern, register_op
from .relation import Dim, TypeRelError, dim_str, is_known, tensor
from .schema import attrs_schema

R = OpPattern.COMM_REDUCE


@attrs_schema
class ReduceAttrs(Attrs):
    axis: tuple[int, ...] | None = None     # None: reduce over every axis
    keepdims: bool = False
    exclude: bool = False

    type_key: ClassVar[str] = "relay.attrs.ReduceAttrs"


@attrs_schema
class ArgReduceAttrs(Attrs):
    axis: tuple[int, ...] | None = None
    keepdims: bool = False
    select_last_index: bool = False
    exclude: bool = False

    type_key: ClassVar[str] = "relay.attrs.ArgReduceAttrs"


@attrs_schema
class VarianceAttrs(Attrs):
    axis: tuple[int, ...] | None = None
    keepdims: bool = False
    exclude: bool = False
    unbiased: bool = False

    type_key: ClassVar[str] = "relay.attrs.VarianceAttrs"


def reduce_axes(rank: int, attrs: Any) -> tuple[int, ...]:
    """The axes a reduction with `attrs` reduces, ascending (TVM's GetReduceAxes)."""
    if not attrs.axis:
        return tuple(range(rank))
    listed: set[int] = set()
    for axis in attrs.axis:
        if not -rank <= axis < rank:
            raise TypeRelError(f"axis {axis} is out of range for a tensor of rank {rank}", arg=0)
        index = axis + rank if axis < 0 else axis
        if index in listed:
            raise TypeRelError(f"axis {index} is listed twice in axis={list(attrs.axis)}", arg=0)
        listed.add(index)
    if attrs.exclude:
        return tuple(i for i in range(rank) if i not in listed)
    return tuple(sorted(listed))


def reduced_shape(shape: tuple[Dim, ...], axes: tuple[int, ...], keepdims: bool) -> tuple:
    """ReduceShapeImpl: reduced axes become 1 (keepdims) or disappear."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def _need_rank(data: TensorType) -> None:
    # GenericReduceRel and VarianceRel ICHECK a non-scalar input.
    if not data.shape:
        raise TypeRelError("expects a tensor of rank at least 1, got a scalar", arg=0)


def reduce_rel(rule: DTypeRule = ANY_DTYPE) -> Callable[[list[Type], Any], Type | None]:
    """ReduceRel: the reduced shape, the input's dtype."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        check_dtype(data, rule, "data", 0)
        axes = reduce_axes(len(data.shape), attrs)
        return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), data.dtype)
    return rel


def arg_reduce_rel(args: list[Type], attrs: Any) -> Type | None:
    """GenericReduceRel<ArgReduceAttrs>: the reduced shape, int32 indices."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    _need_rank(data)
    axes = reduce_axes(len(data.shape), attrs)
    return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), "int32")


def variance_rel(args: list[Type], attrs: Any) -> Type | None:
    """VarianceRel: `mean` (as computed with keepdims) has data's rank and dtype and
    broadcasts against it without growing it; the result is reduced like `sum`."""
    if not (is_known(args[0]) and is_known(args[1])):
        return None
    data, mean = tensor(args, 0, "data"), tensor(args, 1, "mean")
    _need_rank(data)
    if len(mean.shape) != len(data.shape):
        raise TypeRelError(f"mean has rank {len(mean.shape)} but data has rank "
                           f"{len(data.shape)}; compute it with keepdims=True", arg=1)
    same_dtype(data, mean, ("data", "mean"), 1)
    for i, (d, m) in enumerate(zip(data.shape, mean.shape)):
        if isinstance(d, int) and isinstance(m, int) and m not in (1, d):
            raise TypeRelError(f"mean has {dim_str(m)} at dimension {i} where data has "
                               f"{dim_str(d)} (it must be 1 or equal)", arg=1, dim=i)
    axes = reduce_axes(len(data.shape), attrs)
    return TensorType(reduced_shape(data.shape, axes, attrs.keepdims), data.dtype)


# name -> dtype rule of the input; kernels: reduce_kernels.KERNELS
REDUCE: dict[str, DTypeRule] = {
    "sum": ANY_DTYPE, "mean": ANY_DTYPE, "max": ANY_DTYPE, "min": ANY_DTYPE,
    "prod": ANY_DTYPE,
    "all": BOOL, "any": BOOL,     # topi::all/any combine with && and ||: bool only
}

for _name, _rule in REDUCE.items():
    register_op(OpDef(_name, 1, attrs=ReduceAttrs, type_rel=reduce_rel(_rule),
                      kernel=numpy_kernel("reduce_kernels", _name), pattern=R,
                      input_names=("data",)))
for _name in ("argmax", "argmin"):
    register_op(OpDef(_name, 1, attrs=ArgReduceAttrs, type_rel=arg_reduce_rel,
                      kernel=numpy_kernel("reduce_kernels", _name), pattern=R,
                      input_names=("data",)))
register_op(OpDef("variance", 2, attrs=VarianceAttrs, type_rel=variance_rel,
                  kernel=numpy_kernel("reduce_kernels", "variance"), pattern=R,
                  input_names=("data", "mean")))
