"""The pool family: max/avg (1d, 2d, 3d), global and adaptive pooling.

Mirrors the pool schemas of TVM's include/tvm/relay/attrs/nn.h and
src/relay/op/nn/pooling.cc; every pool is OUT_ELEMWISE_FUSABLE
(python/tvm/relay/op/nn/_nn.py). Note TVM's field order: `dilation` comes
before `padding`, and `out_layout` right after `layout`. Relations are in
`relations.py`, NumPy kernels in `numpy_kernels.py`. Every pool has layout kind
"pool": ConvertLayout gives it the desired layout, else it follows its input.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ...ir.attrs import Attrs, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import adaptive_pool_rel, global_pool_rel, pool_rel

F = OpPattern.OUT_ELEMWISE_FUSABLE


@attrs_schema
class MaxPool1DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1,)
    dilation: tuple[IndexExpr, ...] | None = (1,)
    padding: tuple[IndexExpr, ...] | None = (0,)
    layout: str = "NCW"
    out_layout: str = ""
    ceil_mode: bool = False

    type_key: ClassVar[str] = "relay.attrs.MaxPool1DAttrs"


@attrs_schema
class MaxPool2DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False

    type_key: ClassVar[str] = "relay.attrs.MaxPool2DAttrs"


@attrs_schema
class MaxPool3DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1, 1, 1)
    dilation: tuple[IndexExpr, ...] | None = (1, 1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0, 0)
    layout: str = "NCDHW"
    out_layout: str = ""
    ceil_mode: bool = False

    type_key: ClassVar[str] = "relay.attrs.MaxPool3DAttrs"


@attrs_schema
class AvgPool1DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1,)
    dilation: tuple[IndexExpr, ...] | None = (1,)
    padding: tuple[IndexExpr, ...] | None = (0,)
    layout: str = "NCW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    type_key: ClassVar[str] = "relay.attrs.AvgPool1DAttrs"


@attrs_schema
class AvgPool2DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    type_key: ClassVar[str] = "relay.attrs.AvgPool2DAttrs"


@attrs_schema
class AvgPool3DAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1, 1, 1)
    dilation: tuple[IndexExpr, ...] | None = (1, 1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0, 0)
    layout: str = "NCDHW"
    out_layout: str = ""
    ceil_mode: bool = False
    count_include_pad: bool = False

    type_key: ClassVar[str] = "relay.attrs.AvgPool3DAttrs"


@attrs_schema
class GlobalPool2DAttrs(Attrs):
    layout: str = "NCHW"
    out_layout: str = ""

    type_key: ClassVar[str] = "relay.attrs.GlobalPool2DAttrs"


@attrs_schema
class AdaptivePool1DAttrs(Attrs):
    output_size: tuple[IndexExpr, ...] | None = ()
    layout: str = "NCW"
    out_layout: str = ""

    type_key: ClassVar[str] = "relay.attrs.AdaptivePool1DAttrs"


@attrs_schema
class AdaptivePool2DAttrs(Attrs):
    output_size: tuple[IndexExpr, ...] | None = ()
    layout: str = "NCHW"
    out_layout: str = ""

    type_key: ClassVar[str] = "relay.attrs.AdaptivePool2DAttrs"


@attrs_schema
class AdaptivePool3DAttrs(Attrs):
    output_size: tuple[IndexExpr, ...] | None = ()
    layout: str = "NCDHW"
    out_layout: str = ""

    type_key: ClassVar[str] = "relay.attrs.AdaptivePool3DAttrs"


# name -> (schema, relation)
POOLS: dict[str, tuple[type[Attrs], Callable[..., Any]]] = {
    "nn.max_pool1d": (MaxPool1DAttrs, pool_rel(1)),
    "nn.max_pool2d": (MaxPool2DAttrs, pool_rel(2)),
    "nn.max_pool3d": (MaxPool3DAttrs, pool_rel(3)),
    "nn.avg_pool1d": (AvgPool1DAttrs, pool_rel(1)),
    "nn.avg_pool2d": (AvgPool2DAttrs, pool_rel(2)),
    "nn.avg_pool3d": (AvgPool3DAttrs, pool_rel(3)),
    "nn.global_max_pool2d": (GlobalPool2DAttrs, global_pool_rel),
    "nn.global_avg_pool2d": (GlobalPool2DAttrs, global_pool_rel),
    "nn.adaptive_max_pool1d": (AdaptivePool1DAttrs, adaptive_pool_rel(1)),
    "nn.adaptive_avg_pool1d": (AdaptivePool1DAttrs, adaptive_pool_rel(1)),
    "nn.adaptive_max_pool2d": (AdaptivePool2DAttrs, adaptive_pool_rel(2)),
    "nn.adaptive_avg_pool2d": (AdaptivePool2DAttrs, adaptive_pool_rel(2)),
    "nn.adaptive_max_pool3d": (AdaptivePool3DAttrs, adaptive_pool_rel(3)),
    "nn.adaptive_avg_pool3d": (AdaptivePool3DAttrs, adaptive_pool_rel(3)),
}

for _name, (_schema, _rel) in POOLS.items():
    declare_op(_name, inputs=("data",), attrs=_schema, rel=_rel, pattern=F, layout="pool")
