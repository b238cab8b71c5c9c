"""float16 in the NumPy kernels: computed in float32 and rounded once per op
(`numpy_support.float16_in_float32`, declared with `@implement(name, float16=...)`), and
`power` with a constant exponent by multiplication, division or sqrt."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import relaylang as rl
from relaylang.op import implementation
from relaylang.op.numpy_support import HALF, float16_in_float32, fp_errors_ignored
from relaylang.op.registry import all_ops, get_op_def, implement

F16, F32 = np.float16, np.float32
RNG = np.random.default_rng(14)


def kernel(name: str):
    impl = implementation(name, "numpy")
    assert impl is not None, name
    return impl


def run(name: str, inputs: list, attrs=None):
    with fp_errors_ignored():
        return kernel(name)(inputs, attrs)


def attrs_of(name: str, **given):
    """The op's attributes: its schema's defaults, overridden by `given`."""
    schema = get_op_def(name).attrs
    given = {k: tuple(v) if isinstance(v, list) else v for k, v in given.items()}
    return schema(**given) if schema is not None else None


def same_bits(got: np.ndarray, want: np.ndarray) -> bool:
    """Equal bit for bit, NaNs of any payload equal."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype.kind != "f":
        return np.array_equal(got, want)
    both_nan = np.isnan(got) & np.isnan(want)
    bits = got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")
    return bool(np.all(bits | both_nan))


def every_half() -> np.ndarray:
    """All 65536 float16 bit patterns (both zeros, subnormals, infinities, NaNs)."""
    return np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(F16)


def halves(shape, scale: float = 4.0) -> np.ndarray:
    return (RNG.standard_normal(shape) * scale).astype(F16)


def widened(inputs: list) -> list:
    return [x.astype(F32) if getattr(x, "dtype", None) == HALF else x for x in inputs]


def rounded(value):
    if isinstance(value, tuple):
        return tuple(rounded(v) for v in value)
    return value.astype(F16) if value.dtype == F32 else value


# ---------------------------------------------------------------- the declaration

def flagged() -> set[str]:
    return {d.name for d in all_ops()
            if getattr(implementation(d.name, "numpy"), "float16", None) == "float32"}


def test_the_ops_that_compute_float16_in_float32():
    names = flagged()
    # the slow ones: BLAS products, convolutions, reductions, normalisations, math functions
    assert {"nn.dense", "nn.matmul", "nn.batch_matmul", "nn.conv2d", "nn.conv2d_transpose",
            "sum", "mean", "max", "variance", "nn.softmax", "nn.log_softmax",
            "nn.layer_norm", "nn.batch_norm", "nn.max_pool2d", "nn.avg_pool2d",
            "nn.global_avg_pool2d", "exp", "tanh", "erf", "sqrt", "power", "less",
            "maximum", "nn.relu", "image.resize2d",
            # a - floor(a / b) * b: several steps, one rounding (as the LLVM backend does)
            "floor_divide", "floor_mod", "trunc_divide", "trunc_mod"} <= names
    # one correctly rounded step in float16 anyway, or their float16 steps are the point
    assert not names & {"add", "subtract", "multiply", "divide", "where", "clip", "cast", "cast_like", "reshape",
                        "transpose", "take", "concatenate", "fast_exp", "fast_tanh",
                        "fast_erf", "nn.fast_softmax", "argmax", "cumsum"}


def test_flagged_implementation_is_the_wrapped_kernel_of_its_family():
    impl = kernel("nn.dense")
    assert impl.__wrapped__.__name__ == impl.__name__ == "dense"
    assert impl.__module__ == "relaylang.op.nn.numpy_kernels"
    assert get_op_def("nn.dense").kernel is not impl          # OpDef.kernel calls it


