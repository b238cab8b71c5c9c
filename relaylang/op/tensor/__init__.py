"""Elementwise and broadcasting operators: schemas, type relations, op tables.

Mirrors TVM's src/relay/op/tensor/unary.cc (RELAY_REGISTER_UNARY_OP: one
input, kElemWise, IdentityRel or IdentityCompRel), src/relay/op/tensor/binary.cc
(RELAY_REGISTER_BINARY_OP / RELAY_REGISTER_CMP_OP: two inputs, kBroadcast,
BroadcastRel / BroadcastCompRel), plus `where`, `clip` and the cast family of
src/relay/op/tensor/transform.cc. Schemas mirror ClipAttrs and CastAttrs of
include/tvm/relay/attrs/transform.h.

The NumPy kernels live in `elemwise_kernels.py`; they are bound lazily
(`numpy_kernel`) so that loading the registry does not import NumPy.

Where TVM's relations accept any dtype but its lowering then fails (logical
ops on non-bool, bitwise ops and shifts on floats: tir/op.cc checks these),
the relations here reject the call up front with a message.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..ir.attrs import Attrs, DType
from ..ir.dtype import canonical_dtype, dtype_bits, dtype_kind  # noqa: F401  (re-exported)
from ..ir.types import TensorType, Type
from .registry import OpDef, OpPattern, register_op
from .relation import TypeRelError, broadcast_shapes, is_known, tensor
from .schema import attrs_schema, lazy_kernel

E, B = OpPattern.ELEMWISE, OpPattern.BROADCAST
Rel = Callable[[list[Type], Any], Type | None]


@attrs_schema
class ClipAttrs(Attrs):
    a_min: float
    a_max: float

    type_key: ClassVar[str] = "relay.attrs.ClipAttrs"


@attrs_schema
class CastAttrs(Attrs):
    dtype: DType

    type_key: ClassVar[str] = "relay.attrs.CastAttrs"


numpy_kernel = lazy_kernel   # the name the elementwise tables use


# A dtype rule: (predicate on the dtype, what to call the accepted tensors).
DTypeRule = tuple[Callable[[str], bool], str]
ANY_DTYPE: DTypeRule = (lambda d: True, "")
BOOL: DTypeRule = (lambda d: dtype_kind(d) == "bool", "a bool tensor")
BITS: DTypeRule = (lambda d: dtype_kind(d) in ("int", "uint", "bool"), "an integer or bool tensor")
INTEGER: DTypeRule = (lambda d: dtype_kind(d) in ("int", "uint"), "an integer tensor")


def check_dtype(t: TensorType, rule: DTypeRule, what: str, arg: int) -> None:
    accepts, description = rule
    if not accepts(t.dtype):
        raise TypeRelError(f"{what} must be {description}, got dtype {t.dtype}", arg=arg)


def same_dtype(a: TensorType, b: TensorType, names: tuple[str, str], arg: int) -> None:
    if a.dtype != b.dtype:
        raise TypeRelError(f"{names[0]} has dtype {a.dtype} but {names[1]} has dtype {b.dtype}",
                           arg=arg)


def broadcast(a: TensorType, b: TensorType, arg: int) -> tuple:
    """`broadcast_shapes` with the argument at fault attached to its error."""
    try:
        return broadcast_shapes(a.shape, b.shape)
    except TypeRelError as e:
        raise TypeRelError(e.message, arg=arg, dim=e.dim) from None


# ---------------------------------------------------------------- relations

def unary_rel(rule: DTypeRule = ANY_DTYPE, result: str | None = None) -> Rel:
    """IdentityRel (result None: same dtype) or IdentityCompRel (result "bool")."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not is_known(args[0]):
            return None
        data = tensor(args, 0, "data")
        check_dtype(data, rule, "data", 0)
        return TensorType(data.shape, result or data.dtype)
    return rel


def binary_rel(rule: DTypeRule = ANY_DTYPE, result: str | None = None) -> Rel:
    """BroadcastRel (result None: the operands' dtype) or BroadcastCompRel ("bool")."""
    def rel(args: list[Type], attrs: Any) -> Type | None:
        if not (is_known(args[0]) and is_known(args[1])):
            return None
        lhs, rhs = tensor(args, 0, "lhs"), tensor(args, 1, "rhs")
        same_dtype(lhs, rhs, ("lhs", "rhs"), 1)
        check_dtype(lhs, rule, "lhs", 0)
        return TensorType(broadcast(lhs, rhs, 1), result or lhs.dtype)
    return rel


