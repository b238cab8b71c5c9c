"""ONNX Cast / CastLike with the float8, float4, int4/uint4 and int2/uint2 element types
(relaylang/ir/lowp.py), on both backends, against ONNX's reference evaluator: the
`saturate` attribute, float8e8m0's `round_mode`, graph inputs and outputs of these types
(ml_dtypes arrays in and out, as ONNX's runner gives them), initializers and Constant
nodes."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
md = pytest.importorskip("ml_dtypes")

from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from relaylang.frontend.onnx_backend import RelayBackend

# ONNX element type -> ml_dtypes / relaylang name
LOWP = {TensorProto.FLOAT8E4M3FN: "float8_e4m3fn", TensorProto.FLOAT8E4M3FNUZ: "float8_e4m3fnuz",
        TensorProto.FLOAT8E5M2: "float8_e5m2", TensorProto.FLOAT8E5M2FNUZ: "float8_e5m2fnuz",
        TensorProto.FLOAT8E8M0: "float8_e8m0fnu", TensorProto.FLOAT4E2M1: "float4_e2m1fn",
        TensorProto.INT4: "int4", TensorProto.UINT4: "uint4", TensorProto.INT2: "int2",
        TensorProto.UINT2: "uint2"}
FLOAT8 = [TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E4M3FNUZ, TensorProto.FLOAT8E5M2,
          TensorProto.FLOAT8E5M2FNUZ]
TARGETS = ("interp", "llvm")
OPSET = 25

VALUES = np.array([0.48, -0.25, 1.05, -3.5, -8.0, 9.0, 1e6, 1e-7, np.nan, np.inf, -np.inf,
                   0.0, -0.0, 300.0, -470.0, 60000.0, 3.0, 2.5, -1.5, 7.0, 17.0, 0.124],
                  np.float32)


def _model(nodes: list, inputs: list, outputs: list, inits: list | None = None) -> object:
    graph = helper.make_graph(nodes, "lowp", inputs, outputs, inits or [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    onnx.checker.check_model(model)
    return model


def _info(name: str, elem: int, shape: tuple) -> object:
    return helper.make_tensor_value_info(name, elem, list(shape))


def _bits(a: np.ndarray) -> np.ndarray:
    """Comparable values: NaN-aware float64 for floats, the values for integers."""
    return np.asarray(a).astype(np.float64)


def _assert_same(got: np.ndarray, want: np.ndarray) -> None:
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    assert np.array_equal(_bits(got), _bits(want), equal_nan=True), (got, want)


def _run(model: object, inputs: list, target: str) -> list:
    return RelayBackend.prepare(model, "CPU", target=target).run(inputs)


def _check(model: object, inputs: list, target: str) -> None:
    want = ReferenceEvaluator(model).run(None, {i.name: a for i, a in
                                                zip(model.graph.input, inputs)})
    got = _run(model, inputs, target)
    for g, w in zip(got, want):
        _assert_same(g, np.asarray(w))


def _source(elem: int) -> np.ndarray:
    """Inputs representable in a type (a cast to it from float32, as ONNX's tests do)."""
    name = LOWP[elem]
    t = getattr(md, name)
    x = VALUES
    if name.startswith(("int", "uint")):
        x = np.round(np.nan_to_num(np.clip(VALUES, -8, 15), posinf=1, neginf=-1))
    with np.errstate(all="ignore"):
        return x.astype(t)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("elem", list(LOWP))
@pytest.mark.parametrize("source", [TensorProto.FLOAT, TensorProto.FLOAT16])
def test_cast_to_lowp(source: int, elem: int, target: str) -> None:
    n = len(VALUES)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=elem)],
                   [_info("x", source, (n,))], [_info("y", elem, (n,))])
    with np.errstate(over="ignore"):
        x = VALUES.astype(helper.tensor_dtype_to_np_dtype(source))
    if LOWP[elem].startswith(("int", "uint")):      # ml_dtypes' float->int4 of inf/NaN is UB
        x = np.nan_to_num(x, posinf=9, neginf=-9)
    _check(model, [x], target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("elem", FLOAT8)
def test_cast_to_float8_without_saturation(elem: int, target: str) -> None:
    n = len(VALUES)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=elem, saturate=0)],
                   [_info("x", TensorProto.FLOAT, (n,))], [_info("y", elem, (n,))])
    _check(model, [VALUES], target)
    y = _run(model, [VALUES], target)[0].astype(np.float32)
    assert np.isnan(y[6]) or np.isinf(y[6])         # 1e6 overflows: NaN or inf, not max


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("elem", list(LOWP))
@pytest.mark.parametrize("dest", [TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.INT8,
                                  TensorProto.UINT8, TensorProto.INT32])
