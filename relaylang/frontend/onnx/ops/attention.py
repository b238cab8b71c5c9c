"""ONNX Attention (opsets 23, 24, 25): scaled dot-product attention composed of
relaylang ops, computing the operator's own formula step by step:

    Q, K, V (3-D inputs split into q_num_heads / kv_num_heads heads: (B, S, H*D) ->
    (B, H, S, D)); K, V = concat(past, K/V) on the sequence axis (present_key/value);
    bias = attn_mask (bool: True -> 0, False -> -inf; padded with -inf/False to the kv
    length) + causal bias (query i attends key j iff j <= i + offset, offset = the past
    length, or nonpad_kv_seqlen - q_len per batch, else 0) + sliding window (opset 25)
    + padding bias from nonpad_kv_seqlen (opset 24);
    kv heads repeated (interleaved) for grouped-query attention;
    qk = (Q * sqrt(scale)) @ (K * sqrt(scale))^T  (sqrt(scale) in Q's dtype);
    softcap: softcap * tanh(qk / softcap); softmax(qk + bias) (in softmax_precision);
    rows whose bias is all -inf give 0 (ONNX's fully-masked-row rule); Y = P @ V.

The optional fourth output follows qk_matmul_output_mode: 0 the raw QK product, 1 after
softcap, 2 with the bias added, 3 the (guarded) softmax in Q's dtype.

Shapes of Q, K, V, the mask and the past tensors must be known at import (head splits,
the causal and window biases and the mask padding are built from them); the
run-time-valued nonpad_kv_seqlen is used as a tensor.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

_SOFTMAX_PRECISIONS = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}


def _scalar(ctx: Any, value: Any, dtype: str) -> Any:
    if dtype == "bfloat16":
        return op.cast(ctx.const(np.asarray(value, dtype=np.float32)), dtype="bfloat16")
    return ctx.const(np.asarray(value, dtype=np.dtype(dtype)))


def _static(ctx: Any, node: Any, expr: Any, what: str) -> tuple[int, ...]:
    shape = ctx.static_shape(expr)
    if shape is None:
        raise node.error(f"the shape of {what} must be known at import")
    return tuple(int(d) for d in shape)


def _batched_matmul(a: Any, b: Any, a_shape: tuple[int, ...],
                    b_shape: tuple[int, ...]) -> Any:
    """(B, H, M, K) @ (B, H, K, N) -> (B, H, M, N) with one batch_matmul."""
    bsz, heads, m, k = a_shape
    n = b_shape[3]
    out = op.nn.batch_matmul(op.reshape(a, newshape=(bsz * heads, m, k)),
                             op.reshape(b, newshape=(bsz * heads, k, n)),
                             transpose_a=False, transpose_b=False)
    return op.reshape(out, newshape=(bsz, heads, m, n))


def _split_heads(x: Any, shape: tuple[int, ...], heads: int, node: Any,
                 what: str) -> tuple[Any, tuple[int, ...]]:
    bsz, seq, hidden = shape
    if hidden % heads:
        raise node.error(f"{what}'s hidden size {hidden} is not a multiple of its "
                         f"{heads} heads")
    x = op.reshape(x, newshape=(bsz, seq, heads, hidden // heads))
    return op.transpose(x, axes=(0, 2, 1, 3)), (bsz, heads, seq, hidden // heads)


def _frontier(ctx: Any, q_len: int, kv_len: int, offset: Any, batch: int) -> Any:
    """i + offset - j for query i, key j: an int64 constant (q, kv) for an int offset,
    else (B, 1, q, kv) from the run-time (B,) offsets."""
    i = np.arange(q_len, dtype=np.int64).reshape(q_len, 1)
    j = np.arange(kv_len, dtype=np.int64).reshape(1, kv_len)
    if isinstance(offset, int):
        return ctx.const(i + offset - j)
    return op.add(op.reshape(offset, newshape=(batch, 1, 1, 1)), ctx.const(i - j))


def _allowed_to_bias(ctx: Any, allowed: Any, dtype: str) -> Any:
    return op.where(allowed, _scalar(ctx, 0, dtype), _scalar(ctx, -np.inf, dtype))


def _attention(ctx: Any, node: Any) -> Any:
    q, k, v = node.inputs[0], node.inputs[1], node.inputs[2]
    mask, past_k, past_v = node.input(3), node.input(4), node.input(5)
    nonpad = node.input(6) if node.opset >= 24 else None
    dtype = ctx.dtype(q)
    is_causal = int(node.attr("is_causal", 0))
    softcap = float(node.attr("softcap", 0.0))
    mode = int(node.attr("qk_matmul_output_mode", 0))
    scale = node.attr("scale", None)
    precision = node.attr("softmax_precision", None)
    q_heads, kv_heads = node.attr("q_num_heads", None), node.attr("kv_num_heads", None)
    left = int(node.attr("left_window_size", -1)) if node.opset >= 25 else -1
    right = int(node.attr("right_window_size", -1)) if node.opset >= 25 else -1
    if mode not in (0, 1, 2, 3):
        raise node.error(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    if left < -1 or right < -1:
        raise node.error("left_window_size/right_window_size must be -1 or >= 0")
    if precision is not None and int(precision) not in _SOFTMAX_PRECISIONS:
        raise node.error(f"softmax_precision {precision} is not supported")
    if (past_k is None) != (past_v is None):
        raise node.error("past_key and past_value must be given together")
    if nonpad is not None and past_k is not None:
        raise node.error("nonpad_kv_seqlen cannot be combined with past_key/past_value")
    if ctx.dtype(k) != dtype or ctx.dtype(v) != dtype:
        raise node.error("Q, K and V must have one dtype")

    q_shape = _static(ctx, node, q, "Q")
    k_shape = _static(ctx, node, k, "K")
    v_shape = _static(ctx, node, v, "V")
    rank = len(q_shape)
    if rank not in (3, 4) or len(k_shape) != rank or len(v_shape) != rank:
        raise node.error(f"Q, K, V must all be 3-D or all 4-D, got {q_shape}, {k_shape}, "
                         f"{v_shape}")
    if rank == 3:
        if q_heads is None or kv_heads is None:
            raise node.error("3-D inputs need the q_num_heads and kv_num_heads attributes")
        q, q_shape = _split_heads(q, q_shape, int(q_heads), node, "Q")
        k, k_shape = _split_heads(k, k_shape, int(kv_heads), node, "K")
        v, v_shape = _split_heads(v, v_shape, int(kv_heads), node, "V")
    elif node.opset >= 25 and (q_heads is not None or kv_heads is not None):
        raise node.error("q_num_heads and kv_num_heads must not be given for 4-D inputs")
    bsz, hq, q_len, head = q_shape
    if k_shape[0] != bsz or v_shape[0] != bsz or k_shape[1] != v_shape[1]:
        raise node.error(f"K {k_shape} and V {v_shape} do not match Q {q_shape}")
    if k_shape[3] != head:
        raise node.error(f"K's head size {k_shape[3]} differs from Q's {head}")

    # scale: sqrt of it on Q and on K, in Q's dtype
    scale = 1.0 / math.sqrt(head) if scale is None else float(scale)
    sqrt_scale = _scalar(ctx, np.sqrt(np.float64(scale)), dtype)

    # KV cache
    if past_k is not None:
        pk_shape = _static(ctx, node, past_k, "past_key")
        pv_shape = _static(ctx, node, past_v, "past_value")
        if len(pk_shape) != 4 or len(pv_shape) != 4:
            raise node.error("past_key and past_value must be 4-D")
        k = op.concatenate([past_k, k], axis=2)
        v = op.concatenate([past_v, v], axis=2)
        k_shape = k_shape[:2] + (pk_shape[2] + k_shape[2], k_shape[3])
        v_shape = v_shape[:2] + (pv_shape[2] + v_shape[2], v_shape[3])
    present_k, present_v = k, v
    kv_len = k_shape[2]
    if v_shape[2] != kv_len:
        raise node.error("K and V have different sequence lengths")

    # the additive bias
    zeros = ctx.const(np.zeros((q_len, kv_len), dtype=np.float32))
    zeros = op.cast(zeros, dtype=dtype) if dtype != "float32" else zeros
    bias = None                          # None: all zeros (q, kv)
    can_mask = False                     # whether the bias may hold -inf
    if mask is not None:
        m_shape = _static(ctx, node, mask, "attn_mask")
        m_dtype = ctx.dtype(mask)
        if m_dtype != "bool" and m_dtype != dtype:
            raise node.error(f"attn_mask must be bool or {dtype}, got {m_dtype}")
        if not m_shape:
            raise node.error("attn_mask must have rank >= 1")
        pad = kv_len - m_shape[-1]
        if pad > 0:
            fill_shape = m_shape[:-1] + (pad,)
            if m_dtype == "bool":
                fill = ctx.const(np.zeros(fill_shape, dtype=np.bool_))
            else:
                fill = ctx.const(np.full(fill_shape, -np.inf, dtype=np.float32))
                fill = op.cast(fill, dtype=dtype) if dtype != "float32" else fill
            mask = op.concatenate([mask, fill], axis=len(m_shape) - 1)
        elif pad < 0:
            raise node.error(f"attn_mask's last dim {m_shape[-1]} exceeds the kv length "
                             f"{kv_len}")
        if m_dtype == "bool":
            mask = _allowed_to_bias(ctx, mask, dtype)
        bias = mask if is_causal else op.add(zeros, mask)
        can_mask = True
    if nonpad is not None:
        nonpad_shape = _static(ctx, node, nonpad, "nonpad_kv_seqlen")
        if nonpad_shape != (bsz,):
            raise node.error(f"nonpad_kv_seqlen must have shape ({bsz},)")
        nonpad = op.cast(nonpad, dtype="int64") if ctx.dtype(nonpad) != "int64" else nonpad
        offset: Any = op.subtract(nonpad, ctx.const(np.asarray(q_len, dtype=np.int64)))
    else:
        offset = 0 if past_k is None else pk_shape[2]
    windowed = left >= 0 or right >= 0
    if is_causal:
        base = zeros if bias is None else bias
        if windowed:
            base = op.add(zeros, base)
        diff = _frontier(ctx, q_len, kv_len, offset, bsz)
        allowed = op.greater_equal(diff, ctx.const(np.asarray(0, dtype=np.int64)))
        bias = op.add(base, _allowed_to_bias(ctx, allowed, dtype))
        can_mask = True
    if windowed:
        base = zeros if bias is None else op.add(zeros, bias)
        diff = _frontier(ctx, q_len, kv_len, offset, bsz)
        allowed = None
        if left >= 0:
            allowed = op.less_equal(diff, ctx.const(np.asarray(left, dtype=np.int64)))
        if right >= 0:
            r = op.less_equal(op.negative(diff), ctx.const(np.asarray(right, dtype=np.int64)))
            allowed = r if allowed is None else op.logical_and(allowed, r)
        bias = op.add(base, _allowed_to_bias(ctx, allowed, dtype))
        can_mask = True
    if nonpad is not None:
        keys = ctx.const(np.arange(kv_len, dtype=np.int64).reshape(1, 1, 1, kv_len))
        valid = op.less(keys, op.reshape(nonpad, newshape=(bsz, 1, 1, 1)))
        base = zeros if bias is None else bias
        bias = op.add(base, _allowed_to_bias(ctx, valid, dtype))
        can_mask = True

    # grouped-query attention: repeat each kv head
    hk = k_shape[1]
    if hq != hk:
        if hq % hk:
            raise node.error(f"q heads {hq} are not a multiple of kv heads {hk}")
        reps = hq // hk
        k = op.repeat(k, repeats=reps, axis=1)
        v = op.repeat(v, repeats=reps, axis=1)
        k_shape = (bsz, hq) + k_shape[2:]
        v_shape = (bsz, hq) + v_shape[2:]

    kt = op.transpose(op.multiply(k, sqrt_scale), axes=(0, 1, 3, 2))
    qk = _batched_matmul(op.multiply(q, sqrt_scale), kt, q_shape,
                            (bsz, hq, head, kv_len))
    raw = qk
    if softcap > 0:
        cap = _scalar(ctx, softcap, dtype)
        qk = op.multiply(op.tanh(op.divide(qk, cap)), cap)
    with_bias = qk if bias is None else op.add(qk, bias)
    logits = with_bias
    soft_dtype = _SOFTMAX_PRECISIONS[int(precision)] if precision is not None else dtype
    if soft_dtype != dtype:
        logits = op.cast(logits, dtype=soft_dtype)
    probs = op.nn.softmax(logits, axis=-1)
    if can_mask:
        row_max = op.max(bias, axis=(-1,), keepdims=True)
        all_masked = op.equal(row_max, _scalar(ctx, -np.inf, dtype))
        probs = op.where(all_masked, _scalar(ctx, 0, soft_dtype), probs)
    if soft_dtype != dtype:
        probs = op.cast(probs, dtype=dtype)
    y = _batched_matmul(probs, v, (bsz, hq, q_len, kv_len), v_shape)
    if rank == 3:
        y = op.reshape(op.transpose(y, axes=(0, 2, 1, 3)),
                       newshape=(bsz, q_len, hq * v_shape[3]))
    qk_out = {0: raw, 1: qk, 2: with_bias, 3: probs}[mode]
    values = (y, present_k, present_v, qk_out)
    out = []
    for idx, name in enumerate(node.outputs):
        if idx >= 4:
            raise node.error("Attention has at most 4 outputs")
        out.append(values[idx] if name else None)
    return out


@converter("Attention", since=23)      # 24 and 25 add inputs and attributes: `node.opset`
def attention(ctx: Any, node: Any) -> Any:
    return _attention(ctx, node)
