"""ONNX NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime, on
both backends: reductions, weights, ignore_index (in range, negative, never hit), N-D
inputs, int32/int64 targets, the log_prob output."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model

import relaylang as rl
from relaylang.frontend.onnx import OnnxImportError


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _case(op_type: str, shape: tuple[int, ...], reduction: str, weighted: bool,
          ignore_index: int | None, t_dtype: str = "int64", dtype: str = "float32",
          log_prob: bool = False, opset: int = 13) -> tuple:
    key = (op_type, shape, reduction, weighted, ignore_index, t_dtype, dtype, log_prob)
    rng = _rng(*key)
    n, c = shape[0], shape[1]
    t_shape = (n,) + shape[2:]
    x = rng.standard_normal(shape).astype(dtype)
    if op_type == "NegativeLogLikelihoodLoss":
        x = x - np.log(np.exp(x).sum(axis=1, keepdims=True)).astype(dtype)
    target = rng.integers(0, c, size=t_shape)
    if ignore_index is not None:
        # ignore about a third of the targets (an out-of-range ignore_index included)
        target = np.where(rng.random(t_shape) < 0.35, ignore_index, target)
    target = target.astype(t_dtype)
    inputs = {"x": (shape, dtype), "t": (t_shape, t_dtype)}
    data = {"x": x, "t": target}
    names = ["x", "t"]
    if weighted:
        inputs["w"] = ((c,), dtype)
        data["w"] = (rng.random(c) + 0.25).astype(dtype)
        names.append("w")
    attrs = {"reduction": reduction}
    if ignore_index is not None:
        attrs["ignore_index"] = ignore_index
    outs = ["loss", "lp"] if log_prob else ["loss"]
    node = helper.make_node(op_type, names, outs, **attrs)
    return make_model([node], inputs=inputs, outputs=outs, opset=opset), data


CASES = [
    # shape, reduction, weighted, ignore_index
    ((3, 5), "mean", False, None),
    ((3, 5), "sum", True, None),
    ((3, 5), "none", True, 2),
    ((1, 1), "mean", False, None),
    ((4, 3, 2), "mean", True, 1),
    ((4, 3, 2), "mean", False, 0),
    ((2, 3, 1), "none", False, -1),
    ((2, 4, 3, 5), "mean", True, -5),
    ((2, 4, 3, 5), "sum", False, 7),
    ((2, 3, 2, 1, 3), "none", True, None),
    ((5, 7), "mean", True, -1),
]


@pytest.mark.parametrize("op_type", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize("shape,reduction,weighted,ignore_index", CASES)
def test_loss(op_type: str, shape: tuple, reduction: str, weighted: bool,
              ignore_index: int | None) -> None:
    model, data = _case(op_type, shape, reduction, weighted, ignore_index)
    check_model(model, data)


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_softmax_cross_entropy_log_prob(reduction: str) -> None:
    model, data = _case("SoftmaxCrossEntropyLoss", (3, 4, 2), reduction, True, 1,
                        log_prob=True)
    check_model(model, data)


@pytest.mark.parametrize("op_type,opset", [("NegativeLogLikelihoodLoss", 12),
                                            ("NegativeLogLikelihoodLoss", 22),
                                            ("SoftmaxCrossEntropyLoss", 12)])
def test_loss_opsets_int32_float64(op_type: str, opset: int) -> None:
    model, data = _case(op_type, (3, 4, 3), "mean", True, 2, t_dtype="int32",
                        dtype="float64", opset=opset)
    check_model(model, data)


def test_mean_with_every_target_ignored_is_nan() -> None:
    """ONNX divides by the sum of the applied weights: 0/0 when all are ignored."""
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["loss"],
                            ignore_index=1)
    model = make_model([node], inputs={"x": ((2, 3), "float32"), "t": ((2,), "int64")},
                       outputs=["loss"], opset=13)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_model(model, {"x": x, "t": np.array([1, 1], np.int64)})
    check_model(model, {"x": x, "t": np.array([1, 2], np.int64)})


def test_unknown_class_count_is_refused() -> None:
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["loss"])
    model = make_model([node], inputs={"x": ((2, "c"), "float32"), "t": ((2,), "int64")},
                       outputs=["loss"], opset=13)
    with pytest.raises(OnnxImportError, match="class dimension C"):
        rl.frontend.from_onnx(model)


def test_bad_reduction_is_refused() -> None:
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["loss"],
                            reduction="max")
    model = make_model([node], inputs={"x": ((2, 3), "float32"), "t": ((2,), "int64")},
                       outputs={"loss": ((), "float32")}, opset=13)
    with pytest.raises(OnnxImportError, match="reduction"):
        rl.frontend.from_onnx(model)
