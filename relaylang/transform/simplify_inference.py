"""SimplifyInference: rewrite training-time ops into inference arithmetic
(TVM's src/relay/transforms/simplify_inference.cc).

  * `nn.batch_norm(%x, %g, %b, %m, %v).0` becomes `%x * scale + shift` with
    `scale = 1 / sqrt(%v + eps) * %g` and `shift = -%m * scale + %b`, both expanded
    along `axis` with `expand_dims` (FoldConstant folds them when the parameters are
    constants). `.1` and `.2` keep the original call: only field 0 is simplified.
  * `nn.layer_norm(%x, %g, %b)` becomes `(%x - mean) / sqrt(variance + eps) * %g + %b`.
  * `nn.dropout(%x).0` becomes `%x`.

    %1 = nn.batch_norm(%0, %g, %b, %m, %v);     %1 = add(%v, 1e-05f);
    %2 = %1.0;                         ==>      %2 = divide(1f, sqrt(%1));
    nn.relu(%2)                                 %3 = multiply(%2, %g);
                                                %4 = multiply(negative(%m), %3);
                                                %5 = add(%4, %b);
                                                nn.relu(add(multiply(%0, expand_dims(%3,
                                                  axis=1, num_newaxis=2)), expand_dims(...)))

The rewrite needs the rank and dtype of the data, so it runs InferType first when the
module is not typed (TVM lists InferType as required), and again on its result. Results agree with the ops'
kernels within float rounding: rtol=1e-5, atol=1e-6 (the golden runner's tolerance).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..ir.expr import Call, Constant, Expr, Function, Op, TupleGetItem
from ..ir.module import IRModule
from ..ir.traverse import rewrite
from ..ir.types import TensorType
from ..op import call as op_call
from ..op.numpy_support import np_dtype
from ..op.reduce import ReduceAttrs, VarianceAttrs
from ..op.tensor import CastAttrs
from ..op.transform import ExpandDimsAttrs
from .pass_infra import FunctionPass, PassContext, register_pass

# Relative and absolute tolerance within which simplified programs match the originals.
RTOL, ATOL = 1e-5, 1e-6


@register_pass
@dataclass(frozen=True)
class SimplifyInference(FunctionPass):
    """Replace batch_norm, layer_norm and dropout by their inference-time arithmetic."""

    name: ClassVar[str] = "SimplifyInference"
    opt_level: ClassVar[int] = 0
    # Typed afterwards too, so that the new nodes carry types like the old ones (and a
    # second run prints the same text).
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        out = rewrite(fn, _simplify)
        assert isinstance(out, Function)
        return out


def _simplify(old: Expr, new: Expr) -> Expr | None:
    if isinstance(new, TupleGetItem) and new.index == 0 and isinstance(new.tuple_value, Call):
        call = new.tuple_value
        if _is_op(call, "nn.dropout"):
            return call.args[0]
        if _is_op(call, "nn.batch_norm"):
            assert isinstance(old, TupleGetItem) and isinstance(old.tuple_value, Call)
            ty = _tensor_type(old.tuple_value.args[0])
            return None if ty is None else _batch_norm(call, ty)
    if isinstance(new, Call) and _is_op(new, "nn.layer_norm"):
        assert isinstance(old, Call)
        ty = _tensor_type(old.args[0])
        return None if ty is None else _layer_norm(new, ty)
    return None


def _is_op(call: Call, name: str) -> bool:
    return isinstance(call.op, Op) and call.op.name == name


def _tensor_type(e: Expr) -> TensorType | None:
    ty = e.checked_type
    return ty if isinstance(ty, TensorType) else None


def _scalar(value: float, dtype: str) -> Expr:
    """`value` as a 0-d constant of `dtype`; where NumPy has no such dtype (bfloat16,
    float8, int4, uint1, vector lanes), a float32 constant cast to it, as TVM's
    MakeConstantScalar converts the value."""
    try:
        return Constant(np.asarray(value, dtype=np_dtype(dtype)))
    except NotImplementedError:
        return op_call("cast", Constant(np.asarray(value, dtype="float32")),
                       attrs=CastAttrs(dtype=dtype))


def _expand_to_axis(bias: Expr, ndim: int, axis: int) -> Expr:
    """A 1-d `bias` along `axis` of an `ndim`-d tensor (TVM's ExpandBiasToMatchAxis)."""
    trailing = ndim - axis - 1
    if trailing <= 0:
        return bias
    return op_call("expand_dims", bias, attrs=ExpandDimsAttrs(axis=1, num_newaxis=trailing))


def _batch_norm(call: Call, ty: TensorType) -> Expr:
    data, gamma, beta, mean, var = call.args
    attrs: Any = call.attrs
    ndim = len(ty.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    # The same order of operations as the kernel (and TVM), so results round alike.
    scale: Expr = op_call("divide", _scalar(1.0, ty.dtype),
                          op_call("sqrt", op_call("add", var, _scalar(attrs.epsilon, ty.dtype))))
    if attrs.scale:
        scale = op_call("multiply", scale, gamma)
    shift: Expr = op_call("multiply", op_call("negative", mean), scale)
    if attrs.center:
        shift = op_call("add", shift, beta)
    out = op_call("multiply", data, _expand_to_axis(scale, ndim, axis))
    return op_call("add", out, _expand_to_axis(shift, ndim, axis))


def _layer_norm(call: Call, ty: TensorType) -> Expr:
    data, gamma, beta = call.args
    attrs: Any = call.attrs
    ndim = len(ty.shape)
    axis = attrs.axis + ndim if attrs.axis < 0 else attrs.axis
    mean = op_call("mean", data, attrs=ReduceAttrs(axis=(attrs.axis,), keepdims=True))
    var = op_call("variance", data, mean, attrs=VarianceAttrs(axis=(attrs.axis,), keepdims=True))
    denom = op_call("sqrt", op_call("add", var, _scalar(attrs.epsilon, ty.dtype)))
    out: Expr = op_call("divide", op_call("subtract", data, mean), denom)
    if attrs.scale:
        out = op_call("multiply", out, _expand_to_axis(gamma, ndim, axis))
    if attrs.center:
        out = op_call("add", out, _expand_to_axis(beta, ndim, axis))
    return out
