"""Recurrent ONNX operators: RNN, LSTM, GRU, composed of existing Relay ops (`nn.dense`,
`add`, `multiply`, `sigmoid`, `tanh`, `strided_slice`, `where`, `stack`, ...), the way
TVM's ONNX frontend builds them.

One converter per operator covers every opset (1, 3 (GRU), 7, 14, 22): the later opsets
add attributes (`linear_before_reset`, `layout`) whose defaults keep the earlier meaning,
and types.

Per direction d (`forward`, `reverse`, or both for `bidirectional`) the input projection
of every step is one `nn.dense` over the whole sequence, X (S, N, I) x W[d]^T ->
(S, N, G*H) (G gates: 1, 4 (i, o, f, c) or 3 (z, r, h)), with the biases Wb + Rb added
once (GRU's Rbh stays apart with `linear_before_reset=1`, where it sits inside r * (...)).
A step then adds H_{t-1} x R[d]^T and applies the gates exactly as ONNX's formulas say:

- RNN:  H_t = f(Xt W^T + H_{t-1} R^T + Wb + Rb)
- LSTM: i = f(.. + Pi * C_{t-1}), f = f(.. + Pf * C_{t-1}) (1 - i with `input_forget=1`),
        c = g(..), C_t = f * C_{t-1} + i * c, o = f(.. + Po * C_t), H_t = o * h(C_t)
- GRU:  z = f(..), r = f(..), h = g(Xt Wh^T + (r * H_{t-1}) Rh^T + Rbh + Wbh), or with
        `linear_before_reset=1` g(Xt Wh^T + r * (H_{t-1} Rh^T + Rbh) + Wbh);
        H_t = (1 - z) * h + z * H_{t-1}

`clip` bounds every activation's input (not h's input C_t in LSTM, as onnxruntime does).
Activations are ONNX's names (any case): Relu, Tanh, Sigmoid, Affine, LeakyRelu,
ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus; `activation_alpha` /
`activation_beta` are consumed in order by the activations that take them (LeakyRelu,
ThresholdedRelu, Elu: alpha; Affine, ScaledTanh, HardSigmoid: alpha and beta), missing
values taking the defaults of the standalone operators (LeakyRelu 0.01, ThresholdedRelu
1, Elu 1, HardSigmoid 0.2 / 0.5, Affine 1 / 0, ScaledTanh 1 / 1), as the spec says
(onnxruntime takes 0 for a missing alpha or beta of Affine, ScaledTanh and
ThresholdedRelu). A bidirectional node lists both directions' activations (forward's
first), as the spec and onnxruntime want.

`sequence_lens`: when it is not known to equal the sequence length for every batch entry
(a run-time input, or a constant with shorter entries) every step is masked by
`t < sequence_lens[b]`: past its length a batch entry keeps its state (so Y_h and Y_c are
those of its last valid step) and its Y rows are zero. The reverse direction walks t from
S - 1 down to 0, so an entry's state stays the initial one until t = len - 1: each entry
is reversed within its own length, as ONNX says. An entry of length 0 gets zero Y_h and
Y_c (onnxruntime's answer; the spec says nothing), not its initial state.

Sequence length: with S <= `UNROLL_LIMIT` (256) steps known at import the steps are
unrolled, as TVM does (static shapes throughout; the LLVM backend compiles them like any
graph). The projection and the masks are split once into the S steps (`split`, not a
`strided_slice` per index), so every step is the same computation on different values
and the backend compiles one set of kernels for all of them. A longer or unknown S
becomes a recursive global function over the step index (as `Loop` does in control.py):
the states are its carried values and Y a (S, N, H) buffer whose row t is set by a
`where` on a one-row mask, so its shape never changes across steps. The trade: an
unrolled LSTM of 64 steps (N=4, I=32, H=64, bidirectional) runs natively in about
0.4 ms against about 3-5 ms recursive (a control step per time step, and an O(S) row
write), but its program grows with S and so does the time to optimise and build it
(about 6 s at 256 steps against under 1 s recursive). The batch size may be unknown
(`?`) in both forms.

Layouts: `layout=1` (opset 14) takes X as (N, S, I), initial states as (N, D, H) and
gives Y as (N, S, D, H), Y_h / Y_c as (N, D, H); the converter transposes around the
layout-0 computation.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ....ir.builder import Call, Function, If, Tuple, TupleGetItem
from ....ir.expr import Expr
from ....ir.types import TensorType, TupleType
from ....op import make as op
from ..registry import converter

UNROLL_LIMIT = 256       # steps unrolled at most; longer (or unknown) sequences recurse

_FLOATS = ("float16", "float32", "float64", "bfloat16")

Act = Callable[[Expr], Expr]

# activation name (lower case) -> (takes alpha, takes beta, default alpha, default beta)
_ACTIVATION_ARGS: dict[str, tuple[bool, bool, float, float]] = {
    "relu": (False, False, 0.0, 0.0),
    "tanh": (False, False, 0.0, 0.0),
    "sigmoid": (False, False, 0.0, 0.0),
    "affine": (True, True, 1.0, 0.0),
    "leakyrelu": (True, False, 0.01, 0.0),
    "thresholdedrelu": (True, False, 1.0, 0.0),
    "scaledtanh": (True, True, 1.0, 1.0),
    "hardsigmoid": (True, True, 0.2, 0.5),
    "elu": (True, False, 1.0, 0.0),
    "softsign": (False, False, 0.0, 0.0),
    "softplus": (False, False, 0.0, 0.0),
}

_DEFAULT_ACTIVATIONS = {"RNN": ["Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"],
                        "GRU": ["Sigmoid", "Tanh"]}
_GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}


# ---------------------------------------------------------------- small helpers

def _scalar(ctx: Any, value: float, dtype: str) -> Expr:
    """A scalar constant of `value` in `dtype` (bfloat16 through a cast of float32)."""
    if dtype == "bfloat16":
        return op.cast(ctx.const(np.asarray(value, dtype=np.float32)), dtype="bfloat16")
    return ctx.const(np.asarray(value, dtype=np.dtype(dtype)))


def _slice(x: Expr, axis: int, begin: int, end: int) -> Expr:
    return op.strided_slice(x, begin=(begin,), end=(end,), strides=(1,), axes=(axis,))


def _row(x: Expr, index: int) -> Expr:
    """x[index] (axis 0 dropped)."""
    return op.squeeze(_slice(x, 0, index, index + 1), axis=(0,))


def _cols(x: Expr, k: int, size: int) -> Expr:
    """Columns [k*size, (k+1)*size) of a 2-D tensor."""
    return _slice(x, 1, k * size, (k + 1) * size)


def _expect_shape(ctx: Any, node: Any, name: str, e: Expr, want: tuple[Any, ...],
                  batch_first: bool) -> None:
    """An error unless `e`'s shape is `want` (unknown dims on either side match)."""
    got = tuple(ctx.shape(e))
    if len(got) == len(want) and all(not isinstance(g, int) or not isinstance(w, int)
                                     or g == w for g, w in zip(got, want)):
        return
    def show(dims: tuple[Any, ...]) -> tuple[Any, ...]:
        dims = tuple(d if isinstance(d, int) else "?" for d in dims)
        return (dims[1], dims[0], *dims[2:]) if batch_first else dims
    raise node.error(f"{name} has shape {show(got)}, expected {show(want)}")


