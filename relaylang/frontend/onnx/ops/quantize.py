"""Quantization: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul,
QLinearConv, MatMulInteger and ConvInteger.

QuantizeLinear and DequantizeLinear are `qnn.quantize` and `qnn.dequantize` (their
arithmetic is ONNX's: relaylang/op/qnn/). One converter covers every opset: the
attributes a later opset adds only appear in its models (13: `axis`, per-axis scales;
19: `saturate`; 21: `block_size`, `output_dtype`; 23: `precision`, and DequantizeLinear's
`output_dtype`). The output dtype is `output_dtype`, else the zero point's, else uint8
(DequantizeLinear: `output_dtype`, else the scale's). A one-element scale or zero point
is per tensor; a rank-1 input is quantized along its one axis.

The others are built from existing ops, computing what ONNX's reference implementation
computes bit for bit:
- MatMulInteger / ConvInteger: the operands cast to int32, the zero points subtracted
  (a per-row zero point of A, a per-output-channel one of W), then MatMul's / Conv's own
  conversion on int32 tensors: int32 accumulation (wrapping, as ONNX allows).
- QLinearMatMul / QLinearConv: the same int32 product, times the multiplier
  a_scale * b_scale / y_scale computed in the scales' dtype, in float64 (int32 times a
  float32 or float16 is float64 in NumPy, and exact here), plus the output zero point,
  then rounded half to even and saturated to the output dtype (a `qnn.quantize` by 1.0).
- DynamicQuantizeLinear: the spec's formula with reductions and elementwise ops in
  float32: scale = (max(0, max(x)) - min(0, min(x))) / 255 (1 / 255 when that range is
  0), zero point = round(clip(0 - min / scale, 0, 255)), y = quantize(x, scale, zp).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..importer import Node, OnnxImportError, elem_dtype
from ..registry import converter
from .nn import _matmul, conv

FLOAT_SCALES = ("float32", "float16", "bfloat16", "float64")


# ---------------------------------------------------------------- helpers

def _onnx_dtype(node: Any, code: int, what: str) -> str:
    try:
        return elem_dtype(int(code), f"{what} {code}")
    except OnnxImportError as e:
        raise node.error(str(e)) from None


def _is_float_dtype(dtype: str) -> bool:
    from ....ir.dtype import dtype_kind
    return dtype_kind(dtype) == "float" and dtype not in FLOAT_SCALES


def _size(ctx: Any, node: Any, x: Any, what: str) -> tuple[int, ...]:
    shape = ctx.static_shape(x)
    if shape is None:
        raise node.error(f"{what} needs a static shape, got {tuple(ctx.shape(x))}")
    return shape


def _per_tensor(ctx: Any, node: Any, v: Any, what: str) -> Any:
    """`v` as a scalar when it has one element (ONNX: per tensor, whatever its shape)."""
    shape = _size(ctx, node, v, what)
    if shape and int(np.prod(shape)) == 1:
        return op.reshape(v, newshape=())
    return v


def _zero(ctx: Any, dtype: str) -> Any:
    """A zero point of 0 for values of `dtype`: int8 for the integer dtypes, float32 for
    the float formats (the qnn ops take any integer / float zero point)."""
    return ctx.const(np.zeros((), np.float32 if _is_float_dtype(dtype) else np.int8))


def _axis_and_params(ctx: Any, node: Any, x: Any, scale: Any, zero: Any | None,
                     data_dtype: str) -> tuple[int, int, Any, Any]:
    """(axis, block_size, scale, zero point) for a qnn call: one-element parameters made
    scalars (not when blocked), a missing zero point made 0, the axis checked."""
    rank = len(ctx.shape(x))
    block = int(node.attr("block_size", 0))
    if block < 0:
        raise node.error(f"block_size must be positive, got {block}")
    axis = int(node.attr("axis", 1))
    if rank <= 1:
        axis = 0 if rank else axis       # a rank-1 input: its one axis (ONNX: per tensor)
    elif not -rank <= axis < rank:
        raise node.error(f"axis {axis} is out of range for an input of rank {rank}")
    scale_shape = _size(ctx, node, scale, "the scale")
    if not block:
        scale = _per_tensor(ctx, node, scale, "the scale")
        if len(scale_shape) > 1 and int(np.prod(scale_shape)) != 1:
            raise node.error(f"the scale must be a scalar or a vector (or blocked, with "
                             f"block_size), got shape {scale_shape}")
        if node.opset < 13 and int(np.prod(scale_shape)) != 1:
            raise node.error(f"opset {node.opset} quantizes per tensor: the scale must have "
                             f"one element, got shape {scale_shape}")
    if zero is None:
        zero = _zero(ctx, data_dtype)
    elif not block or int(np.prod(_size(ctx, node, zero, "the zero point"))) == 1:
        zero = _per_tensor(ctx, node, zero, "the zero point")
    return axis, block, scale, zero


def _check_scale(ctx: Any, node: Any, scale: Any) -> str:
    dtype = ctx.dtype(scale)
    if dtype not in FLOAT_SCALES:
        raise node.error(f"a {dtype} scale is not supported (float32, float16, bfloat16)")
    return dtype


# ---------------------------------------------------------------- QuantizeLinear

@converter("QuantizeLinear", since=10)
def quantize_linear(ctx: Any, node: Any) -> Any:
    x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
    _check_scale(ctx, node, scale)
    code = int(node.attr("output_dtype", 0))
    out = _onnx_dtype(node, code, "output_dtype") if code else None
    if zero is not None:
        zdtype = ctx.dtype(zero)
        if out is not None and out != zdtype:
            raise node.error(f"output_dtype {out} differs from the zero point's dtype {zdtype}")
        out = zdtype
    out = out or "uint8"
    precision = int(node.attr("precision", 0))
    if precision:
        pdtype = _onnx_dtype(node, precision, "precision")
        if pdtype not in FLOAT_SCALES:
            raise node.error(f"precision {pdtype} is not a float dtype")
        x, scale = op.cast(x, dtype=pdtype), op.cast(scale, dtype=pdtype)
    axis, block, scale, zero = _axis_and_params(ctx, node, x, scale, zero, out)
    return op.qnn.quantize(x, scale, zero, axis=axis, out_dtype=out, block_size=block,
                           saturate=bool(int(node.attr("saturate", 1))))


# ---------------------------------------------------------------- DequantizeLinear

@converter("DequantizeLinear", since=10)
def dequantize_linear(ctx: Any, node: Any) -> Any:
    x, scale, zero = node.inputs[0], node.inputs[1], node.input(2)
    sdtype = _check_scale(ctx, node, scale)
    dtype = ctx.dtype(x)
    if zero is not None and ctx.dtype(zero) != dtype:
        raise node.error(f"the zero point's dtype {ctx.dtype(zero)} differs from the input's "
                         f"{dtype}")
    code = int(node.attr("output_dtype", 0))
    out = _onnx_dtype(node, code, "output_dtype") if code else sdtype
    axis, block, scale, zero = _axis_and_params(ctx, node, x, scale, zero, dtype)
    return op.qnn.dequantize(x, scale, zero, axis=axis, out_dtype=out, block_size=block)


# ---------------------------------------------------------------- DynamicQuantizeLinear

@converter("DynamicQuantizeLinear", since=11)
def dynamic_quantize_linear(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    if ctx.dtype(x) != "float32":
        raise node.error(f"the input must be float32, got {ctx.dtype(x)}")

    def f32(v: float) -> Any:
        return ctx.const(np.asarray(v, np.float32))
    zero = f32(0.0)
    hi = op.maximum(op.max(x), zero)
    lo = op.minimum(op.min(x), zero)
    span = op.where(op.equal(hi, lo), f32(1.0), op.subtract(hi, lo))
    scale = op.divide(span, f32(255.0))
    initial = op.subtract(zero, op.divide(lo, scale))
    clipped = op.clip(initial, a_min=0.0, a_max=255.0)
    u8_zero = ctx.const(np.zeros((), np.uint8))
    zp = op.qnn.quantize(clipped, f32(1.0), u8_zero, out_dtype="uint8")
    y = op.qnn.quantize(x, scale, zp, out_dtype="uint8")
    return [y, scale, zp]


# ---------------------------------------------------------------- integer products

def _shim(node: Any, op_type: str, inputs: list) -> Node:
    """`node` as an `op_type` node of `inputs` (for MatMul's and Conv's converters)."""
    return Node(op_type, node.name, "", inputs, [f"{node.name}:{k}" for k in range(len(inputs))],
                node.outputs[:1], dict(node.attrs), node.opset)


def _int32(x: Any) -> Any:
    return op.cast(x, dtype="int32")


def _minus(ctx: Any, x32: Any, zero: Any | None) -> Any:
    return x32 if zero is None else op.subtract(x32, _int32(zero))


def _int_operand(ctx: Any, node: Any, i: int, what: str) -> Any:
    x = node.inputs[i]
    dtype = ctx.dtype(x)
    if dtype not in ("int8", "uint8"):
        raise node.error(f"{what} must be int8 or uint8, got {dtype}")
    return x


def _row_zero(ctx: Any, node: Any, a: Any, zero: Any | None) -> Any | None:
    """A's zero point: per tensor, or a vector of one entry per row (M)."""
    if zero is None:
        return None
    zero = _per_tensor(ctx, node, zero, "a_zero_point")
    zshape, ashape = ctx.shape(zero), ctx.shape(a)
    if len(zshape) == 1 and len(ashape) >= 2:
        return op.reshape(zero, newshape=(-1, 1))
    return zero


