"""Type relations of the dense layers, activations and normalisations of `nn.py`.

Mirrors TVM's src/relay/op/nn/nn.cc and nn.h: MatmulRel (dense is matmul with a
transposed (units, in) weight), BatchMatmulRel, BiasAddRel, PReluRel,
DropoutRel, BatchFlattenRel, BatchNormRel (a 3-tuple: output, mean, variance),
LayerNormRel, GroupNormRel, InstanceNormRel, the identity relations of
relu, leaky_relu, softmax, lrn and l2_normalize, and the losses' CrossEntropyRel and
NLLLossRel.
"""
from __future__ import annotations

from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, dim_str, is_known, shape_str, tensor
from ..shape_rules import (
    all_known,
    axis_of,
    dim_prod,
    expect_dim,
    expect_rank,
    ints,
    is_int,
    out_dtype,
)

# ------------------------------------------------------------ dense layers

def dense_rel(args: list[Type], attrs: Any) -> Type | None:
    """data (..., in) x weight (units, in) -> (..., units)."""
    if not all_known(args[:2]):
        return None
    data, weight = tensor(args, 0, "data"), tensor(args, 1, "weight")
    if not data.shape:
        raise TypeRelError("data must have rank 1 or more, got a scalar", arg=0)
    expect_rank(weight, 2, "weight", 1)
    last = len(data.shape) - 1
    expect_dim(data.shape[last], weight.shape[1],
               f"input has {dim_str(data.shape[last])} features (dimension {last}) but weight "
               f"has {dim_str(weight.shape[1])} (dimension 1)", arg=1, dim=1)
    units = weight.shape[0]
    if attrs.units is not None:
        expect_dim(units, attrs.units, f"units is {dim_str(attrs.units)} but weight has "
                   f"{dim_str(units)} rows (dimension 0)", arg=1, dim=0)
        units = attrs.units if not is_int(units) else units
    return TensorType(data.shape[:last] + (units,), out_dtype(attrs.out_dtype, data.dtype))


def matmul_rel(args: list[Type], attrs: Any) -> Type | None:
    """tensor_a (..., M, K) (or (..., K, M) with transpose_a) x tensor_b (K, N) (or (N, K)
    with transpose_b) -> (..., M, N)."""
    if not all_known(args[:2]):
        return None
    a, b = tensor(args, 0, "tensor_a"), tensor(args, 1, "tensor_b")
    expect_rank(b, 2, "tensor_b", 1)
    if len(a.shape) < (2 if attrs.transpose_a else 1):
        raise TypeRelError(f"tensor_a has rank {len(a.shape)}, too small for matmul", arg=0)
    ka = len(a.shape) - (2 if attrs.transpose_a else 1)
    kb = 1 if attrs.transpose_b else 0
    expect_dim(a.shape[ka], b.shape[kb],
               f"tensor_a has {dim_str(a.shape[ka])} in its reduction dimension {ka} but "
               f"tensor_b has {dim_str(b.shape[kb])} (dimension {kb})", arg=1, dim=kb)
    shape = list(a.shape)
    if attrs.transpose_a:
        shape[-2] = a.shape[-1]
    n = b.shape[1 - kb]
    if attrs.units is not None:
        expect_dim(n, attrs.units, f"units is {dim_str(attrs.units)} but tensor_b has "
                   f"{dim_str(n)} (dimension {1 - kb})", arg=1, dim=1 - kb)
    shape[-1] = n
    return TensorType(tuple(shape), out_dtype(attrs.out_dtype, a.dtype))