def _activation(ctx: Any, node: Any, name: str, alpha: float, beta: float,
                dtype: str) -> Act:
    key = name.lower()

    def c(v: float) -> Expr:
        return _scalar(ctx, v, dtype)

    if key == "relu":
        return lambda x: op.nn.relu(x)
    if key == "tanh":
        return lambda x: op.tanh(x)
    if key == "sigmoid":
        return lambda x: op.sigmoid(x)
    if key == "affine":
        return lambda x: op.add(op.multiply(c(alpha), x), c(beta))
    if key == "leakyrelu":
        return lambda x: op.nn.leaky_relu(x, alpha=float(alpha))
    if key == "thresholdedrelu":
        return lambda x: op.where(op.greater(x, c(alpha)), x, op.zeros_like(x))
    if key == "scaledtanh":
        return lambda x: op.multiply(c(alpha), op.tanh(op.multiply(c(beta), x)))
    if key == "hardsigmoid":
        return lambda x: op.maximum(c(0.0), op.minimum(
            c(1.0), op.add(op.multiply(c(alpha), x), c(beta))))
    if key == "elu":
        return lambda x: op.where(op.less(x, c(0.0)),
                                  op.multiply(c(alpha), op.subtract(op.exp(x), c(1.0))), x)
    if key == "softsign":
        return lambda x: op.divide(x, op.add(c(1.0), op.abs(x)))
    if key == "softplus":
        # ln(exp(x) + 1); for x > 0 as x + ln(exp(-x) + 1): no overflow of exp(x)
        def softplus(x: Expr) -> Expr:
            direct = op.log(op.add(op.exp(x), c(1.0)))
            shifted = op.add(x, op.log(op.add(op.exp(op.negative(x)), c(1.0))))
            return op.where(op.greater(x, c(0.0)), shifted, direct)
        return softplus
    raise node.error(f"activation {name!r} is not supported (supported: Relu, Tanh, "
                     "Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, "
                     "Elu, Softsign, Softplus)")