def _channel_zero(ctx: Any, node: Any, w: Any, zero: Any | None, what: str) -> Any | None:
    """W's zero point: per tensor, or a vector of one entry per output channel."""
    if zero is None:
        return None
    zero = _per_tensor(ctx, node, zero, what)
    zshape = ctx.shape(zero)
    if len(zshape) == 1:
        rank = len(ctx.shape(w))
        return op.reshape(zero, newshape=(-1,) + (1,) * (rank - 1))
    if zshape:
        raise node.error(f"{what} must be a scalar or a vector, got shape {tuple(zshape)}")
    return zero


def _int_matmul(ctx: Any, node: Any, a: Any, b: Any, a_zero: Any | None,
                b_zero: Any | None) -> Any:
    a32 = _minus(ctx, _int32(a), _row_zero(ctx, node, a, a_zero))
    b32 = _minus(ctx, _int32(b), None if b_zero is None else
                 _per_tensor(ctx, node, b_zero, "b_zero_point"))
    return _matmul(ctx, _shim(node, "MatMul", [a32, b32]))


def _int_conv(ctx: Any, node: Any, x: Any, w: Any, x_zero: Any | None, w_zero: Any | None,
              bias: Any | None = None) -> Any:
    if x_zero is not None and int(np.prod(_size(ctx, node, x_zero, "x_zero_point"))) != 1:
        raise node.error("x_zero_point must be a scalar (per tensor)")
    x32 = _minus(ctx, _int32(x), None if x_zero is None else
                 _per_tensor(ctx, node, x_zero, "x_zero_point"))
    w32 = _minus(ctx, _int32(w), _channel_zero(ctx, node, w, w_zero, "w_zero_point"))
    inputs = [x32, w32] + ([bias] if bias is not None else [])
    return conv(ctx, _shim(node, "Conv", inputs))


