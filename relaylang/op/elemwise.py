"""Elementwise and broadcasting operators.

Mirrors TVM's src/relay/op/tensor/unary.cc (RELAY_REGISTER_UNARY_OP: one
input, kElemWise), src/relay/op/tensor/binary.cc (RELAY_REGISTER_BINARY_OP and
RELAY_REGISTER_CMP_OP: two inputs, kBroadcast), plus `where`, `clip` and the
cast family of src/relay/op/tensor/transform.cc. Schemas mirror ClipAttrs and
CastAttrs of include/tvm/relay/attrs/transform.h.
"""
from __future__ import annotations

from typing import ClassVar

from ..ir.attrs import Attrs, DType
from .registry import OpDef, OpPattern, register_op
from .schema import attrs_schema, register_table

E, B = OpPattern.ELEMWISE, OpPattern.BROADCAST


@attrs_schema
class ClipAttrs(Attrs):
    a_min: float
    a_max: float

    type_key: ClassVar[str] = "relay.attrs.ClipAttrs"


@attrs_schema
class CastAttrs(Attrs):
    dtype: DType

    type_key: ClassVar[str] = "relay.attrs.CastAttrs"


UNARY = {name: E for name in (
    "negative", "abs", "sign", "exp", "fast_exp", "log", "log2", "log10", "sqrt", "rsqrt",
    "sigmoid", "tanh", "fast_tanh", "erf", "fast_erf", "floor", "ceil", "round", "trunc",
    "sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
    "logical_not", "bitwise_not", "copy", "zeros_like", "ones_like",
    "isnan", "isinf", "isfinite",
)}

BINARY = {name: B for name in (
    "add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide",
    "mod", "floor_mod", "trunc_mod", "power", "maximum", "minimum",
    "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor",
    "right_shift", "left_shift",
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
)}

register_table(UNARY, num_inputs=1)
register_table(BINARY, num_inputs=2)
register_op(OpDef("where", 3, pattern=B))
register_op(OpDef("clip", 1, attrs=ClipAttrs, pattern=E))
register_op(OpDef("cast", 1, attrs=CastAttrs, pattern=E))
register_op(OpDef("cast_like", 2, pattern=E))
register_op(OpDef("reinterpret", 1, attrs=CastAttrs, pattern=E))
