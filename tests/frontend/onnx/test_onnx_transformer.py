"""The recent transformer-family ONNX operators and BitCast, on both backends:
RotaryEmbedding, CausalConvWithState, LinearAttention and BitCast against onnxruntime;
SwiGLU and ai.onnx.preview.FlexAttention (which onnxruntime lacks) against ONNX's
reference implementation. Odd sizes, size-1 batches, heads and sequences, float16,
grouped-query and multi-query heads, past states, modifier subgraphs, every update
rule, every dtype pair of BitCast the tests of ONNX use and more."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper
from onnx_check import check_model, make_model, run_relay

from relaylang.frontend.onnx import OnnxImportError


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _data(rng: np.random.Generator, inputs: dict, scale: float = 1.0) -> dict:
    return {n: (rng.standard_normal(s) * scale).astype(d) for n, (s, d) in inputs.items()}


def check_reference(model, data: dict, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """relaylang (both backends) against onnx.reference.ReferenceEvaluator."""
    from onnx.reference import ReferenceEvaluator
    want = ReferenceEvaluator(model).run(None, data)
    for target in ("interp", "llvm"):
        got = run_relay(model, data, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, (target, g.shape, w.shape,
                                                               g.dtype, w.dtype)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=target)


def _tol(dtype: str) -> dict:
    return {"rtol": 2e-3, "atol": 2e-3} if dtype == "float16" else {}


# ---------------------------------------------------------------- RotaryEmbedding

ROTARY = [
    # x shape, cache rows (None: per-token caches (B, S, half)), num_heads, rot dim, interleaved
    ((2, 4, 3, 8), 50, None, 0, 0),
    ((2, 4, 3, 8), 50, None, 0, 1),
    ((2, 4, 3, 8), 50, None, 4, 0),
    ((2, 4, 3, 8), 50, None, 4, 1),
    ((2, 3, 32), 50, 4, 0, 0),
    ((1, 5, 18), 7, 3, 2, 1),            # 3-D, head 6, odd sequence, rotate 2 of 6
    ((1, 1, 1, 2), 3, None, 0, 0),       # everything size 1
    ((2, 3, 5, 6), None, None, 0, 0),
    ((2, 3, 5, 6), None, None, 0, 1),
    ((2, 3, 5, 6), None, None, 4, 0),
    ((3, 5, 12), None, 2, 2, 1),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("shape,rows,heads,rot,inter", ROTARY)
def test_rotary_embedding(shape, rows, heads, rot, inter, dtype) -> None:
    rng = _rng("rotary", shape, rows, heads, rot, inter, dtype)
    head = shape[3] if len(shape) == 4 else shape[2] // heads
    half = (rot or head) // 2
    bsz, seq = shape[0], shape[2] if len(shape) == 4 else shape[1]
    inputs = {"x": (shape, dtype)}
    data = {"x": rng.standard_normal(shape).astype(dtype)}
    if rows is not None:
        cache = (rows, half)
        names = ["x", "cos", "sin", "pos"]
        data["pos"] = rng.integers(0, rows, (bsz, seq)).astype("int64")
    else:
        cache = (bsz, seq, half)
        names = ["x", "cos", "sin"]
    angles = rng.uniform(0, 6.3, cache)
    data["cos"], data["sin"] = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    inputs.update(cos=(cache, dtype), sin=(cache, dtype))
    if rows is not None:
        inputs["pos"] = ((bsz, seq), "int64")
    attrs = {"interleaved": inter}
    if rot:
        attrs["rotary_embedding_dim"] = rot
    if heads:
        attrs["num_heads"] = heads
    node = helper.make_node("RotaryEmbedding", names, ["y"], **attrs)
    model = make_model([node], inputs=inputs, outputs=["y"], opset=23)
    check_model(model, data, **_tol(dtype))


def test_rotary_embedding_rejects_bad_dims() -> None:
    node = helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"])
    model = make_model([node], inputs={"x": ((1, 2, 3, 8), "float32"),
                                       "c": ((1, 3, 3), "float32"),
                                       "s": ((1, 3, 3), "float32")},
                       outputs={"y": ((1, 2, 3, 8), "float32")}, opset=23)
    with pytest.raises(OnnxImportError, match="rotary_embedding_dim / 2"):
        run_relay(model, {})
    node = helper.make_node("RotaryEmbedding", ["x", "c", "s"], ["y"])
    model = make_model([node], inputs={"x": ((1, 3, 8), "float32"),
                                       "c": ((1, 3, 4), "float32"),
                                       "s": ((1, 3, 4), "float32")},
                       outputs={"y": ((1, 3, 8), "float32")}, opset=23)
    with pytest.raises(OnnxImportError, match="num_heads"):
        run_relay(model, {})


# ---------------------------------------------------------------- SwiGLU

def _swiglu(shape, dtype, **attrs):
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"], **attrs)
    return make_model([node], inputs={"a": (shape, dtype), "b": (shape, dtype)},
                      outputs=["y"], opset=28)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape,alpha", [((2, 4), None), ((3, 1, 7), 0.5), ((), 1.702),
                                         ((1,), -2.0), ((0, 3), None)])
def test_swiglu(shape, alpha, dtype) -> None:
    attrs = {} if alpha is None else {"alpha": alpha}
    model = _swiglu(shape, dtype, **attrs)
    data = _data(_rng("swiglu", shape, alpha, dtype), {"a": (shape, dtype),
                                                      "b": (shape, dtype)}, 3.0)
    check_reference(model, data, **_tol(dtype))


def test_swiglu_needs_equal_shapes() -> None:
    node = helper.make_node("SwiGLU", ["a", "b"], ["y"])
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
        helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 28)])
    with pytest.raises(OnnxImportError, match="one shape"):
        run_relay(model, {})


# ---------------------------------------------------------------- CausalConvWithState

CAUSAL = [
    # batch, channels, length, k, bias, past, activation
    (2, 4, 8, 4, False, False, None),
    (2, 4, 8, 4, True, True, "silu"),
    (2, 4, 1, 4, True, True, None),        # decode step
    (2, 4, 2, 5, False, False, None),      # shorter than k - 1
    (2, 4, 8, 1, True, False, "swish"),    # k = 1: an empty state
    (1, 1, 6, 4, False, True, None),
    (3, 5, 7, 3, True, False, "none"),
    (1, 3, 1, 2, False, False, "silu"),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("bsz,ch,length,k,bias,past,act", CAUSAL)
def test_causal_conv_with_state(bsz, ch, length, k, bias, past, act, dtype) -> None:
    inputs = {"x": ((bsz, ch, length), dtype), "w": ((ch, 1, k), dtype)}
    names = ["x", "w", "", ""]
    if bias:
        inputs["b"] = ((ch,), dtype)
        names[2] = "b"
    if past:
        inputs["p"] = ((bsz, ch, k - 1), dtype)
        names[3] = "p"
    while names and not names[-1]:
        names.pop()
    attrs = {} if act is None else {"activation": act}
    node = helper.make_node("CausalConvWithState", names, ["y", "state"], **attrs)
    model = make_model([node], inputs=inputs, outputs=["y", "state"], opset=27)
    data = _data(_rng("causal", bsz, ch, length, k, bias, past, act, dtype), inputs)
    check_model(model, data, **_tol(dtype))


def test_causal_conv_weight_initializer() -> None:
    rng = _rng("causal-init")
    w = rng.standard_normal((3, 1, 3)).astype("float32")
    node = helper.make_node("CausalConvWithState", ["x", "w"], ["y", "state"],
                            activation="silu")
    model = make_model([node], inputs={"x": ((2, 3, 9), "float32")},
                       outputs=["y", "state"], initializers={"w": w}, opset=27)
    check_model(model, {"x": rng.standard_normal((2, 3, 9)).astype("float32")})


def test_causal_conv_rejects_bad_state() -> None:
    node = helper.make_node("CausalConvWithState", ["x", "w", "", "p"], ["y", "state"])
    model = make_model([node], inputs={"x": ((1, 2, 5), "float32"),
                                       "w": ((2, 1, 3), "float32"),
                                       "p": ((1, 2, 3), "float32")},
                       outputs={"y": ((1, 2, 5), "float32"),
                                "state": ((1, 2, 2), "float32")}, opset=27)
    with pytest.raises(OnnxImportError, match="past_state must have shape"):
        run_relay(model, {})


# ---------------------------------------------------------------- LinearAttention

LINEAR = [
    # rule, B, T, Hq, Hkv, dk, dv, per-head decay, beta heads (0: Hkv), past, scale
    ("linear", 2, 4, 4, 4, 8, 8, False, 0, False, None),
    ("linear", 2, 1, 4, 4, 8, 8, False, 0, False, None),
    ("gated", 2, 4, 4, 4, 8, 8, False, 0, True, None),
    ("gated", 1, 3, 2, 2, 5, 3, True, 0, False, None),
    ("delta", 2, 4, 4, 4, 8, 8, False, 0, False, None),
    ("delta", 1, 5, 6, 3, 4, 7, False, 1, True, 0.3),
    ("gated_delta", 2, 4, 4, 4, 8, 8, False, 0, False, 0.25),
    ("gated_delta", 2, 4, 8, 4, 8, 8, False, 0, True, None),      # GQA
    ("gated_delta", 2, 4, 8, 1, 8, 8, True, 1, False, None),      # MQA
    ("gated_delta", 1, 1, 1, 1, 1, 1, False, 0, True, None),      # everything size 1
    ("gated_delta", 2, 3, 3, 3, 4, 6, True, 0, True, None),
]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("rule,bsz,t,hq,hkv,dk,dv,per_head,beta_h,past,scale", LINEAR)
def test_linear_attention(rule, bsz, t, hq, hkv, dk, dv, per_head, beta_h, past, scale,
                          dtype) -> None:
    rng = _rng("linear", rule, bsz, t, hq, hkv, dk, dv, per_head, beta_h, past, scale,
               dtype)
    inputs = {"q": ((bsz, t, hq * dk), dtype), "k": ((bsz, t, hkv * dk), dtype),
              "v": ((bsz, t, hkv * dv), dtype)}
    data = _data(rng, inputs, 0.5)
    names = ["q", "k", "v", "", "", ""]
    if past:
        inputs["past"] = ((bsz, hkv, dk, dv), dtype)
        data["past"] = (rng.standard_normal((bsz, hkv, dk, dv)) * 0.3).astype(dtype)
        names[3] = "past"
    if rule in ("gated", "gated_delta"):
        shape = (bsz, t, hkv if per_head else hkv * dk)
        inputs["decay"] = (shape, dtype)
        data["decay"] = (-rng.uniform(0.01, 0.5, shape)).astype(dtype)      # log-space
        names[4] = "decay"
    if rule in ("delta", "gated_delta"):
        shape = (bsz, t, beta_h or hkv)
        inputs["beta"] = (shape, dtype)
        data["beta"] = rng.uniform(0.1, 0.9, shape).astype(dtype)
        names[5] = "beta"
    while not names[-1]:
        names.pop()
    attrs = {"q_num_heads": hq, "kv_num_heads": hkv, "update_rule": rule}
    if scale is not None:
        attrs["scale"] = scale
    node = helper.make_node("LinearAttention", names, ["y", "state"], **attrs)
    model = make_model([node], inputs=inputs, outputs=["y", "state"], opset=27)
    check_model(model, data, **_tol(dtype))


def test_linear_attention_empty_sequence() -> None:
    """T = 0: an empty output and the past state unchanged."""
    node = helper.make_node("LinearAttention", ["q", "k", "v", "p"], ["y", "state"],
                            q_num_heads=2, kv_num_heads=2, update_rule="linear")
    model = make_model([node], inputs={"q": ((1, 0, 8), "float32"),
                                       "k": ((1, 0, 8), "float32"),
                                       "v": ((1, 0, 8), "float32"),
                                       "p": ((1, 2, 4, 4), "float32")},
                       outputs={"y": ((1, 0, 8), "float32"),
                                "state": ((1, 2, 4, 4), "float32")}, opset=27)
    data = {n: np.zeros((1, 0, 8), np.float32) for n in "qkv"}
    data["p"] = _rng("empty").standard_normal((1, 2, 4, 4)).astype("float32")
    check_reference(model, data)


def test_linear_attention_checks_rule_inputs() -> None:
    node = helper.make_node("LinearAttention", ["q", "k", "v"], ["y", "state"],
                            q_num_heads=2, kv_num_heads=2)          # gated_delta
    model = make_model([node], inputs={n: ((1, 2, 8), "float32") for n in "qkv"},
                       outputs={"y": ((1, 2, 8), "float32"),
                                "state": ((1, 2, 4, 4), "float32")}, opset=27)
    with pytest.raises(OnnxImportError, match="requires the decay input"):
        run_relay(model, {})
    node = helper.make_node("LinearAttention", ["q", "k", "v"], ["y", "state"],
                            q_num_heads=3, kv_num_heads=2, update_rule="linear")
    model = make_model([node], inputs={n: ((1, 2, 6), "float32") for n in "qkv"},
                       outputs={"y": ((1, 2, 6), "float32"),
                                "state": ((1, 2, 3, 3), "float32")}, opset=27)
    with pytest.raises(OnnxImportError, match="positive multiple"):
        run_relay(model, {})


# ---------------------------------------------------------------- FlexAttention

_ELEM = {"float32": TensorProto.FLOAT, "float16": TensorProto.FLOAT16,
         "float64": TensorProto.DOUBLE}


def _flex(shapes: dict, dtype: str, score_mod=None, prob_mod=None, **attrs):
    for name, graph in (("score_mod", score_mod), ("prob_mod", prob_mod)):
        if graph is not None:
            attrs[name] = graph
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"],
                            domain="ai.onnx.preview", **attrs)
    q, v = shapes["Q"], shapes["V"]
    graph = helper.make_graph(
        [node], "flex",
        [helper.make_tensor_value_info(n, _ELEM[dtype], list(s)) for n, s in shapes.items()],
        [helper.make_tensor_value_info("Y", _ELEM[dtype], [q[0], q[1], q[2], v[3]])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                    helper.make_opsetid("ai.onnx.preview", 1)])
    model.ir_version = 10
    return model


def _mod_graph(name: str, nodes: list, elem: int, inits: list | None = None):
    return helper.make_graph(nodes, name,
                             [helper.make_tensor_value_info("s", elem, ["B", "H", "L", "S"])],
                             [helper.make_tensor_value_info("o", elem, ["B", "H", "L", "S"])],
                             inits or [])


def _causal_mod(elem: int, np_dtype: str):
    """score_mod: -inf where key > query (indices from the scores' own shape)."""
    c = numpy_helper.from_array
    inits = [c(np.array(0, np.int64), "zero"), c(np.array(1, np.int64), "one"),
             c(np.array(2, np.int64), "i2"), c(np.array(3, np.int64), "i3"),
             c(np.array([-1, 1], np.int64), "qs"), c(np.array([1, -1], np.int64), "ks"),
             c(np.array(-np.inf, np_dtype), "ninf")]
    nodes = [helper.make_node("Shape", ["s"], ["shape"]),
             helper.make_node("Gather", ["shape", "i2"], ["L"], axis=0),
             helper.make_node("Gather", ["shape", "i3"], ["S"], axis=0),
             helper.make_node("Range", ["zero", "L", "one"], ["qr"]),
             helper.make_node("Reshape", ["qr", "qs"], ["qi"]),
             helper.make_node("Range", ["zero", "S", "one"], ["kr"]),
             helper.make_node("Reshape", ["kr", "ks"], ["ki"]),
             helper.make_node("GreaterOrEqual", ["qi", "ki"], ["m"]),
             helper.make_node("Where", ["m", "s", "ninf"], ["o"])]
    return _mod_graph("causal", nodes, elem, inits)


def _softcap_mod(elem: int, np_dtype: str, cap: float):
    c = numpy_helper.from_array
    nodes = [helper.make_node("Div", ["s", "cap"], ["d"]),
             helper.make_node("Tanh", ["d"], ["t"]),
             helper.make_node("Mul", ["t", "cap"], ["o"])]
    return _mod_graph("softcap", nodes, elem, [c(np.array(cap, np_dtype), "cap")])


def _scale_mod(elem: int, np_dtype: str, by: float):
    c = numpy_helper.from_array
    return _mod_graph("scale", [helper.make_node("Mul", ["s", "k"], ["o"])], elem,
                      [c(np.array(by, np_dtype), "k")])


FLEX = [
    # Q, K, V shapes, attrs, score_mod, prob_mod
    ((2, 4, 8, 16), (2, 4, 6, 16), (2, 4, 6, 16), {}, None, None),
    ((2, 8, 4, 16), (2, 2, 6, 16), (2, 2, 6, 16), {}, None, None),           # GQA
    ((1, 3, 5, 4), (1, 1, 7, 4), (1, 1, 7, 9), {"scale": 0.3}, None, None),  # MQA, dv != dk
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), {}, None, None),
    ((1, 2, 4, 8), (1, 2, 4, 8), (1, 2, 4, 8), {}, "causal", None),
    ((2, 2, 5, 3), (2, 2, 7, 3), (2, 2, 7, 5), {}, "softcap", "scale"),
    ((1, 2, 3, 4), (1, 2, 3, 4), (1, 2, 3, 4), {"softmax_precision": 11}, None, "scale"),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("q,k,v,attrs,score,prob", FLEX)
