"""ONNX's training optimisers (ai.onnx.preview.training Momentum, Adagrad, Adam) against
onnx's reference implementation (onnxruntime has no kernels for them), both backends,
on the first update (T = 0) and later ones, one and several tensors."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnx_check import run_relay

from relaylang.frontend.onnx import OnnxImportError, from_onnx

DOMAIN = "ai.onnx.preview.training"
RNG = np.random.default_rng(7)


def _model(op_type: str, n: int, states: int, shapes: list[tuple[int, ...]],
           **attrs) -> onnx.ModelProto:
    names = ["R", "T"]
    outs = []
    groups = ["X", "G"] + [f"S{s}" for s in range(states)]
    for g in groups:
        names += [f"{g}{k}" for k in range(n)]
    for g in ["X"] + [f"S{s}" for s in range(states)]:
        outs += [f"{g}{k}_new" for k in range(n)]
    node = helper.make_node(op_type, names, outs, domain=DOMAIN, **attrs)
    inputs = [helper.make_tensor_value_info("R", onnx.TensorProto.FLOAT, []),
              helper.make_tensor_value_info("T", onnx.TensorProto.INT64, [])]
    for g in groups:
        inputs += [helper.make_tensor_value_info(f"{g}{k}", onnx.TensorProto.FLOAT,
                                                 list(shapes[k])) for k in range(n)]
    outputs = [helper.make_tensor_value_info(o, onnx.TensorProto.FLOAT,
                                             list(shapes[int(o.split("_")[0][-1])]))
               for o in outs]
    graph = helper.make_graph([node], "opt", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                   helper.make_opsetid(DOMAIN, 1)])


def _check(model: onnx.ModelProto, t: int, n: int, states: int,
           shapes: list[tuple[int, ...]]) -> None:
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(t, np.int64)}
    for g in ["X", "G"] + [f"S{s}" for s in range(states)]:
        for k in range(n):
            a = RNG.standard_normal(shapes[k]).astype(np.float32)
            feeds[f"{g}{k}"] = np.abs(a) if g.startswith("S") else a   # H >= 0
    want = ReferenceEvaluator(model).run(None, feeds)
    for target in ("interp", "llvm"):
        got = run_relay(model, feeds, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == np.asarray(w).shape and g.dtype == np.float32
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6, err_msg=target)


@pytest.mark.parametrize("t", [0, 3])
@pytest.mark.parametrize("mode", ["standard", "nesterov"])
def test_momentum(t: int, mode: str) -> None:
    shapes = [(3, 4), (1,), (2, 1, 5)]
    model = _model("Momentum", 3, 1, shapes, alpha=0.9, beta=0.5, mode=mode,
                   norm_coefficient=0.01)
    _check(model, t, 3, 1, shapes)


@pytest.mark.parametrize("t", [0, 5])
def test_adagrad(t: int) -> None:
    shapes = [(4,), (2, 3)]
    model = _model("Adagrad", 2, 1, shapes, decay_factor=0.1, epsilon=1e-5,
                   norm_coefficient=0.001)
    _check(model, t, 2, 1, shapes)


@pytest.mark.parametrize("t", [0, 1, 10])
def test_adam(t: int) -> None:
    shapes = [(3, 2), (7,)]
    model = _model("Adam", 2, 2, shapes, alpha=0.85, beta=0.95, epsilon=1e-4,
                   norm_coefficient=0.001, norm_coefficient_post=0.02)
    _check(model, t, 2, 2, shapes)


def test_refusals() -> None:
    model = _model("Momentum", 1, 1, [(2,)], alpha=0.9, beta=0.5, mode="heavy",
                   norm_coefficient=0.0)
    with pytest.raises(OnnxImportError, match="mode 'heavy' is not standard or nesterov"):
        from_onnx(model)
