"""Type relations of the qnn family (QuantizeRel and DequantizeRel of TVM's
src/relay/qnn/op/quantize.cc and dequantize.cc, with ONNX's blocked scales), and the
dtype facts the kernels and lowerings share: `integer_range` (the saturation bounds of an
integer dtype of any width) and `division_dtype` (the precision of data / scale)."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_bits, dtype_kind
from ...ir.types import TensorType, Type
from ..relation import TypeRelError, dim_str, shape_str, tensor
from ..shape_rules import all_known, axis_of, is_int

FLOAT_RANK = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
# The low-precision float formats quantize may produce and dequantize read (ir/lowp.py
# carries them; float8_e8m0fnu, a scale format, is neither).
LOWP_QUANT = ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
              "float4_e2m1fn")


def integer_range(dtype: str) -> tuple[int, int] | None:
    """(lowest, highest) value of an integer dtype of any width (int4: (-8, 7), uint2:
    (0, 3)); None for any other dtype."""
    kind = dtype_kind(dtype)
    if kind not in ("int", "uint") or not dtype[len(kind):].isdigit():
        return None
    bits = dtype_bits(dtype)
    if kind == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_RANK


def division_dtype(data: str, scale: str) -> str:
    """The dtype data / scale is computed in: the wider float dtype of the two (an integer
    data counts as the scale's); float16 with bfloat16 meet in float32."""
    if not is_float(data) or data == scale:
        return scale
    if FLOAT_RANK[data] == FLOAT_RANK[scale]:
        return "float32"
    return data if FLOAT_RANK[data] > FLOAT_RANK[scale] else scale


def product_dtype(data: str, zero: str, scale: str) -> str:
    """The dtype (float32(data) - zero_point) * scale is computed in: float32, exact for
    integers of up to 24 bits; float64 for wider integers or a float64 scale."""
    if data in LOWP_QUANT:                   # exact in float32
        return "float64" if scale == "float64" else "float32"
    wide = max(dtype_bits(data), dtype_bits(zero)) > 24 or scale == "float64"
    return "float64" if wide else "float32"


def _scale_shapes(data: TensorType, scale: TensorType, zero: TensorType, attrs: Any) -> None:
    """The scale's shape must be per tensor, per axis or per block (module docstring of
    the family); the zero point has the scale's shape or is a scalar."""
    rank = len(data.shape)
    block = int(attrs.block_size)
    if block < 0:
        raise TypeRelError(f"block_size must be positive (or 0: no blocks), got {block}")
    s = scale.shape
    if block == 0:
        if len(s) > 1:
            raise TypeRelError(f"the scale must be a scalar or a vector, got shape "
                               f"{shape_str(s)} (blocked scales need block_size)", arg=1)
        if len(s) == 1 and not (is_int(s[0]) and s[0] == 1):
            if rank == 0:
                raise TypeRelError(f"a scalar data takes a scalar scale, got shape "
                                   f"{shape_str(s)}", arg=1)
            axis = axis_of(attrs.axis, rank)
            d = data.shape[axis]
            if is_int(s[0]) and is_int(d) and s[0] != d:
                raise TypeRelError(f"the scale has {s[0]} entries but data has {dim_str(d)} "
                                   f"along axis {attrs.axis}", arg=1, dim=0)
    else:
        if rank == 0:
            raise TypeRelError("blocked quantization needs data of rank 1 or more", arg=0)
        axis = axis_of(attrs.axis, rank)
        if len(s) != rank:
            raise TypeRelError(f"a blocked scale has the data's rank {rank}, got shape "
                               f"{shape_str(s)}", arg=1)
        for k, (ds, dd) in enumerate(zip(s, data.shape)):
            if not (is_int(ds) and is_int(dd)):
                continue
            want = -(-dd // block) if k == axis else dd
            if ds != want:
                what = (f"ceil({dd} / block_size {block}) = {want}" if k == axis
                        else f"the data's {dd}")
                raise TypeRelError(f"the scale has {ds} entries along axis {k}, expected "
                                   f"{what} (data {shape_str(data.shape)}, scale "
                                   f"{shape_str(s)})", arg=1, dim=k)
    z = zero.shape
    scalar = len(z) == 0 or (len(z) == 1 and is_int(z[0]) and z[0] == 1)
    if not scalar and (len(z) != len(s) or any(
            is_int(a) and is_int(b) and a != b for a, b in zip(z, s))):
        raise TypeRelError(f"the zero point has shape {shape_str(z)}, the scale "
                           f"{shape_str(s)}: they must match (or the zero point be a scalar)",
                           arg=2)


def quantize_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    data, scale, zero = (tensor(args, 0, "data"), tensor(args, 1, "output_scale"),
                         tensor(args, 2, "output_zero_point"))
    if not (is_float(data.dtype) or data.dtype == "int32"):
        raise TypeRelError(f"data must be a float or int32 tensor, got dtype {data.dtype}",
                           arg=0)
    if not is_float(scale.dtype):
        raise TypeRelError(f"output_scale must be a float tensor, got dtype {scale.dtype}",
                           arg=1)
    out = str(attrs.out_dtype)
    if out in LOWP_QUANT:
        if not (is_float(zero.dtype) or zero.dtype in LOWP_QUANT):
            raise TypeRelError(f"quantizing to {out}, output_zero_point must be a float "
                               f"tensor, got dtype {zero.dtype}", arg=2)
    else:
        if integer_range(out) is None or dtype_bits(out) > 32:
            raise TypeRelError(f"out_dtype must be an integer dtype of at most 32 bits (int2 "
                               f"... int32, uint2 ... uint32) or one of {', '.join(LOWP_QUANT)}"
                               f", got {out!r}")
        if integer_range(zero.dtype) is None:
            raise TypeRelError(f"output_zero_point must be an integer tensor, got dtype "
                               f"{zero.dtype}", arg=2)
    _scale_shapes(data, scale, zero, attrs)
    return TensorType(data.shape, out)


def dequantize_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    data, scale, zero = (tensor(args, 0, "data"), tensor(args, 1, "input_scale"),
                         tensor(args, 2, "input_zero_point"))
    if data.dtype in LOWP_QUANT:
        if not (is_float(zero.dtype) or zero.dtype in LOWP_QUANT):
            raise TypeRelError(f"dequantizing {data.dtype}, input_zero_point must be a float "
                               f"tensor, got dtype {zero.dtype}", arg=2)
    else:
        if integer_range(data.dtype) is None or dtype_bits(data.dtype) > 32:
            raise TypeRelError(f"data must be an integer tensor of at most 32 bits or one of "
                               f"{', '.join(LOWP_QUANT)}, got dtype {data.dtype}", arg=0)
        if integer_range(zero.dtype) is None or dtype_bits(zero.dtype) > 32:
            raise TypeRelError(f"input_zero_point must be an integer tensor of at most 32 "
                               f"bits, got dtype {zero.dtype}", arg=2)
    if not is_float(scale.dtype):
        raise TypeRelError(f"input_scale must be a float tensor, got dtype {scale.dtype}",
                           arg=1)
    out = str(attrs.out_dtype) or "float32"
    if not is_float(out):
        raise TypeRelError(f"out_dtype must be a float dtype, got {out!r}")
    _scale_shapes(data, scale, zero, attrs)
    return TensorType(data.shape, out)