def _activations(ctx: Any, node: Any, kind: str, directions: int,
                 dtype: str) -> list[list[Act]]:
    """The activation functions of each direction (`per` of them each)."""
    per = len(_DEFAULT_ACTIVATIONS[kind])
    names = node.attr("activations", None)
    if names is None:
        names = _DEFAULT_ACTIVATIONS[kind] * directions
    names = [str(n) for n in names]
    if len(names) != per * directions:
        raise node.error(f"activations lists {len(names)} functions; {kind} with "
                         f"{directions} direction(s) takes {per * directions}")
    alphas = [float(a) for a in node.attr("activation_alpha", None) or []]
    betas = [float(b) for b in node.attr("activation_beta", None) or []]
    acts: list[Act] = []
    for name in names:
        spec = _ACTIVATION_ARGS.get(name.lower())
        if spec is None:
            _activation(ctx, node, name, 0.0, 0.0, dtype)      # raises
            raise AssertionError("unreachable")
        takes_alpha, takes_beta, alpha, beta = spec
        if takes_alpha and alphas:
            alpha = alphas.pop(0)
        if takes_beta and betas:
            beta = betas.pop(0)
        acts.append(_activation(ctx, node, name, alpha, beta, dtype))
    return [acts[d * per:(d + 1) * per] for d in range(directions)]


# ---------------------------------------------------------------- one direction

