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


# ---------------------------------------------------------------- TVM's qnn compute ops
#
# qnn.requantize, qnn.conv2d, qnn.dense, qnn.add / qnn.subtract / qnn.mul and
# qnn.concatenate (src/relay/qnn/op/*.cc): TVM's checks. A scale or zero point is a
# scalar (per tensor) or a vector of the quantized axis' extent (per channel); output
# scales and zero points are scalars; scales are float32 and zero points int32.

REQUANT_IN = ("int8", "uint8", "int16", "int32", "int64")
REQUANT_OUT = ("int8", "uint8", "int16", "int32")
ROUNDINGS = ("None", "UPWARD", "TONEAREST")
COMPUTE_DTYPES = ("None", "int64", "float32", "float64")


def _param(args: list[Type], i: int, what: str, dtype: str, extent: Any = None) -> TensorType:
    """Argument `i`, a scale or zero point: `dtype`, a scalar or (with `extent`) a vector
    of `extent` entries (TVM's IsScalarType / AssignType)."""
    t = tensor(args, i, what)
    if t.dtype != dtype:
        raise TypeRelError(f"{what} must be {dtype}, got dtype {t.dtype}", arg=i)
    if len(t.shape) == 0:
        return t
    if extent is None:
        raise TypeRelError(f"{what} must be a scalar, got shape {shape_str(t.shape)}", arg=i)
    if len(t.shape) != 1:
        raise TypeRelError(f"{what} must be a scalar or a vector of {dim_str(extent)} entries, "
                           f"got shape {shape_str(t.shape)}", arg=i)
    n = t.shape[0]
    if is_int(n) and is_int(extent) and n != extent:
        raise TypeRelError(f"{what} has {n} entries but the quantized axis has "
                           f"{dim_str(extent)}", arg=i, dim=0)
    return t


def _dtype_in(t: TensorType, allowed: tuple[str, ...], what: str, arg: int) -> None:
    if t.dtype not in allowed:
        raise TypeRelError(f"{what} must be one of {', '.join(allowed)}, got dtype {t.dtype}",
                           arg=arg)


def quant_axis(axis: int, rank: int, arg: int = 0, what: str = "axis") -> int:
    """TVM's reading of a qnn axis: negative counts from the back, a scalar's is 0."""
    if rank == 0:
        if axis not in (0, -1):
            raise TypeRelError(f"{what} {axis} is out of range for a scalar", arg=arg)
        return 0
    return axis_of(axis, rank, arg, what)


def requantize_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:5]):
        return None
    data = tensor(args, 0, "data")
    _dtype_in(data, REQUANT_IN, "data", 0)
    rank = len(data.shape)
    axis = quant_axis(int(attrs.axis), rank)
    extent = data.shape[axis] if rank else 1
    _param(args, 1, "input_scale", "float32", extent)
    _param(args, 2, "input_zero_point", "int32", extent)
    _param(args, 3, "output_scale", "float32")
    _param(args, 4, "output_zero_point", "int32")
    out = str(attrs.out_dtype)
    if out not in REQUANT_OUT:
        raise TypeRelError(f"out_dtype must be one of {', '.join(REQUANT_OUT)}, got {out!r}")
    if str(attrs.rounding) not in ROUNDINGS:
        raise TypeRelError(f"rounding must be one of {', '.join(ROUNDINGS)}, got "
                           f"{attrs.rounding!r}")
    if str(attrs.compute_dtype) not in COMPUTE_DTYPES:
        raise TypeRelError(f"compute_dtype must be one of {', '.join(COMPUTE_DTYPES)}, got "
                           f"{attrs.compute_dtype!r}")
    return TensorType(data.shape, out)


def qnn_out_dtype(attrs: Any) -> str:
    """qnn.conv2d's and qnn.dense's accumulation dtype: out_dtype, int32 when empty."""
    return str(attrs.out_dtype) or "int32"


