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


def _tree_model(agg: int, n_targets: int = 2) -> onnx.ModelProto:
    # two trees over 3 features; tree 0: x0 <= 0.5 ? (x2 in {1, 4} ? leaf0 : leaf1) : leaf2;
    # tree 1: x1 > -1 (NaN goes true) ? leaf3 : leaf4
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain=ML, aggregate_function=agg,
        n_targets=n_targets, tree_roots=[0, 2],
        nodes_featureids=[0, 2, 1], nodes_modes=helper.make_tensor("m", 2, [3], [0, 6, 3]),
        nodes_splits=helper.make_tensor("s", 1, [3], [0.5, float("nan"), -1.0]),
        nodes_truenodeids=[1, 0, 3], nodes_trueleafs=[0, 1, 1],
        nodes_falsenodeids=[2, 1, 4], nodes_falseleafs=[1, 1, 1],
        nodes_missing_value_tracks_true=[0, 0, 1],
        membership_values=helper.make_tensor("v", 1, [3], [1.0, 4.0, float("nan")]),
        leaf_targetids=[0, 1, 1, 0, 1],
        leaf_weights=helper.make_tensor("w", 1, [5], [1.5, -2.0, 3.0, 10.0, 20.0]))
    x = helper.make_tensor_value_info("X", onnx.TensorProto.FLOAT, [None, 3])
    y = helper.make_tensor_value_info("Y", onnx.TensorProto.FLOAT, [None, n_targets])
    model = helper.make_model(helper.make_graph([node], "trees", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 21),
                                             helper.make_opsetid(ML, 5)])
    model.ir_version = 10
    return model


def _tree_reference(x: np.ndarray, agg: int) -> np.ndarray:
    def tree0(r):
        if r[0] <= 0.5:
            return (0, 1.5) if r[2] in (1.0, 4.0) else (1, -2.0)
        return (1, 3.0)

    def tree1(r):
        return (0, 10.0) if (r[1] > -1 or np.isnan(r[1])) else (1, 20.0)
    start = {1: 0.0, 0: 0.0, 2: np.finfo(np.float32).max, 3: np.finfo(np.float32).min}[agg]
    out = np.full((len(x), 2), start, np.float32)
    for i, r in enumerate(x):
        for t, w in (tree0(r), tree1(r)):
            if agg in (0, 1):
                out[i, t] += w / (2 if agg == 0 else 1)
            elif agg == 2:
                out[i, t] = min(out[i, t], w)
            else:
                out[i, t] = max(out[i, t], w)
    return out


@pytest.mark.parametrize("agg", [0, 1, 2, 3])      # AVERAGE, SUM, MIN, MAX
def test_tree_ensemble(agg: int) -> None:
    from onnx.reference import ReferenceEvaluator
    x = np.array([[0.0, 0.0, 1.0], [0.0, -2.0, 3.0], [1.0, np.nan, 4.0], [0.5, -1.0, 4.0],
                  [-3.0, 5.0, 2.0]], np.float32)
    model = _tree_model(agg)
    want = _tree_reference(x, agg)
    np.testing.assert_allclose(ReferenceEvaluator(model).run(None, {"X": x})[0], want)
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, {"X": x}, target=target, shape={"X": (5, 3)})
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=target)
