"""Image operators.

Mirrors Resize2DAttrs of TVM's include/tvm/relay/attrs/image.h and
`image.resize2d` of src/relay/op/image/resize.cc (one input, kInjective).
The relation is `resample_rels.resize2d_rel`, the kernel
`resample_kernels.resize2d` (shared with nn.upsampling).
"""
from __future__ import annotations

from typing import ClassVar

from ..ir.attrs import Attrs, DType, IndexExpr
from .registry import OpDef, OpPattern, register_op
from .resample_rels import resize2d_rel
from .schema import attrs_schema
from .shape_rules import lazy_kernel


@attrs_schema
class Resize2DAttrs(Attrs):
    size: tuple[IndexExpr, ...] | None = None
    roi: tuple[float, ...] | None = None
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round"
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Resize2DAttrs"


register_op(OpDef("image.resize2d", 1, attrs=Resize2DAttrs, type_rel=resize2d_rel,
                  kernel=lazy_kernel("resample_kernels", "image.resize2d"),
                  pattern=OpPattern.INJECTIVE, input_names=("data",)))