def qnn_conv2d_rel(args: list[Type], attrs: Any) -> Type | None:
    import dataclasses

    from ..nn.conv_relations import conv_rel
    if not all_known(args[:6]):
        return None
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    _dtype_in(data, ("int8", "uint8", "int16"), "data", 0)
    _dtype_in(weight, ("int8", "uint8", "int16"), "weight", 1)
    out = qnn_out_dtype(attrs)
    if out not in ("int16", "int32", "int64"):
        raise TypeRelError(f"out_dtype must be one of int16, int32, int64, got {out!r}")
    result = conv_rel(2)(args[:2], dataclasses.replace(attrs, out_dtype=out))
    if result is None:
        return None
    o_axis = str(attrs.kernel_layout).find("O")
    channels = weight.shape[o_axis]
    _param(args, 2, "input_zero_point", "int32")
    _param(args, 3, "kernel_zero_point", "int32", channels)
    _param(args, 4, "input_scale", "float32")
    _param(args, 5, "kernel_scale", "float32", channels)
    return result


def qnn_dense_rel(args: list[Type], attrs: Any) -> Type | None:
    import dataclasses

    from ..nn.relations import dense_rel
    if not all_known(args[:6]):
        return None
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    _dtype_in(data, ("int8", "uint8", "int16", "uint16"), "data", 0)
    _dtype_in(weight, ("int8", "uint8"), "weight", 1)
    out = qnn_out_dtype(attrs)
    if out not in ("int32", "int64"):
        raise TypeRelError(f"out_dtype must be int32 or int64, got {out!r}")
    result = dense_rel(args[:2], dataclasses.replace(attrs, out_dtype=out))
    units = weight.shape[0]
    _param(args, 2, "input_zero_point", "int32")
    _param(args, 3, "kernel_zero_point", "int32", units)
    _param(args, 4, "input_scale", "float32")
    _param(args, 5, "kernel_scale", "float32", units)
    return result


def qnn_binary_rel(args: list[Type], attrs: Any) -> Type | None:
    """QnnBroadcastRel: lhs and rhs of one integer dtype broadcast; per-tensor or
    per-channel (lhs_axis / rhs_axis) input scales and zero points; scalar output ones."""
    from ..relation import broadcast_shapes
    if not all_known(args[:8]):
        return None
    lhs, rhs = tensor(args, 0, "lhs"), tensor(args, 1, "rhs")
    if integer_range(lhs.dtype) is None or dtype_bits(lhs.dtype) > 32:
        raise TypeRelError(f"lhs must be an integer tensor of at most 32 bits, got dtype "
                           f"{lhs.dtype}", arg=0)
    if rhs.dtype != lhs.dtype:
        raise TypeRelError(f"lhs has dtype {lhs.dtype} but rhs has dtype {rhs.dtype}", arg=1)
    for k, (t, axis_attr) in enumerate(((lhs, attrs.lhs_axis), (rhs, attrs.rhs_axis))):
        side = ("lhs", "rhs")[k]
        rank = len(t.shape)
        scalar = all(len(tensor(args, 2 + 2 * k + j, "").shape) == 0 for j in (0, 1))
        if rank <= 1:
            axis = 0
        else:
            axis = int(axis_attr) + rank if int(axis_attr) < 0 else int(axis_attr)
            if not scalar and not 0 <= axis < rank:
                raise TypeRelError(f"{side}_axis {axis_attr} is out of range for {side} of "
                                   f"rank {rank}")
        extent = t.shape[axis] if rank and 0 <= axis < rank else 1
        _param(args, 2 + 2 * k, f"{side}_scale", "float32", extent)
        _param(args, 3 + 2 * k, f"{side}_zero_point", "int32", extent)
    _param(args, 6, "output_scale", "float32")
    _param(args, 7, "output_zero_point", "int32")
    try:
        shape = broadcast_shapes(lhs.shape, rhs.shape)
    except TypeRelError as e:
        raise TypeRelError(e.message, arg=1, dim=e.dim) from None
    return TensorType(shape, lhs.dtype)


def qnn_concatenate_rel(args: list[Type], attrs: Any) -> Type | None:
    from ...ir.types import TupleType
    from ..relation import type_str
    from ..transform.slice_relations import concatenate_rel
    if not all_known(args[:5]):
        return None
    data = args[0]
    count = len(data.fields) if isinstance(data, TupleType) else None
    for i, what, dtype in ((1, "input_scales", "float32"), (2, "input_zero_points", "int32")):
        t = args[i]
        if not isinstance(t, TupleType):
            raise TypeRelError(f"qnn.concatenate takes a tuple of {what.split('_', 1)[1]} as "
                               f"{what}, got {type_str(t)}", arg=i)
        if count is not None and len(t.fields) != count:
            raise TypeRelError(f"{what} has {len(t.fields)} entries for {count} tensors", arg=i)
        _check_scalars(t.fields, what, dtype, i)
    _param(args, 3, "output_scale", "float32")
    _param(args, 4, "output_zero_point", "int32")
    result = concatenate_rel(args[:1], attrs)
    if isinstance(result, TensorType) and result.dtype not in REQUANT_OUT:
        raise TypeRelError(f"the tensors must be one of {', '.join(REQUANT_OUT)}, got dtype "
                           f"{result.dtype}", arg=0)
    return result


