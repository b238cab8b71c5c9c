"""Converters of ONNX's training optimisers (domain ai.onnx.preview.training): Momentum,
Adagrad, Adam. Each updates n tensors at once: inputs R (learning rate, a scalar),
T (the update count, an int64 scalar), then n X, n G (gradients) and the n states
(V, H); outputs the n new X, then the new states. The formulas are the specification's,
elementwise in the tensors' dtype; where they depend on T (first step, bias correction)
the choice is a `where` on T > 0, so T may be a run-time value.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

DOMAIN = "ai.onnx.preview.training"


def _groups(node: Any, states: int) -> list[list[Any]]:
    """[[x_k, g_k, state_k...] for each of the n tensors] from the node's inputs."""
    rest = node.inputs[2:]
    width = 2 + states
    if not rest or len(rest) % width:
        raise node.error(f"expects R, T and {width} inputs per optimised tensor "
                         f"(X, G and {states} state(s)), got {len(node.inputs)} inputs")
    n = len(rest) // width
    if any(e is None for e in rest):
        raise node.error("no input after T may be omitted")
    return [[rest[j * n + k] for j in range(width)] for k in range(n)]


def _scalar(ctx: Any, value: float, like: Any) -> Any:
    return ctx.const(np.asarray(value, ctx.dtype(like)))


def _in(ctx: Any, node: Any, i: int, like: Any) -> Any:
    """Input `i` (R or T) as a scalar in the dtype of `like`."""
    e = node.inputs[i]
    if ctx.shape(e) not in ((), (1,)):
        raise node.error(f"input {i} must be a scalar, got shape {ctx.shape(e)}")
    e = op.reshape(e, newshape=()) if ctx.shape(e) else e
    return e if ctx.dtype(e) == ctx.dtype(like) else op.cast(e, dtype=ctx.dtype(like))


def _first_step(ctx: Any, node: Any) -> Any:
    """T > 0 (a bool scalar): false on the first update."""
    t = node.inputs[1]
    t = op.reshape(t, newshape=()) if ctx.shape(t) else t
    return op.greater(t, ctx.const(np.asarray(0, ctx.dtype(t))))


def _regularised(ctx: Any, node: Any, x: Any, g: Any) -> Any:
    norm = float(node.attr("norm_coefficient", 0.0))
    return op.add(op.multiply(_scalar(ctx, norm, x), x), g)


@converter("Momentum", since=1, domain=DOMAIN)
def momentum(ctx: Any, node: Any) -> Any:
    mode = node.attr("mode")
    if mode not in ("standard", "nesterov"):
        raise node.error(f"mode {mode!r} is not standard or nesterov")
    alpha, beta = float(node.attr("alpha")), float(node.attr("beta"))
    later = _first_step(ctx, node)
    xs, vs = [], []
    for x, g, v in _groups(node, 1):
        r = _in(ctx, node, 0, x)
        gr = _regularised(ctx, node, x, g)
        beta_t = op.where(later, _scalar(ctx, beta, x), _scalar(ctx, 1.0, x))
        v_new = op.add(op.multiply(_scalar(ctx, alpha, x), v), op.multiply(beta_t, gr))
        step = v_new if mode == "standard" else \
            op.add(gr, op.multiply(_scalar(ctx, alpha, x), v_new))
        xs.append(op.subtract(x, op.multiply(r, step)))
        vs.append(v_new)
    return xs + vs


@converter("Adagrad", since=1, domain=DOMAIN)
def adagrad(ctx: Any, node: Any) -> Any:
    decay = float(node.attr("decay_factor", 0.0))
    eps = float(node.attr("epsilon", 1e-6))
    xs, hs = [], []
    for x, g, h in _groups(node, 1):
        r = _in(ctx, node, 0, x)
        t = _in(ctx, node, 1, x)
        rate = op.divide(r, op.add(_scalar(ctx, 1.0, x),
                                   op.multiply(t, _scalar(ctx, decay, x))))
        gr = _regularised(ctx, node, x, g)
        h_new = op.add(h, op.multiply(gr, gr))
        scale = op.add(op.sqrt(h_new), _scalar(ctx, eps, x))
        xs.append(op.subtract(x, op.divide(op.multiply(rate, gr), scale)))
        hs.append(h_new)
    return xs + hs


@converter("Adam", since=1, domain=DOMAIN)
def adam(ctx: Any, node: Any) -> Any:
    alpha = float(node.attr("alpha", 0.9))
    beta = float(node.attr("beta", 0.999))
    eps = float(node.attr("epsilon", 1e-6))
    post = float(node.attr("norm_coefficient_post", 0.0))
    later = _first_step(ctx, node)
    xs, vs, hs = [], [], []
    for x, g, v, h in _groups(node, 2):
        r = _in(ctx, node, 0, x)
        t = _in(ctx, node, 1, x)
        gr = _regularised(ctx, node, x, g)
        v_new = op.add(op.multiply(_scalar(ctx, alpha, x), v),
                       op.multiply(_scalar(ctx, 1 - alpha, x), gr))
        h_new = op.add(op.multiply(_scalar(ctx, beta, x), h),
                       op.multiply(_scalar(ctx, 1 - beta, x), op.multiply(gr, gr)))
        h_sqrt = op.add(op.sqrt(h_new), _scalar(ctx, eps, x))
        # bias correction from the second update on: r * sqrt(1 - beta^T) / (1 - alpha^T)
        one = _scalar(ctx, 1.0, x)
        corrected = op.divide(
            op.multiply(r, op.sqrt(op.subtract(one, op.power(_scalar(ctx, beta, x), t)))),
            op.subtract(one, op.power(_scalar(ctx, alpha, x), t)))
        rate = op.where(later, corrected, r)
        x_new = op.subtract(x, op.multiply(rate, op.divide(v_new, h_sqrt)))
        xs.append(op.multiply(_scalar(ctx, 1 - post, x), x_new))
        vs.append(v_new)
        hs.append(h_new)
    return xs + vs + hs
