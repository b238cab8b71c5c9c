"""ONNX-ML's tensor operators (Binarizer, ArrayFeatureExtractor) against onnxruntime,
both backends."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx
from onnx import helper
from onnx_check import run_onnxruntime, run_relay

ML = "ai.onnx.ml"


def _model(node: onnx.NodeProto, inputs: dict, out_elem: int) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, t, list(s)) for n, (s, t) in inputs.items()]
    out = helper.make_tensor_value_info(node.output[0], out_elem, None)
    graph = helper.make_graph([node], "ml", ins, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid(ML, 3)])
    model.ir_version = 9
    return model


def _compare(model: onnx.ModelProto, feeds: dict) -> None:
    want = run_onnxruntime(model, feeds)
    for target in ("interp", "llvm"):
        got = run_relay(model, feeds, target=target)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, target
            np.testing.assert_array_equal(g, w, err_msg=target)


@pytest.mark.parametrize("dtype,elem", [("float32", 1), ("float64", 11), ("int64", 7)])
def test_binarizer(dtype: str, elem: int) -> None:
    node = helper.make_node("Binarizer", ["x"], ["y"], domain=ML, threshold=0.5)
    model = _model(node, {"x": ((3, 5), elem)}, elem)
    x = ((np.arange(15).reshape(3, 5) % 4 - 1) * (0.5 if dtype != "int64" else 1)).astype(dtype)
    if dtype == "float32":
        _compare(model, {"x": x})
        return
    # onnxruntime's kernel is float32 only: the specification's formula
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, {"x": x}, target=target)
        np.testing.assert_array_equal(got, (x > 0.5).astype(dtype))
        assert got.dtype == dtype


@pytest.mark.parametrize("shape,indices", [((3, 5), [4, 0, 4]), ((5,), [1, 3]),
                                           ((2, 2, 3), [[2], [0]]), ((2, 1), [0])])
def test_array_feature_extractor(shape, indices) -> None:
    idx = np.asarray(indices, np.int64)
    node = helper.make_node("ArrayFeatureExtractor", ["x", "i"], ["y"], domain=ML)
    model = _model(node, {"x": (shape, 1), "i": (idx.shape, 7)}, 1)
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    _compare(model, {"x": x, "i": idx})
