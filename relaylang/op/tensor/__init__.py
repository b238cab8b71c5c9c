"""The tensor family: elementwise and broadcasting operators.

Mirrors TVM's src/relay/op/tensor/unary.cc (RELAY_REGISTER_UNARY_OP: one input,
kElemWise, IdentityRel or IdentityCompRel), src/relay/op/tensor/binary.cc
(RELAY_REGISTER_BINARY_OP / RELAY_REGISTER_CMP_OP: two inputs, kBroadcast,
BroadcastRel / BroadcastCompRel), plus `where`, `clip` and the cast family of
src/relay/op/tensor/transform.cc. Schemas mirror ClipAttrs and CastAttrs of
include/tvm/relay/attrs/transform.h.

Relations: `relations.py`; NumPy kernels: `numpy_kernels.py` (imported on the first
kernel call, so loading the registry does not import NumPy).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..registry import OpPattern, declare_op
from ..relation import ANY_DTYPE, BITS, BOOL, INTEGER, DTypeRule
from ..schema import attrs_schema
from .relations import (
    binary_rel,
    cast_like_rel,
    cast_rel,
    reinterpret_rel,
    unary_rel,
    where_rel,
)

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


SAME = None
# name -> (dtype rule of the input, result dtype: SAME or "bool")
UNARY: dict[str, tuple[DTypeRule, str | None]] = {
    **{name: (ANY_DTYPE, SAME) for name in (
        "negative", "abs", "sign", "exp", "fast_exp", "log", "log2", "log10", "sqrt", "rsqrt",
        "sigmoid", "tanh", "fast_tanh", "erf", "fast_erf", "floor", "ceil", "round", "trunc",
        "sin", "cos", "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh",
        "copy", "zeros_like", "ones_like")},
    "logical_not": (BOOL, SAME),
    "bitwise_not": (BITS, SAME),
    "isnan": (ANY_DTYPE, "bool"),
    "isinf": (ANY_DTYPE, "bool"),
    "isfinite": (ANY_DTYPE, "bool"),
}

# name -> (dtype rule of the operands, result dtype: SAME or "bool")
BINARY: dict[str, tuple[DTypeRule, str | None]] = {
    **{name: (ANY_DTYPE, SAME) for name in (
        "add", "subtract", "multiply", "divide", "floor_divide", "trunc_divide",
        "mod", "floor_mod", "trunc_mod", "power", "maximum", "minimum")},
    "logical_and": (BOOL, SAME),
    "logical_or": (BOOL, SAME),
    "logical_xor": (BOOL, SAME),
    "bitwise_and": (BITS, SAME),
    "bitwise_or": (BITS, SAME),
    "bitwise_xor": (BITS, SAME),
    "right_shift": (INTEGER, SAME),
    "left_shift": (INTEGER, SAME),
    **{name: (ANY_DTYPE, "bool") for name in (
        "equal", "not_equal", "less", "less_equal", "greater", "greater_equal")},
}

# The fast approximation FastMath swaps in (TVM's fast_math.cc).
FAST_MATH = {"exp": "fast_exp", "erf": "fast_erf", "tanh": "fast_tanh"}
# FoldScaleAxis roles (a scale passes through add/subtract; a multiply is the scale).
SCALE_AXIS = {"add": "add_sub", "subtract": "add_sub", "multiply": "multiply"}

# Input names as TVM's RELAY_REGISTER_UNARY_OP / RELAY_REGISTER_BINARY_OP declare them.
UNARY_INPUTS, BINARY_INPUTS = ("data",), ("lhs", "rhs")

for _name, (_rule, _result) in UNARY.items():
    declare_op(_name, inputs=UNARY_INPUTS, rel=unary_rel(_rule, _result), pattern=E,
               layout="elemwise", fast_math=FAST_MATH.get(_name))
for _name, (_rule, _result) in BINARY.items():
    declare_op(_name, inputs=BINARY_INPUTS, rel=binary_rel(_rule, _result), pattern=B,
               layout="broadcast", scale_axis=SCALE_AXIS.get(_name))

declare_op("where", inputs=("condition", "x", "y"), rel=where_rel, pattern=B,
           layout="broadcast")
declare_op("clip", inputs=("data",), attrs=ClipAttrs, rel=unary_rel(), pattern=E,
           layout="elemwise")
declare_op("cast", inputs=("data",), attrs=CastAttrs, rel=cast_rel, pattern=E,
           layout="elemwise")
declare_op("cast_like", inputs=("data", "dtype_like"), rel=cast_like_rel, pattern=E)
declare_op("reinterpret", inputs=("data",), attrs=CastAttrs, rel=reinterpret_rel, pattern=E,
           layout="elemwise")
