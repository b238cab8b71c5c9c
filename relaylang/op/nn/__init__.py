"""The nn family: convolutions, dense layers, activations, normalisation, padding,
resampling and losses.

Mirrors the schemas of TVM's include/tvm/relay/attrs/nn.h and the
registrations of src/relay/op/nn/{convolution,nn,pad,upsampling}.cc; patterns
set in python/tvm/relay/op/nn/_nn.py (convolutions, dense, softmax, batch_norm,
l2_normalize) are taken from there. Pooling is the pool family (`op/pool/`).
Relations: `conv_relations.py`, `relations.py`, `resample_relations.py`; NumPy
kernels: `numpy_kernels.py`; gradient rules: `gradients.py`.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from . import relations as nr
from . import resample_relations as rr
from .conv_relations import (
    conv2d_nchwc_rel,
    conv_rel,
    conv_transpose_rel,
    depthwise_conv2d_nchwc_rel,
)

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
F, O = OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE
# Input-name tuples TVM shares between ops (`.add_argument` in src/relay/op/nn/*.cc).
CONV_IN, NORM_IN = ("data", "weight"), ("data", "gamma", "beta")

# ------------------------------------------------------------- convolutions
# Field order is TVM's TVM_ATTR_FIELD order, which for the transposed
# convolutions differs from the plain ones (channels and kernel_size first).

@attrs_schema
class Conv1DAttrs(Attrs):
    strides: tuple[IndexExpr, ...] | None = (1,)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1,)
    groups: int = 1
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    data_layout: str = "NCW"
    kernel_layout: str = "OIW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv1DAttrs"


@attrs_schema
class Conv2DAttrs(Attrs):
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    groups: int = 1
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    data_layout: str = "NCHW"
    kernel_layout: str = "OIHW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv2DAttrs"


@attrs_schema
class Conv3DAttrs(Attrs):
    strides: tuple[IndexExpr, ...] | None = (1, 1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1, 1, 1)
    groups: int = 1
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    data_layout: str = "NCDHW"
    kernel_layout: str = "OIDHW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv3DAttrs"


@attrs_schema
class Conv1DTransposeAttrs(Attrs):
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    strides: tuple[IndexExpr, ...] | None = (1,)
    output_padding: tuple[IndexExpr, ...] | None = (0,)
    padding: tuple[IndexExpr, ...] | None = (0,)
    dilation: tuple[IndexExpr, ...] | None = (1,)
    groups: int = 1
    data_layout: str = "NCW"
    kernel_layout: str = "IOW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv1DTransposeAttrs"


@attrs_schema
class Conv2DTransposeAttrs(Attrs):
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    output_padding: tuple[IndexExpr, ...] | None = (0, 0)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    groups: int = 1
    data_layout: str = "NCHW"
    kernel_layout: str = "IOHW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv2DTransposeAttrs"


@attrs_schema
class Conv3DTransposeAttrs(Attrs):
    channels: IndexExpr | None = None
    kernel_size: tuple[IndexExpr, ...] | None = None
    strides: tuple[IndexExpr, ...] | None = (1, 1, 1)
    output_padding: tuple[IndexExpr, ...] | None = (0, 0, 0)
    padding: tuple[IndexExpr, ...] | None = (0, 0, 0)
    dilation: tuple[IndexExpr, ...] | None = (1, 1, 1)
    groups: int = 1
    data_layout: str = "NCDHW"
    kernel_layout: str = "IODHW"
    out_layout: str = ""
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Conv3DTransposeAttrs"


# ------------------------------------------------------------ dense layers

@attrs_schema
class DenseAttrs(Attrs):
    units: IndexExpr | None                  # required: TVM prints `units=None`
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.DenseAttrs"


@attrs_schema
class MatmulAttrs(Attrs):
    units: IndexExpr | None
    out_dtype: DType = DType("")
    transpose_a: bool = False
    transpose_b: bool = False

    type_key: ClassVar[str] = "relay.attrs.MatmulAttrs"


@attrs_schema
class BatchMatmulAttrs(Attrs):
    out_dtype: DType = DType("")
    transpose_a: bool = False
    transpose_b: bool = False

    type_key: ClassVar[str] = "relay.attrs.BatchMatmulAttrs"


@attrs_schema
class BiasAddAttrs(Attrs):
    axis: int = 1

    type_key: ClassVar[str] = "relay.attrs.BiasAddAttrs"


# ----------------------------------------------------- activations, softmax

@attrs_schema
class SoftmaxAttrs(Attrs):
    axis: int = -1

    type_key: ClassVar[str] = "relay.attrs.SoftmaxAttrs"


@attrs_schema
class LeakyReluAttrs(Attrs):
    alpha: float = 0.25

    type_key: ClassVar[str] = "relay.attrs.LeakyReluAttrs"


@attrs_schema
class PReluAttrs(Attrs):
    axis: int = 1

    type_key: ClassVar[str] = "relay.attrs.PReluAttrs"


@attrs_schema
class DropoutAttrs(Attrs):
    rate: float = 0.5

    type_key: ClassVar[str] = "relay.attrs.DropoutAttrs"


# ------------------------------------------------------------ normalisation

@attrs_schema
class BatchNormAttrs(Attrs):
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    type_key: ClassVar[str] = "relay.attrs.BatchNormAttrs"


@attrs_schema
class InstanceNormAttrs(Attrs):
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    type_key: ClassVar[str] = "relay.attrs.InstanceNormAttrs"


@attrs_schema
class LayerNormAttrs(Attrs):
    axis: int = -1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    type_key: ClassVar[str] = "relay.attrs.LayerNormAttrs"


@attrs_schema
class GroupNormAttrs(Attrs):
    num_groups: int = 0
    axis: int = 1
    epsilon: float = 1e-5
    center: bool = True
    scale: bool = True

    type_key: ClassVar[str] = "relay.attrs.GroupNormAttrs"


@attrs_schema
class LRNAttrs(Attrs):
    size: int = 5
    axis: int = 1
    bias: float = 2.0
    alpha: float = 0.0001
    beta: float = 0.75

    type_key: ClassVar[str] = "relay.attrs.LRNAttrs"


@attrs_schema
class L2NormalizeAttrs(Attrs):
    eps: float
    axis: tuple[int, ...] | None

    type_key: ClassVar[str] = "relay.attrs.L2NormalizeAttrs"


# ------------------------------------------------------------------ losses

@attrs_schema
class NLLLossAttrs(Attrs):
    reduction: str = "mean"
    ignore_index: int = -100                 # TVM's Python default (no C++ default)

    type_key: ClassVar[str] = "relay.attrs.NLLLossAttrs"


# ------------------------------------------------------- padding, resampling

@attrs_schema
class PadAttrs(Attrs):
    # pad_value is no attribute since TVM 0.8: it is nn.pad's second input.
    pad_width: tuple[tuple[int, ...], ...] | None
    pad_mode: str = "constant"

    type_key: ClassVar[str] = "relay.attrs.PadAttrs"


@attrs_schema
class UpSamplingAttrs(Attrs):
    scale_h: float
    scale_w: float
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    type_key: ClassVar[str] = "relay.attrs.UpSamplingAttrs"


@attrs_schema
class UpSampling3DAttrs(Attrs):
    scale_d: float
    scale_h: float
    scale_w: float
    layout: str = "NCDHW"
    method: str = "nearest_neighbor"
    coordinate_transformation_mode: str = "half_pixel"

    type_key: ClassVar[str] = "relay.attrs.UpSampling3DAttrs"


@attrs_schema
class SubPixelAttrs(Attrs):
    block_size: int = 1
    layout: str = "NCHW"
    mode: str = "DCR"

    type_key: ClassVar[str] = "relay.attrs.SubPixelAttrs"


# ---------------------------------------------------------------- the ops
# layout="conv": ConvertLayout gives them the desired data/kernel layouts; scale_axis="conv":
# FoldScaleAxis folds per-channel scales into their weight (conv2d and conv3d, as in TVM).

declare_op("nn.conv1d", inputs=CONV_IN, attrs=Conv1DAttrs, rel=conv_rel(1), pattern=F,
           layout="conv")
declare_op("nn.conv2d", inputs=CONV_IN, attrs=Conv2DAttrs, rel=conv_rel(2), pattern=F,
           layout="conv", scale_axis="conv")
declare_op("nn.conv3d", inputs=CONV_IN, attrs=Conv3DAttrs, rel=conv_rel(3), pattern=F,
           layout="conv", scale_axis="conv")
# TVM's x86 AlterOpLayout output: channel-blocked data NCHW{ic}c, weight OIHW{ic}i{oc}o
# (our AlterOpLayout makes it for the llvm target: transform/layout/nchwc.py). No layout
# kind: a layout pass treats it as an edge (its layouts are already the target's).
declare_op("nn.contrib_conv2d_NCHWc", inputs=CONV_IN, attrs=Conv2DAttrs, rel=conv2d_nchwc_rel,
           pattern=F)
# Its depthwise form (TVM's x86 AlterOpLayout for groups == channels): data NCHW{c}c,
# weight OIHW1i{c}o, output NCHW{c}c (nchwc.py makes it too). An edge as well.
declare_op("nn.contrib_depthwise_conv2d_NCHWc", inputs=CONV_IN, attrs=Conv2DAttrs,
           rel=depthwise_conv2d_nchwc_rel, pattern=F)
declare_op("nn.conv1d_transpose", inputs=CONV_IN, attrs=Conv1DTransposeAttrs,
           rel=conv_transpose_rel(1), pattern=F, layout="conv")
declare_op("nn.conv2d_transpose", inputs=CONV_IN, attrs=Conv2DTransposeAttrs,
           rel=conv_transpose_rel(2), pattern=F, layout="conv")
declare_op("nn.conv3d_transpose", inputs=CONV_IN, attrs=Conv3DTransposeAttrs,
           rel=conv_transpose_rel(3), pattern=F, layout="conv")
declare_op("nn.dense", inputs=("data", "weight"), attrs=DenseAttrs, rel=nr.dense_rel,
           pattern=F, scale_axis="dense")
declare_op("nn.matmul", inputs=("tensor_a", "tensor_b"), attrs=MatmulAttrs, rel=nr.matmul_rel,
           pattern=F)
declare_op("nn.batch_matmul", inputs=("tensor_a", "tensor_b"), attrs=BatchMatmulAttrs,
           rel=nr.batch_matmul_rel, pattern=F)
declare_op("nn.bias_add", inputs=("data", "bias"), attrs=BiasAddAttrs, rel=nr.bias_add_rel,
           pattern=B, layout="axis", scale_axis="bias_add")
declare_op("nn.relu", inputs=("data",), rel=nr.identity_rel, pattern=E, layout="elemwise",
           scale_axis="relu")
declare_op("nn.leaky_relu", inputs=("data",), attrs=LeakyReluAttrs, rel=nr.identity_rel,
           pattern=E, layout="elemwise", scale_axis="relu")
declare_op("nn.prelu", inputs=("data", "alpha"), attrs=PReluAttrs, rel=nr.prelu_rel, pattern=B,
           layout="axis")
declare_op("nn.softmax", inputs=("data",), attrs=SoftmaxAttrs, rel=nr.axis_identity_rel,
           pattern=F, layout="axis", fast_math="nn.fast_softmax")
declare_op("nn.fast_softmax", inputs=("data",), attrs=SoftmaxAttrs, rel=nr.axis_identity_rel,
           pattern=F, layout="axis")
declare_op("nn.log_softmax", inputs=("data",), attrs=SoftmaxAttrs, rel=nr.axis_identity_rel,
           pattern=F, layout="axis")
declare_op("nn.batch_norm", inputs=("data", "gamma", "beta", "moving_mean", "moving_var"),
           attrs=BatchNormAttrs, rel=nr.batch_norm_rel, pattern=F,
           layout="axis")                                # -> (out, mean, var)
declare_op("nn.instance_norm", inputs=NORM_IN, attrs=InstanceNormAttrs,
           rel=nr.instance_norm_rel, pattern=O, layout="axis")
declare_op("nn.layer_norm", inputs=NORM_IN, attrs=LayerNormAttrs, rel=nr.layer_norm_rel,
           pattern=O, layout="axis")
declare_op("nn.group_norm", inputs=NORM_IN, attrs=GroupNormAttrs, rel=nr.group_norm_rel,
           pattern=O)
declare_op("nn.lrn", inputs=("data",), attrs=LRNAttrs, rel=nr.lrn_rel, pattern=O, layout="axis")
declare_op("nn.l2_normalize", inputs=("data",), attrs=L2NormalizeAttrs, rel=nr.l2_normalize_rel,
           pattern=F, layout="axes")
declare_op("nn.batch_flatten", inputs=("data",), rel=nr.batch_flatten_rel, pattern=I)
declare_op("nn.pad", inputs=("data", "pad_val"), attrs=PadAttrs, rel=rr.pad_rel, pattern=I,
           layout="pad")
declare_op("nn.upsampling", inputs=("data",), attrs=UpSamplingAttrs, rel=rr.upsampling_rel,
           pattern=I, layout="upsampling")
declare_op("nn.upsampling3d", inputs=("data",), attrs=UpSampling3DAttrs,
           rel=rr.upsampling3d_rel, pattern=I, layout="upsampling",
           doc="resamples the D, H and W axes of data (layout NCDHW) by scale_d, scale_h "
               "and scale_w (sizes rounded half to even), nearest_neighbor or trilinear.")
declare_op("nn.depth_to_space", inputs=("data",), attrs=SubPixelAttrs,
           rel=rr.depth_to_space_rel, pattern=I)
declare_op("nn.space_to_depth", inputs=("data",), attrs=SubPixelAttrs,
           rel=rr.space_to_depth_rel, pattern=I)
# TVM marks dropout stateful (TOpIsStateful): FoldConstant, CSE and DCE keep it.
declare_op("nn.dropout", inputs=("data",), attrs=DropoutAttrs, rel=nr.dropout_rel, pattern=O,
           stateful=True)
# Losses (TVM's src/relay/op/nn/nn.cc, level 10): a scalar, -sum(log(x) * y) / batch and
# -sum(x * y) / batch; gradients in gradients.py.
declare_op("nn.cross_entropy", inputs=("x", "y"), rel=nr.cross_entropy_rel, pattern=O)
declare_op("nn.cross_entropy_with_logits", inputs=("x", "y"), rel=nr.cross_entropy_rel,
           pattern=O)
declare_op("nn.nll_loss", inputs=("predictions", "targets", "weights"), attrs=NLLLossAttrs,
           rel=nr.nll_loss_rel, pattern=F)
