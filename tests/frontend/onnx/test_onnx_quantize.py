"""ONNX quantization operators against onnxruntime, on both backends: QuantizeLinear and
DequantizeLinear (opsets 10, 13, 19, 21: per tensor, per axis with positive and negative
axes, size-1 dims, blocked, output_dtype, float16 data and scales, int32 data),
DynamicQuantizeLinear, QLinearMatMul, QLinearConv, MatMulInteger and ConvInteger; the
refusals are clear errors."""
from __future__ import annotations

import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper
from onnx_check import check_model, make_model, run_onnxruntime, run_relay

from relaylang.frontend.onnx import OnnxImportError


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _floats(key: object, shape: tuple, dtype: str = "float32", scale: float = 40.0
            ) -> np.ndarray:
    rng = _rng("x", key, shape)
    x = rng.standard_normal(shape) * scale
    x = np.where(rng.random(shape) < 0.3, np.round(x) + 0.5, x)       # ties
    return x.astype(dtype)


def _ints(key: object, shape: tuple, dtype: str, lo: int | None = None,
          hi: int | None = None) -> np.ndarray:
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return _rng("i", key, shape, dtype).integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def _model(op_type: str, inputs: dict[str, np.ndarray], opset: int,
           initializers: dict[str, np.ndarray] | None = None, outputs=("y",), **attrs):
    """One `op_type` node; `inputs` are graph inputs (name -> value), `initializers`
    constants; None values leave an optional input out (an empty name)."""
    initializers = initializers or {}
    names = list(inputs) + list(initializers)
    order = attrs.pop("order", names)
    node = helper.make_node(op_type, [n if (n in inputs and inputs[n] is not None) or
                                      (n in initializers and initializers[n] is not None)
                                      else "" for n in order], list(outputs), **attrs)
    graph_inputs = {n: (v.shape, v.dtype.name) for n, v in inputs.items() if v is not None}
    inits = {n: v for n, v in initializers.items() if v is not None}
    return make_model([node], inputs=graph_inputs, outputs=list(outputs), initializers=inits,
                      opset=opset)


