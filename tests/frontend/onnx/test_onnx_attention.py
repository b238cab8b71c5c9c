"""ONNX Attention (opsets 23-25) against onnxruntime, on both backends: 3-D and 4-D
inputs, grouped-query attention, causal masks (with and without a past cache), bool and
additive masks (shorter than the kv length too), scale, softcap, past/present,
qk_matmul_output_mode, softmax_precision, nonpad_kv_seqlen, sliding windows."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model, run_relay

import relaylang as rl
from relaylang.frontend.onnx import OnnxImportError


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _model(inputs: dict, outputs: list[str], opset: int = 23, **attrs: object) -> tuple:
    """An Attention model over `inputs` name -> (shape, dtype) in ONNX's input order
    (Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen; '' skips one)."""
    rng = _rng(repr(sorted(inputs.items())), outputs, opset, repr(sorted(attrs.items())))
    graph_inputs, data, names = {}, {}, []
    for name, spec in inputs.items():
        if spec is None:
            names.append("")
            continue
        shape, dtype = spec[0], spec[1]
        names.append(name)
        graph_inputs[name] = (shape, dtype)
        if dtype == "bool":
            data[name] = rng.random(shape) < 0.7
        elif dtype.startswith("int"):
            data[name] = np.asarray(spec[2] if len(spec) > 2 else 0, dtype=dtype)
        elif all(isinstance(d, int) for d in shape):
            data[name] = rng.standard_normal(shape).astype(dtype)
    node = helper.make_node("Attention", names, outputs, **attrs)
    outs = [o for o in outputs if o]
    return make_model([node], inputs=graph_inputs, outputs=outs, opset=opset), data


def check_reference(model, data: dict, rtol: float = 1e-4, atol: float = 1e-5) -> None:
    """relaylang (both backends) against ONNX's reference implementation: for the forms
    onnxruntime refuses (a mask shorter than the kv length, a rank-1 mask)."""
    from onnx.reference import ReferenceEvaluator
    want = ReferenceEvaluator(model).run(None, data)
    for target in ("interp", "llvm"):
        got = run_relay(model, data, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, (target, g.shape, w.shape)
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=target)


def _qkv(q: tuple, k: tuple, v: tuple, dtype: str = "float32") -> dict:
    return {"q": (q, dtype), "k": (k, dtype), "v": (v, dtype)}


CASES_4D = [
    # q shape, k shape, v shape, attrs
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7), {}),
    ((1, 1, 1, 1), (1, 1, 1, 1), (1, 1, 1, 1), {}),
    ((2, 3, 5, 4), (2, 3, 6, 4), (2, 3, 6, 7), {"is_causal": 1}),
    ((1, 2, 6, 3), (1, 2, 4, 3), (1, 2, 4, 5), {"is_causal": 1}),      # q longer than kv
    ((2, 4, 3, 8), (2, 2, 5, 8), (2, 2, 5, 3), {}),                    # GQA
    ((2, 6, 3, 4), (2, 1, 5, 4), (2, 1, 5, 4), {"is_causal": 1}),      # MQA, causal
    ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), {"scale": 0.3}),
    ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), {"softcap": 2.5}),
    ((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4), {"softcap": 0.5, "scale": 2.0,
                                                "is_causal": 1}),
]


@pytest.mark.parametrize("q,k,v,attrs", CASES_4D)
def test_attention_4d(q: tuple, k: tuple, v: tuple, attrs: dict) -> None:
    model, data = _model(_qkv(q, k, v), ["y"], **attrs)
    check_model(model, data)


CASES_3D = [
    # q, k, v shapes, q heads, kv heads, attrs
    ((2, 5, 12), (2, 6, 12), (2, 6, 9), 3, 3, {}),
    ((1, 4, 8), (1, 4, 4), (1, 4, 6), 4, 2, {"is_causal": 1}),
    ((2, 3, 6), (2, 7, 2), (2, 7, 2), 3, 1, {"softcap": 1.5}),
]


@pytest.mark.parametrize("q,k,v,hq,hkv,attrs", CASES_3D)
def test_attention_3d(q: tuple, k: tuple, v: tuple, hq: int, hkv: int, attrs: dict) -> None:
    model, data = _model(_qkv(q, k, v), ["y"], q_num_heads=hq, kv_num_heads=hkv, **attrs)
    check_model(model, data)


MASKS = [
    # mask shape, dtype, is_causal
    ((3, 5), "float32", 0),
    ((2, 1, 3, 5), "float32", 1),
    ((2, 3, 5), "bool", 0),          # (heads, q, kv)
    ((1, 2, 3, 5), "bool", 1),
]


@pytest.mark.parametrize("shape,dtype,causal", MASKS)
def test_attention_mask(shape: tuple, dtype: str, causal: int) -> None:
    inputs = _qkv((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    inputs["m"] = (shape, dtype)
    model, data = _model(inputs, ["y"], is_causal=causal)
    check_model(model, data)


SHORT_MASKS = [
    ((3, 4), "float32", 0),          # shorter than kv: padded with -inf
    ((3, 3), "bool", 1),             # shorter bool mask: padded with False
    ((5,), "float32", 0),            # rank 1
    ((2, 1, 3, 2), "bool", 0),
]


@pytest.mark.parametrize("shape,dtype,causal", SHORT_MASKS)
def test_attention_short_mask_vs_reference(shape: tuple, dtype: str, causal: int) -> None:
    """onnxruntime refuses masks shorter than the kv length and rank-1 masks: against
    ONNX's reference."""
    inputs = _qkv((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    inputs["m"] = (shape, dtype)
    model, data = _model(inputs, ["y"], is_causal=causal)
    check_reference(model, data)


def test_fully_masked_rows_give_zero() -> None:
    inputs = _qkv((1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 3))
    inputs["m"] = ((3, 4), "bool")
    model, data = _model(inputs, ["y", "", "", "p"], qk_matmul_output_mode=3)
    data["m"][1] = False
    check_model(model, data)
    y, probs = run_relay(model, data)        # the masked query row is zero, not NaN
    assert not np.any(y[:, :, 1]) and not np.any(probs[:, :, 1])
    assert np.all(np.isfinite(y))


@pytest.mark.parametrize("causal", [0, 1])
def test_attention_past_present_4d(causal: int) -> None:
    inputs = _qkv((2, 4, 2, 3), (2, 2, 2, 3), (2, 2, 2, 5))
    inputs["m"] = ((2, 5), "float32")
    inputs["pk"] = ((2, 2, 3, 3), "float32")
    inputs["pv"] = ((2, 2, 3, 5), "float32")
    model, data = _model(inputs, ["y", "present_k", "present_v"], is_causal=causal)
    check_model(model, data)


def test_attention_past_present_3d() -> None:
    inputs = _qkv((1, 2, 8), (1, 2, 4), (1, 2, 2))
    inputs["m"] = None
    inputs["pk"] = ((1, 2, 3, 2), "float32")
    inputs["pv"] = ((1, 2, 3, 1), "float32")
    model, data = _model(inputs, ["y", "present_k", "present_v"], is_causal=1,
                         q_num_heads=4, kv_num_heads=2)
    check_model(model, data)


@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_qk_matmul_output_modes(mode: int) -> None:
    inputs = _qkv((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3))
    inputs["m"] = ((3, 6), "float32")
    inputs["pk"] = ((2, 2, 1, 4), "float32")
    inputs["pv"] = ((2, 2, 1, 3), "float32")
    model, data = _model(inputs, ["y", "pk_out", "pv_out", "qk"], is_causal=1,
                         softcap=3.0, qk_matmul_output_mode=mode)
    if mode == 2:
        # onnxruntime writes the causal bias as the lowest float, ONNX's definition as
        # -inf (its reference and the conformance data): against the reference
        check_reference(model, data)
    else:
        check_model(model, data)


def test_float16_with_softmax_precision() -> None:
    inputs = _qkv((1, 2, 3, 4), (1, 2, 5, 4), (1, 2, 5, 3), dtype="float16")
    model, data = _model(inputs, ["y"], is_causal=1, softmax_precision=1)
    check_model(model, data, rtol=2e-3, atol=2e-3)


def test_nonpad_kv_seqlen_opset24() -> None:
    inputs = _qkv((2, 2, 2, 4), (2, 2, 6, 4), (2, 2, 6, 3))
    inputs.update({"m": None, "pk": None, "pv": None, "n": ((2,), "int64", [4, 6])})
    model, data = _model(inputs, ["y"], opset=24, is_causal=1)
    check_model(model, data)


@pytest.mark.parametrize("left,right,causal", [(1, -1, 1), (2, 1, 0), (-1, 0, 0)])
def test_sliding_window_opset25(left: int, right: int, causal: int) -> None:
    inputs = _qkv((1, 2, 4, 4), (1, 2, 6, 4), (1, 2, 6, 3))
    model, data = _model(inputs, ["y"], opset=25, is_causal=causal, left_window_size=left,
                         right_window_size=right)
    check_model(model, data)


def test_unknown_shapes_are_refused() -> None:
    inputs = _qkv((1, 2, "s", 4), (1, 2, 5, 4), (1, 2, 5, 3))
    model, _ = _model(inputs, ["y"])
    with pytest.raises(OnnxImportError, match="shape of Q must be known"):
        rl.frontend.from_onnx(model)


def test_heads_that_do_not_group_are_refused() -> None:
    inputs = _qkv((1, 3, 2, 4), (1, 2, 5, 4), (1, 2, 5, 3))
    model, _ = _model(inputs, ["y"])
    with pytest.raises(OnnxImportError, match="not a multiple"):
        rl.frontend.from_onnx(model)


def test_3d_without_head_counts_is_refused() -> None:
    from onnx import TensorProto
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"])
    graph = helper.make_graph([node], "g", [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 4]) for n in "qkv"],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    with pytest.raises(OnnxImportError, match="q_num_heads"):
        rl.frontend.from_onnx(model)