def test_flex_attention(q, k, v, attrs, score, prob, dtype) -> None:
    precision = {1: "float32", 11: "float64"}.get(attrs.get("softmax_precision"))
    compute = precision or ("float64" if dtype == "float64" else "float32")
    elem = _ELEM[compute]
    mods = {"causal": lambda: _causal_mod(elem, compute),
            "softcap": lambda: _softcap_mod(elem, compute, 2.5),
            "scale": lambda: _scale_mod(elem, compute, 0.5)}
    model = _flex({"Q": q, "K": k, "V": v}, dtype,
                  score_mod=mods[score]() if score else None,
                  prob_mod=mods[prob]() if prob else None, **attrs)
    data = _data(_rng("flex", q, k, v, repr(attrs), score, prob, dtype),
                 {"Q": (q, dtype), "K": (k, dtype), "V": (v, dtype)})
    check_reference(model, data, **_tol(dtype))


def test_flex_attention_score_mod_captures_an_outer_value() -> None:
    """A modifier subgraph may read values of the enclosing graph (here a bias input);
    the reference evaluator cannot, so it runs the bias as the subgraph's initializer."""
    f = TensorProto.FLOAT
    data = _data(_rng("flex-capture"), {"Q": ((1, 2, 3, 4), "float32"),
                                        "K": ((1, 2, 5, 4), "float32"),
                                        "V": ((1, 2, 5, 4), "float32"),
                                        "bias": ((1, 1, 3, 5), "float32")})
    bias = data.pop("bias")
    add = [helper.make_node("Add", ["s", "bias"], ["o"])]
    inner = _mod_graph("bias", add, f, [numpy_helper.from_array(bias, "bias")])
    want = _flex({"Q": (1, 2, 3, 4), "K": (1, 2, 5, 4), "V": (1, 2, 5, 4)}, "float32",
                 score_mod=inner)
    from onnx.reference import ReferenceEvaluator
    (expected,) = ReferenceEvaluator(want).run(None, data)

    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"],
                            domain="ai.onnx.preview", score_mod=_mod_graph("bias", add, f))
    graph = helper.make_graph(
        [node], "flex",
        [helper.make_tensor_value_info("Q", f, [1, 2, 3, 4]),
         helper.make_tensor_value_info("K", f, [1, 2, 5, 4]),
         helper.make_tensor_value_info("V", f, [1, 2, 5, 4]),
         helper.make_tensor_value_info("bias", f, [1, 1, 3, 5])],
        [helper.make_tensor_value_info("Y", f, [1, 2, 3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26),
                                                    helper.make_opsetid("ai.onnx.preview", 1)])
    model.ir_version = 10
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, dict(data, bias=bias), target=target)
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5, err_msg=target)
    # the bias matters: without it the result differs
    (plain,) = ReferenceEvaluator(_flex({"Q": (1, 2, 3, 4), "K": (1, 2, 5, 4),
                                         "V": (1, 2, 5, 4)}, "float32")).run(None, data)
    assert not np.allclose(plain, expected, rtol=1e-4, atol=1e-5)