class _Cell:
    """The weights of one direction and the step built from them. `weights` maps names
    to expressions (slices of the node's inputs, or a recursive function's parameters):
    `r` (G*H, H) for RNN and LSTM, `r_zr` (2H, H) and `r_h` (H, H) for GRU, and as
    present `rbh` (H,) (GRU with linear_before_reset and a bias), `pi`, `po`, `pf` (H,)
    (LSTM peepholes)."""

    def __init__(self, ctx: Any, kind: str, hidden: int, acts: list[Act],
                 clip: float | None, dtype: str, input_forget: bool,
                 linear_before_reset: bool):
        self.ctx, self.kind, self.hidden, self.acts = ctx, kind, hidden, acts
        self.clip, self.dtype = clip, dtype
        self.input_forget, self.linear_before_reset = input_forget, linear_before_reset

    def _clipped(self, x: Expr) -> Expr:
        if self.clip is None:
            return x
        return op.clip(x, a_min=-self.clip, a_max=self.clip)

    def step(self, w: dict[str, Expr], x: Expr, states: list[Expr]) -> list[Expr]:
        """The new states (H first, then C for LSTM) after one step on x (N, G*H), the
        projected input with its biases."""
        H = self.hidden
        h = states[0]
        if self.kind == "RNN":
            f = self.acts[0]
            return [f(self._clipped(op.add(x, op.nn.dense(h, w["r"]))))]
        if self.kind == "LSTM":
            f, g, hact = self.acts
            gates = op.add(x, op.nn.dense(h, w["r"]))
            c = states[1]
            gi, go, gf, gc = (_cols(gates, k, H) for k in range(4))
            if "pi" in w:
                gi = op.add(gi, op.multiply(w["pi"], c))
                gf = op.add(gf, op.multiply(w["pf"], c))
            i = f(self._clipped(gi))
            if self.input_forget:
                fg = op.subtract(_scalar(self.ctx, 1.0, self.dtype), i)
            else:
                fg = f(self._clipped(gf))
            cand = g(self._clipped(gc))
            c_new = op.add(op.multiply(fg, c), op.multiply(i, cand))
            if "po" in w:
                go = op.add(go, op.multiply(w["po"], c_new))
            o = f(self._clipped(go))
            return [op.multiply(o, hact(c_new)), c_new]
        # GRU: gates z, r, h
        f, g = self.acts
        r_zr, r_h = w["r_zr"], w["r_h"]
        zr = op.add(_slice(x, 1, 0, 2 * H), op.nn.dense(h, r_zr))
        z = f(self._clipped(_cols(zr, 0, H)))
        r = f(self._clipped(_cols(zr, 1, H)))
        xh = _cols(x, 2, H)
        if self.linear_before_reset:
            rec = op.nn.dense(h, r_h)
            if "rbh" in w:
                rec = op.add(rec, w["rbh"])
            cand = g(self._clipped(op.add(xh, op.multiply(r, rec))))
        else:
            cand = g(self._clipped(op.add(xh, op.nn.dense(op.multiply(r, h), r_h))))
        one = _scalar(self.ctx, 1.0, self.dtype)
        return [op.add(op.multiply(op.subtract(one, z), cand), op.multiply(z, h))]


def _masked(valid: Expr | None, new: list[Expr], old: list[Expr]) -> tuple[list[Expr], Expr]:
    """The states after a step (kept where the step is past an entry's length) and the
    step's Y rows (zero there)."""
    if valid is None:
        return new, new[0]
    states = [op.where(valid, n, o) for n, o in zip(new, old)]
    return states, op.where(valid, new[0], op.zeros_like(new[0]))


# ---------------------------------------------------------------- the converter