def test_implement_returns_the_function_and_registers_it_wrapped():
    from relaylang.op import registry
    registry.register_op(registry.OpDef("scratch_fp16.twice", 1))
    try:
        def twice(inputs, attrs):
            return inputs[0] * 2
        assert implement("scratch_fp16.twice", float16=float16_in_float32)(twice) is twice
        impl = implementation("scratch_fp16.twice", "numpy")
        assert impl is not twice and impl.__wrapped__ is twice
        # registering the same function again is not a second implementation
        implement("scratch_fp16.twice", float16=float16_in_float32)(twice)
        with pytest.raises(ValueError, match="two numpy implementations"):
            implement("scratch_fp16.twice")(lambda inputs, attrs: inputs[0])
        x = np.array([1.5, 60000], dtype=F16)
        with warnings.catch_warnings():
            warnings.simplefilter("error")           # overflow to inf is quiet (TVM's)
            out = impl([x], None)
        assert out.dtype == F16 and same_bits(out, np.array([3, np.inf], dtype=F16))
        assert impl([x.astype(F32)], None).dtype == F32      # float32: untouched
    finally:
        del registry._OPS["scratch_fp16.twice"], registry._OP_NODES["scratch_fp16.twice"]
        registry._IMPLS.pop(("scratch_fp16.twice", "numpy"), None)


def test_float16_adapter_is_for_numpy_kernels_only():
    with pytest.raises(ValueError, match="numpy kernels only"):
        implement("nn.dense", target="llvm", float16=float16_in_float32)


# ---------------------------------------------------------------- the wrapper

def test_wrapper_passes_other_dtypes_through_and_rounds_only_float32_outputs():
    seen = []

    def raw(inputs, attrs):
        seen.append([x.dtype for x in inputs])
        x = inputs[0]
        return x + 1, x > 0, np.arange(2, dtype=np.int32), (x * 3,)
    wrapped = float16_in_float32(raw)
    x64 = np.array([0.1, -2.0])
    out = wrapped([x64], None)
    assert seen[-1] == [np.float64] and out[0].dtype == np.float64
    out = wrapped([np.array([0.1, -2.0], dtype=F16), np.array([1, 2])], None)
    assert seen[-1] == [F32, np.int64]
    assert [np.asarray(v).dtype for v in out[:3]] == [F16, np.bool_, np.int32]
    assert out[3][0].dtype == F16


def test_explicit_out_dtype_is_kept_and_float16_out_dtype_computes_in_float32():
    a, b = halves((5, 7)), halves((3, 7))
    exact = a.astype(np.float64) @ b.astype(np.float64).T
    wide = run("nn.dense", [a, b], attrs_of("nn.dense", units=None, out_dtype="float32"))
    assert wide.dtype == F32                        # not rounded to float16
    assert same_bits(wide, np.matmul(a.astype(F32), b.astype(F32).T))
    narrow = run("nn.dense", [a, b], attrs_of("nn.dense", units=None, out_dtype="float16"))
    assert narrow.dtype == F16 and same_bits(narrow, wide.astype(F16))
    assert np.allclose(narrow, exact, rtol=1e-3, atol=1e-2)


# ---------------------------------------------------------------- exactness

# ops whose float16 result is the correctly rounded one: float32 has 24 >= 2 * 11 + 2 bits,
# so rounding the float32 result of +, -, *, / or sqrt of float16 values to float16 is the
# same as rounding the exact result (NumPy's native float16 loops give it too)
EXACT_BINARY = [("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
                ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum)]