def _feeds(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    return {n: v for n, v in inputs.items() if v is not None}


def check_reference(model, inputs: dict[str, np.ndarray]) -> list[np.ndarray]:
    """Both backends equal ONNX's reference implementation exactly: for what onnxruntime
    lacks (int32 QuantizeLinear, QLinearMatMul-21) or computes otherwise (float16
    division in float32, DynamicQuantizeLinear of all zeros: scale 1 instead of 1 / 255)."""
    from onnx.reference import ReferenceEvaluator
    want = ReferenceEvaluator(model).run(None, dict(inputs))
    for target in ("interp", "llvm"):
        got = run_relay(model, inputs, target=target)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            w = np.asarray(w)
            assert g.dtype == w.dtype and g.shape == w.shape, (target, g.dtype, w.dtype)
            np.testing.assert_array_equal(g, w, err_msg=target)
    return want


# ---------------------------------------------------------------- QuantizeLinear

@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("out", ["uint8", "int8"])
def test_quantize_per_tensor(opset: int, out: str) -> None:
    x = _floats(("q", opset, out), (3, 7))
    x[0, :4] = [1e6, -1e6, 0.0, -0.0]
    inputs = {"x": x, "s": np.array(0.5, np.float32), "z": np.array(3, out)}
    check_model(_model("QuantizeLinear", inputs, opset, order=["x", "s", "z"]), inputs)


@pytest.mark.parametrize("opset", [10, 13, 21])
def test_quantize_without_zero_point_is_uint8(opset: int) -> None:
    inputs = {"x": _floats("nozp", (2, 3, 4)), "s": np.array(0.25, np.float32)}
    check_model(_model("QuantizeLinear", inputs, opset), inputs)


@pytest.mark.parametrize("out", ["int16", "uint16"])
def test_quantize_16_bit(out: str) -> None:
    inputs = {"x": _floats(out, (4, 5), scale=30000.0), "s": np.array(0.75, np.float32),
              "z": np.array(-7 if out == "int16" else 9000, out)}
    check_model(_model("QuantizeLinear", inputs, 21, order=["x", "s", "z"]), inputs)


@pytest.mark.parametrize("shape, axis", [((2, 3, 4), 1), ((2, 3, 4), -1), ((2, 3, 4), 0),
                                         ((1, 3, 1, 2), 1), ((3, 1), -2), ((5,), 0),
                                         ((1, 1, 4), -1)])
@pytest.mark.parametrize("opset", [13, 21])
def test_quantize_per_axis(shape: tuple, axis: int, opset: int) -> None:
    n = shape[axis]
    inputs = {"x": _floats(("axis", shape, axis), shape),
              "s": (_rng("s", shape, axis).integers(1, 8, size=n) / 4.0).astype(np.float32),
              "z": _ints(("z", shape, axis), (n,), "int8", -20, 20)}
    check_model(_model("QuantizeLinear", inputs, opset, axis=axis, order=["x", "s", "z"]),
                inputs)


@pytest.mark.parametrize("shape, axis, block, out", [
    ((3, 4), 1, 2, "int8"), ((3, 5), 1, 2, "uint8"), ((4, 3), 0, 3, "int8"),
    ((2, 6, 2), -2, 4, "int16"), ((1, 1), 1, 1, "uint8")])
def test_quantize_blocked(shape: tuple, axis: int, block: int, out: str) -> None:
    sshape = list(shape)
    sshape[axis] = -(-shape[axis] // block)
    inputs = {"x": _floats(("block", shape), shape),
              "s": (_rng("bs", shape).integers(1, 8, size=sshape) / 4.0).astype(np.float32),
              "z": _ints(("bz", shape), tuple(sshape), out, -10 if out != "uint8" else 0, 10)}
    check_model(_model("QuantizeLinear", inputs, 21, axis=axis, block_size=block,
                       order=["x", "s", "z"]), inputs)


def test_quantize_output_dtype_without_zero_point() -> None:
    inputs = {"x": _floats("odt", (3, 4), scale=1000.0), "s": np.array(0.5, np.float32)}
    model = _model("QuantizeLinear", inputs, 21, output_dtype=TensorProto.INT16)
    check_model(model, inputs)
    assert run_relay(model, inputs)[0].dtype == np.int16


def test_quantize_float16() -> None:
    # float16 data and scale (opset 19 ties them); ties of the float16 quotient
    x = _floats("f16", (4, 9), "float16")
    inputs = {"x": x, "s": np.array([0.5, 0.25, 2.0, 1.5], np.float16),
              "z": np.array([0, 1, 2, 3], np.int8)}
    check_model(_model("QuantizeLinear", inputs, 19, axis=0, order=["x", "s", "z"]), inputs)


@pytest.mark.parametrize("sdtype", ["float16", "float32"])
def test_quantize_float16_divides_in_float16(sdtype: str) -> None:
    # ONNX: the division is in the scale's precision (the wider of the two in its
    # reference): 2.25 / 0.3 is 7.4988 in float32 but 7.5 in float16 -> 8, where
    # onnxruntime, dividing in float32, gives 7
    x = _floats(("f16r", sdtype), (4, 9), "float16")
    x[0, :4] = np.array([2.25, 5.25, 1.25, 12.25], np.float16)
    inputs = {"x": x, "s": np.array([0.3, 0.1, 0.7, 1.3], sdtype),
              "z": np.array([0, 1, 2, 3], np.int8)}
    got = check_reference(_model("QuantizeLinear", inputs, 21, axis=0, order=["x", "s", "z"]),
                          inputs)[0]
    assert got[0, 0] == (8 if sdtype == "float16" else 7)


def test_quantize_int32_data() -> None:
    inputs = {"x": _ints("i32", (2, 6), "int32", -2000, 2000), "s": np.array(7.0, np.float32),
              "z": np.array(-1, np.int8)}
    check_reference(_model("QuantizeLinear", inputs, 21, order=["x", "s", "z"]), inputs)


def test_quantize_precision_attribute() -> None:
    inputs = {"x": _floats("prec", (3, 5)), "s": np.array(0.3, np.float32),
              "z": np.array(0, np.int8)}
    check_reference(_model("QuantizeLinear", inputs, 23, order=["x", "s", "z"],
                           precision=TensorProto.FLOAT16), inputs)


# ---------------------------------------------------------------- DequantizeLinear

@pytest.mark.parametrize("opset", [10, 13, 19, 21])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_dequantize_per_tensor(opset: int, dtype: str) -> None:
    inputs = {"x": _ints(("dq", opset), (3, 5), dtype), "s": np.array(0.37, np.float32),
              "z": np.array(5, dtype)}
    check_model(_model("DequantizeLinear", inputs, opset, order=["x", "s", "z"]), inputs,
                rtol=0, atol=0)


@pytest.mark.parametrize("shape, axis", [((2, 3, 4), 1), ((2, 3, 4), -1), ((1, 3, 1), -2),
                                         ((4,), 0), ((2, 1), 1)])
def test_dequantize_per_axis(shape: tuple, axis: int) -> None:
    n = shape[axis]
    inputs = {"x": _ints(("dqa", shape), shape, "int8"),
              "s": (_rng("dqs", shape).standard_normal(n) * 0.1).astype(np.float32),
              "z": _ints(("dqz", shape), (n,), "int8", -5, 5)}
    check_model(_model("DequantizeLinear", inputs, 13, axis=axis, order=["x", "s", "z"]),
                inputs, rtol=0, atol=0)


def test_dequantize_blocked_and_16_bit() -> None:
    inputs = {"x": _ints("dqb", (2, 5, 3), "int16"),
              "s": (_rng("dqbs").standard_normal((2, 3, 3)) * 0.01).astype(np.float32),
              "z": _ints("dqbz", (2, 3, 3), "int16", -100, 100)}
    check_model(_model("DequantizeLinear", inputs, 21, axis=1, block_size=2,
                       order=["x", "s", "z"]), inputs, rtol=0, atol=0)


def test_dequantize_int32_without_zero_point() -> None:
    inputs = {"x": _ints("dq32", (7,), "int32", -2 ** 30, 2 ** 30),
              "s": np.array(0.001, np.float32)}
    check_model(_model("DequantizeLinear", inputs, 13), inputs, rtol=0, atol=0)


def test_dequantize_float16_scale() -> None:
    inputs = {"x": _ints("dq16", (3, 4), "uint8"), "s": np.array(0.0999, np.float16),
              "z": np.array(128, np.uint8)}
    check_model(_model("DequantizeLinear", inputs, 19, order=["x", "s", "z"]), inputs,
                rtol=0, atol=0)


def test_quantize_dequantize_chain_with_initializers() -> None:
    x = _floats("chain", (2, 3, 4))
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=-1),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=-1)]
    model = make_model(nodes, inputs={"x": ((2, 3, 4), "float32")}, outputs=["y"],
                       initializers={"s": np.array([0.5, 1, 2, 4], np.float32),
                                     "z": np.array([0, 10, -10, 127], np.int8)}, opset=13)
    check_model(model, {"x": x}, rtol=0, atol=0)


