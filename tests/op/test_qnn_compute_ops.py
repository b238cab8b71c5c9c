"""TVM's qnn compute ops (qnn.requantize, qnn.conv2d, qnn.dense, qnn.add, qnn.subtract,
qnn.mul, qnn.concatenate; relaylang/op/qnn): relations with TVM's checks, and NumPy
kernels against values worked out by hand from TVM's canonical forms (requantize's
UPWARD / TONEAREST rounding, saturation, per-channel scales, negative axes) and against
an exact rational reference of TVM's fixed-point requantization."""
from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.types import TensorType, TupleType
from relaylang.op import all_ops
from relaylang.op.qnn.fixed_point import fixed_point_multiplier_shift


def s(v, dtype="float32"):
    return np.array(v, dtype)


def i32(*v):
    return np.array(v, np.int32)


def f32(*v):
    return np.array(v, np.float32)


def u8(*v):
    return np.array(v, np.uint8)


def i8(*v):
    return np.array(v, np.int8)


F1, Z0 = s(1.0), s(0, "int32")
DATA = np.array([-3, -1, 0, 1, 2, 3, 1000], np.int32)

AGREEMENT = [
    # requantize, multiplier 0.5: UPWARD rounds halves up (-1.5 -> -1), TONEAREST away
    # from zero (-1.5 -> -2); 500 saturates to int8's 127
    ("qnn.requantize", [DATA, s(0.5), Z0, F1, Z0], {},
     i8(-1, 0, 0, 1, 1, 2, 127)),
    ("qnn.requantize", [DATA, s(0.5), Z0, F1, Z0], {"rounding": "UPWARD"},
     i8(-1, 0, 0, 1, 1, 2, 127)),
    ("qnn.requantize", [DATA, s(0.5), Z0, F1, Z0], {"rounding": "TONEAREST"},
     i8(-2, -1, 0, 1, 1, 2, 127)),
    ("qnn.requantize", [DATA, s(0.5), Z0, F1, Z0],
     {"rounding": "TONEAREST", "compute_dtype": "float32", "out_dtype": "int16"},
     np.array([-2, -1, 0, 1, 1, 2, 500], np.int16)),
    ("qnn.requantize", [DATA, s(0.5), Z0, F1, Z0],
     {"compute_dtype": "float64", "out_dtype": "int32"}, i32(-1, 0, 0, 1, 1, 2, 500)),
    # zero points, uint8 saturation at 0
    ("qnn.requantize", [i8(-128, 0, 127), s(0.25), s(-128, "int32"), s(0.5), s(-60, "int32")],
     {"out_dtype": "uint8"}, u8(0, 4, 68)),
    # per channel along the last axis (-1) and along axis 0
    ("qnn.requantize", [i8([10, 20], [30, 40]), f32(1.0, 0.25), i32(0, 4), F1, s(5, "int32")],
     {"axis": -1, "out_dtype": "uint8"}, u8([15, 9], [35, 14])),
    ("qnn.requantize", [i8([10, 20], [30, 40]), f32(1.0, 0.25), i32(0, 4), F1, s(5, "int32")],
     {"axis": 0, "out_dtype": "uint8"}, u8([15, 25], [12, 14])),      # 26 * 0.25 -> 7
    # conv2d: (x - 1) over 2x2 windows, kernel zero points per output channel
    ("qnn.conv2d", [np.arange(1, 10, dtype=np.uint8).reshape(1, 1, 3, 3),
                    np.array([1] * 4 + [3] * 4, np.int8).reshape(2, 1, 2, 2), s(1, "int32"),
                    i32(0, 1), s(0.5), f32(1, 2)], {"kernel_size": (2, 2), "channels": 2},
     np.array([[[[8, 12], [20, 24]], [[16, 24], [40, 48]]]], np.int32)),
    ("qnn.conv2d", [np.arange(1, 10, dtype=np.uint8).reshape(1, 3, 3, 1),
                    np.full((2, 2, 1, 1), 3, np.uint8), s(1, "int32"), s(1, "int32"), F1, F1],
     {"data_layout": "NHWC", "kernel_layout": "HWIO", "out_dtype": "int64"},
     np.array([[[[16], [24]], [[40], [48]]]], np.int64)),
    # conv2d_transpose: ([[1, 2], [3, 4]] - 1) spread by a 2x2 kernel of (2 - 1)
    ("qnn.conv2d_transpose", [u8([1, 2], [3, 4]).reshape(1, 1, 2, 2),
                              np.full((1, 1, 2, 2), 2, np.int8), s(1, "int32"), s(1, "int32"),
                              F1, F1], {"kernel_size": (2, 2), "channels": 1},
     np.array([0, 1, 1, 2, 6, 4, 2, 5, 3], np.int32).reshape(1, 1, 3, 3)),
    # avg_pool2d: requantized to scale 2 / zero point 1 (41 -> 20.5 -> 21 -> 22), then the
    # truncated integer average (6 + 11 + 16 + 22) / 4 = 13
    ("qnn.avg_pool2d", [u8([10, 20], [30, 41]).reshape(1, 1, 2, 2), F1, Z0, s(2.0),
                        s(1, "int32")], {"pool_size": (2, 2)}, u8(13).reshape(1, 1, 1, 1)),
    # dense: ([1, 2, 3] - 1) . (rows - [1, 2])
    ("qnn.dense", [i8([1, 2, 3]), u8([1, 1, 1], [5, 5, 5]), s(1, "int32"), i32(1, 2), F1,
                   f32(1, 1)], {"units": 2}, i32([0, 9])),
    # add: both operands to the output's scale 1 / zero point 10, added, zp subtracted
    ("qnn.add", [u8(10, 20, 255), u8(30, 40, 255), s(0.5), Z0, s(0.5), Z0, F1, s(10, "int32")],
     {}, u8(30, 40, 255)),
    ("qnn.add", [i8([10], [20]), i8(1, 2, 3), f32(0.5, 1.0), i32(0, 2), s(1.0), Z0, F1, Z0],
     {"lhs_axis": 0}, i8([6, 7, 8], [19, 20, 21])),
    ("qnn.subtract", [u8(10, 20), u8(30, 2), F1, Z0, F1, Z0, F1, Z0], {}, u8(0, 18)),
    ("qnn.subtract", [i8(10, 20), i8(30, 2), F1, Z0, F1, Z0, s(2.0), s(-3, "int32")], {},
     i8(-13, 6)),
    # mul: (3 * 5) and (-4 * 6) at scale 0.25, requantized to 0.25 and to 1 (3.75 -> 4)
    ("qnn.mul", [i8(3, -4), i8(5, 6), s(0.5), Z0, s(0.5), Z0, s(0.25), Z0], {}, i8(15, -24)),
    ("qnn.mul", [i8(3, -4), i8(5, 6), s(0.5), Z0, s(0.5), Z0, F1, Z0], {}, i8(4, -6)),
    ("qnn.mul", [u8([2, 3], [4, 5]), u8([2, 3], [4, 5]), f32(1, 0.5), i32(0, 1), f32(1, 2),
                 i32(1, 1), F1, Z0], {"lhs_axis": 1, "rhs_axis": 1}, u8([2, 4], [12, 16])),
    # concatenate: the second tensor requantized ((3 - 1) * 2 = 4)
    ("qnn.concatenate", [(u8(1, 2), u8(3)), (F1, s(2.0)), (Z0, s(1, "int32")), F1, Z0],
     {"axis": 0}, u8(1, 2, 4)),
    ("qnn.concatenate", [(i8([1], [2]), i8([3], [4])), (F1, F1), (Z0, Z0), F1, Z0],
     {"axis": -1}, i8([1, 3], [2, 4])),
]