def batch_matmul_rel(args: list[Type], attrs: Any) -> Type | None:
    """x (B, M, K) x y (B, K, N) (each transposable); a batch of 1 broadcasts."""
    if not all_known(args[:2]):
        return None
    x, y = tensor(args, 0, "x"), tensor(args, 1, "y")
    expect_rank(x, 3, "x", 0)
    expect_rank(y, 3, "y", 1)
    xb, xi, xk = (x.shape[0], x.shape[2], x.shape[1]) if attrs.transpose_a else x.shape
    yb, yk, yj = (y.shape[0], y.shape[2], y.shape[1]) if attrs.transpose_b else y.shape
    if is_int(xb) and is_int(yb) and xb != yb and 1 not in (xb, yb):
        raise TypeRelError(f"batch dimensions do not match: x has {xb}, y has {yb}", arg=1, dim=0)
    expect_dim(xk, yk, f"x has {dim_str(xk)} in its reduction dimension but y has "
               f"{dim_str(yk)} (x shape {shape_str(x.shape)}, y shape {shape_str(y.shape)})",
               arg=1)
    batch = max(xb, yb) if is_int(xb) and is_int(yb) else ANY
    return TensorType((batch, xi, yj), out_dtype(attrs.out_dtype, x.dtype))


def channel_vector(args: list[Type], i: int, name: str, size: Any, axis: int) -> None:
    """Argument i must be a 1-d vector with one entry per channel (data axis `axis`)."""
    t = tensor(args, i, name)
    expect_rank(t, 1, name, i)
    expect_dim(t.shape[0], size, f"{name} has {dim_str(t.shape[0])} entries but data has "
               f"{dim_str(size)} along axis {axis}", arg=i, dim=0)


def bias_add_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    axis = axis_of(attrs.axis, len(data.shape))
    channel_vector(args, 1, "bias", data.shape[axis], axis)
    return data


# ------------------------------------------------------------ activations

def identity_rel(args: list[Type], attrs: Any) -> Type | None:
    """relu, leaky_relu, lrn: the result has the input's type."""
    if not is_known(args[0]):
        return None
    return tensor(args, 0, "data")


def axis_identity_rel(args: list[Type], attrs: Any) -> Type | None:
    """softmax, log_softmax, fast_softmax: the input's type; attrs.axis must fit."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    axis_of(attrs.axis, len(data.shape))
    return data


def l2_normalize_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    for a in ints(attrs.axis, "axis"):
        axis_of(a, len(data.shape))
    return data


def prelu_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    axis = axis_of(attrs.axis, len(data.shape))
    channel_vector(args, 1, "alpha", data.shape[axis], axis)
    return data


def dropout_rel(args: list[Type], attrs: Any) -> Type | None:
    """DropoutRel: (output, mask), both of the input's type."""
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    if not 0 <= attrs.rate < 1:
        raise TypeRelError(f"rate must be in [0, 1), got {attrs.rate}")
    return TupleType((data, data))


def batch_flatten_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    if not data.shape:
        raise TypeRelError("cannot flatten a scalar", arg=0)
    return TensorType((data.shape[0], dim_prod(data.shape[1:])), data.dtype)


# ------------------------------------------------------------ normalisation

def _channel_params(args: list[Type], names: tuple[str, ...], axis_attr: int,
                    first: int = 1) -> tuple[TensorType, int]:
    data = tensor(args, 0, "data")
    axis = axis_of(axis_attr, len(data.shape))
    for k, name in enumerate(names):
        channel_vector(args, first + k, name, data.shape[axis], axis)
    return data, axis


def batch_norm_rel(args: list[Type], attrs: Any) -> Type | None:
    """BatchNormRel: (normalised data, mean, variance), the vectors of data's dtype."""
    if not all_known(args[:5]):
        return None
    data, axis = _channel_params(args, ("gamma", "beta", "moving_mean", "moving_var"),
                                 attrs.axis)
    vec = TensorType((data.shape[axis],), data.dtype)
    return TupleType((data, vec, vec))


def layer_norm_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    return _channel_params(args, ("gamma", "beta"), attrs.axis)[0]


def instance_norm_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    return _channel_params(args, ("gamma", "beta"), attrs.axis)[0]


