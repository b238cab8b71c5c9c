"""NumPy reference kernels of the nn family (registered with `@implement`): the dense
layers, activations and normalisations here; the convolutions in `conv_kernels.py` and
padding and resampling in `resample_kernels.py`, which this module imports.

Semantics follow TVM: dense/matmul/batch_matmul compute in out_dtype (topi
nn/dense.h, batch_matmul.h); the normalisations are the decompositions of
src/relay/transforms/simplify_inference.cc (batch_norm scales by
gamma / sqrt(var + eps) and returns the moving mean and variance unchanged;
group_norm reduces over the channels of a group and every later axis); lrn and
l2_normalize follow topi's local_response_norm.h and l2_normalize.h.

Float16 inputs of the products, activations and normalisations are computed in
float32 and rounded once (`float16=IN_FLOAT32`; numpy_support.float16_in_float32 says
what that means: a float32 accumulator for dense, matmul and batch_matmul).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..fast_math_kernels import fast_exp
from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from . import conv_kernels, resample_kernels  # noqa: F401  (they register their kernels)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _along(v: np.ndarray, axis: int, rank: int) -> np.ndarray:
    """A channel vector shaped to broadcast along `axis` of a rank-`rank` tensor."""
    shape = [1] * rank
    shape[axis] = -1
    return v.reshape(shape)


# ------------------------------------------------------------ dense layers

@implement("nn.dense", float16=IN_FLOAT32)
def dense(inputs: list, attrs: Any) -> np.ndarray:
    data, weight = inputs
    dtype = attrs.out_dtype or data.dtype
    return np.matmul(data.astype(dtype, copy=False), weight.astype(dtype, copy=False).T)


@implement("nn.matmul", float16=IN_FLOAT32)
def matmul(inputs: list, attrs: Any) -> np.ndarray:
    a, b = inputs
    dtype = attrs.out_dtype or a.dtype
    a = np.swapaxes(a, -1, -2) if attrs.transpose_a else a
    b = b.T if attrs.transpose_b else b
    return np.matmul(a.astype(dtype, copy=False), b.astype(dtype, copy=False))


@implement("nn.batch_matmul", float16=IN_FLOAT32)
def batch_matmul(inputs: list, attrs: Any) -> np.ndarray:
    x, y = inputs
    dtype = attrs.out_dtype or x.dtype
    x = x.transpose(0, 2, 1) if attrs.transpose_a else x
    y = y.transpose(0, 2, 1) if attrs.transpose_b else y
    return np.matmul(x.astype(dtype, copy=False), y.astype(dtype, copy=False))


@implement("nn.bias_add")
def bias_add(inputs: list, attrs: Any) -> np.ndarray:
    data, bias = inputs
    out = data + _along(bias, _axis(attrs.axis, data.ndim), data.ndim)
    return out.astype(data.dtype, copy=False)


# ------------------------------------------------------------ activations

@implement("nn.relu", float16=IN_FLOAT32)
def relu(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return np.maximum(x, np.zeros((), x.dtype))


@implement("nn.leaky_relu", float16=IN_FLOAT32)
def leaky_relu(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return np.where(x > 0, x, x * attrs.alpha).astype(x.dtype)


@implement("nn.prelu", float16=IN_FLOAT32)
def prelu(inputs: list, attrs: Any) -> np.ndarray:
    x, alpha = inputs
    a = _along(alpha, _axis(attrs.axis, x.ndim), x.ndim)
    return np.where(x > 0, x, x * a).astype(x.dtype)


@implement("nn.softmax", float16=IN_FLOAT32)
def softmax(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    e = np.exp(x - x.max(axis=attrs.axis, keepdims=True))
    return (e / e.sum(axis=attrs.axis, keepdims=True)).astype(x.dtype, copy=False)


@implement("nn.fast_softmax", bfloat16=softmax)   # TVM's fast_exp: exact for bfloat16
def fast_softmax(inputs: list, attrs: Any) -> np.ndarray:
    """softmax with TVM's fast_exp approximation (float32; other dtypes exact), as
    topi's fast_softmax computes it."""
    x = inputs[0]
    e = fast_exp(x - x.max(axis=attrs.axis, keepdims=True))
    return (e / e.sum(axis=attrs.axis, keepdims=True)).astype(x.dtype, copy=False)


