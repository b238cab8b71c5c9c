"""Neural-network operators: convolutions, dense layers, activations, normalisation.

Mirrors the schemas of TVM's include/tvm/relay/attrs/nn.h and the
registrations of src/relay/op/nn/{convolution,nn,pad,upsampling}.cc; patterns
set in python/tvm/relay/op/nn/_nn.py (convolutions, dense, softmax, batch_norm,
l2_normalize) are taken from there. Pooling lives in `pool.py`. Relations:
`conv_rels.py`, `nn_rels.py`, `resample_rels.py`; NumPy kernels (bound lazily by
op name): `conv_kernels.py`, `nn_kernels.py`, `resample_kernels.py`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..ir.attrs import Attrs, DType, IndexExpr
from . import nn_rels as nr
from . import resample_rels as rr
from .conv_rels import conv_rel, conv_transpose_rel
from .registry import OpDef, OpPattern, register_op
from .schema import attrs_schema
from .shape_rules import lazy_kernel

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
F, O = OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE
Rel = Callable[..., Any]
CONV_K, NN_K, RESAMPLE_K = "conv_kernels", "nn_kernels", "resample_kernels"
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
class SubPixelAttrs(Attrs):
    block_size: int = 1
    layout: str = "NCHW"
    mode: str = "DCR"

    type_key: ClassVar[str] = "relay.attrs.SubPixelAttrs"


# name, input names (TVM's `.add_argument`s; their count is the arity), schema, TVM pattern,
# relation, kernel module (KERNELS[name])
NN: tuple[tuple[str, tuple[str, ...], type[Attrs] | None, OpPattern, Rel, str], ...] = (
    ("nn.conv1d", CONV_IN, Conv1DAttrs, F, conv_rel(1), CONV_K),
    ("nn.conv2d", CONV_IN, Conv2DAttrs, F, conv_rel(2), CONV_K),
    ("nn.conv3d", CONV_IN, Conv3DAttrs, F, conv_rel(3), CONV_K),
    ("nn.conv1d_transpose", CONV_IN, Conv1DTransposeAttrs, F, conv_transpose_rel(1), CONV_K),
    ("nn.conv2d_transpose", CONV_IN, Conv2DTransposeAttrs, F, conv_transpose_rel(2), CONV_K),
    ("nn.conv3d_transpose", CONV_IN, Conv3DTransposeAttrs, F, conv_transpose_rel(3), CONV_K),
    ("nn.dense", ("data", "weight"), DenseAttrs, F, nr.dense_rel, NN_K),
    ("nn.matmul", ("tensor_a", "tensor_b"), MatmulAttrs, F, nr.matmul_rel, NN_K),
    ("nn.batch_matmul", ("tensor_a", "tensor_b"), BatchMatmulAttrs, F, nr.batch_matmul_rel, NN_K),
    ("nn.bias_add", ("data", "bias"), BiasAddAttrs, B, nr.bias_add_rel, NN_K),
    ("nn.relu", ("data",), None, E, nr.identity_rel, NN_K),
    ("nn.leaky_relu", ("data",), LeakyReluAttrs, E, nr.identity_rel, NN_K),
    ("nn.prelu", ("data", "alpha"), PReluAttrs, B, nr.prelu_rel, NN_K),
    ("nn.softmax", ("data",), SoftmaxAttrs, F, nr.axis_identity_rel, NN_K),
    ("nn.fast_softmax", ("data",), SoftmaxAttrs, F, nr.axis_identity_rel, NN_K),
    ("nn.log_softmax", ("data",), SoftmaxAttrs, F, nr.axis_identity_rel, NN_K),
    # -> (out, mean, var)
    ("nn.batch_norm", ("data", "gamma", "beta", "moving_mean", "moving_var"), BatchNormAttrs, F,
     nr.batch_norm_rel, NN_K),
    ("nn.instance_norm", NORM_IN, InstanceNormAttrs, O, nr.instance_norm_rel, NN_K),
    ("nn.layer_norm", NORM_IN, LayerNormAttrs, O, nr.layer_norm_rel, NN_K),
    ("nn.group_norm", NORM_IN, GroupNormAttrs, O, nr.group_norm_rel, NN_K),
    ("nn.lrn", ("data",), LRNAttrs, O, nr.lrn_rel, NN_K),
    ("nn.l2_normalize", ("data",), L2NormalizeAttrs, F, nr.l2_normalize_rel, NN_K),
    ("nn.batch_flatten", ("data",), None, I, nr.batch_flatten_rel, NN_K),
    ("nn.pad", ("data", "pad_val"), PadAttrs, I, rr.pad_rel, RESAMPLE_K),
    ("nn.upsampling", ("data",), UpSamplingAttrs, I, rr.upsampling_rel, RESAMPLE_K),
    ("nn.depth_to_space", ("data",), SubPixelAttrs, I, rr.depth_to_space_rel, RESAMPLE_K),
    ("nn.space_to_depth", ("data",), SubPixelAttrs, I, rr.space_to_depth_rel, RESAMPLE_K),
)

for _name, _inputs, _schema, _pattern, _rel, _module in NN:
    register_op(OpDef(_name, len(_inputs), attrs=_schema, type_rel=_rel,
                      kernel=lazy_kernel(_module, _name), pattern=_pattern,
                      input_names=_inputs))

# TVM marks dropout stateful (TOpIsStateful): FoldConstant, CSE and DCE keep it.
register_op(OpDef("nn.dropout", 1, attrs=DropoutAttrs, type_rel=nr.dropout_rel,
                  kernel=lazy_kernel(NN_K, "nn.dropout"), pattern=O, stateful=True,
                  input_names=("data",)))
