"""ONNX loss operators: NegativeLogLikelihoodLoss (opsets 12, 13, 22) and
SoftmaxCrossEntropyLoss (opsets 12, 13).

Both compute ONNX's formula over input (N, C, d1, ..., dk) and target (N, d1, ..., dk):

    loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]]   (0 where target == ignore_index)

with reduction "none" (that tensor), "sum" (its sum) or "mean" (its sum divided by the
sum of the weights of the non-ignored targets when a weight or an ignore_index is given,
else by the element count). SoftmaxCrossEntropyLoss applies it to log_softmax(input,
axis=1), its optional second output. The element is picked with `gather` along the class
axis (no reshape, so any rank works); targets are clamped into [0, C) before every
gather (ignored targets such as -1 must not index out of range; their loss is then
replaced by 0 with `where`), as ONNX's reference takes weights with mode="clip".
Only the class count C must be known at import.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

_REDUCTIONS = ("none", "sum", "mean")


def _scalar(ctx: Any, value: Any, dtype: str) -> Any:
    if dtype == "bfloat16":
        return op.cast(ctx.const(np.asarray(value, dtype=np.float32)), dtype="bfloat16")
    return ctx.const(np.asarray(value, dtype=np.dtype(dtype)))


def _nll(ctx: Any, node: Any, logp: Any) -> Any:
    """ONNX's negative log likelihood of `logp` (N, C, d...) at node input 1's targets,
    weighted by node input 2 and reduced as the node's `reduction` says."""
    target = node.inputs[1]
    weight = node.input(2)
    reduction = node.attr("reduction", "mean")
    if isinstance(reduction, bytes):
        reduction = reduction.decode()
    if reduction not in _REDUCTIONS:
        raise node.error(f"reduction {reduction!r} is not one of {_REDUCTIONS}")
    ignore_index = node.attr("ignore_index", None)
    x_shape, t_shape = tuple(ctx.shape(logp)), tuple(ctx.shape(target))
    if len(x_shape) < 2:
        raise node.error(f"input must have rank >= 2 (N, C, ...), got shape {x_shape}")
    if len(t_shape) != len(x_shape) - 1:
        raise node.error(f"target of shape {t_shape} does not match input of shape "
                         f"{x_shape} (expected (N, d1, ..., dk))")
    c = x_shape[1]
    if not isinstance(c, int):
        raise node.error("the class dimension C of the input must be known at import")
    dtype = ctx.dtype(logp)
    t_dtype = ctx.dtype(target)
    if t_dtype not in ("int32", "int64"):
        raise node.error(f"target must be int32 or int64, got {t_dtype}")

    def tconst(value: int) -> Any:
        return ctx.const(np.asarray(value, dtype=np.dtype(t_dtype)))

    index = op.minimum(op.maximum(target, tconst(0)), tconst(c - 1))
    picked = op.squeeze(op.gather(logp, op.expand_dims(index, axis=1), axis=1), axis=(1,))
    loss = op.negative(picked)
    zero = _scalar(ctx, 0, dtype)
    ignored = None
    if ignore_index is not None:
        ignored = op.equal(target, tconst(int(ignore_index)))
        loss = op.where(ignored, zero, loss)
    gathered_weight = None
    if weight is not None:
        w_shape = tuple(ctx.shape(weight))
        if len(w_shape) != 1 or (isinstance(w_shape[0], int) and w_shape[0] != c):
            raise node.error(f"weight must be 1-D of size C={c}")
        gathered_weight = op.take(weight, index, axis=0, mode="clip")
        if ignored is not None:
            gathered_weight = op.where(ignored, zero, gathered_weight)
    elif ignored is not None:
        gathered_weight = op.where(ignored, zero, _scalar(ctx, 1, dtype))
    if weight is not None:
        loss = op.multiply(gathered_weight, loss)
    if reduction == "none":
        return loss
    total = op.sum(loss)
    if reduction == "sum":
        return total
    if gathered_weight is None:
        return op.mean(loss)
    return op.divide(total, op.sum(gathered_weight))


def _outputs(node: Any, *values: Any) -> list[Any]:
    out = []
    for k, name in enumerate(node.outputs):
        out.append(values[k] if name and k < len(values) else None)
    return out


@converter("NegativeLogLikelihoodLoss", since=12)
def negative_log_likelihood_loss(ctx: Any, node: Any) -> Any:
    return _nll(ctx, node, node.inputs[0])


@converter("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy_loss(ctx: Any, node: Any) -> Any:
    log_prob = op.nn.log_softmax(node.inputs[0], axis=1)
    return _outputs(node, _nll(ctx, node, log_prob), log_prob)
