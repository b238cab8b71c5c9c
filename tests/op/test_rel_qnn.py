"""The qnn family (qnn.quantize, qnn.dequantize): relations (per-tensor, per-axis and
blocked scales, negative axes, size-1 dims, clear errors) and NumPy kernels against
element-by-element Python references (Python's round() rounds half to even), with the
float16 / bfloat16 division precisions, NaN and infinities, and the low-precision
output dtypes."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.types import TensorType
from relaylang.op import all_ops

RNG = np.random.default_rng(7)


def eq(a, b) -> bool:
    return rl.structural_equal(a, b)


def f32(*v):
    return np.array(v, np.float32)


def s(v, dtype="float32"):
    return np.array(v, dtype)


AGREEMENT = [
    # per tensor: half to even (2.5 -> 2, 3.5 -> 4, -2.5 -> -2), saturation, NaN -> low end
    ("qnn.quantize", [f32(0, 5, 7, 1000, -1000, 4.9, -5, np.nan), s(2.0), s(128, "uint8")],
     {"out_dtype": "uint8"}, np.array([128, 130, 132, 255, 0, 130, 126, 0], np.uint8)),
    ("qnn.quantize", [f32(0.5, 1.5, -0.5, -1.5, 200, -200, np.inf, -np.inf), s(1.0),
                      s(0, "int8")], {"out_dtype": "int8"},
     np.array([0, 2, 0, -2, 127, -128, 127, -128], np.int8)),
    # per axis (axis 1 of (2, 3)), a negative axis, a one-element scale
    ("qnn.quantize", [f32([1, 2, 3], [4, 5, 6]).reshape(2, 3), f32(1, 2, 4),
                      np.array([0, 1, -1], np.int8)], {"out_dtype": "int8", "axis": 1},
     np.array([[1, 2, 0], [4, 3, 1]], np.int8)),
    ("qnn.quantize", [f32([1, 2, 3], [4, 5, 6]).reshape(2, 3), f32(1, 2, 4),
                      np.array([0, 1, -1], np.int8)], {"out_dtype": "int8", "axis": -1},
     np.array([[1, 2, 0], [4, 3, 1]], np.int8)),
    ("qnn.quantize", [f32(3, 9).reshape(2, 1), f32(3), np.array([1], np.uint8)],
     {"out_dtype": "uint8", "axis": 1}, np.array([[2], [4]], np.uint8)),
    # blocked: (2, 5) data, blocks of 2 along axis 1 -> 3 scales per row (the last block short)
    ("qnn.quantize", [np.arange(10, dtype=np.float32).reshape(2, 5),
                      f32([1, 2, 4], [1, 1, 2]).reshape(2, 3), np.zeros((2, 3), np.int16)],
     {"out_dtype": "int16", "axis": 1, "block_size": 2},
     np.array([[0, 1, 1, 2, 1], [5, 6, 7, 8, 4]], np.int16)),
    # int32 data divides in the scale's dtype; wide outputs
    ("qnn.quantize", [np.array([7, -7, 100000], np.int32), s(2.0), s(3, "int32")],
     {"out_dtype": "int32"}, np.array([7, -1, 50003], np.int32)),
    ("qnn.quantize", [f32(-1, 70000), s(1.0), s(0, "uint16")], {"out_dtype": "uint16"},
     np.array([0, 65535], np.uint16)),
    # float16 data and scale: the quotient is rounded to float16 before rounding to int
    ("qnn.quantize", [np.array([2049.0], np.float16), np.array(2.0, np.float16),
                      s(0, "int16")], {"out_dtype": "int16"}, np.array([1024], np.int16)),
    # dequantize: per tensor, per axis, blocked, int32, float16 and float64 results
    ("qnn.dequantize", [np.array([0, 3, 255], np.uint8), s(0.5), s(3, "uint8")], {},
     f32(-1.5, 0, 126)),
    ("qnn.dequantize", [np.array([[-128, 0, 127]], np.int8), f32(1, 2, 0.25),
                        np.array([1, 0, -1], np.int8)], {"axis": -1},
     f32(-129, 0, 32).reshape(1, 3)),
    ("qnn.dequantize", [np.arange(6, dtype=np.int8).reshape(3, 2), f32([1, 1], [10, 10]),
                        np.zeros((2, 2), np.int8)], {"axis": 0, "block_size": 2},
     f32([0, 1], [2, 3], [40, 50])),
    # int32 data: converted to float32 first (2**30 + 1 rounds), the rest exact in float64
    ("qnn.dequantize", [np.array([2 ** 30 + 1, -(2 ** 31)], np.int32), s(1.0),
                        s(1, "int32")], {"out_dtype": "float64"},
     np.array([2.0 ** 30 - 1, -(2.0 ** 31) - 1], np.float64)),
    ("qnn.dequantize", [np.array([1, 2], np.int16), np.array(0.5, np.float16), s(0, "int16")],
     {"out_dtype": "float16"}, np.array([0.5, 1.0], np.float16)),
]


@pytest.mark.parametrize("op, inputs, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_expected_values(op, inputs, kw, expected):
    promised = rel(op, *[TensorType(tuple(x.shape), x.dtype.name) for x in inputs], **kw)
    out = run(op, *inputs, **kw)
    assert isinstance(promised, TensorType)
    assert promised.shape == out.shape and promised.dtype == out.dtype.name
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_every_qnn_op_is_in_the_agreement_table():
    # the compute ops (qnn.requantize, qnn.conv2d, ...) are in test_qnn_compute_ops.py
    family = {d.name for d in all_ops() if d.package == "relaylang.op.qnn"}
    assert {"qnn.quantize", "qnn.dequantize"} == {c[0] for c in AGREEMENT}
    assert {"qnn.quantize", "qnn.dequantize"} <= family


# ---------------------------------------------------------------- relations

def test_relation_shapes_and_dtypes():
    x = T((2, 3, 4))
    assert eq(rel("qnn.quantize", x, T(()), T((), "uint8"), out_dtype="uint8"),
              TensorType((2, 3, 4), "uint8"))
    assert rel("qnn.quantize", x, T((3,)), T((3,), "int8"), axis=1).dtype == "int8"
    assert rel("qnn.quantize", x, T((4,)), T((), "int8"), axis=-1).shape == (2, 3, 4)
    assert rel("qnn.quantize", x, T((1,)), T((1,), "int8"), axis=1).shape == (2, 3, 4)
    assert rel("qnn.quantize", x, T((2, 3, 2)), T((2, 3, 2), "int4"), out_dtype="int4",
               axis=2, block_size=3).dtype == "int4"
    assert rel("qnn.quantize", x, T(()), T((), "float32"),
               out_dtype="float8_e4m3fn").dtype == "float8_e4m3fn"
    assert eq(rel("qnn.dequantize", T((2, 3), "int8"), T((3,)), T((3,), "int8"), axis=-1),
              TensorType((2, 3), "float32"))
    assert rel("qnn.dequantize", T((5,), "uint4"), T((), "float16"), T((), "uint4"),
               out_dtype="float16").dtype == "float16"
    assert rel("qnn.dequantize", T((4, 6), "int16"), T((2, 6)), T((2, 6), "int16"),
               axis=0, block_size=2).shape == (4, 6)


def test_relation_errors():
    x = T((2, 3, 4))
    rel_error("qnn.quantize", [x, T((4,)), T((4,), "int8")], "has 3 along axis", 1, axis=1)
    rel_error("qnn.quantize", [x, T((2, 3)), T((), "int8")], "scalar or a vector", 1)
    rel_error("qnn.quantize", [x, T(()), T((), "int8")], "out_dtype must be",
              out_dtype="float32")
    rel_error("qnn.quantize", [x, T(()), T((), "float32")], "must be an integer", 2)
    rel_error("qnn.quantize", [T((2,), "int8"), T(()), T((), "int8")], "float or int32", 0)
    rel_error("qnn.quantize", [x, T((), "int32"), T((), "int8")], "float tensor", 1)
    rel_error("qnn.quantize", [x, T((3,)), T((2,), "int8")], "zero point has shape", 2,
              axis=1)
    rel_error("qnn.quantize", [x, T((3,)), T((3,), "int8")], "out of range", 0, axis=3)
    rel_error("qnn.quantize", [x, T((2, 3, 2)), T((2, 3, 2), "int8")], "ceil(4 / block_size",
              1, axis=2, block_size=1)
    rel_error("qnn.quantize", [x, T((2, 2)), T((2, 2), "int8")], "the data's rank", 1,
              axis=2, block_size=2)
    rel_error("qnn.quantize", [x, T(()), T((), "int8")], "block_size must be", block_size=-1)
    rel_error("qnn.dequantize", [T((2,)), T(()), T((), "int8")], "data must be", 0)
    rel_error("qnn.dequantize", [T((2,), "int8"), T(()), T((), "float32")], "zero_point", 2)
    rel_error("qnn.dequantize", [T((2,), "int8"), T(()), T((), "int8")], "out_dtype must be",
              out_dtype="int32")


# ---------------------------------------------------------------- kernels vs Python

def _expand_index(idx, pshape, axis, block):
    if not pshape or (len(pshape) == 1 and pshape[0] == 1 and not block):
        return (0,) * len(pshape)
    if block:
        out = list(idx)
        out[axis] = idx[axis] // block
        return tuple(out)
    return (idx[axis],)


def py_quantize(x, scale, zero, axis, block, lo, hi):
    """Element by element: float32 division, Python's round (half to even), saturation."""
    out = np.zeros(x.shape, np.int64)
    axis = axis % max(x.ndim, 1)
    for idx in itertools.product(*[range(d) for d in x.shape]):
        k = _expand_index(idx, scale.shape, axis, block)
        q = float(np.float32(x[idx]) / np.float32(scale[k]))
        r = lo if math.isnan(q) else round(q) if math.isfinite(q) else (hi if q > 0 else lo)
        out[idx] = min(max(r + int(zero[k]), lo), hi)
    return out