# ---------------------------------------------------------------- DynamicQuantizeLinear

@pytest.mark.parametrize("case", ["mixed", "positive", "negative", "one"])
def test_dynamic_quantize(case: str) -> None:
    x = _floats(("dyn", case), (3, 4), scale=3.0)
    if case == "positive":
        x = np.abs(x) + np.float32(0.5)
    elif case == "negative":
        x = -np.abs(x) - np.float32(0.5)
    elif case == "one":
        x = np.array([-2.5], np.float32)
    model = _model("DynamicQuantizeLinear", {"x": x}, 11, outputs=("y", "ys", "yz"))
    check_model(model, {"x": x}, rtol=0, atol=0)


def test_dynamic_quantize_of_zeros_follows_the_reference() -> None:
    # max == min: ONNX's reference takes the range as 1 (scale 1 / 255), onnxruntime
    # takes the scale as 1; either way y and the zero point are 0
    x = np.zeros((2, 2), np.float32)
    want = check_reference(_model("DynamicQuantizeLinear", {"x": x}, 11,
                                  outputs=("y", "ys", "yz")), {"x": x})
    assert want[1] == np.float32(1.0) / np.float32(255.0) and not want[0].any()


# ---------------------------------------------------------------- QLinearMatMul

QMM_ORDER = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]