def test_flex_attention_rejects_bad_heads() -> None:
    model = _flex({"Q": (1, 3, 2, 4), "K": (1, 2, 2, 4), "V": (1, 2, 2, 4)}, "float32")
    with pytest.raises(OnnxImportError, match="multiple of kv heads"):
        run_relay(model, {})


# ---------------------------------------------------------------- BitCast

_CODES = {"float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6,
          "int64": 7, "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13}

BITCASTS = [("float32", "int32"), ("float32", "uint32"), ("int32", "float32"),
            ("uint32", "float32"), ("float64", "int64"), ("int64", "float64"),
            ("float64", "uint64"), ("uint64", "float64"), ("float16", "int16"),
            ("int16", "float16"), ("uint16", "float16"), ("float16", "uint16"),
            ("int8", "uint8"), ("uint8", "int8"), ("uint16", "int16"), ("uint32", "int32"),
            ("int64", "uint64"), ("bool", "uint8"), ("bool", "int8"), ("uint8", "bool"),
            ("float32", "float32")]


def _bit_values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith(("int", "uint")):
        info = np.iinfo(dtype)
        a = rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    else:
        a = np.asarray(rng.standard_normal(shape) * 100).astype(dtype)
        if a.size >= 5:
            a.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, -0.0, np.finfo(dtype).tiny / 4]
    return a


