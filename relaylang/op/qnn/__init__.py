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

Relations: `relations.py`; NumPy kernels: `numpy_kernels.py`; LLVM lowerings:
`llvm_lowering.py`.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import dequantize_rel, quantize_rel


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