@pytest.mark.parametrize("ashape, bshape", [((2, 4), (4, 3)), ((2, 2, 4), (2, 4, 3)),
                                            ((3, 2, 5), (5, 1)), ((1, 5), (5, 7)),
                                            ((2, 1, 3, 4), (1, 2, 4, 2))])
@pytest.mark.parametrize("dtype", ["uint8", "int8"])
def test_qlinear_matmul(ashape: tuple, bshape: tuple, dtype: str) -> None:
    inputs = {"a": _ints(("qa", ashape), ashape, dtype),
              "as": np.array(0.0066, np.float32), "az": np.array(3, dtype),
              "b": _ints(("qb", bshape), bshape, dtype),
              "bs": np.array(0.00705, np.float32), "bz": np.array(-2 if dtype == "int8" else 130,
                                                                 dtype),
              "ys": np.array(0.9, np.float32), "yz": np.array(5, dtype)}
    check_model(_model("QLinearMatMul", inputs, 10, order=QMM_ORDER), inputs)


def test_qlinear_matmul_mixed_signedness() -> None:
    inputs = {"a": _ints("qma", (3, 4), "uint8"), "as": np.array([0.02], np.float32),
              "az": np.array([100], np.uint8), "b": _ints("qmb", (4, 2), "int8"),
              "bs": np.array([0.03], np.float32), "bz": np.array([0], np.int8),
              "ys": np.array([0.5], np.float32), "yz": np.array([-3], np.int8)}
    # (onnxruntime has no uint8 x int8 kernel)
    check_reference(_model("QLinearMatMul", inputs, 10, order=QMM_ORDER), inputs)


@pytest.mark.parametrize("sdtype", ["float16", "float32"])
def test_qlinear_matmul_21(sdtype: str) -> None:
    # opset 21 (float16 scales; onnxruntime has no kernel): ONNX's reference
    inputs = {"a": _ints("q21a", (2, 3, 4), "int8"), "as": np.array([0.0066], sdtype),
              "az": np.array([-14], np.int8), "b": _ints("q21b", (2, 4, 3), "int8"),
              "bs": np.array([0.00705], sdtype), "bz": np.array([-13], np.int8),
              "ys": np.array([0.0107], sdtype), "yz": np.array([-9], np.int8)}
    check_reference(_model("QLinearMatMul", inputs, 21, order=QMM_ORDER), inputs)


# ---------------------------------------------------------------- QLinearConv

QCONV_ORDER = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "B"]


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_qlinear_conv(per_channel: bool, bias: bool) -> None:
    o = 4
    inputs = {"x": _ints("qcx", (1, 2, 6, 5), "uint8"), "xs": np.array(0.02, np.float32),
              "xz": np.array(120, np.uint8), "w": _ints("qcw", (o, 2, 3, 2), "int8", -60, 60),
              "ws": (np.array([0.01, 0.02, 0.005, 0.03], np.float32) if per_channel
                     else np.array(0.015, np.float32)),
              "wz": np.array(0, np.int8) if not per_channel else np.zeros(o, np.int8),
              "ys": np.array(0.05, np.float32), "yz": np.array(128, np.uint8),
              "B": _ints("qcb", (o,), "int32", -500, 500) if bias else None}
    model = _model("QLinearConv", inputs, 10, order=QCONV_ORDER, pads=[1, 0, 1, 1],
                   strides=[2, 1])
    check_model(model, _feeds(inputs))