@pytest.mark.parametrize("shape", [(3, 5), (1,), ()])
@pytest.mark.parametrize("src,dst", BITCASTS)
def test_bitcast(src, dst, shape) -> None:
    rng = _rng("bitcast", src, dst, shape)
    x = _bit_values(shape, src, rng)
    if dst == "bool":
        x = np.asarray(rng.integers(0, 2, shape)).astype(src)   # a bool byte is 0 or 1
    node = helper.make_node("BitCast", ["x"], ["y"], to=_CODES[dst])
    model = make_model([node], inputs={"x": (shape, src)}, outputs=["y"], opset=26)
    if "bool" in (src, dst):                 # onnxruntime has no BitCast of bool
        from onnx.reference import ReferenceEvaluator
        (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    else:
        from onnx_check import run_onnxruntime
        (want,) = run_onnxruntime(model, {"x": x})
    want = np.asarray(want)
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, {"x": x}, target=target)
        assert got.dtype == want.dtype and got.shape == want.shape, target
        assert got.tobytes() == want.tobytes(), target          # the very bits
        assert got.tobytes() == np.ascontiguousarray(x).view(want.dtype).tobytes(), target


def test_bitcast_needs_one_width() -> None:
    node = helper.make_node("BitCast", ["x"], ["y"], to=TensorProto.INT64)
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.INT64, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    with pytest.raises(OnnxImportError, match="one bit width"):
        run_relay(model, {})
