"""ONNX RNN, LSTM and GRU against onnxruntime, on both backends: every direction, with and
without bias and initial states, sequence_lens, peepholes, layout=1, custom activations,
clip, input_forget, linear_before_reset, small and odd sizes, omitted outputs, and the
recursive form used for long or unknown sequence lengths."""
from __future__ import annotations

import zlib
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper, numpy_helper
from onnx_check import check_model, make_model, run_onnxruntime, run_relay

import relaylang as rl
from relaylang.frontend.onnx import OnnxImportError
from relaylang.frontend.onnx.ops import rnn as rnn_ops

GATES = {"RNN": 1, "LSTM": 4, "GRU": 3}
KINDS = ["RNN", "LSTM", "GRU"]
DIRECTIONS = ["forward", "reverse", "bidirectional"]


def _rng(*key: object) -> np.random.Generator:
    """A generator seeded by `key`: the same data whatever order the tests run in."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _case(kind: str, *, steps: int = 3, batch: int = 2, inputs: int = 3, hidden: int = 4,
          direction: str = "forward", bias: bool = True, initial: bool = False,
          lens: list[int] | None = None, peepholes: bool = False, layout: int = 0,
          outputs: tuple[bool, ...] = (True, True, True), opset: int = 14,
          symbolic: tuple[str | None, str | None] = (None, None),
          seq_dims: tuple[Any, Any] | None = None, weights_as_initializers: bool = False,
          dtype: str = "float32", **attrs: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """A one-node model of `kind` and its inputs. `lens`: sequence_lens fed at run time.
    `symbolic`: names for the (seq, batch) dims of X to leave symbolic."""
    g = GATES[kind]
    d = 2 if direction == "bidirectional" else 1
    rng = _rng(kind, steps, batch, inputs, hidden, direction, bias, initial, lens,
               peepholes, layout, tuple(sorted(attrs.items(), key=str)))
    s_dim = symbolic[0] or steps
    n_dim = symbolic[1] or batch
    x_shape = (steps, batch, inputs) if layout == 0 else (batch, steps, inputs)
    x_decl = (s_dim, n_dim, inputs) if layout == 0 else (n_dim, s_dim, inputs)
    state = (d, batch, hidden) if layout == 0 else (batch, d, hidden)
    state_decl = (d, n_dim, hidden) if layout == 0 else (n_dim, d, hidden)
    decl: dict[str, tuple[Any, str]] = {"X": (x_decl, dtype)}
    feed: dict[str, np.ndarray] = {"X": rng.standard_normal(x_shape).astype(dtype)}
    inits: dict[str, np.ndarray] = {}
    names = ["X", "W", "R"]

    def weight(name: str, shape: tuple[int, ...], scale: float = 0.7) -> None:
        value = (rng.standard_normal(shape) * scale).astype(dtype)
        if weights_as_initializers:
            inits[name] = value
        else:
            decl[name] = (shape, dtype)
            feed[name] = value

    weight("W", (d, g * hidden, inputs))
    weight("R", (d, g * hidden, hidden))
    optional = []
    if bias:
        weight("B", (d, 2 * g * hidden), 0.5)
        optional.append((3, "B"))
    if lens is not None:
        decl["L"] = ((n_dim,), "int32")
        feed["L"] = np.asarray(lens, dtype="int32")
        optional.append((4, "L"))
    if initial:
        decl["H0"] = (state_decl, dtype)
        feed["H0"] = rng.standard_normal(state).astype(dtype)
        optional.append((5, "H0"))
        if kind == "LSTM":
            decl["C0"] = (state_decl, dtype)
            feed["C0"] = rng.standard_normal(state).astype(dtype)
            optional.append((6, "C0"))
    if peepholes:
        weight("P", (d, 3 * hidden), 0.5)
        optional.append((7, "P"))
    for pos, name in optional:
        while len(names) < pos:
            names.append("")
        names.append(name)
    out_names = ["Y", "Y_h", "Y_c"][: 3 if kind == "LSTM" else 2]
    node_outs = [n if want else "" for n, want in zip(out_names, outputs)]
    while node_outs and not node_outs[-1]:
        node_outs.pop()
    if layout:
        attrs["layout"] = layout
    node = helper.make_node(kind, names, node_outs, hidden_size=hidden, direction=direction,
                            **attrs)
    model = make_model([node], decl, [n for n in node_outs if n], initializers=inits,
                       opset=opset)
    return model, feed


def _check(model: Any, feed: dict[str, np.ndarray], **kw: Any) -> None:
    check_model(model, feed, rtol=1e-4, atol=2e-5, **kw)


# ---------------------------------------------------------------- directions, inputs

@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_direction_with_bias_and_initial_state(kind: str, direction: str) -> None:
    _check(*_case(kind, direction=direction, bias=True, initial=True))


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_direction_defaults(kind: str, direction: str) -> None:
    # no bias, no initial state: zeros
    _check(*_case(kind, direction=direction, bias=False, initial=False, steps=4))


@pytest.mark.parametrize("kind", KINDS)
def test_weights_as_initializers(kind: str) -> None:
    _check(*_case(kind, direction="bidirectional", initial=True,
                  weights_as_initializers=True))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("shape", [(1, 1, 1, 1), (5, 1, 3, 1), (1, 3, 2, 5), (7, 5, 3, 3)])
def test_odd_sizes(kind: str, shape: tuple[int, int, int, int]) -> None:
    steps, batch, inputs, hidden = shape
    _check(*_case(kind, steps=steps, batch=batch, inputs=inputs, hidden=hidden,
                  direction="bidirectional", initial=True))


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("outputs", [(True, False, False), (False, True, False),
                                     (False, False, True), (True, False, True)])
def test_omitted_outputs(kind: str, outputs: tuple[bool, bool, bool]) -> None:
    if kind != "LSTM" and outputs[2]:
        outputs = (outputs[0], True, False)
    _check(*_case(kind, direction="bidirectional", initial=True, outputs=outputs))


# ---------------------------------------------------------------- sequence_lens

@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_sequence_lens(kind: str, direction: str) -> None:
    # an entry of length 0 (zero Y_h/Y_c), a shorter one and a full one
    _check(*_case(kind, steps=4, batch=4, direction=direction, initial=True,
                  lens=[0, 2, 4, 1]))


@pytest.mark.parametrize("kind", KINDS)
def test_sequence_lens_all_full(kind: str) -> None:
    _check(*_case(kind, steps=3, batch=2, direction="bidirectional", lens=[3, 3]))


def test_sequence_lens_constant_is_not_masked() -> None:
    # lens equal to the sequence length as an initializer: the program has no mask
    model, feed = _case("GRU", steps=3, batch=2)
    node = model.graph.node[0]
    node.input.extend(["L"])
    model.graph.initializer.append(numpy_helper.from_array(np.asarray([3, 3], "int32"), "L"))
    _check(model, feed)
    mod, _ = rl.frontend.from_onnx(model)
    assert "less" not in mod.astext()


def test_sequence_lens_out_of_range_constant_is_refused() -> None:
    model, _ = _case("RNN", steps=3, batch=2)
    model.graph.node[0].input.extend(["L"])
    model.graph.initializer.append(numpy_helper.from_array(np.asarray([3, 4], "int32"), "L"))
    with pytest.raises(OnnxImportError, match="sequence_lens"):
        rl.frontend.from_onnx(model)


# ---------------------------------------------------------------- LSTM specifics

@pytest.mark.parametrize("direction", DIRECTIONS)
def test_lstm_peepholes(direction: str) -> None:
    _check(*_case("LSTM", direction=direction, peepholes=True, initial=True))


def test_lstm_peepholes_with_sequence_lens() -> None:
    _check(*_case("LSTM", steps=4, batch=3, direction="bidirectional", peepholes=True,
                  initial=True, lens=[4, 1, 3]))


@pytest.mark.parametrize("direction", ["forward", "bidirectional"])
def test_lstm_input_forget(direction: str) -> None:
    _check(*_case("LSTM", direction=direction, initial=True, input_forget=1))


# ---------------------------------------------------------------- GRU specifics

@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_gru_linear_before_reset(direction: str, bias: bool) -> None:
    _check(*_case("GRU", direction=direction, bias=bias, initial=True,
                  linear_before_reset=1))


def test_gru_linear_before_reset_with_sequence_lens() -> None:
    _check(*_case("GRU", steps=4, batch=3, direction="bidirectional", initial=True,
                  lens=[2, 4, 3], linear_before_reset=1))


# ---------------------------------------------------------------- layout=1

def _check_layout_1(kind: str, **kw: Any) -> None:
    """The layout-1 model on both backends against onnxruntime running its layout-0 twin
    (onnxruntime refuses layout=1) on the transposed inputs, outputs transposed back."""
    model1, feed1 = _case(kind, layout=1, **kw)
    model0, _ = _case(kind, layout=0, **kw)
    feed0 = dict(feed1)
    for name in ("X", "H0", "C0"):
        if name in feed0:
            feed0[name] = np.ascontiguousarray(feed0[name].transpose(1, 0, 2))
    want = run_onnxruntime(model0, feed0)
    names = [o.name for o in model0.graph.output]
    want = [w.transpose(2, 0, 1, 3) if n == "Y" else w.transpose(1, 0, 2)
            for n, w in zip(names, want)]
    for target in ("interp", "llvm"):
        got = run_relay(model1, feed1, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5, err_msg=target)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_layout_1(kind: str, direction: str) -> None:
    _check_layout_1(kind, direction=direction, initial=True, steps=4, batch=3)


@pytest.mark.parametrize("kind", KINDS)
def test_layout_1_defaults(kind: str) -> None:
    _check_layout_1(kind, direction="bidirectional", bias=False, steps=2, batch=1)


@pytest.mark.parametrize("kind", KINDS)
def test_layout_1_with_sequence_lens(kind: str) -> None:
    _check_layout_1(kind, direction="bidirectional", initial=True, steps=4, batch=3,
                    lens=[1, 4, 2])


def test_layout_1_recursive_form(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rnn_ops, "UNROLL_LIMIT", 0)
    _check_layout_1("LSTM", direction="bidirectional", initial=True, steps=3, batch=2,
                    lens=[2, 3], peepholes=True)


# ---------------------------------------------------------------- activations, clip

# activations with their alpha / beta (all given explicitly: onnxruntime's defaults for
# missing ones differ from the spec's for some, see the module docstring)
ACTIVATIONS: list[tuple[str, list[float], list[float]]] = [
    ("Relu", [], []), ("Tanh", [], []), ("Sigmoid", [], []),
    ("Affine", [0.6], [-0.3]), ("LeakyRelu", [0.2], []), ("ThresholdedRelu", [0.4], []),
    ("ScaledTanh", [1.5], [0.7]), ("HardSigmoid", [0.3], [0.45]), ("Elu", [0.8], []),
    ("Softsign", [], []), ("Softplus", [], []),
]


@pytest.mark.parametrize("name,alpha,beta", ACTIVATIONS, ids=[a[0] for a in ACTIVATIONS])
def test_rnn_activation(name: str, alpha: list[float], beta: list[float]) -> None:
    attrs: dict[str, Any] = {"activations": [name]}
    if alpha:
        attrs["activation_alpha"] = alpha
    if beta:
        attrs["activation_beta"] = beta
    _check(*_case("RNN", initial=True, **attrs))


def test_activation_defaults() -> None:
    # LeakyRelu, HardSigmoid and Elu without alpha/beta: the operators' defaults, which
    # onnxruntime uses too
    _check(*_case("LSTM", initial=True,
                  activations=["HardSigmoid", "Elu", "LeakyRelu"]))


def test_activation_names_ignore_case() -> None:
    _check(*_case("GRU", initial=True, activations=["hardsigmoid", "SOFTSIGN"],
                  activation_alpha=[0.25], activation_beta=[0.4]))


def test_lstm_activations_per_direction() -> None:
    # alpha/beta consumed in order by the activations that take them, across directions
    _check(*_case("LSTM", direction="bidirectional", initial=True,
                  activations=["HardSigmoid", "Tanh", "Affine",
                               "Sigmoid", "ScaledTanh", "LeakyRelu"],
                  activation_alpha=[0.3, 0.9, 1.2, 0.05],
                  activation_beta=[0.4, 0.1, 0.8]))


def test_gru_activations_per_direction() -> None:
    _check(*_case("GRU", direction="bidirectional", initial=True,
                  activations=["Sigmoid", "Softsign", "HardSigmoid", "Relu"],
                  activation_alpha=[0.3], activation_beta=[0.55]))


@pytest.mark.parametrize("kind", KINDS)
def test_clip(kind: str) -> None:
    model, feed = _case(kind, direction="bidirectional", initial=True, clip=0.3)
    feed["X"] = feed["X"] * 4
    _check(model, feed)


# ---------------------------------------------------------------- recursive form

@pytest.fixture
def no_unrolling(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rnn_ops, "UNROLL_LIMIT", 0)


@pytest.mark.parametrize("direction", DIRECTIONS)
@pytest.mark.parametrize("kind", KINDS)
def test_recursive_form(kind: str, direction: str, no_unrolling: None) -> None:
    _check(*_case(kind, steps=5, batch=3, direction=direction, initial=True,
                  lens=[5, 0, 3], peepholes=(kind == "LSTM")))


@pytest.mark.parametrize("kind", KINDS)
def test_recursive_form_omitted_y(kind: str, no_unrolling: None) -> None:
    _check(*_case(kind, steps=4, direction="bidirectional", outputs=(False, True, True)))


def test_recursive_form_is_used_past_the_limit(no_unrolling: None) -> None:
    model, _ = _case("GRU", steps=3)
    mod, _ = rl.frontend.from_onnx(model)
    assert any("rnn_steps" in gv.name_hint for gv, _ in mod)


def test_long_sequence() -> None:
    # more steps than UNROLL_LIMIT: recursion, on both backends
    steps = rnn_ops.UNROLL_LIMIT + 3
    model, feed = _case("LSTM", steps=steps, batch=2, inputs=2, hidden=3,
                        direction="bidirectional", initial=True, lens=[steps, steps - 7])
    _check(model, feed)


@pytest.mark.parametrize("kind", KINDS)
def test_symbolic_sequence_and_batch(kind: str) -> None:
    model, feed = _case(kind, steps=4, batch=3, direction="bidirectional", initial=True,
                        symbolic=("seq", "batch"), lens=[4, 2, 1])
    _check(model, feed)


@pytest.mark.parametrize("kind", KINDS)
def test_symbolic_batch_without_initial_state(kind: str) -> None:
    # the zero initial states take their batch size from X at run time
    _check(*_case(kind, steps=3, batch=2, direction="bidirectional",
                  symbolic=(None, "batch")))


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-5), ("float16", 3e-3)])
@pytest.mark.parametrize("kind", KINDS)
def test_other_float_types(kind: str, dtype: str, tol: float) -> None:
    # onnxruntime has no float64/float16 kernels for these: its float32 result on the
    # same values is the reference (to float32's, or float16's, accuracy)
    model, feed = _case(kind, direction="bidirectional", initial=True,
                        peepholes=(kind == "LSTM"), dtype=dtype, lens=[3, 2])
    model32, _ = _case(kind, direction="bidirectional", initial=True,
                       peepholes=(kind == "LSTM"), lens=[3, 2])
    want = run_onnxruntime(model32, {k: v.astype(np.float32) if v.dtype == np.dtype(dtype)
                                     else v for k, v in feed.items()})
    for target in ("interp", "llvm"):
        got = run_relay(model, feed, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == np.dtype(dtype)
            np.testing.assert_allclose(g.astype(np.float32), w, rtol=tol, atol=tol,
                                       err_msg=target)


@pytest.mark.parametrize("opset", [7, 22])
def test_other_opsets(opset: int) -> None:
    _check(*_case("GRU", direction="bidirectional", initial=True, opset=opset))


# ---------------------------------------------------------------- refusals

def _refused(model: Any, match: str) -> None:
    with pytest.raises(OnnxImportError, match=match):
        rl.frontend.from_onnx(model)


def test_unknown_activation_is_refused() -> None:
    model, _ = _case("RNN")
    model.graph.node[0].attribute.append(helper.make_attribute("activations", ["Gelu"]))
    _refused(model, "activation 'Gelu' is not supported")


def test_wrong_activation_count_is_refused() -> None:
    model, _ = _case("LSTM")
    model.graph.node[0].attribute.append(helper.make_attribute("activations",
                                                               ["Tanh", "Tanh"]))
    _refused(model, "activations lists 2 functions")
    # a bidirectional node lists both directions' activations
    model, _ = _case("GRU", direction="bidirectional")
    model.graph.node[0].attribute.append(helper.make_attribute("activations",
                                                               ["Sigmoid", "Tanh"]))
    _refused(model, "activations lists 2 functions; GRU with 2 direction")


def test_direction_mismatch_is_refused() -> None:
    model, _ = _case("GRU")
    for a in model.graph.node[0].attribute:
        if a.name == "direction":
            a.s = b"bidirectional"
    _refused(model, "direction")


def test_bad_direction_is_refused() -> None:
    model, _ = _case("GRU")
    for a in model.graph.node[0].attribute:
        if a.name == "direction":
            a.s = b"sideways"
    _refused(model, "direction must be")


@pytest.mark.parametrize("kind", KINDS)
def test_wrong_shapes_are_refused(kind: str) -> None:
    g = GATES[kind]
    model, _ = _case(kind, hidden=4, inputs=3, initial=True)
    for vi in model.graph.input:
        if vi.name == "B":
            vi.type.tensor_type.shape.dim[1].dim_value = 2 * g * 4 + 1
    _refused(model, rf"B has shape \(1, {2 * g * 4 + 1}\), expected \(1, {8 * g}\)")
    model, _ = _case(kind, hidden=4, batch=2, initial=True, layout=1)
    for vi in model.graph.input:
        if vi.name == "H0":
            vi.type.tensor_type.shape.dim[2].dim_value = 5
    _refused(model, r"initial_h has shape \(2, 1, 5\), expected \(2, 1, 4\)")
    model, _ = _case(kind, hidden=4, inputs=3)
    for vi in model.graph.input:
        if vi.name == "W":
            vi.type.tensor_type.shape.dim[2].dim_value = 2
    _refused(model, "W has shape")


def test_lstm_wrong_peephole_shape_is_refused() -> None:
    model, _ = _case("LSTM", hidden=4, peepholes=True)
    for vi in model.graph.input:
        if vi.name == "P":
            vi.type.tensor_type.shape.dim[1].dim_value = 8
    _refused(model, r"P has shape \(1, 8\), expected \(1, 12\)")