def where_rel(args: list[Type], attrs: Any) -> Type | None:
    """WhereRel: x and y of one dtype; condition, x and y broadcast together."""
    if not all(is_known(a) for a in args[:3]):
        return None
    cond, x, y = tensor(args, 0, "condition"), tensor(args, 1, "x"), tensor(args, 2, "y")
    check_dtype(cond, BOOL, "condition", 0)
    same_dtype(x, y, ("x", "y"), 2)
    xy = TensorType(broadcast(x, y, 2), x.dtype)
    return TensorType(broadcast(cond, xy, 0), x.dtype)


def _target_dtype(attrs: Any) -> str:
    dtype = canonical_dtype(attrs.dtype)
    if dtype is None:
        raise TypeRelError(f"`{attrs.dtype}` is not a dtype")
    return dtype


def cast_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastRel: the input's shape with attrs.dtype."""
    if not is_known(args[0]):
        return None
    return TensorType(tensor(args, 0, "data").shape, _target_dtype(attrs))


def reinterpret_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastRel, plus the size check TVM makes when lowering (tir reinterpret)."""
    if not is_known(args[0]):
        return None
    data, dtype = tensor(args, 0, "data"), _target_dtype(attrs)
    if dtype_bits(data.dtype) != dtype_bits(dtype):
        raise TypeRelError(f"cannot reinterpret {data.dtype} ({dtype_bits(data.dtype)} bits) "
                           f"as {dtype} ({dtype_bits(dtype)} bits)", arg=0)
    return TensorType(data.shape, dtype)


def cast_like_rel(args: list[Type], attrs: Any) -> Type | None:
    """CastLikeRel: the shape of `data`, the dtype of `dtype_like`."""
    if not (is_known(args[0]) and is_known(args[1])):
        return None
    data, like = tensor(args, 0, "data"), tensor(args, 1, "dtype_like")
    return TensorType(data.shape, like.dtype)


# ---------------------------------------------------------------- op tables

SAME = None
# name -> (dtype rule, result dtype); kernels: elemwise_kernels.UNARY
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

# name -> (dtype rule, result dtype); kernels: elemwise_kernels.BINARY
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

# Input names as TVM's RELAY_REGISTER_UNARY_OP / RELAY_REGISTER_BINARY_OP declare them.
UNARY_INPUTS, BINARY_INPUTS = ("data",), ("lhs", "rhs")

for _name, (_rule, _result) in UNARY.items():
    register_op(OpDef(_name, 1, type_rel=unary_rel(_rule, _result),
                      kernel=numpy_kernel("elemwise_kernels", _name), pattern=E,
                      input_names=UNARY_INPUTS))
for _name, (_rule, _result) in BINARY.items():
    register_op(OpDef(_name, 2, type_rel=binary_rel(_rule, _result),
                      kernel=numpy_kernel("elemwise_kernels", _name), pattern=B,
                      input_names=BINARY_INPUTS))

register_op(OpDef("where", 3, type_rel=where_rel,
                  kernel=numpy_kernel("elemwise_kernels", "where"), pattern=B,
                  input_names=("condition", "x", "y")))
register_op(OpDef("clip", 1, attrs=ClipAttrs, type_rel=unary_rel(),
                  kernel=numpy_kernel("elemwise_kernels", "clip"), pattern=E,
                  input_names=("data",)))
register_op(OpDef("cast", 1, attrs=CastAttrs, type_rel=cast_rel,
                  kernel=numpy_kernel("elemwise_kernels", "cast"), pattern=E,
                  input_names=("data",)))
register_op(OpDef("cast_like", 2, type_rel=cast_like_rel,
                  kernel=numpy_kernel("elemwise_kernels", "cast_like"), pattern=E,
                  input_names=("data", "dtype_like")))
register_op(OpDef("reinterpret", 1, attrs=CastAttrs, type_rel=reinterpret_rel,
                  kernel=numpy_kernel("elemwise_kernels", "reinterpret"), pattern=E,
                  input_names=("data",)))
