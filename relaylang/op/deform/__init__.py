"""The deform family: nn.deformable_conv2d and nn.modulated_deformable_conv2d.

nn.deformable_conv2d mirrors TVM's (DeformableConv2DAttrs of
include/tvm/relay/attrs/nn.h, src/relay/op/nn/convolution.cc; OUT_ELEMWISE_FUSABLE):
inputs data (N, C, H, W), offset (N, deformable_groups * kh * kw * 2, oh, ow), weight
(O, C / groups, kh, kw). Each output position (i, j) reads, for kernel tap (a, b) and an
input channel of deformable group g, the data at

    y = i * stride_h - pad_top + a * dilation_h + offset[n, ((g * kh + a) * kw + b) * 2, i, j]
    x = j * stride_w - pad_left + b * dilation_w + offset[n, ((g * kh + a) * kw + b) * 2 + 1, i, j]

by bilinear interpolation, each of the four neighbours outside the data reading 0
(torchvision's deform_conv2d and ONNX DeformConv; TVM's topi reads 0 only when the
point itself is outside, and clamps the neighbours). The samples are then convolved
with the weight as conv2d does (groups). nn.modulated_deformable_conv2d (DCNv2,
torchvision's `mask`, ONNX's DeformConv mask) takes a fourth input mask
(N, deformable_groups * kh * kw, oh, ow) multiplying each sample; it is not TVM's. Only
NCHW / OIHW layouts. The ops belong with the convolutions (`op/nn/`); they have a folder
of their own only to keep clear of its files.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import deformable_conv2d_rel


@attrs_schema
class DeformableConv2DAttrs(Attrs):
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    deformable_groups: int = 1
    groups: int = 1
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.DeformableConv2DAttrs"


declare_op("nn.deformable_conv2d", inputs=("data", "offset", "weight"),
           attrs=DeformableConv2DAttrs, rel=deformable_conv2d_rel,
           pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
           doc="2-D convolution reading the data at positions moved by per-position "
               "offsets (bilinear samples).")
declare_op("nn.modulated_deformable_conv2d", inputs=("data", "offset", "weight", "mask"),
           attrs=DeformableConv2DAttrs, rel=deformable_conv2d_rel,
           pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
           doc="deformable_conv2d with each sample multiplied by a mask value (DCNv2).")
