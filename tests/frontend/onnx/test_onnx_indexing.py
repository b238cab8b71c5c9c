"""Indexing and search ONNX operators (TopK, ScatterElements, Scatter, ScatterND,
TensorScatter, Einsum, Unique, NonZero, Compress) against onnxruntime, on the
interpreter and LLVM; import errors for what the converters refuse."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model, run_onnxruntime, run_relay

from relaylang.frontend.onnx import OnnxImportError
from relaylang.frontend.onnx.importer import NeedsInputValues

RNG = np.random.default_rng(0)


def _ties(shape, dtype="float32"):
    return RNG.integers(-3, 3, shape).astype(dtype)


# ---------------------------------------------------------------- TopK

def test_topk_opset1_k_attribute():
    node = helper.make_node("TopK", ["x"], ["v", "i"], k=2, axis=1)
    model = make_model([node], {"x": ((3, 5), "float32")}, ["v", "i"], opset=1)
    check_model(model, {"x": _ties((3, 5))})


@pytest.mark.parametrize("k, axis", [(1, -1), (3, 0), (4, 1), (5, -1)])
def test_topk_opset10_k_initializer(k, axis):
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis)
    model = make_model([node], {"x": ((4, 5), "float32")}, ["v", "i"],
                       initializers={"k": np.array([k], "int64")}, opset=10)
    check_model(model, {"x": _ties((4, 5))})


@pytest.mark.parametrize("largest", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int32", "int64", "float64"])
def test_topk_opset11_largest_and_ties(largest, dtype):
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=-2, largest=largest, sorted=1)
    model = make_model([node], {"x": ((2, 7, 3), dtype)}, ["v", "i"],
                       initializers={"k": np.array([4], "int64")}, opset=11)
    check_model(model, {"x": _ties((2, 7, 3), dtype)})


def test_topk_k_as_a_bound_graph_input():
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)
    model = make_model([node], {"x": ((2, 6), "float32"), "k": ((1,), "int64")}, ["v", "i"],
                       opset=11)
    x, k = _ties((2, 6)), np.array([3], "int64")
    want = run_onnxruntime(model, {"x": x, "k": k})
    for target in ("interp", "llvm"):
        got = run_relay(model, {"x": x}, target=target, bind={"k": k})
        for g, w in zip(got, want):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)
    with pytest.raises(NeedsInputValues, match="'k'"):
        run_relay(model, {"x": x, "k": k})


def test_topk_errors():
    node = helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1)
    model = make_model([node], {"x": ((2, 3), "float32")},
                       {"v": ((2, 4), "float32"), "i": ((2, 4), "int64")},
                       initializers={"k": np.array([4], "int64")}, opset=11)
    with pytest.raises(OnnxImportError, match="larger than axis 1"):
        run_relay(model, {"x": _ties((2, 3))})


# ---------------------------------------------------------------- scatter

def _scatter_elements_model(op, opset, reduction=None, axis=0, shapes=((4, 3), (2, 3))):
    kw = {"axis": axis}
    if reduction is not None:
        kw["reduction"] = reduction
    node = helper.make_node(op, ["d", "i", "u"], ["y"], **kw)
    return make_model([node], {"d": (shapes[0], "float32"), "i": (shapes[1], "int64"),
                               "u": (shapes[1], "float32")}, ["y"], opset=opset)


@pytest.mark.parametrize("op, opset, reduction", [
    ("Scatter", 9, None), ("ScatterElements", 11, None), ("ScatterElements", 16, "add"),
    ("ScatterElements", 16, "mul"), ("ScatterElements", 18, "max"),
    ("ScatterElements", 18, "min"), ("ScatterElements", 18, "none")])
def test_scatter_elements(op, opset, reduction):
    model = _scatter_elements_model(op, opset, reduction)
    feeds = {"d": RNG.standard_normal((4, 3)).astype("float32"),
             "i": np.array([[0, -1, 2], [3, 1, -4]], "int64"),
             "u": RNG.standard_normal((2, 3)).astype("float32")}
    check_model(model, feeds)


def test_scatter_elements_negative_axis_and_smaller_indices():
    model = _scatter_elements_model("ScatterElements", 16, "add", axis=-1,
                                    shapes=((3, 5), (2, 3)))
    feeds = {"d": RNG.standard_normal((3, 5)).astype("float32"),
             "i": np.array([[4, 4, -5], [0, 2, 2]], "int64"),
             "u": RNG.standard_normal((2, 3)).astype("float32")}
    check_model(model, feeds)


def test_scatter_elements_refuses_max_before_opset_18():
    model = _scatter_elements_model("ScatterElements", 16, "add")
    model.graph.node[0].attribute[1].s = b"max"
    with pytest.raises(OnnxImportError, match="reduction 'max'"):
        run_relay(model, {})


@pytest.mark.parametrize("opset, reduction", [(11, None), (16, "add"), (16, "mul"),
                                              (18, "max"), (18, "min")])
@pytest.mark.parametrize("ishape, ushape", [((2, 1), (2, 3, 4)), ((3, 2), (3, 4)),
                                            ((2, 2, 3), (2, 2)), ((1,), (3, 4))])
def test_scatter_nd(opset, reduction, ishape, ushape):
    kw = {} if reduction is None else {"reduction": reduction}
    node = helper.make_node("ScatterND", ["d", "i", "u"], ["y"], **kw)
    model = make_model([node], {"d": ((5, 3, 4), "float32"), "i": (ishape, "int64"),
                                "u": (ushape, "float32")}, ["y"], opset=opset)
    k = ishape[-1]
    dims = (5, 3, 4)[:k]
    count = int(np.prod(ishape[:-1]))
    # distinct places (ONNX leaves duplicates unspecified for "none")
    flat = RNG.permutation(int(np.prod(dims)))[:count]
    idx = np.stack(np.unravel_index(flat, dims), axis=-1).reshape(ishape).astype("int64")
    idx[..., 0] -= 5 * (idx[..., 0] % 2)                     # some negative indices
    feeds = {"d": RNG.standard_normal((5, 3, 4)).astype("float32"), "i": idx,
             "u": RNG.standard_normal(ushape).astype("float32")}
    check_model(model, feeds)


@pytest.mark.parametrize("mode, axis, writes", [("linear", -2, [0, 2]), ("circular", 2, [3, 1]),
                                                ("linear", 2, None)])
def test_tensor_scatter(mode, axis, writes):
    from onnx.reference import ReferenceEvaluator
    inputs = ["past", "update"] + (["w"] if writes is not None else [])
    node = helper.make_node("TensorScatter", inputs, ["y"], mode=mode, axis=axis)
    spec = {"past": ((2, 3, 5, 4), "float32"), "update": ((2, 3, 2, 4), "float32")}
    if writes is not None:
        spec["w"] = ((2,), "int64")
    model = make_model([node], spec, ["y"], opset=24)
    feeds = {"past": RNG.standard_normal((2, 3, 5, 4)).astype("float32"),
             "update": RNG.standard_normal((2, 3, 2, 4)).astype("float32")}
    if writes is not None:
        feeds["w"] = np.array(writes, "int64")
    (want,) = ReferenceEvaluator(model).run(None, feeds)
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, feeds, target=target)
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- einsum

@pytest.mark.parametrize("equation, shapes", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 5)]), ("ij->ji", [(3, 4)]), ("ii->i", [(4, 4)]),
    ("i,i", [(5,), (5,)]), ("ij->", [(3, 4)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij,jk", [(3, 4), (4, 2)]), ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
    ("", [()])])
def test_einsum(equation, shapes):
    if not equation:
        equation = "->"
    names = [f"x{k}" for k in range(len(shapes))]
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    model = make_model([node], {n: (s, "float32") for n, s in zip(names, shapes)}, ["y"],
                       opset=12)
    feeds = {n: RNG.standard_normal(s).astype("float32") for n, s in zip(names, shapes)}
    check_model(model, feeds)


def test_einsum_integers():
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,kj->ik")
    model = make_model([node], {"a": ((3, 4), "int32"), "b": ((2, 4), "int32")}, ["y"],
                       opset=12)
    check_model(model, {"a": _ties((3, 4), "int32"), "b": _ties((2, 4), "int32")})


# ---------------------------------------------------------------- unique / nonzero / compress

@pytest.mark.parametrize("sorted_, axis, shape", [(1, None, (8,)), (0, None, (3, 4)),
                                                 (1, 0, (4, 3)), (1, -1, (2, 5)),
                                                 (0, 1, (2, 6, 2)), (1, None, (1,))])
def test_unique(sorted_, axis, shape):
    kw = {"sorted": sorted_} if axis is None else {"sorted": sorted_, "axis": axis}
    node = helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], **kw)
    model = make_model([node], {"x": (shape, "float32")},
                       {"y": None, "idx": None, "inv": None, "cnt": None}, opset=11)
    x = RNG.integers(0, 2, shape).astype("float32")
    if sorted_ == 0 and axis is None:
        x = RNG.integers(-3, 3, shape).astype("float32")
    check_model(model, {"x": x})


@pytest.mark.parametrize("shape, dtype", [((3, 4), "float32"), ((5,), "bool"),
                                          ((2, 3, 2), "int32"), ((2, 2), "int64")])
def test_nonzero(shape, dtype):
    node = helper.make_node("NonZero", ["x"], ["y"])
    model = make_model([node], {"x": (shape, dtype)}, {"y": None}, opset=13)
    x = RNG.integers(0, 2, shape).astype(dtype)
    check_model(model, {"x": x})
    check_model(model, {"x": np.zeros(shape, dtype)})


def test_nonzero_of_a_scalar_counts_one_element():
    node = helper.make_node("NonZero", ["x"], ["y"])
    model = make_model([node], {"x": ((), "float32")}, {"y": None}, opset=13)
    for value in (3.0, 0.0):
        want = run_onnxruntime(model, {"x": np.array(value, "float32")})[0]
        for target in ("interp", "llvm"):
            got = run_relay(model, {"x": np.array(value, "float32")}, target=target)[0]
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axis, cond", [(0, [0, 1, 1]), (1, [1, 0]), (-1, [0, 1]),
                                        (None, [1, 0, 0, 1, 1]), (0, [0, 0, 0])])
def test_compress(axis, cond):
    kw = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], **kw)
    model = make_model([node], {"x": ((3, 2), "float32"), "c": ((len(cond),), "bool")},
                       {"y": None}, opset=11)
    check_model(model, {"x": RNG.standard_normal((3, 2)).astype("float32"),
                        "c": np.array(cond, bool)})


def test_compress_constant_condition_folds():
    node = helper.make_node("Compress", ["x", "c"], ["y"], axis=1)
    model = make_model([node], {"x": ((2, 4), "float32")}, ["y"],
                       initializers={"c": np.array([1, 0, 1, 1], bool)}, opset=11)
    check_model(model, {"x": RNG.standard_normal((2, 4)).astype("float32")})