@pytest.mark.parametrize("shape, pshape, axis, block", [
    ((7,), (), 0, 0), ((1,), (1,), 0, 0), ((3, 1, 5), (5,), -1, 0), ((3, 1, 5), (1,), 1, 0),
    ((2, 5, 3), (5,), 1, 0), ((2, 5, 3), (2, 2, 3), 1, 3), ((4, 3), (2, 3), -2, 2),
    ((1, 7), (1, 3), 1, 3)])
@pytest.mark.parametrize("out", ["int8", "uint8", "int16"])
def test_quantize_matches_python(shape, pshape, axis, block, out):
    lo, hi = (np.iinfo(out).min, np.iinfo(out).max)
    x = (RNG.standard_normal(shape) * 60).astype(np.float32)
    x.flat[::3] = np.round(x.flat[::3]) + 0.5          # ties
    scale = (RNG.integers(1, 4, size=pshape) / 2.0).astype(np.float32)
    zero = RNG.integers(lo // 2, hi // 2, size=pshape).astype(out)
    got = run("qnn.quantize", x, scale, zero, axis=axis, block_size=block, out_dtype=out)
    np.testing.assert_array_equal(got, py_quantize(x, scale, zero, axis, block, lo, hi))
    assert got.dtype == np.dtype(out)
    back = run("qnn.dequantize", got, scale, zero, axis=axis, block_size=block)
    want = np.zeros(shape, np.float32)
    for idx in itertools.product(*[range(d) for d in shape]):
        k = _expand_index(idx, pshape, axis % len(shape), block)
        want[idx] = np.float32(float(int(got[idx]) - int(zero[k])) * float(scale[k]))
    np.testing.assert_array_equal(back, want)


def test_quantize_division_precision():
    # float16 / float16 rounds the quotient to float16 before rounding to an integer:
    # 2.25 / 0.3 is 7.4988 in float32 but 7.5 in float16 (-> 8); 1.25 / 0.1 is 12.503 in
    # float32 but 12.5 in float16 (-> 12, half to even)
    x16 = np.array([2.25, 1.25], np.float16)
    for scale, want in ((0.3, 8), (0.1, 12)):
        got = run("qnn.quantize", x16[[0 if scale == 0.3 else 1]], np.array(scale, np.float16),
                  s(0, "int8"), out_dtype="int8")
        np.testing.assert_array_equal(got, np.array([want], np.int8))
    # float32 data with a float16 scale divides in float32: 12.503 -> 13
    got = run("qnn.quantize", f32(1.25), np.array(0.1, np.float16), s(0, "int8"),
              out_dtype="int8")
    np.testing.assert_array_equal(got, np.array([13], np.int8))
    # a float64 scale divides in float64: float32(0.35) / 0.1 is 3.49999994 there (-> 3)
    # but 3.5 with the scale in float32 (-> 4, half to even)
    got = run("qnn.quantize", f32(0.35), s(0.1, "float64"), s(0, "int8"), out_dtype="int8")
    np.testing.assert_array_equal(got, np.array([3], np.int8))
    got = run("qnn.quantize", f32(0.35), s(0.1, "float32"), s(0, "int8"), out_dtype="int8")
    np.testing.assert_array_equal(got, np.array([4], np.int8))


def test_bfloat16_scale_and_result():
    from relaylang.op.numpy_support import from_bfloat16, to_bfloat16
    scale = to_bfloat16(np.array(0.5, np.float32))
    got = run("qnn.dequantize", np.array([1, -3], np.int8), scale, s(0, "int8"),
              out_dtype="bfloat16")
    np.testing.assert_array_equal(from_bfloat16(got), f32(0.5, -1.5))
    x = to_bfloat16(f32(2.5, 3.0, -7.0))
    got = run("qnn.quantize", x, scale, s(1, "int8"), out_dtype="int8")
    np.testing.assert_array_equal(got, np.array([6, 7, -13], np.int8))


def test_low_precision_outputs():
    lowp = pytest.importorskip("relaylang.ir.lowp")
    x = f32(-20, -3.4, 0.6, 1.5, 2.5, 30)
    got = run("qnn.quantize", x, s(1.0), s(0, "int8"), out_dtype="int4")
    np.testing.assert_array_equal(lowp.from_lowp(got), np.array([-8, -3, 1, 2, 2, 7], np.int8))
    got = run("qnn.quantize", x, s(1.0), s(1, "uint8"), out_dtype="uint2")
    np.testing.assert_array_equal(lowp.from_lowp(got), np.array([0, 0, 2, 3, 3, 3], np.uint8))
    back = run("qnn.dequantize", lowp.to_lowp(np.array([-8, 7], np.int8), "int4"), s(0.5),
               lowp.to_lowp(np.array(1, np.int8), "int4"))
    np.testing.assert_array_equal(back, f32(-4.5, 3.0))
    # float8 e4m3fn: the largest finite value is 448; saturating clamps 1000 and inf to it,
    # without saturation they become NaN (e4m3fn has no infinity)
    y = f32(1000.0, -np.inf, 0.3, -0.0)
    sat = lowp.from_lowp(run("qnn.quantize", y, s(1.0), s(0.0), out_dtype="float8_e4m3fn"))
    np.testing.assert_array_equal(sat[:2], f32(448, -448))
    assert sat[2] == np.float32(0.3125) and np.signbit(sat[3])
    raw = lowp.from_lowp(run("qnn.quantize", y, s(1.0), s(0.0), out_dtype="float8_e4m3fn",
                             saturate=False))
    assert np.isnan(raw[:2]).all()
    # float4_e2m1fn always saturates (largest 6); a nonzero zero point is added
    got = lowp.from_lowp(run("qnn.quantize", f32(1.0, 100.0), s(1.0), s(0.5),
                             out_dtype="float4_e2m1fn"))
    np.testing.assert_array_equal(got, f32(1.5, 6.0))
    e5 = lowp.to_lowp(f32(1.5, -57344.0), "float8_e5m2")
    np.testing.assert_array_equal(run("qnn.dequantize", e5, s(2.0), s(0.0)),
                                  f32(3.0, -114688.0))