def _type(x):
    if isinstance(x, tuple):
        return TupleType(tuple(_type(f) for f in x))
    return TensorType(tuple(x.shape), x.dtype.name)


@pytest.mark.parametrize("op, inputs, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_expected_values(op, inputs, kw, expected):
    promised = rel(op, *[_type(x) for x in inputs], **kw)
    out = run(op, *inputs, **kw)
    assert isinstance(promised, TensorType)
    assert promised.shape == out.shape and promised.dtype == out.dtype.name
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_every_qnn_compute_op_is_in_the_agreement_table():
    family = {d.name for d in all_ops() if d.package == "relaylang.op.qnn"}
    assert family - {"qnn.quantize", "qnn.dequantize"} == {c[0] for c in AGREEMENT}


# ---------------------------------------------------------------- requantize, exactly

def _reference(x: int, scale: float, zp: int, out_scale: float, out_zp: int, rounding: str,
               dtype: str) -> int:
    """TVM's int64 requantization in exact rationals: (x - zp) times the fixed-point
    multiplier, rounded (UPWARD: half up; TONEAREST: half away from zero), plus out_zp."""
    sig, exp = fixed_point_multiplier_shift(float(np.float32(scale)) /
                                            float(np.float32(out_scale)))
    v = Fraction(x - zp) * sig * Fraction(2) ** (exp - 31)
    r = (v + Fraction(1, 2)).__floor__()
    if rounding == "TONEAREST" and v < 0:
        r = -((-v + Fraction(1, 2)).__floor__())
    lo, hi = {"int8": (-128, 127), "uint8": (0, 255), "int16": (-32768, 32767)}[dtype]
    return min(max(r + out_zp, lo), hi)


@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16"])
def test_requantize_matches_exact_fixed_point_reference(rounding, dtype):
    rng = np.random.default_rng(3)
    x = rng.integers(-40000, 40000, 300).astype(np.int32)
    for scale, out_scale, zp, ozp in [(0.0123, 0.5, 7, 3), (2.5, 0.1, -100, 128),
                                      (0.5, 1.0, 0, 0), (1.0, 1.0, 1, 1), (3e-12, 1.0, 0, 5),
                                      (3.0, 0.01, 2, -2)]:
        out = run("qnn.requantize", x, s(scale), s(zp, "int32"), s(out_scale),
                  s(ozp, "int32"), rounding=rounding, out_dtype=dtype)
        want = [_reference(int(v), scale, zp, out_scale, ozp, rounding, dtype) for v in x]
        np.testing.assert_array_equal(out.astype(np.int64), want)
        # the fixed-point multiplier is the real one to 31 bits: within 1/2 (+ a hair)
        exact = (x.astype(np.float64) - zp) * (np.float32(scale) / np.float64(np.float32(
            out_scale))) + ozp
        lo, hi = np.iinfo(dtype).min, np.iinfo(dtype).max
        inside = (exact > lo + 1) & (exact < hi - 1)
        assert np.all(np.abs(out[inside] - exact[inside]) <= 0.5 + 1e-6 * np.abs(exact[inside]))


def test_fixed_point_multiplier_shift_is_tvms():
    assert fixed_point_multiplier_shift(0.0) == (0, 0)
    assert fixed_point_multiplier_shift(1.0) == (1 << 30, 1)
    assert fixed_point_multiplier_shift(0.5) == (1 << 30, 0)
    # a significand rounding up to 2^31 becomes 2^30 with the exponent one higher
    assert fixed_point_multiplier_shift(1.0 - 2.0 ** -40) == (1 << 30, 1)
    assert fixed_point_multiplier_shift(-0.75) == (-(3 << 29), 0)
    assert fixed_point_multiplier_shift(2.0 ** -40) == (0, 0)        # below 2^-32: zero


def test_conv2d_and_dense_wrap_in_the_accumulation_dtype():
    # int16 accumulation wraps as TVM's int16 conv2d does; huge zero points use int64
    x = np.full((1, 1, 1, 1), 100, np.int8)
    w = np.full((1, 1, 1, 1), 100, np.int8)
    out = run("qnn.conv2d", x, w, s(-200, "int32"), s(0, "int32"), F1, F1, out_dtype="int16")
    assert out.dtype == np.int16 and out.item() == np.int32(300 * 100).astype(np.int16)
    d = np.array([[127, -128]], np.int8)
    k = np.array([[255, 0]], np.uint8)
    out = run("qnn.dense", d, k, s(-(2 ** 30), "int32"), s(2 ** 30, "int32"), F1, F1, units=1)
    exact = (127 + 2 ** 30) * (255 - 2 ** 30) + (-128 + 2 ** 30) * (0 - 2 ** 30)
    assert out.item() == np.uint64(exact % (1 << 64)).astype(np.int32)


def test_requantize_output_scale_zero_is_an_error():
    with pytest.raises(ValueError, match="output_scale is 0"):
        run("qnn.requantize", DATA, s(0.5), Z0, s(0.0), Z0)


# ---------------------------------------------------------------- relations

def eq(a, b) -> bool:
    return rl.structural_equal(a, b)


def test_relations_shapes_and_dtypes():
    f, i = T(()), T((), "int32")
    assert eq(rel("qnn.requantize", T((2, 3), "int32"), T((3,)), T((3,), "int32"), f, i,
                  out_dtype="uint8"), TensorType((2, 3), "uint8"))
    assert rel("qnn.requantize", T((2, 3), "int64"), T((2,)), i, f, i, axis=0).dtype == "int8"
    assert rel("qnn.requantize", T((), "int8"), f, i, f, i).shape == ()
    out = rel("qnn.conv2d", T((1, 4, 5, 5), "int8"), T((6, 4, 3, 3), "int8"), i,
              T((6,), "int32"), f, T((6,)), padding=(1, 1))
    assert eq(out, TensorType((1, 6, 5, 5), "int32"))
    out = rel("qnn.conv2d", T((1, 5, 5, 4), "uint8"), T((3, 3, 4, 6), "int8"), i, i, f, f,
              data_layout="NHWC", kernel_layout="HWIO", out_dtype="int16")
    assert eq(out, TensorType((1, 3, 3, 6), "int16"))
    assert eq(rel("qnn.dense", T((2, 3), "int8"), T((4, 3), "uint8"), i, T((4,), "int32"),
                  f, T((4,)), units=None), TensorType((2, 4), "int32"))
    assert eq(rel("qnn.add", T((2, 1, 3), "uint8"), T((5, 1), "uint8"), T((3,)),
                  T((3,), "int32"), f, i, f, i), TensorType((2, 5, 3), "uint8"))
    assert rel("qnn.mul", T((4,), "int8"), T((), "int8"), f, i, f, i, f, i).shape == (4,)
    tup = TupleType((T((2, 3), "int8"), T((2, 5), "int8")))
    two_f, two_i = TupleType((f, f)), TupleType((i, i))
    assert eq(rel("qnn.concatenate", tup, two_f, two_i, f, i, axis=-1),
              TensorType((2, 8), "int8"))


def test_conv2d_transpose_and_avg_pool2d_relations():
    f, i = T(()), T((), "int32")
    out = rel("qnn.conv2d_transpose", T((1, 4, 5, 5), "int8"), T((4, 6, 3, 3), "int8"),
              T((1,), "int32"), T((6,), "int32"), T((1,)), T((6,)), padding=(1, 1))
    assert eq(out, TensorType((1, 6, 5, 5), "int32"))
    rel_error("qnn.conv2d_transpose", [T((1, 4, 5, 5), "int8"), T((4, 6, 3, 3), "int8"),
                                       T((2,), "int32"), i, f, f], "vector of one element", 2)
    out = rel("qnn.avg_pool2d", T((1, 5, 5, 3), "uint8"), f, i, f, i, pool_size=(3, 3),
              layout="NHWC")
    assert eq(out, TensorType((1, 3, 3, 3), "uint8"))
    rel_error("qnn.avg_pool2d", [T((1, 5, 5, 3), "int32"), f, i, f, i], "data must be one of",
              0, pool_size=(3, 3))


def test_relation_errors():
    f, i = T(()), T((), "int32")
    rel_error("qnn.requantize", [T((2, 3)), f, i, f, i], "data must be one of", 0)
    rel_error("qnn.requantize", [T((2, 3), "int8"), T((2,)), i, f, i], "has 2 entries", 1)
    rel_error("qnn.requantize", [T((2, 3), "int8"), f, T((), "int8"), f, i],
              "input_zero_point must be int32", 2)
    rel_error("qnn.requantize", [T((2, 3), "int8"), f, i, T((3,)), i],
              "output_scale must be a scalar", 3)
    rel_error("qnn.requantize", [T((2, 3), "int8"), f, i, f, i], "out_dtype", None,
              out_dtype="int64")
    rel_error("qnn.requantize", [T((2, 3), "int8"), f, i, f, i], "rounding", None,
              rounding="DOWN")
    rel_error("qnn.requantize", [T((2, 3), "int8"), f, i, f, i], "out of range", 0, axis=2)
    rel_error("qnn.conv2d", [T((1, 4, 5, 5)), T((6, 4, 3, 3), "int8"), i, i, f, f],
              "data must be one of", 0)
    rel_error("qnn.conv2d", [T((1, 4, 5, 5), "int8"), T((6, 4, 3, 3), "int8"), i, i, f,
                             T((4,))], "kernel_scale has 4 entries", 5)
    rel_error("qnn.conv2d", [T((1, 4, 5, 5), "int8"), T((6, 4, 3, 3), "int8"), T((1,), "int32"),
                             i, f, f], "input_zero_point must be a scalar", 2)
    rel_error("qnn.dense", [T((2, 3), "int8"), T((4, 3), "int16"), i, i, f, f],
              "weight must be one of", 1)
    rel_error("qnn.dense", [T((2, 3), "int8"), T((4, 3), "int8"), i, i, f, f], "out_dtype",
              None, out_dtype="int16")
    rel_error("qnn.add", [T((2,), "int8"), T((2,), "uint8"), f, i, f, i, f, i],
              "rhs has dtype uint8", 1)
    rel_error("qnn.add", [T((2,), "float32"), T((2,), "float32"), f, i, f, i, f, i],
              "integer tensor", 0)
    rel_error("qnn.add", [T((2, 3), "int8"), T((2, 3), "int8"), T((2,)), i, f, i, f, i],
              "lhs_scale has 2 entries", 2)
    rel_error("qnn.subtract", [T((2,), "int8"), T((3,), "int8"), f, i, f, i, f, i],
              "", 1)
    rel_error("qnn.mul", [T((2, 3), "int8"), T((2, 3), "int8"), T((3,)), i, f, i, f, i],
              "lhs_axis == rhs_axis", None, rhs_axis=0)
    tup = TupleType((T((2, 3), "int8"), T((2, 5), "int8")))
    rel_error("qnn.concatenate", [tup, TupleType((T(()),)), TupleType((i, i)), T(()), i],
              "input_scales has 1 entries for 2 tensors", 1)
    rel_error("qnn.concatenate", [tup, T(()), TupleType((i, i)), T(()), i],
              "tuple of scales", 1)
    rel_error("qnn.concatenate", [tup, TupleType((T(()), T((2,)))), TupleType((i, i)),
                                  T(()), i], "entry 1 of input_scales", 1)


# ---------------------------------------------------------------- TVM's op tests' values

def test_add_matches_tvms_tflite_different_io_qnn_params():
    # tests/python/relay/test_op_qnn_add.py::test_tflite_different_io_qnn_params (its three
    # (1, 4) cases as the rows of one (3, 4) call)
    x = np.array([[76, 140, 153, 172], [133, 140, 146, 153], [76, 140, 172, 146]], np.uint8)
    y = np.array([[136, 119, 128, 17], [136, 119, 111, 94], [136, 119, 17, 128]], np.uint8)
    want = np.array([[120, 154, 167, 124], [158, 154, 154, 150], [120, 154, 124, 163]],
                    np.uint8)
    out = run("qnn.add", x, y, s(0.0156863), s(127, "int32"), s(0.0117647), s(85, "int32"),
              s(0.0235294), s(128, "int32"))
    np.testing.assert_array_equal(out, want)


@pytest.mark.parametrize("compute", ["float32", "float64", "int64"])
@pytest.mark.parametrize("rounding", ["UPWARD", "TONEAREST"])
def test_requantize_matches_tvms_downscale(compute, rounding):
    # tests/python/relay/test_op_qnn_requantize.py::test_downscale (scale 1 -> 16)
    up = np.arange(0, 32, dtype=np.int32)
    out = run("qnn.requantize", up, F1, Z0, s(16.0), Z0, rounding=rounding,
              compute_dtype=compute, out_dtype="int16")
    np.testing.assert_array_equal(out, np.repeat([0, 1, 2], [8, 16, 8]))
    out = run("qnn.requantize", -up, F1, Z0, s(16.0), Z0, rounding=rounding,
              compute_dtype=compute, out_dtype="int16")
    counts = [9, 16, 7] if rounding == "UPWARD" else [8, 16, 8]
    np.testing.assert_array_equal(out, np.repeat([0, -1, -2], counts))
