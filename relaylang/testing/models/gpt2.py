"""A GPT-2-style decoder (Radford et al. 2019): pre-norm transformer blocks, causal
self-attention, tanh GELU, logits through the tied token embedding.

    input_ids (batch, seq) int32
      -> take(wte, input_ids, axis=0) + take(wpe, positions, axis=0)
      -> `layers` blocks:  x + attn(layer_norm(x));  x + mlp(layer_norm(x))
      -> layer_norm (ln_f) -> nn.dense(h, wte) -> logits (batch, seq, vocab)

attn: one nn.dense + nn.bias_add to 3 * hidden (c_attn), split into q, k, v, each
reshaped and transposed to (batch * heads, seq, head_dim); scores =
nn.batch_matmul(q, k, transpose_b=True) * 1/sqrt(head_dim); the causal mask is
`where(mask, scores, -10000)` with mask[i, j] = i >= j built in the graph from
cumsum of ones (no constant tensor, so the printed module has no metadata);
nn.softmax; nn.batch_matmul with v; heads merged; c_proj.
mlp: c_fc (4 * hidden) -> 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) -> c_proj.

Positions are 0..seq-1 from `cumsum(ones(seq), exclusive=True)`; `wpe` has
`n_ctx` rows (default max(1024, seq)). Weights: GPT-2's normal(0, 0.02)
embeddings, Xavier-normal projections with the residual projections (`c_proj`)
damped by 1/sqrt(2 * layers) as GPT-2 does. The defaults are GPT-2 small
(124M parameters) on 64 tokens.
"""
from __future__ import annotations

import math

from ...ir import builder as _b
from ...ir.expr import Expr
from ...ir.module import IRModule
from ...op import make as _make
from .layers import Init, Net, Params


class _Shapes:
    def __init__(self, batch: int, seq: int, hidden: int, heads: int) -> None:
        self.batch, self.seq, self.hidden, self.heads = batch, seq, hidden, heads
        self.head_dim = hidden // heads
        self.tokens = batch * seq


def _split_heads(x: Expr, s: _Shapes) -> Expr:
    """(tokens, hidden) -> (batch * heads, seq, head_dim)."""
    x = _make.reshape(x, newshape=(s.batch, s.seq, s.heads, s.head_dim))
    x = _make.transpose(x, axes=(0, 2, 1, 3))
    return _make.reshape(x, newshape=(s.batch * s.heads, s.seq, s.head_dim))


def _merge_heads(x: Expr, s: _Shapes) -> Expr:
    """(batch * heads, seq, head_dim) -> (tokens, hidden)."""
    x = _make.reshape(x, newshape=(s.batch, s.heads, s.seq, s.head_dim))
    x = _make.transpose(x, axes=(0, 2, 1, 3))
    return _make.reshape(x, newshape=(s.tokens, s.hidden))


def causal_mask(seq: int) -> Expr:
    """A (seq, seq) bool tensor, True where key j may be seen from query i (j <= i)."""
    ones = _make.ones(shape=(seq, seq), dtype="int32")
    return _make.greater_equal(_make.cumsum(ones, axis=0), _make.cumsum(ones, axis=1))


def attention(net: Net, x: Expr, mask: Expr, s: _Shapes, name: str, gain: float) -> Expr:
    """Causal multi-head self-attention of (tokens, hidden) -> (tokens, hidden)."""
    qkv = net.dense_add_bias(x, s.hidden, 3 * s.hidden, name=f"{name}_c_attn")
    parts = _make.split(qkv, indices_or_sections=3, axis=1)
    q, k, v = (_split_heads(_b.TupleGetItem(parts, i), s) for i in range(3))
    scores = _make.nn.batch_matmul(q, k, transpose_b=True)
    scores = _make.multiply(scores, net.scalar(1.0 / math.sqrt(s.head_dim)))
    scores = _make.where(mask, scores, net.scalar(-10000.0))
    probs = _make.nn.softmax(scores, axis=-1)
    ctx = _merge_heads(_make.nn.batch_matmul(probs, v), s)
    return net.dense_add_bias(ctx, s.hidden, s.hidden, name=f"{name}_c_proj", gain=gain)


def gelu(net: Net, x: Expr) -> Expr:
    """GELU, tanh form (GPT-2's `gelu_new`)."""
    cube = _make.power(x, net.scalar(3.0))
    inner = _make.add(x, _make.multiply(cube, net.scalar(0.044715)))
    th = _make.tanh(_make.multiply(inner, net.scalar(math.sqrt(2.0 / math.pi))))
    return _make.multiply(_make.multiply(x, net.scalar(0.5)), _make.add(th, net.scalar(1.0)))


def mlp(net: Net, x: Expr, s: _Shapes, ffn: int, name: str, gain: float) -> Expr:
    h = gelu(net, net.dense_add_bias(x, s.hidden, ffn, name=f"{name}_c_fc"))
    return net.dense_add_bias(h, ffn, s.hidden, name=f"{name}_c_proj", gain=gain)


def block(net: Net, x: Expr, mask: Expr, s: _Shapes, ffn: int, i: int, gain: float) -> Expr:
    """One pre-norm transformer block over the residual stream (tokens, hidden)."""
    a = attention(net, net.layer_norm(x, s.hidden, name=f"h{i}_ln_1"), mask, s,
                  f"h{i}_attn", gain)
    x = _make.add(x, a)
    m = mlp(net, net.layer_norm(x, s.hidden, name=f"h{i}_ln_2"), s, ffn, f"h{i}_mlp", gain)
    return _make.add(x, m)


def get_workload(batch_size: int = 1, dtype: str = "float32", layers: int = 12,
                 seq: int = 64, hidden: int = 768, heads: int = 12, vocab: int = 50257,
                 ffn: int | None = None, n_ctx: int | None = None,
                 seed: int = 0) -> tuple[IRModule, Params]:
    """(mod, params) of the decoder; the input is `input_ids` (batch, seq) int32, the
    result the logits (batch, seq, vocab)."""
    if hidden % heads:
        raise ValueError(f"hidden ({hidden}) must be a multiple of heads ({heads})")
    n_ctx = max(1024, seq) if n_ctx is None else n_ctx
    if seq > n_ctx:
        raise ValueError(f"seq ({seq}) is longer than the position table n_ctx ({n_ctx})")
    if min(layers + 1, seq, hidden, heads, vocab) < 1:
        raise ValueError("layers >= 0; seq, hidden, heads and vocab >= 1")
    ffn = 4 * hidden if ffn is None else ffn
    s = _Shapes(batch_size, seq, hidden, heads)
    gain = 1.0 / math.sqrt(2 * max(layers, 1))

    net = Net(dtype)
    ids = net.input("input_ids", (batch_size, seq), "int32")
    wte = net.weight("wte", (vocab, hidden), Init("normal", 0.0, 0.02))
    wpe = net.weight("wpe", (n_ctx, hidden), Init("normal", 0.0, 0.01))
    positions = _make.cumsum(_make.ones(shape=(seq,), dtype="int32"), axis=0, exclusive=True)
    x = _make.add(_make.take(wte, ids, axis=0), _make.take(wpe, positions, axis=0))
    x = _make.reshape(x, newshape=(s.tokens, hidden))
    mask = causal_mask(seq)
    for i in range(layers):
        x = block(net, x, mask, s, ffn, i, gain)
    x = net.layer_norm(x, hidden, name="ln_f")
    logits = _make.nn.dense(x, wte, units=vocab)
    return net.workload(_make.reshape(logits, newshape=(batch_size, seq, vocab)), seed)