def _convert(ctx: Any, node: Any, kind: str) -> list[Expr | None]:
    x, w, r = node.input(0), node.input(1), node.input(2)
    if x is None or w is None or r is None:
        raise node.error("inputs X, W and R are required")
    b, seq_lens, h0 = node.input(3), node.input(4), node.input(5)
    c0 = node.input(6) if kind == "LSTM" else None
    p = node.input(7) if kind == "LSTM" else None
    if kind != "LSTM" and len(node.inputs) > 6 and any(e is not None
                                                        for e in node.inputs[6:]):
        raise node.error(f"{kind} takes at most 6 inputs")
    gates = _GATES[kind]
    dtype = ctx.dtype(x)
    if dtype not in _FLOATS:
        raise node.error(f"X must be a floating-point tensor, got {dtype}")

    layout = int(node.attr("layout", 0))
    if layout not in (0, 1):
        raise node.error(f"layout must be 0 or 1, got {layout}")
    if layout == 1:
        x = op.transpose(x, axes=(1, 0, 2))
        h0 = None if h0 is None else op.transpose(h0, axes=(1, 0, 2))
        c0 = None if c0 is None else op.transpose(c0, axes=(1, 0, 2))
    x_shape = ctx.shape(x)
    if len(x_shape) != 3:
        raise node.error(f"X must have rank 3, got shape {tuple(x_shape)}")
    steps, batch, _ = x_shape
    if steps == 0:
        raise node.error("X holds an empty sequence (seq_length 0)")

    w_shape, r_shape = ctx.shape(w), ctx.shape(r)
    if len(w_shape) != 3 or len(r_shape) != 3:
        raise node.error(f"W and R must have rank 3, got shapes {tuple(w_shape)} and "
                         f"{tuple(r_shape)}")
    hidden = node.attr("hidden_size", None)
    if hidden is None:
        hidden = r_shape[2]
        if not isinstance(hidden, int):
            raise node.error("hidden_size is not given and R's last dimension is unknown")
    hidden = int(hidden)
    if hidden < 1:
        raise node.error(f"hidden_size must be positive, got {hidden}")
    for name, shape, want in (("W", w_shape, (gates * hidden, x_shape[2])),
                              ("R", r_shape, (gates * hidden, hidden))):
        for got, exp in zip(shape[1:], want):
            if isinstance(got, int) and isinstance(exp, int) and got != exp:
                raise node.error(f"{name} has shape {tuple(shape)}; {kind} with hidden_size "
                                 f"{hidden} and input size {x_shape[2]} wants "
                                 f"(num_directions, {want[0]}, {want[1]})")

    direction = str(node.attr("direction", "forward"))
    if direction not in ("forward", "reverse", "bidirectional"):
        raise node.error(f"direction must be forward, reverse or bidirectional, got "
                         f"{direction!r}")
    dirs = 2 if direction == "bidirectional" else 1
    if isinstance(w_shape[0], int) and w_shape[0] != dirs:
        raise node.error(f"W has {w_shape[0]} direction(s); direction={direction!r} "
                         f"wants {dirs}")
    for name, e, want in (("R", r, (dirs, gates * hidden, hidden)),
                          ("B", b, (dirs, 2 * gates * hidden)),
                          ("sequence_lens", seq_lens, (batch,)),
                          ("initial_h", h0, (dirs, batch, hidden)),
                          ("initial_c", c0, (dirs, batch, hidden)),
                          ("P", p, (dirs, 3 * hidden))):
        if e is not None:
            _expect_shape(ctx, node, name, e, want, layout == 1 and name.startswith("init"))
    acts = _activations(ctx, node, kind, dirs, dtype)
    clip = node.attr("clip", None)
    if clip is not None:
        clip = float(clip)
        if not clip > 0:
            raise node.error(f"clip must be positive, got {clip}")
    input_forget = bool(int(node.attr("input_forget", 0))) if kind == "LSTM" else False
    linear_before_reset = (bool(int(node.attr("linear_before_reset", 0)))
                           if kind == "GRU" else False)

    # sequence_lens: a mask only when some entry may be shorter than the sequence
    lens64: Expr | None = None
    if seq_lens is not None:
        known = ctx.value(seq_lens)
        if known is not None:
            known = np.asarray(known).reshape(-1)
            if isinstance(steps, int) and np.any((known < 0) | (known > steps)):
                raise node.error(f"sequence_lens {known.tolist()} must lie in [0, {steps}]")
        if known is None or not isinstance(steps, int) or np.any(known != steps):
            lens64 = op.expand_dims(op.cast(seq_lens, dtype="int64"), axis=1)   # (N, 1)

    # initial states: zeros of (N, H) taken from X's batch dimension
    def zeros_state() -> Expr:
        if isinstance(batch, int):
            return op.zeros(shape=(batch, hidden), dtype=dtype)
        first = _slice(_row(x, 0), 1, 0, 1)                    # (N, 1)
        return op.multiply(op.zeros_like(first), op.zeros(shape=(1, hidden), dtype=dtype))

    want_y = len(node.outputs) > 0 and bool(node.outputs[0])
    ys, finals = [], []
    for d in range(dirs):
        reverse = direction == "reverse" or d == 1
        cell = _Cell(ctx, kind, hidden, acts[d], clip, dtype, input_forget,
                     linear_before_reset)
        w_d, r_d = _row(w, d), _row(r, d)
        proj = op.nn.dense(x, w_d)                             # (S, N, G*H)
        weights: dict[str, Expr] = {}
        if b is not None:
            b_d = _row(b, d)
            wb, rb = _slice(b_d, 0, 0, gates * hidden), _slice(b_d, 0, gates * hidden,
                                                               2 * gates * hidden)
            if linear_before_reset:
                # Rbh sits inside r * (H Rh^T + Rbh): only Rbz, Rbr join the projection
                bias = op.add(wb, op.concatenate(
                    [_slice(rb, 0, 0, 2 * hidden),
                     op.zeros(shape=(hidden,), dtype=dtype)], axis=0))
                weights["rbh"] = _slice(rb, 0, 2 * hidden, 3 * hidden)
            else:
                bias = op.add(wb, rb)
            proj = op.add(proj, bias)
        if kind == "GRU":
            weights["r_zr"] = _slice(r_d, 0, 0, 2 * hidden)
            weights["r_h"] = _slice(r_d, 0, 2 * hidden, 3 * hidden)
        else:
            weights["r"] = r_d
        if p is not None:
            p_d = _row(p, d)
            weights["pi"], weights["po"], weights["pf"] = (
                _slice(p_d, 0, k * hidden, (k + 1) * hidden) for k in range(3))
        states = [zeros_state() if h0 is None else _row(h0, d)]
        if kind == "LSTM":
            states.append(zeros_state() if c0 is None else _row(c0, d))

        if isinstance(steps, int) and steps <= UNROLL_LIMIT:
            y_d, states = _unrolled(cell, weights, proj, states, lens64, steps, reverse,
                                    want_y)
        else:
            y_d, states = _recursive(ctx, node, cell, weights, proj, states, lens64, steps,
                                     batch, hidden, dtype, reverse, want_y)
        if lens64 is not None:
            # an entry of length 0 has no last step: its Y_h / Y_c are zero
            # (onnxruntime's answer; the spec is silent)
            some = op.greater(lens64, ctx.const(np.int64(0)))
            states = [op.where(some, s, op.zeros_like(s)) for s in states]
        ys.append(y_d)
        finals.append(states)

    y = None
    if want_y:
        y = op.stack(ys, axis=1)                               # (S, D, N, H)
        if layout == 1:
            y = op.transpose(y, axes=(2, 0, 1, 3))
    outs: list[Expr | None] = [y]
    for k in range(2 if kind == "LSTM" else 1):
        s = op.stack([f[k] for f in finals], axis=0)           # (D, N, H)
        outs.append(op.transpose(s, axes=(1, 0, 2)) if layout == 1 else s)
    return outs