def test_cast_from_lowp(elem: int, dest: int, target: str) -> None:
    name = LOWP[elem]
    x = _source(elem)
    if dest in (TensorProto.INT8, TensorProto.UINT8, TensorProto.INT32) and \
            not name.startswith(("int", "uint")):   # float -> int: NaN, inf, out of range
        wide = x.astype(np.float32)                 # are undefined
        x = x[np.isfinite(wide) & (wide > -128) & (wide < 128)]
        if dest == TensorProto.UINT8:
            x = np.abs(x.astype(np.float32)).astype(x.dtype)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=dest)],
                   [_info("x", elem, x.shape)], [_info("y", dest, x.shape)])
    _check(model, [x], target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("elem", list(LOWP))
def test_cast_like_to_and_from_lowp(elem: int, target: str) -> None:
    n = len(VALUES)
    like = np.zeros(0, np.float32).astype(getattr(md, LOWP[elem]))
    x = VALUES if not LOWP[elem].startswith(("int", "uint")) else \
        np.nan_to_num(VALUES, posinf=9, neginf=-9)
    model = _model([helper.make_node("CastLike", ["x", "like"], ["y"]),
                    helper.make_node("CastLike", ["y", "x"], ["z"])],
                   [_info("x", TensorProto.FLOAT, (n,)), _info("like", elem, (0,))],
                   [_info("y", elem, (n,)), _info("z", TensorProto.FLOAT, (n,))])
    _check(model, [x, like], target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [0, 1])
def test_cast_to_e8m0_round_modes(mode: str, saturate: int, target: str) -> None:
    rng = np.random.default_rng(7)
    u = rng.integers(0, 2 ** 32, 300, dtype=np.uint64).astype(np.uint32)
    edge = np.array([0x7F7FFFFF, 0x7F000000, 0x7F400000, 0x00400000, 0x00600000, 0x3FC00000,
                     0x3FA00000, 0x3FE00000, 0x40400000, 0, 0x80000000, 0x7F800000,
                     0x7FC00000, 0xBF800000], np.uint32)
    x = np.concatenate([u, edge]).view(np.float32)
    model = _model([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT8E8M0,
                                     saturate=saturate, round_mode=mode)],
                   [_info("x", TensorProto.FLOAT, x.shape)],
                   [_info("y", TensorProto.FLOAT8E8M0, x.shape)])
    want = ReferenceEvaluator(model).run(None, {"x": x})[0]
    got = _run(model, [x], target)[0]
    assert got.dtype == want.dtype
    assert np.array_equal(got.view(np.uint8), want.view(np.uint8))


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("elem", list(LOWP))
def test_lowp_initializers_and_constants(elem: int, target: str) -> None:
    x = _source(elem)[:6]
    init = numpy_helper.from_array(x, "w")
    const = helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(x, "cv"))
    model = _model([const, helper.make_node("Cast", ["w"], ["a"], to=TensorProto.FLOAT),
                    helper.make_node("Cast", ["c"], ["b"], to=TensorProto.FLOAT),
                    helper.make_node("Identity", ["c"], ["d"])],
                   [], [_info("a", TensorProto.FLOAT, x.shape),
                        _info("b", TensorProto.FLOAT, x.shape), _info("d", elem, x.shape)],
                   [init])
    _check(model, [], target)
    d = _run(model, [], target)[2]
    _assert_same(d, x)


def test_float8_identity_keeps_every_bit_pattern() -> None:
    """Inputs and outputs go through relaylang's carriers by bit pattern (NaNs too)."""
    for elem in (TensorProto.FLOAT8E4M3FN, TensorProto.FLOAT8E5M2, TensorProto.FLOAT8E8M0):
        x = np.arange(256, dtype=np.uint8).view(getattr(md, LOWP[elem]))
        model = _model([helper.make_node("Identity", ["x"], ["y"])],
                       [_info("x", elem, (256,))], [_info("y", elem, (256,))])
        for target in TARGETS:
            y = _run(model, [x], target)[0]
            assert y.dtype == x.dtype and np.array_equal(y.view(np.uint8), x.view(np.uint8))
