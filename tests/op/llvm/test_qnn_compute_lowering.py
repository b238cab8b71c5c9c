"""TVM's qnn compute ops natively: rl.build rewrites them with QnnCanonicalize
(relaylang/transform/qnn_canonicalize.py) and the LLVM backend computes the result; the
values must be the interpreter's (the NumPy kernels) bit for bit. Awkward shapes: size-1
and odd dimensions, per-channel scales and zero points, negative axes, int8 / uint8 /
int16 / int32 data, both roundings and the three compute dtypes, saturation."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.ir.expr import Op
from relaylang.ir.traverse import post_order

RNG = np.random.default_rng(11)


def c(value, dtype):
    return rl.const(np.asarray(value).astype(dtype), dtype)


def ints(shape, dtype, lo=None, hi=None):
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    return RNG.integers(lo, hi, size=shape, endpoint=True).astype(dtype)


def scales(n, lo=0.01, hi=2.0):
    return c(RNG.uniform(lo, hi, size=n), "float32")


def zps(n, lo=-20, hi=20):
    return c(RNG.integers(lo, hi, size=n), "int32")


def native_equals_interpreter(params, body, *args, fallback=()):
    mod = rl.IRModule.from_expr(rl.Function(params, body))
    expected = rl.evaluate(mod, *args)
    lib = rl.build(mod, target="llvm")
    assert sorted(lib.fallback_ops) == sorted(fallback)
    got = lib(*args)
    pairs = zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]
    for want, have in pairs:
        want, have = np.asarray(want), np.asarray(have)
        assert have.dtype == want.dtype and have.shape == want.shape
        np.testing.assert_array_equal(have, want)


REQUANT = [
    # (shape, dtype, axis, per_channel, rounding, compute, out_dtype)
    ((7,), "int32", -1, False, "None", "None", "int8"),
    ((1,), "int8", 0, True, "UPWARD", "int64", "uint8"),
    ((3, 1, 5), "int32", -1, True, "TONEAREST", "int64", "int8"),
    ((3, 1, 5), "int32", 1, True, "UPWARD", "int64", "int16"),
    ((2, 5, 3), "uint8", -2, True, "TONEAREST", "float32", "int8"),
    ((2, 5, 3), "int16", 1, False, "UPWARD", "float64", "int32"),
    ((4, 3), "int32", 0, True, "UPWARD", "float32", "uint8"),
    ((5,), "int64", 0, False, "TONEAREST", "int64", "int32"),
]


@pytest.mark.parametrize("shape, dtype, axis, per_channel, rounding, compute, out", REQUANT)
def test_requantize(shape, dtype, axis, per_channel, rounding, compute, out):
    x = rl.var("x", shape=shape, dtype=dtype)
    n = shape[axis] if per_channel else ()
    lo, hi = (-5000, 5000) if dtype in ("int32", "int64") else (None, None)
    data = ints(shape, dtype, lo, hi)
    body = rl.qnn.requantize(x, scales(n, 0.001, 3.0), zps(n), c(0.37, "float32"),
                             c(RNG.integers(-9, 9), "int32"), axis=axis, rounding=rounding,
                             compute_dtype=compute, out_dtype=out)
    native_equals_interpreter([x], body, data)


def test_requantize_ties_and_saturation():
    # multipliers 0.5 and 2: every odd input is a tie; large inputs saturate
    x = rl.var("x", shape=(3, 9), dtype="int32")
    data = np.array([np.arange(-4, 5), np.arange(-4, 5) * 50, [2 ** 20] * 9], np.int32)
    outs = []
    for rounding in ("UPWARD", "TONEAREST"):
        for compute in ("int64", "float32", "float64"):
            for scale in ((0.5, 0.5, 0.5), (1.0, 0.5, 2.0)):
                outs.append(rl.qnn.requantize(
                    x, c(scale, "float32"), c(0, "int32"), c(1.0, "float32"), c(0, "int32"),
                    axis=0, rounding=rounding, compute_dtype=compute, out_dtype="int8"))
    native_equals_interpreter([x], rl.Tuple(outs), data)


@pytest.mark.parametrize("layout, dtype, groups, per_channel", [
    (("NCHW", "OIHW"), "int8", 1, True),
    (("NHWC", "HWIO"), "uint8", 1, True),
    (("NCHW", "OIHW"), "uint8", 3, False),
    (("NHWC", "HWIO"), "int8", 3, True),
])
def test_conv2d_then_requantize(layout, dtype, groups, per_channel):
    data_layout, kernel_layout = layout
    n, ci, h, w, co, k = 1, 3, 5, 7, 3 if groups == 3 else 4, 3
    dshape = {"NCHW": (n, ci, h, w), "NHWC": (n, h, w, ci)}[data_layout]
    per = {"O": co, "I": ci // groups, "H": k, "W": k}
    wshape = tuple(per[a] for a in kernel_layout)
    x = rl.var("x", shape=dshape, dtype=dtype)
    wt = rl.var("w", shape=wshape, dtype="int8")
    ch = co if per_channel else ()
    y = rl.qnn.conv2d(x, wt, c(RNG.integers(0, 9), "int32"), zps(ch, -3, 3), c(0.5, "float32"),
                      scales(ch), channels=co, kernel_size=(k, k), padding=(1, 2),
                      strides=(1, 2), groups=groups, data_layout=data_layout,
                      kernel_layout=kernel_layout)
    axis = data_layout.index("C") - 4                  # negative: from the back
    y = rl.qnn.requantize(y, scales(ch, 0.001, 0.01), zps(ch), c(0.5, "float32"),
                          c(3, "int32"), axis=axis, out_dtype=dtype)
    native_equals_interpreter([x, wt], y, ints(dshape, dtype), ints(wshape, "int8"))


@pytest.mark.parametrize("layout, strides, per_channel", [
    (("NCHW", "IOHW"), (1, 1), True), (("NHWC", "HWIO"), (2, 1), False),
    (("NCHW", "OIHW"), (2, 2), True)])
def test_conv2d_transpose(layout, strides, per_channel):
    data_layout, kernel_layout = layout
    dshape = {"NCHW": (1, 3, 4, 5), "NHWC": (1, 4, 5, 3)}[data_layout]
    per = {"O": 2, "I": 3, "H": 3, "W": 2}
    wshape = tuple(per[a] for a in kernel_layout)
    x = rl.var("x", shape=dshape, dtype="uint8")
    wt = rl.var("w", shape=wshape, dtype="int8")
    ch = 2 if per_channel else ()
    y = rl.qnn.conv2d_transpose(x, wt, c(5, "int32"), zps(ch, -3, 3), c(0.5, "float32"),
                                scales(ch), channels=2, kernel_size=(3, 2), padding=(1, 0),
                                strides=strides, data_layout=data_layout,
                                kernel_layout=kernel_layout)
    native_equals_interpreter([x, wt], y, ints(dshape, "uint8"), ints(wshape, "int8"))


@pytest.mark.parametrize("layout, dtype, pool, padding, include_pad", [
    ("NCHW", "int8", (3, 3), (1, 1), True), ("NHWC", "uint8", (2, 3), (0, 1), False),
    ("NCHW", "uint8", (1, 1), (0, 0), False)])
def test_avg_pool2d(layout, dtype, pool, padding, include_pad):
    shape = {"NCHW": (2, 3, 5, 7), "NHWC": (2, 5, 7, 3)}[layout]
    x = rl.var("x", shape=shape, dtype=dtype)
    y = rl.qnn.avg_pool2d(x, c(0.7, "float32"), c(-3, "int32"), c(0.4, "float32"),
                          c(2, "int32"), pool_size=pool, padding=padding, strides=(2, 1),
                          layout=layout, count_include_pad=include_pad)
    native_equals_interpreter([x], y, ints(shape, dtype))


@pytest.mark.parametrize("dshape, units, wdtype, per_channel", [
    ((1, 1), 1, "int8", False), ((3, 7), 5, "uint8", True), ((2, 1, 9), 3, "int8", True)])
def test_dense(dshape, units, wdtype, per_channel):
    x = rl.var("x", shape=dshape, dtype="uint8")
    wt = rl.var("w", shape=(units, dshape[-1]), dtype=wdtype)
    ch = units if per_channel else ()
    y = rl.qnn.dense(x, wt, c(7, "int32"), zps(ch), c(0.5, "float32"), scales(ch), units=units)
    native_equals_interpreter([x, wt], y, ints(dshape, "uint8"), ints((units, dshape[-1]),
                                                                      wdtype))


@pytest.mark.parametrize("op", ["add", "subtract", "mul"])
@pytest.mark.parametrize("lshape, rshape, dtype, per_channel", [
    ((1,), (1,), "int8", False),
    ((2, 1, 3), (5, 1), "uint8", False),
    ((2, 5, 3), (2, 5, 3), "int8", True),
    ((3, 5), (5,), "uint8", True),
    ((4, 1), (4, 1), "int32", False),
])
def test_binary(op, lshape, rshape, dtype, per_channel):
    a = rl.var("a", shape=lshape, dtype=dtype)
    b = rl.var("b", shape=rshape, dtype=dtype)
    lch = lshape[-1] if per_channel else ()
    rch = rshape[-1] if per_channel else ()
    small = op == "mul" and dtype == "int32"
    y = getattr(rl.qnn, op)(a, b, scales(lch), zps(lch), scales(rch), zps(rch),
                            c(0.3 if op != "mul" else 0.9, "float32"), c(5, "int32"),
                            lhs_axis=-1, rhs_axis=-1)
    lo, hi = (-3000, 3000) if small or dtype == "int32" else (None, None)
    native_equals_interpreter([a, b], y, ints(lshape, dtype, lo, hi), ints(rshape, dtype, lo, hi))


def test_mul_per_channel_along_a_middle_axis():
    a = rl.var("a", shape=(2, 3, 1), dtype="int8")
    b = rl.var("b", shape=(2, 3, 1), dtype="int8")
    y = rl.qnn.mul(a, b, scales(3), zps(3), c(0.25, "float32"), zps(3), c(0.1, "float32"),
                   c(-2, "int32"), lhs_axis=-2, rhs_axis=-2)
    native_equals_interpreter([a, b], y, ints((2, 3, 1), "int8"), ints((2, 3, 1), "int8"))


@pytest.mark.parametrize("axis", [0, -1, 1])
def test_concatenate(axis):
    a = rl.var("a", shape=(3, 1, 2), dtype="uint8")
    b = rl.var("b", shape=(3, 1, 2), dtype="uint8")
    y = rl.qnn.concatenate([a, rl.qnn.requantize(b, c(1.0, "float32"), c(0, "int32"),
                                                 c(1.0, "float32"), c(0, "int32"),
                                                 out_dtype="uint8"), a],
                           [c(0.2, "float32"), c(0.4, "float32"), c(0.5, "float32")],
                           [c(3, "int32"), c(128, "int32"), c(7, "int32")],
                           c(0.5, "float32"), c(7, "int32"), axis=axis)
    native_equals_interpreter([a, b], y, ints((3, 1, 2), "uint8"), ints((3, 1, 2), "uint8"))


def test_run_time_scales_run_the_kernel():
    # a scale computed at run time cannot be canonicalized: the op runs its NumPy kernel
    x = rl.var("x", shape=(5,), dtype="int8")
    s = rl.var("s", shape=(), dtype="float32")
    y = rl.qnn.requantize(x, s, c(1, "int32"), c(0.5, "float32"), c(0, "int32"))
    native_equals_interpreter([x, s], y, ints((5,), "int8"), np.array(0.3, np.float32),
                              fallback=["qnn.requantize"])


def test_canonical_form_has_no_qnn_ops_and_the_same_values():
    x = rl.var("x", shape=(1, 3, 4, 4), dtype="int8")
    wt = rl.var("w", shape=(2, 3, 1, 1), dtype="int8")
    y = rl.qnn.conv2d(x, wt, c(1, "int32"), c(0, "int32"), c(1.0, "float32"),
                      c(1.0, "float32"), channels=2, kernel_size=(1, 1))
    y = rl.qnn.requantize(y, c(0.1, "float32"), c(0, "int32"), c(1.0, "float32"),
                          c(0, "int32"))
    y = rl.qnn.add(y, y, c(1.0, "float32"), c(0, "int32"), c(1.0, "float32"), c(0, "int32"),
                   c(2.0, "float32"), c(0, "int32"))
    mod = rl.transform.InferType()(rl.IRModule.from_expr(rl.Function([x, wt], y)))
    out = rl.transform.get_pass("QnnCanonicalize")(mod)
    ops = {n.name for n in post_order(out["main"]) if isinstance(n, Op)}
    assert not {o for o in ops if o.startswith("qnn.")}
    assert {"nn.conv2d", "right_shift", "clip"} <= ops
    args = ints((1, 3, 4, 4), "int8"), ints((2, 3, 1, 1), "int8")
    np.testing.assert_array_equal(rl.evaluate(out, *args), rl.evaluate(mod, *args))