def _steps_of(x: Expr, steps: int) -> list[Expr]:
    """x[0], ..., x[steps - 1] from one split (for steps > 1)."""
    if steps == 1:
        return [_row(x, 0)]
    parts = op.split(x, indices_or_sections=steps, axis=0)
    return [op.squeeze(TupleGetItem(parts, t), axis=(0,)) for t in range(steps)]


def _unrolled(cell: _Cell, weights: dict[str, Expr], proj: Expr, states: list[Expr],
              lens64: Expr | None, steps: int, reverse: bool, want_y: bool
              ) -> tuple[Expr | None, list[Expr]]:
    """The steps written out: Y (S, N, H) (None unless wanted) and the final states."""
    rows: list[Expr] = [None] * steps      # type: ignore[list-item]
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    # one split of the projection: the steps then differ only in their inputs (so the
    # LLVM backend compiles one kernel for all of them, not one per step index)
    parts = _steps_of(proj, steps)
    masks = None
    if lens64 is not None:
        # every step's mask at once, (S, N, 1): t < sequence_lens[b]
        t_all = cell.ctx.const(np.arange(steps, dtype=np.int64).reshape(-1, 1, 1))
        masks = _steps_of(op.less(t_all, op.expand_dims(lens64, axis=0)), steps)
    for t in order:
        new = cell.step(weights, parts[t], states)
        states, rows[t] = _masked(None if masks is None else masks[t], new, states)
    if not want_y:
        return None, states
    return op.stack(rows, axis=0), states


