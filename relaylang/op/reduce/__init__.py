"""The reduce family: reductions (sum, mean, max, ..., argmax, variance).

Mirrors TVM's src/relay/op/tensor/reduce.cc (every reduction is kCommReduce)
and the schemas of include/tvm/relay/attrs/reduce.h. Relations (and the axes a
call reduces): `relations.py`; NumPy kernels: `numpy_kernels.py`.

`logsumexp` and `std` are not here on purpose: in TVM they are Python helpers
built from max/exp/sum/log and `variance`/`sqrt`, not registered operators,
so TVM's parser rejects them and TVM never prints them.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..registry import OpPattern, declare_op
from ..relation import ANY_DTYPE, BOOL, DTypeRule
from ..schema import attrs_schema
from .relations import arg_reduce_rel, reduce_axes, reduce_rel, reduced_shape, variance_rel

__all__ = ["REDUCE", "ArgReduceAttrs", "ReduceAttrs", "VarianceAttrs", "reduce_axes",
           "reduced_shape"]

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


# name -> dtype rule of the input
REDUCE: dict[str, DTypeRule] = {
    "sum": ANY_DTYPE, "mean": ANY_DTYPE, "max": ANY_DTYPE, "min": ANY_DTYPE,
    "prod": ANY_DTYPE,
    "all": BOOL, "any": BOOL,     # topi::all/any combine with && and ||: bool only
}

for _name, _rule in REDUCE.items():
    declare_op(_name, inputs=("data",), attrs=ReduceAttrs, rel=reduce_rel(_rule), pattern=R,
               layout="reduce")
for _name in ("argmax", "argmin"):
    declare_op(_name, inputs=("data",), attrs=ArgReduceAttrs, rel=arg_reduce_rel, pattern=R,
               layout="arg_reduce")
declare_op("variance", inputs=("data", "mean"), attrs=VarianceAttrs, rel=variance_rel,
           pattern=R)
