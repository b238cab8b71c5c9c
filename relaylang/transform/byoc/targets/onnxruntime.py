"""`onnxruntime`: regions exported to an ONNX graph and run by an onnxruntime session.

The IR half of the target (the exporter and codegen are `relaylang/backend/byoc/
_onnx_export.py` and `onnxruntime.py`; the extra is `pip install 'relaylang[onnxruntime]'`).
It takes float32 calls of static shape of the common NN operators, each one for which
the exporter writes ONNX nodes with the same semantics:

    nn.conv2d (NCHW/OIHW, any groups)     nn.dense, nn.matmul, nn.batch_matmul
    add subtract multiply divide maximum minimum power
    nn.relu nn.leaky_relu sigmoid tanh exp log sqrt rsqrt erf negative abs floor ceil clip
    nn.softmax nn.log_softmax  sum mean max min variance
    nn.max_pool2d nn.avg_pool2d (NCHW, ceil_mode=False)  nn.global_max_pool2d
    nn.global_avg_pool2d  nn.batch_norm (inference, channels on axis 1)
    nn.layer_norm (last axis)  nn.pad (constant, a scalar pad value)
    nn.bias_add reshape expand_dims squeeze transpose concatenate nn.batch_flatten

Like TVM's TensorRT target it has no composite patterns: onnxruntime fuses what it
runs itself, so a region is handed over as it is.
"""
from __future__ import annotations

from typing import Any

from ..registry import register_pattern_table, register_target_op

DTYPES = ("float32",)


def _tensor_type(expr: Any) -> Any:
    from ....ir.types import TensorType
    ty = getattr(expr, "checked_type", None)
    return ty if isinstance(ty, TensorType) else None


def _float_tensor(ty: Any) -> bool:
    return ty is not None and str(ty.dtype) in DTYPES and all(
        isinstance(d, int) and not isinstance(d, bool) for d in ty.shape)


def _operand_types(call: Any) -> list[Any]:
    """The tensor types of the call's operands (a tuple argument's fields), or [None]."""
    from ....ir.types import TupleType
    out = []
    for a in call.args:
        ty = getattr(a, "checked_type", None)
        out.extend(ty.fields if isinstance(ty, TupleType) else [ty])
    return [_tensor_type_of(t) for t in out]


def _tensor_type_of(ty: Any) -> Any:
    from ....ir.types import TensorType
    return ty if isinstance(ty, TensorType) else None


def floats(call: Any) -> bool:
    """Every operand and the result are float32 tensors of static shape."""
    from ....ir.types import TupleType
    ty = getattr(call, "checked_type", None)
    results = list(ty.fields) if isinstance(ty, TupleType) else [ty]
    return all(_float_tensor(_tensor_type_of(t)) for t in results) \
        and all(_float_tensor(t) for t in _operand_types(call))


def _rank(expr: Any) -> int:
    return len(_tensor_type(expr).shape)


def _conv2d(call: Any) -> bool:
    a = call.attrs
    return floats(call) and a.data_layout == "NCHW" and a.kernel_layout == "OIHW" \
        and a.out_layout in ("", "NCHW")


def _pool(call: Any) -> bool:
    a = call.attrs
    if not floats(call) or a.layout != "NCHW" or a.out_layout not in ("", "NCHW") \
            or a.ceil_mode:
        return False
    if call.op.name == "nn.avg_pool2d":
        from ....op.shape_rules import spatial
        return all(int(d) == 1 for d in spatial(a.dilation, 2, "dilation"))
    return True


def _global_pool(call: Any) -> bool:
    return floats(call) and call.attrs.layout == "NCHW" \
        and call.attrs.out_layout in ("", "NCHW")


def _batch_norm(call: Any) -> bool:
    return floats(call) and _rank(call.args[0]) >= 2 \
        and call.attrs.axis in (1, 1 - _rank(call.args[0]))


def _dense(call: Any) -> bool:
    return floats(call) and _rank(call.args[1]) == 2 and _rank(call.args[0]) >= 1


def _matmul(call: Any) -> bool:
    return floats(call) and _rank(call.args[0]) >= 2 and _rank(call.args[1]) == 2


def _batch_matmul(call: Any) -> bool:
    return floats(call) and _rank(call.args[0]) == 3 and _rank(call.args[1]) == 3


def _transpose(call: Any) -> bool:
    return floats(call) and _rank(call.args[0]) >= 1


def _bias_add(call: Any) -> bool:
    return floats(call) and _rank(call.args[1]) == 1


def _reduce(call: Any) -> bool:
    from ....op.reduce.relations import reduce_axes
    return floats(call) and _rank(call.args[0]) >= 1 \
        and len(reduce_axes(_rank(call.args[0]), call.attrs)) > 0


def _pad(call: Any) -> bool:
    return floats(call) and call.attrs.pad_mode == "constant" \
        and _rank(call.args[1]) == 0 \
        and all(int(p) >= 0 for pair in call.attrs.pad_width for p in pair)


def _layer_norm(call: Any) -> bool:
    rank = _rank(call.args[0])
    return floats(call) and rank >= 1 and call.attrs.axis in (-1, rank - 1)


SUPPORTED = {
    "nn.conv2d": _conv2d, "nn.dense": _dense, "nn.matmul": _matmul,
    "nn.batch_matmul": _batch_matmul,
    "add": floats, "subtract": floats, "multiply": floats, "divide": floats,
    "maximum": floats, "minimum": floats,
    "nn.relu": floats, "nn.leaky_relu": floats, "sigmoid": floats, "tanh": floats,
    "exp": floats, "sqrt": floats, "negative": floats, "abs": floats, "clip": floats,
    "log": floats, "erf": floats, "rsqrt": floats, "floor": floats, "ceil": floats,
    "power": floats,
    "sum": _reduce, "mean": _reduce, "max": _reduce, "min": _reduce, "variance": _reduce,
    "nn.layer_norm": _layer_norm, "nn.pad": _pad,
    "expand_dims": floats, "squeeze": floats,
    "nn.softmax": floats, "nn.log_softmax": floats,
    "nn.max_pool2d": _pool, "nn.avg_pool2d": _pool,
    "nn.global_max_pool2d": _global_pool, "nn.global_avg_pool2d": _global_pool,
    "nn.batch_norm": _batch_norm, "nn.bias_add": _bias_add,
    "reshape": floats, "transpose": _transpose, "concatenate": floats,
    "nn.batch_flatten": floats,
}

for _name, _pred in SUPPORTED.items():
    register_target_op("onnxruntime", _name, _pred)

# No composites: an empty table, so `MergeComposite{pattern_table=onnxruntime}` is a no-op.
register_pattern_table("onnxruntime", [])
