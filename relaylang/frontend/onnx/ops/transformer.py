"""Recent ONNX operators of the transformer family, composed of relaylang ops step by
step as ONNX's reference implementation (onnx/reference/ops) computes them:

- RotaryEmbedding (23): rotate the first `rotary_embedding_dim` features of each head by
  cos/sin caches (gathered by position_ids when given), halves or interleaved pairs.
- SwiGLU (28): Y = A * Sigmoid(alpha * A) * B (Swish of the gate times the value).
- CausalConvWithState (27): depthwise conv1d over concat(past_state or zeros, input),
  optional bias and SiLU (in float32); present_state = the last k-1 padded positions.
- LinearAttention (27): the recurrence (linear, gated, delta, gated_delta) unrolled over
  the (static) sequence length in float32 (a few ops per token: the graph grows with
  the length), GQA by repeating the state at read time.
- ai.onnx.preview.FlexAttention (1): (Q*sqrt(s)) @ (K*sqrt(s))^T, cast to the softmax
  precision, score_mod subgraph, softmax, prob_mod subgraph, @ V, cast to V's dtype.
- BitCast (26): the bits as another dtype of the same width (`reinterpret`; bool, one
  byte in ONNX, to and from 8-bit integers by value, which keeps the byte).

Shapes must be known at import where the computation is built from them (head splits,
rotary dims, kernel sizes, the recurrence's length).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ....ir.dtype import dtype_bits
from ....op import make as op
from ..registry import converter

_FLOATS = ("float16", "bfloat16", "float32", "float64")


def _static(ctx: Any, node: Any, expr: Any, what: str) -> tuple[int, ...]:
    shape = ctx.static_shape(expr)
    if shape is None:
        raise node.error(f"the shape of {what} must be known at import")
    return tuple(int(d) for d in shape)


def _scalar(ctx: Any, value: float, dtype: str) -> Any:
    """A scalar constant of `dtype` (bfloat16 through float32)."""
    if dtype == "bfloat16":
        return op.cast(ctx.const(np.asarray(value, dtype=np.float32)), dtype="bfloat16")
    return ctx.const(np.asarray(value, dtype=np.dtype(dtype)))


def _cast(x: Any, src: str, dst: str) -> Any:
    return x if src == dst else op.cast(x, dtype=dst)


def _slice(x: Any, axis: int, begin: int, end: int, stride: int = 1) -> Any:
    return op.strided_slice(x, begin=(begin,), end=(end,), strides=(stride,), axes=(axis,))


def _bmm(a: Any, b: Any, batch: tuple[int, ...], m: int, k: int, n: int) -> Any:
    """(*batch, m, k) @ (*batch, k, n) -> (*batch, m, n) with one batch_matmul."""
    size = math.prod(batch)
    out = op.nn.batch_matmul(op.reshape(a, newshape=(size, m, k)),
                             op.reshape(b, newshape=(size, k, n)),
                             transpose_a=False, transpose_b=False)
    return op.reshape(out, newshape=tuple(batch) + (m, n))


# ---------------------------------------------------------------- SwiGLU

@converter("SwiGLU", since=28)
def swiglu(ctx: Any, node: Any) -> Any:
    a, b = node.inputs[0], node.inputs[1]
    dtype = ctx.dtype(a)
    if dtype not in _FLOATS:
        raise node.error(f"A must be a float tensor, got {dtype}")
    if ctx.dtype(b) != dtype:
        raise node.error(f"A ({dtype}) and B ({ctx.dtype(b)}) must have one dtype")
    sa, sb = ctx.static_shape(a), ctx.static_shape(b)
    if sa is not None and sb is not None and tuple(sa) != tuple(sb):
        raise node.error(f"A {tuple(sa)} and B {tuple(sb)} must have one shape "
                         "(SwiGLU does not broadcast)")
    alpha = float(node.attr("alpha", 1.0))
    gate = a if alpha == 1.0 else op.multiply(_scalar(ctx, alpha, dtype), a)
    return op.multiply(op.multiply(a, op.sigmoid(gate)), b)


# ---------------------------------------------------------------- RotaryEmbedding

@converter("RotaryEmbedding", since=23)
def rotary_embedding(ctx: Any, node: Any) -> Any:
    x, cos, sin = node.inputs[0], node.inputs[1], node.inputs[2]
    pos = node.input(3)
    dtype = ctx.dtype(x)
    if ctx.dtype(cos) != dtype or ctx.dtype(sin) != dtype:
        raise node.error("X, cos_cache and sin_cache must have one dtype")
    shape = _static(ctx, node, x, "X")
    interleaved = bool(node.attr("interleaved", 0))
    if len(shape) == 4:                       # (B, H, S, D) -> (B, S, H, D)
        bsz, heads, seq, head = shape
        x4 = op.transpose(x, axes=(0, 2, 1, 3))
    elif len(shape) == 3:                     # (B, S, H*D) -> (B, S, H, D)
        heads = int(node.attr("num_heads", 0))
        bsz, seq, hidden = shape
        if heads <= 0 or hidden % heads:
            raise node.error(f"a 3-D input needs num_heads dividing its hidden size "
                             f"{hidden} (num_heads = {heads})")
        head = hidden // heads
        x4 = op.reshape(x, newshape=(bsz, seq, heads, head))
    else:
        raise node.error(f"X must be 3-D or 4-D, got shape {shape}")
    rot = int(node.attr("rotary_embedding_dim", 0)) or head
    if rot > head or rot % 2:
        raise node.error(f"rotary_embedding_dim {rot} must be even and at most the head "
                         f"size {head}")
    half = rot // 2

    if pos is not None:                       # caches (max_pos, rot/2) gathered: (B, S, half)
        if ctx.dtype(pos) != "int64":
            raise node.error(f"position_ids must be int64, got {ctx.dtype(pos)}")
        cos = op.take(cos, pos, axis=0)
        sin = op.take(sin, pos, axis=0)
        cache_shape = _static(ctx, node, node.inputs[1], "cos_cache")
        pos_shape = _static(ctx, node, pos, "position_ids")
        c_shape = pos_shape + cache_shape[1:]
        if pos_shape != (bsz, seq):
            raise node.error(f"position_ids must have shape ({bsz}, {seq}), got {pos_shape}")
        if len(cache_shape) != 2:
            raise node.error(f"with position_ids the caches must be 2-D (max_position, "
                             f"rotary_embedding_dim / 2), got {cache_shape}")
    else:
        c_shape = _static(ctx, node, cos, "cos_cache")
        if len(c_shape) != 3 or c_shape[:2] != (bsz, seq):
            raise node.error(f"without position_ids the caches must be ({bsz}, {seq}, "
                             f"rotary_embedding_dim / 2), got {c_shape}")
    s_shape = _static(ctx, node, node.inputs[2], "sin_cache")
    if c_shape[-1] != half or s_shape[-1] != half:
        raise node.error(f"the caches' last dim ({c_shape[-1]}, {s_shape[-1]}) must be "
                         f"rotary_embedding_dim / 2 = {half}")
    if s_shape != _static(ctx, node, node.inputs[1], "cos_cache"):
        raise node.error("cos_cache and sin_cache must have one shape")
    cos = op.expand_dims(cos, axis=2)         # (B, S, 1, half)
    sin = op.expand_dims(sin, axis=2)

    x_rot = x4 if rot == head else _slice(x4, 3, 0, rot)
    if interleaved:
        x1, x2 = _slice(x_rot, 3, 0, rot, 2), _slice(x_rot, 3, 1, rot, 2)
    else:
        x1, x2 = _slice(x_rot, 3, 0, half), _slice(x_rot, 3, half, rot)
    real = op.subtract(op.multiply(cos, x1), op.multiply(sin, x2))
    imag = op.add(op.multiply(sin, x1), op.multiply(cos, x2))
    if interleaved:
        pairs = op.concatenate([op.expand_dims(real, axis=4), op.expand_dims(imag, axis=4)],
                               axis=4)
        x_rot = op.reshape(pairs, newshape=(bsz, seq, heads, rot))
    else:
        x_rot = op.concatenate([real, imag], axis=3)
    out = x_rot if rot == head else op.concatenate([x_rot, _slice(x4, 3, rot, head)], axis=3)
    if len(shape) == 3:
        return op.reshape(out, newshape=shape)
    return op.transpose(out, axes=(0, 2, 1, 3))


# ---------------------------------------------------------------- CausalConvWithState

@converter("CausalConvWithState", since=27)
def causal_conv_with_state(ctx: Any, node: Any) -> Any:
    x, w = node.inputs[0], node.inputs[1]
    bias, past = node.input(2), node.input(3)
    activation = node.attr("activation", "none")
    activation = activation.decode() if isinstance(activation, bytes) else str(activation)
    if activation not in ("none", "silu", "swish"):
        raise node.error(f"activation {activation!r} is not one of 'none', 'silu', 'swish'")
    dtype = ctx.dtype(x)
    shape = _static(ctx, node, x, "input")
    w_shape = _static(ctx, node, w, "weight")
    if len(shape) != 3:
        raise node.error(f"input must be (batch, channels, length), got {shape}")
    bsz, channels, length = shape
    if len(w_shape) != 3 or w_shape[0] != channels or w_shape[1] != 1:
        raise node.error(f"weight must be ({channels}, 1, k), got {w_shape}")
    k = w_shape[2]
    if k < 1:
        raise node.error("the kernel size must be at least 1")
    if past is not None:
        p_shape = _static(ctx, node, past, "past_state")
        if p_shape != (bsz, channels, k - 1):
            raise node.error(f"past_state must have shape {(bsz, channels, k - 1)}, "
                             f"got {p_shape}")
        pad = past
    elif k > 1:
        zeros = ctx.const(np.zeros((bsz, channels, k - 1), dtype=np.float32))
        pad = _cast(zeros, "float32", dtype)
    else:
        pad = None
    padded = x if k == 1 else op.concatenate([pad, x], axis=2)   # (B, C, L + k - 1)
    out = op.nn.conv1d(padded, w, strides=(1,), padding=(0, 0), dilation=(1,),
                       groups=channels, channels=channels, kernel_size=(k,))
    if bias is not None:
        if _static(ctx, node, bias, "bias") != (channels,):
            raise node.error(f"bias must have shape ({channels},)")
        out = op.nn.bias_add(out, bias, axis=1)
    if activation != "none":                  # SiLU in float32, as the reference
        wide = _cast(out, dtype, "float32")
        out = _cast(op.multiply(wide, op.sigmoid(wide)), "float32", dtype)
    if k == 1:
        zeros = ctx.const(np.zeros((bsz, channels, 0), dtype=np.float32))
        present = _cast(zeros, "float32", dtype)
    else:
        present = _slice(padded, 2, length, length + k - 1)
    return [out, present][:max(1, len(node.outputs))]


# ---------------------------------------------------------------- LinearAttention

@converter("LinearAttention", since=27)
def linear_attention(ctx: Any, node: Any) -> Any:
    q, k, v = node.inputs[0], node.inputs[1], node.inputs[2]
    past, decay, beta = node.input(3), node.input(4), node.input(5)
    rule = node.attr("update_rule", "gated_delta")
    rule = rule.decode() if isinstance(rule, bytes) else str(rule)
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise node.error(f"update_rule {rule!r} is not one of 'linear', 'gated', 'delta', "
                         "'gated_delta'")
    hq, hkv = int(node.attr("q_num_heads")), int(node.attr("kv_num_heads"))
    if hq <= 0 or hkv <= 0 or hq % hkv:
        raise node.error(f"q_num_heads ({hq}) must be a positive multiple of kv_num_heads "
                         f"({hkv})")
    gating = rule in ("gated", "gated_delta")
    delta = rule in ("delta", "gated_delta")
    if gating != (decay is not None):
        raise node.error(f"update_rule {rule!r} {'requires' if gating else 'forbids'} "
                         "the decay input")
    if delta != (beta is not None):
        raise node.error(f"update_rule {rule!r} {'requires' if delta else 'forbids'} "
                         "the beta input")
    out_dtype = ctx.dtype(q)
    q_shape = _static(ctx, node, q, "query")
    k_shape = _static(ctx, node, k, "key")
    v_shape = _static(ctx, node, v, "value")
    if len(q_shape) != 3 or len(k_shape) != 3 or len(v_shape) != 3:
        raise node.error("query, key and value must be rank 3 (B, T, H*D)")
    bsz, steps, q_hidden = q_shape
    if k_shape[:2] != (bsz, steps) or v_shape[:2] != (bsz, steps):
        raise node.error(f"query {q_shape}, key {k_shape} and value {v_shape} differ in "
                         "batch or sequence length")
    if q_hidden % hq or v_shape[2] % hkv:
        raise node.error("the hidden sizes are not multiples of the head counts")
    dk, dv = q_hidden // hq, v_shape[2] // hkv
    if k_shape[2] != hkv * dk:
        raise node.error(f"key's hidden size {k_shape[2]} is not kv_num_heads * d_k = "
                         f"{hkv * dk}")
    group = hq // hkv
    f32 = "float32"

    def heads(x: Any, shape: tuple[int, ...], n: int) -> Any:     # (B, T, n, D) float32
        return _cast(op.reshape(x, newshape=(bsz, steps, n, shape[2] // n)),
                     ctx.dtype(x), f32)

    q4, k4, v4 = heads(q, q_shape, hq), heads(k, k_shape, hkv), heads(v, v_shape, hkv)
    if decay is not None:
        d_shape = _static(ctx, node, decay, "decay")
        if len(d_shape) != 3 or d_shape[:2] != (bsz, steps):
            raise node.error(f"decay must be ({bsz}, {steps}, H_kv or H_kv*d_k), got "
                             f"{d_shape}")
        if d_shape[2] == hkv:
            g_dim = 1
        elif d_shape[2] == hkv * dk:
            g_dim = dk
        else:
            raise node.error(f"decay's last dim {d_shape[2]} must be kv_num_heads ({hkv}) "
                             f"or kv_num_heads*d_k ({hkv * dk})")
        decay4 = _cast(op.reshape(decay, newshape=(bsz, steps, hkv, g_dim)),
                       ctx.dtype(decay), f32)
    if beta is not None:
        b_shape = _static(ctx, node, beta, "beta")
        if len(b_shape) != 3 or b_shape[:2] != (bsz, steps) or b_shape[2] not in (hkv, 1):
            raise node.error(f"beta must be ({bsz}, {steps}, {hkv} or 1), got {b_shape}")
        b_heads = b_shape[2]
        beta4 = _cast(op.reshape(beta, newshape=(bsz, steps, b_heads, 1)),
                      ctx.dtype(beta), f32)
    if past is not None:
        if _static(ctx, node, past, "past_state") != (bsz, hkv, dk, dv):
            raise node.error(f"past_state must have shape {(bsz, hkv, dk, dv)}")
        state_dtype = ctx.dtype(past)
        state = _cast(past, state_dtype, f32)
    else:
        state_dtype = out_dtype
        state = ctx.const(np.zeros((bsz, hkv, dk, dv), dtype=np.float32))
    scale = float(node.attr("scale", 0.0))
    scale = 1.0 / math.sqrt(dk) if scale == 0.0 else scale
    scale_c = ctx.const(np.asarray(scale, dtype=np.float32))

    def step(x: Any, t: int, n: int, d: int) -> Any:          # (B, n, d) at time t
        return op.reshape(_slice(x, 1, t, t + 1), newshape=(bsz, n, d))

    outs = []
    for t in range(steps):                 # the recurrence, one token after another
        q_t, k_t, v_t = step(q4, t, hq, dk), step(k4, t, hkv, dk), step(v4, t, hkv, dv)
        if gating:
            g_t = step(decay4, t, hkv, g_dim)                  # (B, H_kv, 1 or d_k)
            state = op.multiply(state, op.expand_dims(op.exp(g_t), axis=3))
        if delta:
            retrieved = op.reshape(_bmm(op.expand_dims(k_t, axis=2), state, (bsz, hkv),
                                        1, dk, dv), newshape=(bsz, hkv, dv))
            v_t = op.multiply(step(beta4, t, b_heads, 1), op.subtract(v_t, retrieved))
        state = op.add(state, op.multiply(op.expand_dims(k_t, axis=3),
                                          op.expand_dims(v_t, axis=2)))
        read = state if group == 1 else op.repeat(state, repeats=group, axis=1)
        o_t = _bmm(op.expand_dims(q_t, axis=2), read, (bsz, hq), 1, dk, dv)  # (B,Hq,1,dv)
        outs.append(op.multiply(scale_c, op.reshape(o_t, newshape=(bsz, 1, hq, dv))))
    if not outs:                           # an empty sequence: no output, the state kept
        out = ctx.const(np.zeros((bsz, 0, hq * dv), dtype=np.float32))
    else:
        out = outs[0] if len(outs) == 1 else op.concatenate(outs, axis=1)
    out = _cast(op.reshape(out, newshape=(bsz, steps, hq * dv)), f32, out_dtype)
    present = _cast(state, f32, state_dtype)
    return [out, present][:max(1, len(node.outputs))]


# ---------------------------------------------------------------- FlexAttention

_SOFTMAX_PRECISIONS = {1: "float32", 10: "float16", 11: "float64", 16: "bfloat16"}


def _modifier(ctx: Any, node: Any, name: str, x: Any, dtype: str) -> Any:
    graph = node.attr(name, None)
    if graph is None:
        return x
    if len(graph.input) != 1 or len(graph.output) != 1:
        raise node.error(f"{name} must take one input and give one output")
    (y,) = ctx.convert_subgraph(graph, [x])
    got = ctx.dtype(y)
    return _cast(y, got, dtype)


@converter("FlexAttention", since=1, domain="ai.onnx.preview")
def flex_attention(ctx: Any, node: Any) -> Any:
    q, k, v = node.inputs[0], node.inputs[1], node.inputs[2]
    dtype = ctx.dtype(q)
    if dtype not in _FLOATS:
        raise node.error(f"Q must be a float tensor, got {dtype}")
    if ctx.dtype(k) != dtype or ctx.dtype(v) != dtype:
        raise node.error("Q, K and V must have one dtype")
    q_shape = _static(ctx, node, q, "Q")
    k_shape = _static(ctx, node, k, "K")
    v_shape = _static(ctx, node, v, "V")
    if len(q_shape) != 4 or len(k_shape) != 4 or len(v_shape) != 4:
        raise node.error(f"Q, K, V must be rank 4, got {q_shape}, {k_shape}, {v_shape}")
    bsz, hq, q_len, head = q_shape
    _, hkv, kv_len, k_head = k_shape
    if k_shape[0] != bsz or v_shape[0] != bsz:
        raise node.error("Q, K and V must have one batch size")
    if v_shape[1] != hkv or v_shape[2] != kv_len:
        raise node.error(f"K {k_shape} and V {v_shape} differ in heads or sequence length")
    if k_head != head:
        raise node.error(f"K's head size {k_head} differs from Q's {head}")
    if hq != hkv:
        if hq % hkv:
            raise node.error(f"q heads {hq} are not a multiple of kv heads {hkv}")
        k = op.repeat(k, repeats=hq // hkv, axis=1)
        v = op.repeat(v, repeats=hq // hkv, axis=1)
    precision = node.attr("softmax_precision", None)
    if precision is not None:
        if int(precision) not in _SOFTMAX_PRECISIONS:
            raise node.error(f"softmax_precision {precision} is not supported")
        compute = _SOFTMAX_PRECISIONS[int(precision)]
    else:
        compute = "float64" if dtype == "float64" else "float32"
    scale = node.attr("scale", None)
    scale = 1.0 / math.sqrt(head) if scale is None else float(scale)
    sqrt_scale = _scalar(ctx, float(np.sqrt(np.float32(scale))), dtype)

    kt = op.transpose(op.multiply(k, sqrt_scale), axes=(0, 1, 3, 2))
    scores = _bmm(op.multiply(q, sqrt_scale), kt, (bsz, hq), q_len, head, kv_len)
    scores = _cast(scores, dtype, compute)
    scores = _modifier(ctx, node, "score_mod", scores, compute)
    probs = op.nn.softmax(scores, axis=-1)
    probs = _modifier(ctx, node, "prob_mod", probs, compute)
    y = _bmm(probs, _cast(v, dtype, compute), (bsz, hq), q_len, kv_len, v_shape[3])
    return _cast(y, compute, dtype)


# ---------------------------------------------------------------- BitCast

def _bits(dtype: str) -> int:
    return 8 if dtype == "bool" else dtype_bits(dtype)      # bool: one byte in ONNX


@converter("BitCast", since=26)
def bitcast(ctx: Any, node: Any) -> Any:
    from ..importer import elem_dtype
    x = node.inputs[0]
    to = elem_dtype(int(node.attr("to")), f"{node.describe()}: `to`")
    src = ctx.dtype(x)
    if _bits(src) != _bits(to):
        raise node.error(f"BitCast needs one bit width: {src} has {_bits(src)} bits, "
                         f"{to} has {_bits(to)}")
    if src == to:
        return x
    if src == "bool" or to == "bool":
        # a bool byte is 0 or 1: its value cast to an 8-bit integer keeps it; an integer
        # byte read as bool is true when nonzero (what NumPy's view reads as well)
        return op.cast(x, dtype=to)
    return op.reinterpret(x, dtype=to)