def test_qlinear_conv_groups_int8() -> None:
    inputs = {"x": _ints("qgx", (2, 4, 5, 5), "int8"), "xs": np.array(0.1, np.float32),
              "xz": np.array(-3, np.int8), "w": _ints("qgw", (4, 2, 2, 2), "int8"),
              "ws": np.array(0.004, np.float32), "wz": np.array(0, np.int8),
              "ys": np.array(0.2, np.float32), "yz": np.array(1, np.int8)}
    check_model(_model("QLinearConv", inputs, 10, order=QCONV_ORDER[:8], group=2,
                       dilations=[2, 1]), inputs)


# ---------------------------------------------------------------- MatMulInteger

@pytest.mark.parametrize("ashape, bshape", [((4, 3), (3, 2)), ((2, 4, 3), (3, 5)),
                                            ((3,), (3, 2)), ((2, 3, 4), (2, 4, 1))])
@pytest.mark.parametrize("zero_points", [False, True])
def test_matmul_integer(ashape: tuple, bshape: tuple, zero_points: bool) -> None:
    inputs = {"A": _ints(("mia", ashape), ashape, "uint8"),
              "B": _ints(("mib", bshape), bshape, "int8"),
              "az": np.array(12, np.uint8) if zero_points else None,
              "bz": np.array(-3, np.int8) if zero_points else None}
    model = _model("MatMulInteger", inputs, 10, outputs=("Y",), order=["A", "B", "az", "bz"])
    check_model(model, _feeds(inputs))


def test_matmul_integer_per_column_b_zero_point() -> None:
    inputs = {"A": _ints("pca", (3, 4), "uint8"), "B": _ints("pcb", (4, 5), "uint8"),
              "az": np.array([7], np.uint8), "bz": _ints("pcz", (5,), "uint8")}
    model = _model("MatMulInteger", inputs, 10, outputs=("Y",), order=["A", "B", "az", "bz"])
    check_model(model, inputs)


# ---------------------------------------------------------------- ConvInteger

@pytest.mark.parametrize("attrs", [{}, {"pads": [1, 1, 1, 1]}, {"strides": [2, 2]},
                                   {"group": 2}, {"auto_pad": "SAME_UPPER"}])
def test_conv_integer(attrs: dict) -> None:
    inputs = {"x": _ints("cix", (1, 4, 5, 6), "uint8"), "w": _ints("ciw", (2, 4 // attrs.get(
        "group", 1), 3, 3), "uint8"), "xz": np.array(100, np.uint8),
        "wz": np.array(3, np.uint8)}
    check_model(_model("ConvInteger", inputs, 10, order=["x", "w", "xz", "wz"], **attrs),
                inputs)


def test_conv_integer_without_zero_points_1d() -> None:
    inputs = {"x": _ints("ci1x", (2, 3, 7), "int8"), "w": _ints("ci1w", (4, 3, 2), "int8")}
    check_model(_model("ConvInteger", inputs, 10), inputs)


# ---------------------------------------------------------------- refusals