def _recursive(ctx: Any, node: Any, cell: _Cell, weights: dict[str, Expr], proj: Expr,
               states: list[Expr], lens64: Expr | None, steps: Any, batch: Any,
               hidden: int, dtype: str, reverse: bool, want_y: bool
               ) -> tuple[Expr | None, list[Expr]]:
    """The steps as a recursive global function over the step index k:

        def @rnn(%k, %count, %states..., %y, %proj, %weights..., %lens) {
          if (%k < %count) { t = k (or count - 1 - k); new = step(proj[t], states)
                             @rnn(%k + 1, %count, masked new..., y with row t set, ...) }
          else { (%states..., %y) }
        }
    """
    i64 = TensorType((), "int64")
    state_t = TensorType((batch, hidden), dtype)
    proj_t = ctx.type_of(proj)
    y_t = TensorType((steps, batch, hidden), dtype)
    k_var = ctx.fresh_var("k", i64)
    n_var = ctx.fresh_var("count", i64)
    s_vars = [ctx.fresh_var(f"state_{j}", state_t) for j in range(len(states))]
    y_var = ctx.fresh_var("y", y_t) if want_y else None
    p_var = ctx.fresh_var("proj", proj_t)
    names = sorted(weights)
    w_vars = {n: ctx.fresh_var(n, ctx.type_of(weights[n])) for n in names}
    l_var = ctx.fresh_var("lens", ctx.type_of(lens64)) if lens64 is not None else None

    one = ctx.const(np.int64(1))
    t = op.subtract(op.subtract(n_var, one), k_var) if reverse else k_var
    new = cell.step(w_vars, op.take(p_var, t, axis=0), list(s_vars))
    valid = op.less(t, l_var) if l_var is not None else None
    new_states, row = _masked(valid, new, list(s_vars))
    next_y: list[Expr] = []
    if y_var is not None:
        if isinstance(steps, int):        # a constant of static shape: static kernels
            rows: Expr = ctx.const(np.arange(steps, dtype=np.int64).reshape(-1, 1, 1))
        else:
            rows = op.reshape(op.arange(ctx.const(np.int64(0)), n_var, one, dtype="int64"),
                              newshape=(-1, 1, 1))
        at = op.equal(rows, t)
        next_y = [op.where(at, op.expand_dims(row, axis=0), y_var)]

    gv = ctx.global_var("rnn_steps")
    tail = [p_var] + [w_vars[n] for n in names] + ([l_var] if l_var is not None else [])
    head = [k_var, n_var] + s_vars + ([y_var] if y_var is not None else [])
    recurse = Call(gv, [op.add(k_var, one), n_var] + new_states + next_y + tail)
    done = Tuple(list(s_vars) + ([y_var] if y_var is not None else []))
    ret_t = TupleType(tuple([state_t] * len(s_vars) + ([y_t] if y_var is not None else [])))
    ctx.define(gv, Function(head + tail, If(op.less(k_var, n_var), recurse, done), ret_t))

    if isinstance(steps, int):
        count: Expr = ctx.const(np.int64(steps))
    else:
        count = op.take(op.shape_of(proj, dtype="int64"), ctx.const(np.int64(0)))
    y0: list[Expr] = []
    if want_y:
        first = _slice(proj, 2, 0, hidden)                     # (S, N, H)
        y0 = [op.zeros_like(first)]
    args = ([ctx.const(np.int64(0)), count] + list(states) + y0 + [proj]
            + [weights[n] for n in names] + ([lens64] if lens64 is not None else []))
    result = Call(gv, args)
    outs = [TupleGetItem(result, j) for j in range(len(s_vars) + len(y0))]
    for e, ty in zip(outs, ret_t.fields):
        ctx.remember_type(e, ty)
    final = outs[:len(s_vars)]
    return (outs[-1] if want_y else None), final


@converter("RNN", since=1)
def rnn(ctx: Any, node: Any) -> Any:
    return _convert(ctx, node, "RNN")


@converter("LSTM", since=1)
def lstm(ctx: Any, node: Any) -> Any:
    return _convert(ctx, node, "LSTM")


@converter("GRU", since=1)
def gru(ctx: Any, node: Any) -> Any:
    return _convert(ctx, node, "GRU")