@converter("MatMulInteger", since=10)
def matmul_integer(ctx: Any, node: Any) -> Any:
    a = _int_operand(ctx, node, 0, "A")
    b = _int_operand(ctx, node, 1, "B")
    return _int_matmul(ctx, node, a, b, node.input(2), node.input(3))


@converter("ConvInteger", since=10)
def conv_integer(ctx: Any, node: Any) -> Any:
    x = _int_operand(ctx, node, 0, "x")
    w = _int_operand(ctx, node, 1, "w")
    return _int_conv(ctx, node, x, w, node.input(2), node.input(3))


def _requantize(ctx: Any, acc: Any, multiplier: Any, y_zero: Any | None, out: str) -> Any:
    """saturate(round_half_even(acc * multiplier + y_zero)) in `out`, in float64."""
    d = op.multiply(op.cast(acc, dtype="float64"), op.cast(multiplier, dtype="float64"))
    if y_zero is not None:
        d = op.add(d, op.cast(y_zero, dtype="float64"))
    return op.qnn.quantize(d, ctx.const(np.ones((), np.float64)),
                           ctx.const(np.zeros((), np.int8)), out_dtype=out)


def _scale(ctx: Any, node: Any, i: int, what: str) -> Any:
    s = node.inputs[i]
    _check_scale(ctx, node, s)
    return s