def group_norm_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:3]):
        return None
    data, axis = _channel_params(args, ("gamma", "beta"), attrs.axis)
    c, groups = data.shape[axis], attrs.num_groups
    if groups <= 0:
        raise TypeRelError(f"num_groups must be positive, got {groups}")
    if is_int(c) and c % groups:
        raise TypeRelError(f"data has {c} channels (axis {axis}), which num_groups={groups} "
                           "does not divide", arg=0, dim=axis)
    return data


def lrn_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    data = tensor(args, 0, "data")
    axis_of(attrs.axis, len(data.shape))
    if attrs.size <= 0:
        raise TypeRelError(f"size must be positive, got {attrs.size}")
    return data


# ------------------------------------------------------------ losses

def cross_entropy_rel(args: list[Type], attrs: Any) -> Type | None:
    """CrossEntropyRel: predictions and targets (batch, classes), the same shape; a scalar
    of the predictions' dtype (nn.cross_entropy and nn.cross_entropy_with_logits)."""
    if not all_known(args[:2]):
        return None
    x, y = tensor(args, 0, "x"), tensor(args, 1, "y")
    expect_rank(x, 2, "x", 0)
    expect_rank(y, 2, "y", 1)
    for d in (0, 1):
        expect_dim(y.shape[d], x.shape[d], f"x has shape {shape_str(x.shape)} but y has "
                   f"{shape_str(y.shape)}: they must be equal", arg=1, dim=d)
    if y.dtype != x.dtype:
        raise TypeRelError(f"x has dtype {x.dtype} but y has {y.dtype}: they must be equal",
                           arg=1)
    return TensorType((), x.dtype)


def nll_loss_rel(args: list[Type], attrs: Any) -> Type | None:
    """NLLLossRel: predictions (N, C, d..) of a float dtype, targets (N, d..) of an integer
    dtype, weights (C,) of the predictions' dtype; the loss per target (reduction "none")
    or a scalar ("mean", "sum")."""
    if not all_known(args[:3]):
        return None
    pred, targets, weights = (tensor(args, 0, "predictions"), tensor(args, 1, "targets"),
                              tensor(args, 2, "weights"))
    reduction_choice(attrs.reduction)
    if len(pred.shape) != len(targets.shape) + 1 or not pred.shape:
        raise TypeRelError(f"predictions {shape_str(pred.shape)} must have one more axis (the "
                           f"classes, axis 1) than targets {shape_str(targets.shape)}", arg=1)
    expect_rank(weights, 1, "weights", 2)
    classes = pred.shape[1] if len(pred.shape) > 1 else pred.shape[0]
    expect_dim(weights.shape[0], classes, f"weights has {dim_str(weights.shape[0])} values "
               f"but predictions have {dim_str(classes)} classes", arg=2, dim=0)
    rest = pred.shape[:1] + pred.shape[2:] if len(pred.shape) > 1 else ()
    for d, (a, b) in enumerate(zip(targets.shape, rest)):
        expect_dim(a, b, f"targets {shape_str(targets.shape)} do not match predictions "
                   f"{shape_str(pred.shape)} without their class axis", arg=1, dim=d)
    if not pred.dtype.startswith(("float", "bfloat")) or weights.dtype != pred.dtype:
        raise TypeRelError(f"predictions and weights must have the same float dtype, got "
                           f"{pred.dtype} and {weights.dtype}", arg=2)
    if not targets.dtype.startswith(("int", "uint")):
        raise TypeRelError(f"targets must be an integer tensor, got dtype {targets.dtype}",
                           arg=1)
    if attrs.reduction == "none":
        return TensorType(targets.shape, pred.dtype)
    return TensorType((), pred.dtype)


def reduction_choice(reduction: str) -> None:
    if reduction not in ("mean", "sum", "none"):
        raise TypeRelError(f"reduction must be one of mean, sum, none, got {reduction!r}")