@implement("nn.log_softmax", float16=IN_FLOAT32)
def log_softmax(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    shifted = x - x.max(axis=attrs.axis, keepdims=True)
    return (shifted - np.log(np.exp(shifted).sum(axis=attrs.axis, keepdims=True))) \
        .astype(x.dtype)


@implement("nn.dropout")
def dropout(inputs: list, attrs: Any) -> tuple:
    """Inference semantics (TVM removes dropout before running): the input, and a mask
    of ones."""
    x = inputs[0]
    return x.copy(), np.ones_like(x)


@implement("nn.batch_flatten")
def batch_flatten(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return x.reshape(x.shape[0], math.prod(x.shape[1:]))


# ------------------------------------------------------------ normalisation

@implement("nn.batch_norm", float16=IN_FLOAT32)
def batch_norm(inputs: list, attrs: Any) -> tuple:
    x, gamma, beta, mean, var = inputs
    axis = _axis(attrs.axis, x.ndim)
    scale = 1 / np.sqrt(var + np.asarray(attrs.epsilon, var.dtype))
    if attrs.scale:
        scale = scale * gamma
    shift = -mean * scale
    if attrs.center:
        shift = shift + beta
    out = x * _along(scale, axis, x.ndim) + _along(shift, axis, x.ndim)
    return out.astype(x.dtype), mean.copy(), var.copy()


def _normalize(x: np.ndarray, axes: tuple[int, ...], epsilon: float) -> np.ndarray:
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    return (x - mean) / np.sqrt(var + np.asarray(epsilon, x.dtype))


def _affine(out: np.ndarray, gamma: np.ndarray, beta: np.ndarray, axis: int, attrs: Any,
            dtype: np.dtype) -> np.ndarray:
    if attrs.scale:
        out = out * _along(gamma, axis, out.ndim)
    if attrs.center:
        out = out + _along(beta, axis, out.ndim)
    return out.astype(dtype)


@implement("nn.layer_norm", float16=IN_FLOAT32)
def layer_norm(inputs: list, attrs: Any) -> np.ndarray:
    x, gamma, beta = inputs
    axis = _axis(attrs.axis, x.ndim)
    return _affine(_normalize(x, (axis,), attrs.epsilon), gamma, beta, axis, attrs, x.dtype)


@implement("nn.instance_norm", float16=IN_FLOAT32)
def instance_norm(inputs: list, attrs: Any) -> np.ndarray:
    x, gamma, beta = inputs
    axis = _axis(attrs.axis, x.ndim)
    axes = tuple(k for k in range(1, x.ndim) if k != axis)
    return _affine(_normalize(x, axes, attrs.epsilon), gamma, beta, axis, attrs, x.dtype)


@implement("nn.group_norm", float16=IN_FLOAT32)
def group_norm(inputs: list, attrs: Any) -> np.ndarray:
    x, gamma, beta = inputs
    axis, g = _axis(attrs.axis, x.ndim), attrs.num_groups
    grouped = x.reshape(x.shape[:axis] + (g, x.shape[axis] // g) + x.shape[axis + 1:])
    out = _normalize(grouped, tuple(range(axis + 1, x.ndim + 1)), attrs.epsilon)
    return _affine(out.reshape(x.shape), gamma, beta, axis, attrs, x.dtype)


@implement("nn.lrn", float16=IN_FLOAT32)
def lrn(inputs: list, attrs: Any) -> np.ndarray:
    """x / (bias + alpha * window_sum(x^2) / size) ^ beta, the window of `size` entries
    along `axis` starting size // 2 before each position (zero outside)."""
    x = inputs[0]
    axis, size = _axis(attrs.axis, x.ndim), attrs.size
    pads = [(0, 0)] * x.ndim
    pads[axis] = (size // 2, size - 1 - size // 2)
    windows = sliding_window_view(np.pad(x * x, pads), size, axis=axis)
    sqr_sum = windows.sum(axis=-1)
    return (x / (attrs.bias + attrs.alpha * sqr_sum / size) ** attrs.beta).astype(x.dtype)


@implement("nn.l2_normalize", float16=IN_FLOAT32)
def l2_normalize(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    axes = tuple(attrs.axis) if attrs.axis else None
    norm = np.sqrt(np.maximum((x * x).sum(axis=axes, keepdims=True),
                              np.asarray(attrs.eps, x.dtype)))
    return (x / norm).astype(x.dtype)


# ------------------------------------------------------------ losses (TVM's _nn.py computes)

@implement("nn.cross_entropy", float16=IN_FLOAT32)
def cross_entropy(inputs: list, attrs: Any) -> np.ndarray:
    """-sum(log(x) * y) / batch."""
    x, y = inputs
    return np.asarray(-(np.log(x) * y).sum() / x.shape[0], dtype=x.dtype)


@implement("nn.cross_entropy_with_logits", float16=IN_FLOAT32)
def cross_entropy_with_logits(inputs: list, attrs: Any) -> np.ndarray:
    """-sum(x * y) / batch (x: log-probabilities, as log_softmax makes them)."""
    x, y = inputs
    return np.asarray(-(x * y).sum() / x.shape[0], dtype=x.dtype)


@implement("nn.nll_loss", float16=IN_FLOAT32)
def nll_loss(inputs: list, attrs: Any) -> np.ndarray:
    """topi's nll_loss: -predictions[n, t, ..] * weights[t] per target t (0 where t is
    ignore_index); "mean" divides the sum by the sum of those weights."""
    pred, targets, weights = inputs
    t = targets.astype(np.int64)
    valid = t != attrs.ignore_index
    safe = np.where(valid, t, 0)
    if pred.ndim == 1:
        picked = pred[safe]
    else:
        picked = np.take_along_axis(pred, np.expand_dims(safe, 1), axis=1).squeeze(1)
    w = np.where(valid, weights[safe], 0)
    loss = np.where(valid, -picked * w, 0)
    if attrs.reduction == "none":
        return loss.astype(pred.dtype)
    if attrs.reduction == "sum":
        return np.asarray(loss.sum(), dtype=pred.dtype)
    return np.asarray(loss.sum() / w.sum(), dtype=pred.dtype)
