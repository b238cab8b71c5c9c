"""The qnn family: linear quantization and dequantization.

Mirrors the names, inputs and attributes of TVM's `qnn.quantize` and `qnn.dequantize`
(src/relay/qnn/op/quantize.cc, dequantize.cc; QuantizeAttrs and DequantizeAttrs of
include/tvm/relay/qnn/attrs.h), with the arithmetic of ONNX's QuantizeLinear and
DequantizeLinear (TVM rounds and casts in its own way; these follow ONNX's spec and
reference implementation bit for bit):

    qnn.quantize(data, output_scale, output_zero_point, axis=-1, out_dtype="int8")
        y = saturate(round_half_to_even(data / output_scale) + output_zero_point)
    qnn.dequantize(data, input_scale, input_zero_point, axis=-1)
        y = (data - input_zero_point) * input_scale

The scale and the zero point are tensors: a scalar (or a one-element vector) quantizes
per tensor; a vector of data.shape[axis] entries per axis (negative axes count from the
back); with `block_size` B > 0 (ONNX's blocked quantization, an addition to TVM's
attributes) the scale has the data's rank and shape except along `axis`, where it has
ceil(D / B) entries, each covering B consecutive elements. The zero point has the
scale's shape (or is a scalar).

quantize divides in the wider of the data's and the scale's float dtypes (an integer
`data` in the scale's: ONNX's "the scale's type sets the precision"), float16 and
bfloat16 rounded to their own precision as NumPy (and ml_dtypes) round them, rounds half
to even, adds the zero point and saturates to the output dtype's range (NaN saturates to
its low end, as ONNX's reference computes it). Output dtypes: the integer ones of any
width (int2..int32, uint2..uint32; the range comes from `integer_range`), and the float8
and float4 formats of ir/lowp.py (`LOWP_QUANT`): there the quotient plus the zero point
(a zero zero point is not added, so -0 stays -0, as ONNX's reference leaves it) is
rounded to the format, clamped first to its largest finite value when `saturate` (ONNX's
attribute; infinities included) -- float4_e2m1fn, without infinities, always saturates.

dequantize converts the data to float32 (exact up to 24 bits; 32-bit integers round, as
ONNX's reference and onnxruntime convert them), then subtracts and multiplies exactly in
float32 (float64 for 32-bit integer data or zero points, or a float64 scale) and rounds
once to `out_dtype` (float16, bfloat16, float32, float64). Its data may also be int2..int32,
uint2..uint32 or a float8/float4 format.

TVM's quantized compute ops, with TVM's names, inputs, attributes and arithmetic
(src/relay/qnn/op/*.cc; python/tvm/relay/qnn/op/qnn.py):

    qnn.requantize(data, input_scale, input_zero_point, output_scale, output_zero_point,
                   axis=-1, rounding="None", compute_dtype="None", out_dtype="int8")
    qnn.conv2d(data, weight, input_zero_point, kernel_zero_point, input_scale,
               kernel_scale, <nn.conv2d's attributes>)      out_dtype "" means int32
    qnn.conv2d_transpose(<qnn.conv2d's inputs>, <nn.conv2d_transpose's attributes>)
    qnn.dense(data, weight, input_zero_point, kernel_zero_point, input_scale,
              kernel_scale, units=None, out_dtype="")       out_dtype "" means int32
    qnn.add / qnn.subtract / qnn.mul(lhs, rhs, lhs_scale, lhs_zero_point, rhs_scale,
              rhs_zero_point, output_scale, output_zero_point, lhs_axis=-1, rhs_axis=-1)
    qnn.concatenate(data, input_scales, input_zero_points, output_scale,
                    output_zero_point, axis=0)   (data, scales, zero points: tuples)
    qnn.avg_pool2d(data, input_scale, input_zero_point, output_scale, output_zero_point,
                   <nn.avg_pool2d's attributes>)

Their values are those of TVM's canonical forms (FTVMQnnCanonicalize): requantize
with rounding "None" is TVM's default configuration, "UPWARD" with int64 fixed-point
arithmetic (`fixed_point.py`); conv2d, conv2d_transpose and dense are (data - zp) (*)
(weight - zp) in the accumulation dtype (wrapping, as TVM's int32 terms); add / subtract requantize both
operands to the output's parameters in int32 and add / subtract them there; mul
multiplies the zero-point-shifted operands in int32 and requantizes the product from
scale lhs_scale * rhs_scale; concatenate requantizes each tensor whose parameters differ
from the output's; avg_pool2d requantizes to the output's parameters in int32, averages
there (nn.avg_pool2d: integer averages truncate) and saturates. rl.build computes them natively through the QnnCanonicalize pass
(relaylang/transform/qnn_canonicalize.py), which writes these forms with existing ops.

Relations: `relations.py`; NumPy kernels: `numpy_kernels.py`; LLVM lowerings:
`llvm_lowering.py` (quantize, dequantize; the compute ops lower through QnnCanonicalize).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..nn import Conv2DAttrs, Conv2DTransposeAttrs, DenseAttrs
from ..pool import AvgPool2DAttrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from ..transform import ConcatenateAttrs
from .relations import (
    dequantize_rel,
    qnn_avg_pool2d_rel,
    qnn_binary_rel,
    qnn_concatenate_rel,
    qnn_conv2d_rel,
    qnn_conv2d_transpose_rel,
    qnn_dense_rel,
    qnn_mul_rel,
    quantize_rel,
    requantize_rel,
)


@attrs_schema
class QuantizeAttrs(Attrs):
    out_dtype: DType = DType("int8")
    axis: int = -1
    block_size: int = 0
    saturate: bool = True

    type_key: ClassVar[str] = "relay.attrs.QuantizeAttrs"


@attrs_schema
class DequantizeAttrs(Attrs):
    axis: int = -1
    out_dtype: DType = DType("float32")
    block_size: int = 0

    type_key: ClassVar[str] = "relay.attrs.DequantizeAttrs"


declare_op("qnn.quantize", inputs=("data", "output_scale", "output_zero_point"),
           attrs=QuantizeAttrs, rel=quantize_rel, pattern=OpPattern.BROADCAST,
           doc="saturate(round_half_to_even(data / output_scale) + output_zero_point) in "
               "out_dtype; per tensor, per axis or per block (block_size) scales.")
declare_op("qnn.dequantize", inputs=("data", "input_scale", "input_zero_point"),
           attrs=DequantizeAttrs, rel=dequantize_rel, pattern=OpPattern.BROADCAST,
           doc="(data - input_zero_point) * input_scale in out_dtype; per tensor, per axis "
               "or per block (block_size) scales.")


@attrs_schema
class RequantizeAttrs(Attrs):
    axis: int = -1
    rounding: str = "None"
    compute_dtype: str = "None"
    out_dtype: DType = DType("int8")

    type_key: ClassVar[str] = "relay.attrs.RequantizeAttrs"


@attrs_schema
class BroadcastAttrs(Attrs):
    lhs_axis: int = -1
    rhs_axis: int = -1

    type_key: ClassVar[str] = "relay.attrs.BroadcastAttrs"


QNN_BINARY_IN = ("lhs", "rhs", "lhs_scale", "lhs_zero_point", "rhs_scale", "rhs_zero_point",
                 "output_scale", "output_zero_point")
QNN_CONV_IN = ("data", "weight", "input_zero_point", "kernel_zero_point", "input_scale",
               "kernel_scale")

declare_op("qnn.requantize", inputs=("data", "input_scale", "input_zero_point",
                                     "output_scale", "output_zero_point"),
           attrs=RequantizeAttrs, rel=requantize_rel, pattern=OpPattern.OPAQUE,
           layout="qnn_requantize",
           doc="output_zero_point + input_scale / output_scale * (data - input_zero_point), "
               "rounded (TVM's fixed-point or float arithmetic) and saturated to out_dtype.")
declare_op("qnn.conv2d", inputs=QNN_CONV_IN, attrs=Conv2DAttrs, rel=qnn_conv2d_rel,
           pattern=OpPattern.OUT_ELEMWISE_FUSABLE, layout="conv",
           doc="nn.conv2d of (data - input_zero_point) and (weight - kernel_zero_point) in "
               "out_dtype (int32 when empty).")
declare_op("qnn.dense", inputs=QNN_CONV_IN, attrs=DenseAttrs, rel=qnn_dense_rel,
           pattern=OpPattern.OUT_ELEMWISE_FUSABLE,
           doc="nn.dense of (data - input_zero_point) and (weight - kernel_zero_point) in "
               "out_dtype (int32 when empty).")
for _name, _what in (("add", "sum"), ("subtract", "difference"), ("mul", "product")):
    declare_op(f"qnn.{_name}", inputs=QNN_BINARY_IN, attrs=BroadcastAttrs,
               rel=qnn_mul_rel if _name == "mul" else qnn_binary_rel,
               pattern=OpPattern.BROADCAST, layout="qnn_broadcast",
               doc=f"The quantized {_what} of two quantized tensors (broadcasting), in the "
                   f"output's scale and zero point and the inputs' dtype.")
declare_op("qnn.concatenate", inputs=("data", "input_scales", "input_zero_points",
                                      "output_scale", "output_zero_point"),
           attrs=ConcatenateAttrs, rel=qnn_concatenate_rel, pattern=OpPattern.OPAQUE,
           layout="concatenate",
           doc="concatenate of the tensors, each requantized to the output's scale and zero "
               "point when its own differ.")
declare_op("qnn.conv2d_transpose", inputs=QNN_CONV_IN, attrs=Conv2DTransposeAttrs,
           rel=qnn_conv2d_transpose_rel, pattern=OpPattern.OUT_ELEMWISE_FUSABLE, layout="conv",
           doc="nn.conv2d_transpose of (data - input_zero_point) and (weight - "
               "kernel_zero_point) in out_dtype (int32 when empty).")
declare_op("qnn.avg_pool2d", inputs=("data", "input_scale", "input_zero_point",
                                     "output_scale", "output_zero_point"),
           attrs=AvgPool2DAttrs, rel=qnn_avg_pool2d_rel,
           pattern=OpPattern.OUT_ELEMWISE_FUSABLE, layout="pool",
           doc="nn.avg_pool2d of the data requantized to the output's scale and zero point "
               "in int32, saturated to the data's dtype.")