def _check_scalars(fields: Any, what: str, dtype: str, arg: int) -> None:
    for k, f in enumerate(fields):
        if not isinstance(f, TensorType) or len(f.shape) != 0 or f.dtype != dtype:
            from ..relation import type_str
            raise TypeRelError(f"entry {k} of {what} must be a {dtype} scalar, got "
                               f"{type_str(f)}", arg=arg)


def qnn_mul_rel(args: list[Type], attrs: Any) -> Type | None:
    """QnnBroadcastRel, and TVM's canonical form's condition: per-channel scales need
    lhs_axis == rhs_axis."""
    result = qnn_binary_rel(args, attrs)
    if result is None:
        return None
    per_channel = any(len(tensor(args, i).shape) for i in (2, 4))
    if per_channel and int(attrs.lhs_axis) != int(attrs.rhs_axis):
        raise TypeRelError(f"qnn.mul with per-channel scales needs lhs_axis == rhs_axis, got "
                           f"{attrs.lhs_axis} and {attrs.rhs_axis}")
    return result


def qnn_conv2d_transpose_rel(args: list[Type], attrs: Any) -> Type | None:
    """QnnConv2DTransposeRel: the kernel scale per output channel (groups == 1: the
    kernel layout's O extent; grouped: I x O, as TVM)."""
    import dataclasses

    from ..nn.conv_relations import conv_transpose_rel
    from ..shape_rules import dim_mul
    if not all_known(args[:6]):
        return None
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    _dtype_in(data, ("int8", "uint8", "int16", "uint16"), "data", 0)
    _dtype_in(weight, ("int8", "uint8"), "weight", 1)
    out = qnn_out_dtype(attrs)
    if out not in ("int16", "int32", "int64"):
        raise TypeRelError(f"out_dtype must be one of int16, int32, int64, got {out!r}")
    result = conv_transpose_rel(2)(args[:2], dataclasses.replace(attrs, out_dtype=out))
    if result is None:
        return None
    layout = str(attrs.kernel_layout)
    o = weight.shape[layout.find("O")]
    channels = o if attrs.groups == 1 else dim_mul(weight.shape[layout.find("I")], o)
    for i, what in ((2, "input_zero_point"), (4, "input_scale")):
        t = tensor(args, i, what)
        if len(t.shape) > 1 or (len(t.shape) == 1 and not (is_int(t.shape[0])
                                                            and t.shape[0] == 1)):
            raise TypeRelError(f"{what} must be a scalar or a vector of one element, got "
                               f"shape {shape_str(t.shape)}", arg=i)
        if t.dtype != ("int32" if i == 2 else "float32"):
            raise TypeRelError(f"{what} must be {'int32' if i == 2 else 'float32'}, got dtype "
                               f"{t.dtype}", arg=i)
    _param(args, 3, "kernel_zero_point", "int32", o)
    _param(args, 5, "kernel_scale", "float32", channels)
    return result


def qnn_avg_pool2d_rel(args: list[Type], attrs: Any) -> Type | None:
    """QnnAvgPool2DRel: int8 / uint8 data, scalar scales and zero points, nn.avg_pool2d's
    shape in the data's dtype."""
    from ..registry import get_op_def
    if not all_known(args[:5]):
        return None
    data = tensor(args, 0, "data")
    _dtype_in(data, ("int8", "uint8"), "data", 0)
    _param(args, 1, "input_scale", "float32")
    _param(args, 2, "input_zero_point", "int32")
    _param(args, 3, "output_scale", "float32")
    _param(args, 4, "output_zero_point", "int32")
    pool = get_op_def("nn.avg_pool2d")
    assert pool is not None and pool.type_rel is not None
    result = pool.type_rel(args[:1], attrs)
    if result is None:
        return None
    return TensorType(result.shape, data.dtype)
