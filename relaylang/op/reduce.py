"""Reduction operators.

Mirrors TVM's src/relay/op/tensor/reduce.cc (every reduction is kCommReduce)
and the schemas of include/tvm/relay/attrs/reduce.h. `logsumexp` and `std`
are not here on purpose: in TVM they are Python helpers built from
max/exp/sum/log and `variance`/`sqrt`, not registered operators, so TVM's
parser rejects them and TVM never prints them.
"""
from __future__ import annotations

from typing import ClassVar

from ..ir.attrs import Attrs
from .registry import OpDef, OpPattern, register_op
from .schema import attrs_schema, register_table

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


REDUCE = {name: R for name in ("sum", "mean", "max", "min", "prod", "all", "any")}
ARG_REDUCE = {"argmax": R, "argmin": R}

register_table(REDUCE, num_inputs=1, attrs=ReduceAttrs)
register_table(ARG_REDUCE, num_inputs=1, attrs=ArgReduceAttrs)
# variance(data, mean): the mean is computed by the caller and passed in.
register_op(OpDef("variance", 2, attrs=VarianceAttrs, pattern=R))