@converter("QLinearMatMul", since=10)
def qlinear_matmul(ctx: Any, node: Any) -> Any:
    a = _int_operand(ctx, node, 0, "a")
    b = _int_operand(ctx, node, 3, "b")
    a_scale, b_scale, y_scale = (_scale(ctx, node, 1, "a_scale"), _scale(ctx, node, 4, "b_scale"),
                                 _scale(ctx, node, 6, "y_scale"))
    dtypes = {ctx.dtype(s) for s in (a_scale, b_scale, y_scale)}
    if len(dtypes) != 1:
        raise node.error(f"the scales have different dtypes: {sorted(dtypes)}")
    y_zero = node.input(7)
    out = ctx.dtype(y_zero) if y_zero is not None else ctx.dtype(a)
    if out not in ("int8", "uint8"):
        raise node.error(f"the output must be int8 or uint8, got {out}")
    a32 = _minus(ctx, _int32(a), node.input(2))
    b32 = _minus(ctx, _int32(b), node.input(5))
    acc = _matmul(ctx, _shim(node, "MatMul", [a32, b32]))
    multiplier = op.divide(op.multiply(a_scale, b_scale), y_scale)
    return _requantize(ctx, acc, multiplier, y_zero, out)


@converter("QLinearConv", since=10)
def qlinear_conv(ctx: Any, node: Any) -> Any:
    x = _int_operand(ctx, node, 0, "x")
    w = _int_operand(ctx, node, 3, "w")
    x_scale, w_scale, y_scale = (_scale(ctx, node, 1, "x_scale"), _scale(ctx, node, 4, "w_scale"),
                                 _scale(ctx, node, 6, "y_scale"))
    y_zero, bias = node.input(7), node.input(8)
    out = ctx.dtype(y_zero) if y_zero is not None else ctx.dtype(x)
    if out not in ("int8", "uint8"):
        raise node.error(f"the output must be int8 or uint8, got {out}")
    if bias is not None and ctx.dtype(bias) != "int32":
        raise node.error(f"the bias must be int32, got {ctx.dtype(bias)}")
    acc = _int_conv(ctx, node, x, w, node.input(2), node.input(5), bias)
    w_scale = _channel_scale(ctx, node, w, w_scale)
    multiplier = op.divide(op.multiply(_per_tensor(ctx, node, x_scale, "x_scale"), w_scale),
                           _per_tensor(ctx, node, y_scale, "y_scale"))
    return _requantize(ctx, acc, multiplier, None if y_zero is None else
                       _per_tensor(ctx, node, y_zero, "y_zero_point"), out)


def _channel_scale(ctx: Any, node: Any, w: Any, scale: Any) -> Any:
    """w_scale: per tensor, or one entry per output channel (shaped (1, O, 1, ...))."""
    scale = _per_tensor(ctx, node, scale, "w_scale")
    shape = ctx.shape(scale)
    if not shape:
        return scale
    if len(shape) != 1:
        raise node.error(f"w_scale must be a scalar or a vector, got shape {tuple(shape)}")
    rank = len(ctx.shape(w))
    return op.reshape(scale, newshape=(1, -1) + (1,) * (rank - 2))