def special_pairs(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Random float16 bit patterns (all classes of value), plus every special value
    against every other."""
    bits = RNG.integers(0, 1 << 16, size=(2, n), dtype=np.uint16)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 65504, -65504, 1, -1],
                       dtype=F16)
    sa, sb = np.meshgrid(special, special)
    return (np.concatenate([bits[0].view(F16), sa.ravel()]),
            np.concatenate([bits[1].view(F16), sb.ravel()]))


@pytest.mark.parametrize("name,fn", EXACT_BINARY)
def test_binary_arithmetic_is_correctly_rounded(name, fn):
    a, b = special_pairs(200_000)
    got = run(name, [a, b])
    with np.errstate(all="ignore"):
        want = fn(a.astype(np.float64), b.astype(np.float64)).astype(F16)
    assert got.dtype == F16 and same_bits(got, want)


def test_sqrt_of_every_float16_is_correctly_rounded():
    x = every_half()
    with np.errstate(all="ignore"):
        want = np.sqrt(x.astype(np.float64)).astype(F16)
    assert same_bits(run("sqrt", [x]), want)


@pytest.mark.parametrize("name,fn", [("less", np.less), ("greater_equal", np.greater_equal),
                                     ("equal", np.equal), ("not_equal", np.not_equal)])
def test_comparisons_are_exact_and_boolean(name, fn):
    a, b = special_pairs(50_000)
    got = run(name, [a, b])
    assert got.dtype == np.bool_ and np.array_equal(got, fn(a, b))


def test_relu_max_min_and_max_pool_are_exact():
    x = every_half().reshape(4, 16, 32, 32)
    # (max(-0, 0) may be either zero, in float16 as in float32)
    assert np.array_equal(run("nn.relu", [x]), np.maximum(x, F16(0)), equal_nan=True)
    for name, fn in [("max", np.max), ("min", np.min)]:
        got = run(name, [x], attrs_of(name, axis=[2, 3]))
        assert got.dtype == F16 and same_bits(got, fn(x, axis=(2, 3)))
    pooled = run("nn.max_pool2d", [x], attrs_of("nn.max_pool2d", pool_size=[2, 2],
                                                strides=[2, 2]))
    want = x.reshape(4, 16, 16, 2, 16, 2).max(axis=(3, 5))
    assert pooled.dtype == F16 and same_bits(pooled, want)


# ---------------------------------------------------------------- rounding the float32 result

def conv_attrs(**kw):
    return attrs_of("nn.conv2d", **kw)


CASES = [
    # (op, inputs, attrs, tolerance against float64 in units of the result's largest value)
    ("nn.dense", [halves((33, 17)), halves((5, 17))], attrs_of("nn.dense", units=None), 2e-3),
    ("nn.dense", [halves((1, 1)), halves((1, 1))], attrs_of("nn.dense", units=None), 2e-3),
    ("nn.dense", [halves((0, 9)), halves((4, 9))], attrs_of("nn.dense", units=None), 0),
    ("nn.matmul", [halves((3, 9)), halves((9, 7))], attrs_of("nn.matmul", units=None), 2e-3),
    ("nn.batch_matmul", [halves((2, 3, 9)), halves((2, 5, 9))],
     attrs_of("nn.batch_matmul", transpose_b=True), 2e-3),
    ("nn.conv2d", [halves((1, 3, 7, 9)), halves((4, 3, 3, 3))],
     conv_attrs(padding=[1, 1]), 2e-3),
    ("nn.conv2d_transpose", [halves((1, 3, 5, 5)), halves((3, 2, 3, 3))],
     attrs_of("nn.conv2d_transpose", strides=[2, 2]), 2e-3),
    ("sum", [halves((5, 301))], attrs_of("sum", axis=[1]), 2e-3),
    ("sum", [halves((0, 3))], attrs_of("sum", axis=[0]), 0),
    ("mean", [halves((3, 7))], attrs_of("mean", axis=[-1], keepdims=True), 2e-3),
    ("prod", [halves((4, 5), 1.0)], attrs_of("prod", axis=[1]), 2e-3),
    ("nn.softmax", [halves((3, 1, 11))], attrs_of("nn.softmax"), 2e-3),
    ("nn.log_softmax", [halves((3, 11))], attrs_of("nn.log_softmax"), 2e-3),
    ("nn.layer_norm", [halves((2, 7, 13)), halves((13,)), halves((13,))],
     attrs_of("nn.layer_norm"), 4e-3),
    ("nn.avg_pool2d", [halves((1, 2, 5, 5))],
     attrs_of("nn.avg_pool2d", pool_size=[3, 3], padding=[1, 1]), 2e-3),
    ("nn.global_avg_pool2d", [halves((1, 3, 7, 7))], attrs_of("nn.global_avg_pool2d"), 2e-3),
    ("exp", [halves((3, 5), 2.0)], None, 1e-3),
    ("tanh", [halves((17,))], None, 1e-3),
    ("erf", [halves((1,))], None, 1e-3),
    ("sigmoid", [halves(())], None, 1e-3),
    ("power", [np.abs(halves((9,))), halves((9,), 1.0)], None, 2e-3),
]


def float64_reference(name: str, inputs: list, attrs):
    wide = [x.astype(np.float64) if getattr(x, "dtype", None) == HALF else x for x in inputs]
    with fp_errors_ignored():
        return kernel(name).__wrapped__(wide, attrs)


@pytest.mark.parametrize("name,inputs,attrs,tol", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_float16_result_is_the_float32_result_rounded(name, inputs, attrs, tol):
    got = run(name, inputs, attrs)
    want32 = run(name, widened(inputs), attrs)
    assert want32.dtype == F32
    assert got.dtype == F16 and got.shape == want32.shape
    assert same_bits(got, rounded(want32))
    # and within the float16 error of the exact (float64) result
    exact = float64_reference(name, inputs, attrs)
    scale = max(float(np.max(np.abs(exact), initial=0.0)), 1.0)
    assert np.all(np.abs(got.astype(np.float64) - exact) <= tol * scale + 6e-8)


def test_batch_norm_rounds_every_output_of_its_tuple():
    x = halves((2, 3, 4))
    params = [halves((3,)), halves((3,)), halves((3,)), np.abs(halves((3,))) + F16(1)]
    got = run("nn.batch_norm", [x, *params], attrs_of("nn.batch_norm"))
    want = rounded(run("nn.batch_norm", widened([x, *params]), attrs_of("nn.batch_norm")))
    assert all(g.dtype == F16 and same_bits(g, w) for g, w in zip(got, want, strict=True))
    assert same_bits(got[1], params[2]) and same_bits(got[2], params[3])  # mean, var


def test_dense_accumulates_in_float32():
    # 4096 products of 1 * 2^-12 plus one 1: a float16 accumulator stops at 1 + ... (its
    # spacing near 1 is 2^-10, so each 2^-12 step rounds away); float32 gets 2 exactly.
    x = np.ones((1, 4097), dtype=F16)
    w = np.full((1, 4097), 2.0 ** -12, dtype=F16)
    w[0, 0] = 1
    assert run("nn.dense", [x, w], attrs_of("nn.dense", units=None))[0, 0] == F16(2)


def test_float32_and_float64_kernels_are_unchanged():
    a, b = halves((4, 6)).astype(F32), halves((3, 6)).astype(F32)
    out = run("nn.dense", [a, b], attrs_of("nn.dense", units=None))
    assert out.dtype == F32 and same_bits(out, np.matmul(a, b.T))
    assert run("exp", [a.astype(np.float64)]).dtype == np.float64


def test_argmax_of_float16_is_int32():
    x = halves((3, 5))
    got = run("argmax", [x], attrs_of("argmax", axis=[1]))
    assert got.dtype == np.int32 and np.array_equal(got, np.argmax(x, axis=1))


def test_an_fp16_program_runs_in_the_interpreter_per_op_rounded():
    text = """#[version = "0.0.5"]
def @main(%x: Tensor[(3, 8), float16], %w: Tensor[(5, 8), float16]) -> Tensor[(3, 5), float16] {
  %0 = nn.dense(%x, %w, units=5);
  %1 = power(%0, 3f16);
  nn.softmax(%1)
}
"""
    x, w = halves((3, 8), 0.5), halves((5, 8), 0.5)
    got = rl.evaluate(rl.parse(text), x, w)
    with fp_errors_ignored():
        d = np.matmul(x.astype(F32), w.astype(F32).T).astype(F16)
        p = (d.astype(F32) ** 3).astype(F16)
        e = np.exp(p.astype(F32) - p.astype(F32).max(axis=-1, keepdims=True))
        want = (e / e.sum(axis=-1, keepdims=True)).astype(F16)
    assert got.dtype == F16 and same_bits(got, want)


# ---------------------------------------------------------------- power

def ulps_apart(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Distance in float32 ulps of b (NaN against NaN and equal infinities: 0)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        d = np.abs(a64 - b64) / np.spacing(np.abs(b).astype(F32)).astype(np.float64)
    return np.where((np.isnan(a) & np.isnan(b)) | (a64 == b64), 0.0, d)


def power(x: np.ndarray, e: float) -> np.ndarray:
    return run("power", [x, np.asarray(e, dtype=x.dtype)])


FLOAT32S = np.concatenate([
    (RNG.standard_normal(20_000) * 10).astype(F32),
    np.array([0.0, -0.0, 1, -1, 2, 0.5, 1e-20, -1e-20, 1e20, -1e20, 1e-40, 3e38, -3e38,
              np.inf, -np.inf, np.nan], dtype=F32)])


@pytest.mark.parametrize("e", [0.0, 1.0, 2.0, -1.0, 0.5, -0.5, 3.0, 4.0, -2.0])
def test_constant_power_agrees_with_np_power(e):
    got = power(FLOAT32S, e)
    with np.errstate(all="ignore"):
        want = np.power(FLOAT32S, F32(e))
    assert got.dtype == F32 and got.shape == FLOAT32S.shape
    if e in (0.0, 1.0, 2.0):           # one correctly rounded operation, as np.power
        assert same_bits(got, want)
    else:
        # one rounding (1/x, sqrt) or two (x*x*x); np.power's powf is within 0.5 ulp. x ** 0.5
        # differs from NumPy's sqrt fast path at -0 and -inf: C's pow (below) there.
        finite = np.isfinite(want) & (np.abs(want) > 1e-37)
        assert np.max(ulps_apart(got[finite], want[finite])) <= (1 if e in (-1, 0.5) else 2)
        assert np.array_equal(np.isnan(got), np.isnan(want) & ~np.isneginf(FLOAT32S))


@pytest.mark.parametrize("e", [0.0, 1.0, 2.0, 3.0, 4.0, -1.0, -2.0, 0.5, -0.5])
def test_constant_power_special_values_are_c_pow(e):
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, -4.0, 1e-30]
    got = power(np.array(specials, dtype=F32), e)
    for x, g in zip(specials, got, strict=True):
        x = float(F32(x))
        try:
            want = math.pow(x, e)
        except (ValueError, ZeroDivisionError):      # C: NaN for x < 0, ±inf for ±0
            want = (math.copysign(math.inf, x) if e in (-1.0,) else math.inf) \
                if x == 0 else math.nan
        with np.errstate(over="ignore"):
            want = F32(want)
        assert (np.isnan(g) and np.isnan(want)) or (g == want and np.signbit(g) ==
                                                     np.signbit(want)), (x, e, g, want)


@pytest.mark.parametrize("e", [2.0, 3.0, 4.0, -1.0, -2.0, 0.5, -0.5])
def test_constant_power_of_every_float16_is_correctly_rounded(e):
    # computed in float32 and rounded once; exhaustively the correctly rounded result
    x = every_half()
    x = x[np.isfinite(x)]
    got = power(x, e)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = np.power(x64, e).astype(F16)
    # C's pow at ±0: +0 or +inf, signed only for an odd integer exponent
    odd = e in (3.0, -1.0)
    zero = np.where(np.signbit(x64) & odd, -1.0, 1.0) * (0.0 if e > 0 else np.inf)
    want = np.where(x64 == 0, zero.astype(F16), want)
    assert got.dtype == F16 and same_bits(got, want)


def test_power_with_an_exponent_array_or_a_rare_exponent_is_np_power():
    x = np.abs(FLOAT32S[:100]) + F32(0.5)
    for e in (np.full(100, 3, dtype=F32), np.asarray(2.5, dtype=F32),
              np.asarray(1.5, dtype=F32)):
        assert same_bits(run("power", [x, e]), np.power(x, e))


def test_power_broadcasts_as_np_power():
    x = np.array([1.5, -2.0, 3.0], dtype=F32)
    for e in (np.array([2.0], dtype=F32), np.array([[3.0]], dtype=F32)):
        got = run("power", [x, e])
        assert got.shape == np.broadcast_shapes(x.shape, e.shape)
        assert np.allclose(got, np.power(x, e), rtol=2e-7)
    empty = np.zeros((0, 3), dtype=F32)
    assert run("power", [empty, np.asarray(3, dtype=F32)]).shape == (0, 3)


def test_integer_power_is_unchanged():
    x = np.array([-3, -1, 0, 2, 5], dtype=np.int32)
    got = run("power", [x, np.asarray(3, dtype=np.int32)])
    assert got.dtype == np.int32 and np.array_equal(got, x ** 3)
    assert np.array_equal(run("power", [x, np.asarray(-1, dtype=np.int32)]),
                          np.array([0, -1, 0, 0, 0], dtype=np.int32))


def test_a_constant_exponent_does_not_reach_np_power(monkeypatch):
    """GPT-2's gelu `power(%x, 3f)`: np.power's general loop is ~50x slower than x*x*x."""
    calls = []
    original = np.power

    def spy(*args, **kw):
        calls.append(args)
        return original(*args, **kw)
    x = (RNG.standard_normal((4, 9)) * 3).astype(F32)
    monkeypatch.setattr(np, "power", spy)
    got = power(x, 3.0)
    assert calls == [] and same_bits(got, x * x * x)
    power(x, 2.5)
    assert len(calls) == 1