def test_bad_inputs_are_clear_errors() -> None:
    inputs = {"x": np.zeros((2, 3), np.float32), "s": np.ones((2, 3), np.float32),
              "z": np.zeros((2, 3), np.uint8)}
    model = _model("QuantizeLinear", inputs, 13, order=["x", "s", "z"])
    with pytest.raises(OnnxImportError, match="block_size"):
        run_relay(model, inputs)
    inputs = {"x": np.zeros((4,), np.float32), "s": np.ones((4,), np.float32)}
    model = _model("QuantizeLinear", inputs, 10)
    with pytest.raises(OnnxImportError, match="per tensor"):
        run_relay(model, inputs)
    inputs = {"A": np.zeros((2, 2), np.int8), "B": np.zeros((2, 2), np.int8)}
    model = _model("MatMulInteger", inputs, 10, outputs=("Y",))
    # int8 x int8 is valid; an int16 operand is not (built by hand: ONNX's checker refuses)
    assert run_relay(model, inputs)[0].dtype == np.int32
    ort = run_onnxruntime(model, inputs)
    np.testing.assert_array_equal(ort[0], run_relay(model, inputs)[0])


# ---------------------------------------------------------------- low-precision dtypes

def _lowp_model(op_type: str, x_type: int, x_shape: tuple, s_shape: tuple, z_type: int | None,
                out_type: int, opset: int = 21, **attrs):
    from onnx import checker
    ins = [helper.make_tensor_value_info("x", x_type, list(x_shape)),
           helper.make_tensor_value_info("s", TensorProto.FLOAT, list(s_shape))]
    names = ["x", "s"]
    if z_type is not None:
        ins.append(helper.make_tensor_value_info("z", z_type, list(s_shape)))
        names.append("z")
    node = helper.make_node(op_type, names, ["y"], **attrs)
    graph = helper.make_graph([node], "lowp", ins,
                              [helper.make_tensor_value_info("y", out_type, list(x_shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    checker.check_model(model)
    return model


def _bits(a: np.ndarray) -> np.ndarray:
    """uint8 bit patterns of an ml_dtypes array or of one of relaylang's carriers."""
    from relaylang.ir.lowp import lowp_bits, lowp_name
    return lowp_bits(a) if lowp_name(a.dtype) is not None else a.view(np.uint8)


FLOAT8 = {"float8_e4m3fn": TensorProto.FLOAT8E4M3FN, "float8_e4m3fnuz": TensorProto.FLOAT8E4M3FNUZ,
          "float8_e5m2": TensorProto.FLOAT8E5M2, "float8_e5m2fnuz": TensorProto.FLOAT8E5M2FNUZ}


@pytest.mark.parametrize("name", sorted(FLOAT8))
@pytest.mark.parametrize("saturate", [0, 1])
def test_quantize_float8_against_reference(name: str, saturate: int) -> None:
    pytest.importorskip("relaylang.ir.lowp")
    import ml_dtypes
    from onnx.reference import ReferenceEvaluator
    x = np.array([0.0, -0.0, 1e-5, -0.3, 3.7, 300.0, 1e6, -1e6, np.inf, -np.inf, np.nan,
                  57344.0 * 2], np.float32)
    scale = np.array(0.5, np.float32)
    zero = np.array(0, getattr(ml_dtypes, name))
    model = _lowp_model("QuantizeLinear", TensorProto.FLOAT, x.shape, (), FLOAT8[name],
                        FLOAT8[name], saturate=saturate)
    want = ReferenceEvaluator(model).run(None, {"x": x, "s": scale, "z": zero})[0]
    from relaylang.ir.lowp import to_lowp
    feeds = {"x": x, "s": scale, "z": to_lowp(np.zeros(()), name)}
    for target in ("interp", "llvm"):
        got = run_relay(model, feeds, target=target)[0]
        np.testing.assert_array_equal(_bits(got), _bits(np.asarray(want)), err_msg=target)


@pytest.mark.parametrize("name, code", [("int4", TensorProto.INT4), ("uint4", TensorProto.UINT4),
                                        ("int2", TensorProto.INT2),
                                        ("uint2", TensorProto.UINT2)])
def test_quantize_dequantize_narrow_integers_against_reference(name: str, code: int) -> None:
    pytest.importorskip("relaylang.ir.lowp")
    import ml_dtypes
    from onnx.reference import ReferenceEvaluator

    from relaylang.ir.lowp import from_lowp, to_lowp
    x = _floats(("narrow", name), (3, 5), scale=4.0)
    scale = np.array([0.5, 1.0, 2.0], np.float32)
    zvals = np.array([1, 0, 1], np.int8 if name.startswith("int") else np.uint8)
    zero = zvals.astype(getattr(ml_dtypes, name))
    q_model = _lowp_model("QuantizeLinear", TensorProto.FLOAT, x.shape, (3,), code, code,
                          axis=0)
    want = ReferenceEvaluator(q_model).run(None, {"x": x, "s": scale, "z": zero})[0]
    for target in ("interp", "llvm"):
        got = run_relay(q_model, {"x": x, "s": scale, "z": to_lowp(zvals, name)},
                        target=target)[0]
        np.testing.assert_array_equal(from_lowp(got), np.asarray(want).astype(zvals.dtype))
    dq_model = _lowp_model("DequantizeLinear", code, x.shape, (3,), code, TensorProto.FLOAT,
                           axis=-2)
    want_dq = ReferenceEvaluator(dq_model).run(None, {"x": want, "s": scale, "z": zero})[0]
    q = to_lowp(np.asarray(want).astype(zvals.dtype), name)
    for target in ("interp", "llvm"):
        got = run_relay(dq_model, {"x": q, "s": scale, "z": to_lowp(zvals, name)},
                        target=target)[0]
        np.testing.assert_array_equal(got, want_dq)


# ---------------------------------------------------------------- per-column / per-channel

def test_qlinear_matmul_per_column_b() -> None:
    n = 5
    inputs = {"a": _ints("pca", (2, 3, 4), "uint8"), "as": np.array(0.02, np.float32),
              "az": np.array(100, np.uint8), "b": _ints("pcb", (4, n), "uint8"),
              "bs": np.linspace(0.01, 0.05, n).astype(np.float32),
              "bz": _ints("pcbz", (n,), "uint8", 100, 150),
              "ys": np.array(0.7, np.float32), "yz": np.array(120, np.uint8)}
    model = _model("QLinearMatMul", inputs, 10, order=QMM_ORDER)
    check_model(model, inputs)
    check_reference(model, inputs)


def test_conv_integer_per_channel_w_zero_point() -> None:
    inputs = {"x": _ints("pcx", (1, 2, 4, 4), "uint8"), "w": _ints("pcw", (3, 2, 2, 2), "uint8"),
              "xz": np.array(7, np.uint8), "wz": np.array([1, 50, 200], np.uint8)}
    check_reference(_model("ConvInteger", inputs, 10, order=["x", "w", "xz", "wz"],
                           pads=[0, 1, 1, 0]), inputs)


def test_matmul_integer_per_row_a_zero_point() -> None:
    # a 1-D a_zero_point holds one entry per row of A (M), as the spec defines it
    inputs = {"A": _ints("pra", (3, 4), "uint8"), "B": _ints("prb", (4, 2), "uint8"),
              "az": np.array([1, 2, 3], np.uint8), "bz": np.array(5, np.uint8)}
    model = _model("MatMulInteger", inputs, 10, outputs=("Y",), order=["A", "B", "az", "bz"])
    got = run_relay(model, inputs)[0]
    want = (inputs["A"].astype(np.int32) - inputs["az"].astype(np.int32)[:, None]) @ (
        inputs["B"].astype(np.int32) - 5)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(run_relay(model, inputs, target="llvm")[0], want)


def test_scalar_input_with_one_element_parameters() -> None:
    inputs = {"x": np.array(-3.5, np.float32), "s": np.array([0.5], np.float32),
              "z": np.array([2], np.int8)}
    check_model(_model("QuantizeLinear", inputs, 13, order=["x", "s", "z"]), inputs)
    inputs = {"x": np.array(-3, np.int8), "s": np.array([0.5], np.float32),
              "z": np.array([2], np.int8)}
    check_model(_model("DequantizeLinear", inputs, 13, order=["x", "s", "z"]), inputs)
