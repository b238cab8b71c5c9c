"""bfloat16 in the NumPy kernels: carried as bit patterns (`numpy_support.BFLOAT16`),
computed in float32 and rounded to nearest even once per op, bit for bit what rounding the
kernel's float32 result on the widened inputs gives."""
from __future__ import annotations

import dataclasses
import math
import warnings

import numpy as np
import pytest

import relaylang as rl
from relaylang.op import implementation
from relaylang.op.numpy_support import (
    BFLOAT16,
    bfloat16_bits,
    carrier_dtype,
    fp_errors_ignored,
    from_bfloat16,
    np_dtype,
    relay_dtype,
    to_bfloat16,
)
from relaylang.op.registry import all_ops, get_op_def

F32 = np.float32
RNG = np.random.default_rng(16)


def bits_of(x) -> np.ndarray:
    return bfloat16_bits(x).copy()


def from_bits(*patterns: int) -> np.ndarray:
    return np.array(patterns, dtype=np.uint16).view(BFLOAT16)


def f32_from_bits(*patterns: int) -> np.ndarray:
    return np.array(patterns, dtype=np.uint32).view(F32)


def reference_round(x: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits by the definition, with float64 arithmetic: the nearer of
    the two bfloat16 neighbours, ties to the even one; overflow past the largest finite
    value plus half an ulp is inf; NaN is NaN."""
    x = np.asarray(x, dtype=F32).ravel()
    out = np.empty(x.size, dtype=np.uint16)
    for i, v in enumerate(x.tolist()):
        u = int(np.array(v, dtype=F32).view(np.uint32))
        sign = u & 0x80000000
        if math.isnan(v):
            out[i] = 0xFFFF if sign else 0x7FFF        # any NaN: checked as a class below
            continue
        mag = u & 0x7FFFFFFF
        if mag == 0x7F800000:                          # inf
            out[i] = (sign >> 16) | 0x7F80
            continue
        low = mag & 0xFFFF0000
        exp_field = low >> 23
        ulp = 2.0 ** (max(exp_field, 1) - 127 - 7)    # spacing of bfloat16 there
        low_value = float(np.array(low, dtype=np.uint32).view(F32))
        exact = float(np.array(mag, dtype=np.uint32).view(F32))
        below, above = exact - low_value, low_value + ulp - exact
        up = above < below or (above == below and (low >> 16) & 1)
        out[i] = (sign >> 16) | ((low >> 16) + (1 if up else 0))
    return out


def same_bits(got, want) -> bool:
    """Equal bit patterns; NaNs of any payload equal (the rounding tests check payloads)."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return False
    if got.dtype == BFLOAT16:
        g, w = from_bfloat16(got), from_bfloat16(want)
        return bool(np.all((bits_of(got) == bits_of(want)) | (np.isnan(g) & np.isnan(w))))
    if got.dtype.kind == "f":
        return bool(np.all((got == want) | (np.isnan(got) & np.isnan(want))
                           | (got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}"))))
    return bool(np.array_equal(got, want))


# ---------------------------------------------------------------- representation

def test_the_carrier_is_its_own_dtype_not_uint16():
    assert carrier_dtype("bfloat16") == BFLOAT16 != np.dtype(np.uint16)
    assert BFLOAT16.itemsize == 2 and relay_dtype(BFLOAT16) == "bfloat16"
    assert relay_dtype(np.dtype(np.uint16)) == "uint16"
    assert carrier_dtype("float32") == np.dtype(F32)
    with pytest.raises(NotImplementedError):      # NumPy itself has no bfloat16
        np_dtype("bfloat16")


def test_widening_then_rounding_is_the_identity_on_every_bit_pattern():
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    wide = from_bfloat16(every.view(BFLOAT16))
    assert wide.dtype == F32
    assert np.array_equal(wide.view(np.uint32) >> 16, every)     # exact widening
    assert np.array_equal(bits_of(to_bfloat16(wide)), every)     # sNaN payloads included


def test_rounding_random_float32_is_round_to_nearest_even():
    u = RNG.integers(0, 1 << 32, size=40_000, dtype=np.uint64).astype(np.uint32)
    # plus the halfway cases and their neighbours in every binade
    ties = (RNG.integers(0, 1 << 16, size=5_000, dtype=np.uint32) << 16) | 0x8000
    u = np.concatenate([u, ties, ties - 1, ties + 1])
    x = u.view(F32)
    got, want = bits_of(to_bfloat16(x)), reference_round(x)
    nan = np.isnan(x)
    assert np.array_equal(got[~nan], want[~nan])
    assert np.all(np.isnan(from_bfloat16(got[nan].view(BFLOAT16))))


@pytest.mark.parametrize("f32_bits,bf16_bits", [
    (0x3F808000, 0x3F80),   # 1 + 2^-8: a tie, to the even 1.0
    (0x3F818000, 0x3F82),   # 1 + 3 * 2^-8: a tie, to the even 1 + 2^-6
    (0x3F808001, 0x3F81),   # just above the tie
    (0x3F807FFF, 0x3F80),   # just below it
    (0xBF808000, 0xBF80),   # negative tie
    (0x00000000, 0x0000), (0x80000000, 0x8000),               # signed zeros
    (0x7F800000, 0x7F80), (0xFF800000, 0xFF80),               # infinities
    (0x7F7FFFFF, 0x7F80),   # float32 max rounds up past bfloat16 max: inf
    (0x7F7F7FFF, 0x7F7F),   # bfloat16 max + just under half an ulp: max
    (0x7F7F8000, 0x7F80),   # bfloat16 max + half an ulp: a tie, to the even inf
    (0x00000001, 0x0000),   # smallest float32 subnormal: 0
    (0x00008000, 0x0000),   # tie between 0 and the smallest bfloat16 subnormal: 0
    (0x00018000, 0x0002),   # tie between subnormals 1 and 2: even 2
    (0x00010000, 0x0001),   # the smallest bfloat16 subnormal, exact
    (0x007FFFFF, 0x0080),   # largest float32 subnormal rounds to the smallest normal
    (0x80008001, 0x8001),   # negative subnormal, above the tie
])
def test_rounding_edge_cases(f32_bits, bf16_bits):
    assert int(bits_of(to_bfloat16(f32_from_bits(f32_bits)))[0]) == bf16_bits


@pytest.mark.parametrize("f32_bits,bf16_bits", [
    (0x7FC00000, 0x7FC0),   # the quiet NaN
    (0xFFC00000, 0xFFC0),   # sign kept
    (0x7FC12345, 0x7FC1),   # top payload bits kept (truncated, never rounded into inf)
    (0x7F800001, 0x7FC0),   # payload only in the low bits: quiet bit set, not inf
    (0xFF800001, 0xFFC0),
    (0x7F810000, 0x7F81),   # a signalling NaN that bfloat16 holds: kept as is
    (0x7FFFFFFF, 0x7FFF),   # would carry into the sign if rounded
])
def test_nan_stays_nan(f32_bits, bf16_bits):
    out = to_bfloat16(f32_from_bits(f32_bits))
    assert int(bits_of(out)[0]) == bf16_bits and np.isnan(from_bfloat16(out)[0])


def test_other_dtypes_go_through_float32_as_tvm_casts():
    assert same_bits(to_bfloat16(np.array([1, 3, 257, -7], dtype=np.int32)),
                     to_bfloat16(np.array([1, 3, 257, -7], dtype=F32)))
    assert from_bfloat16(to_bfloat16(np.array([257], dtype=np.int64)))[0] == 256  # tie: even
    x = np.array([0.1, 1e300, -1e-300, np.nan])
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # overflow to inf is quiet
        got = to_bfloat16(x)
    with np.errstate(over="ignore"):
        assert same_bits(got, to_bfloat16(x.astype(F32)))
    assert to_bfloat16(2.5).shape == () and from_bfloat16(to_bfloat16(2.5))[()] == 2.5


# ---------------------------------------------------------------- per-op agreement

def kernel(name: str):
    impl = implementation(name, "numpy")
    assert impl is not None, name
    return impl


def attrs_of(name: str, **given):
    """The op's attributes as the parser builds them: defaults, overridden by `given`."""
    schema = get_op_def(name).attrs
    if schema is None:
        return None
    values = {f.name: None for f in dataclasses.fields(schema)       # required: None
              if f.init and f.default is dataclasses.MISSING
              and f.default_factory is dataclasses.MISSING}
    values.update({k: tuple(tuple(i) if isinstance(i, list) else i for i in v)
                   if isinstance(v, list) else v for k, v in given.items()})
    return schema(**values)


def run(name: str, inputs: list, attrs=None):
    with fp_errors_ignored():
        return kernel(name)(inputs, attrs)


def bf16(shape, scale: float = 3.0) -> np.ndarray:
    return to_bfloat16((RNG.standard_normal(shape) * scale).astype(F32))


def widen(inputs: list) -> list:
    out = []
    for x in inputs:
        if isinstance(x, tuple):
            out.append(tuple(widen(list(x))))
        else:
            out.append(from_bfloat16(x) if getattr(x, "dtype", None) == BFLOAT16 else x)
    return out


def rounded(value):
    if isinstance(value, tuple):
        return tuple(rounded(v) for v in value)
    return to_bfloat16(value) if value.dtype == F32 else value


def positive(shape) -> np.ndarray:
    return to_bfloat16(np.abs(RNG.standard_normal(shape)).astype(F32) + 0.5)


CASES = [
    # elementwise
    ("add", lambda: [bf16((4, 5)), bf16((5,))], {}),
    ("subtract", lambda: [bf16((4, 5)), bf16((4, 5))], {}),
    ("multiply", lambda: [bf16((4, 5)), bf16((4, 5))], {}),
    ("divide", lambda: [bf16((4, 5)), bf16((4, 5))], {}),
    ("power", lambda: [positive((4, 5)), bf16((4, 5), 1.0)], {}),
    ("maximum", lambda: [bf16((4, 5)), bf16((4, 5))], {}),
    ("exp", lambda: [bf16((4, 5))], {}),
    ("log", lambda: [positive((4, 5))], {}),
    ("sqrt", lambda: [positive((4, 5))], {}),
    ("tanh", lambda: [bf16((4, 5))], {}),
    ("sigmoid", lambda: [bf16((4, 5))], {}),
    ("erf", lambda: [bf16((4, 5))], {}),
    ("negative", lambda: [bf16((4, 5))], {}),
    ("abs", lambda: [bf16((4, 5))], {}),
    ("floor", lambda: [bf16((4, 5))], {}),
    ("round", lambda: [bf16((4, 5))], {}),
    ("floor_mod", lambda: [bf16((4, 5)), positive((4, 5))], {}),
    ("clip", lambda: [bf16((4, 5))], {"a_min": -1.0, "a_max": 1.3}),
    ("where", lambda: [RNG.random((4, 5)) > 0.5, bf16((4, 5)), bf16((4, 5))], {}),
    ("nn.relu", lambda: [bf16((4, 5))], {}),
    ("nn.bias_add", lambda: [bf16((2, 3, 4)), bf16((3,))], {}),
    # reductions
    ("sum", lambda: [bf16((6, 70))], {"axis": [1]}),
    ("mean", lambda: [bf16((6, 70))], {"axis": [0]}),
    ("max", lambda: [bf16((6, 70))], {}),
    ("prod", lambda: [positive((6, 7))], {"axis": [1]}),
    ("variance", lambda: [bf16((6, 70)), bf16((6, 1))], {"axis": [1]}),
    ("cumsum", lambda: [bf16((6, 70))], {"axis": 1}),
    # products and convolutions
    ("nn.dense", lambda: [bf16((5, 64)), bf16((7, 64))], {}),
    ("nn.matmul", lambda: [bf16((5, 64)), bf16((64, 7))], {}),
    ("nn.batch_matmul", lambda: [bf16((2, 5, 16)), bf16((2, 7, 16))], {"transpose_b": True}),
    ("nn.conv2d", lambda: [bf16((1, 3, 8, 8)), bf16((4, 3, 3, 3))],
     {"padding": [1, 1, 1, 1], "channels": 4, "kernel_size": [3, 3]}),
    ("nn.conv2d_transpose", lambda: [bf16((1, 3, 5, 5)), bf16((3, 2, 3, 3))],
     {"channels": 2, "kernel_size": [3, 3]}),
    # normalisations and pools
    ("nn.softmax", lambda: [bf16((4, 33))], {}),
    ("nn.log_softmax", lambda: [bf16((4, 33))], {}),
    ("nn.layer_norm", lambda: [bf16((4, 33)), bf16((33,)), bf16((33,))], {}),
    ("nn.batch_norm", lambda: [bf16((2, 3, 4, 4)), bf16((3,)), bf16((3,)), bf16((3,)),
                               positive((3,))], {}),
    ("nn.avg_pool2d", lambda: [bf16((1, 2, 6, 6))], {"pool_size": [3, 3]}),
    ("nn.max_pool2d", lambda: [bf16((1, 2, 6, 6))], {"pool_size": [2, 2]}),
    ("nn.global_avg_pool2d", lambda: [bf16((1, 2, 6, 6))], {}),
    ("image.resize2d", lambda: [bf16((1, 2, 4, 4))], {"size": [7, 5]}),
    # ops that move values
    ("transpose", lambda: [bf16((2, 3, 4))], {"axes": [2, 0, 1]}),
    ("reshape", lambda: [bf16((2, 3, 4))], {"newshape": [6, 4]}),
    ("concatenate", lambda: [(bf16((2, 3)), bf16((1, 3)))], {"axis": 0}),
    ("stack", lambda: [(bf16((2, 3)), bf16((2, 3)))], {"axis": 1}),
    ("take", lambda: [bf16((5, 3)), np.array([4, 0, 2], dtype=np.int32)], {"axis": 0}),
    ("strided_slice", lambda: [bf16((6, 4))], {"begin": [1, 0], "end": [5, 4],
                                               "strides": [2, 1]}),
    ("nn.pad", lambda: [bf16((2, 3)), to_bfloat16(np.array(0.5, F32))],
     {"pad_width": [[1, 1], [0, 2]]}),
    ("split", lambda: [bf16((6, 4))], {"indices_or_sections": 3, "axis": 0}),
    ("broadcast_to", lambda: [bf16((1, 3))], {"shape": [4, 3]}),
    ("zeros_like", lambda: [bf16((2, 3))], {}),
]


@pytest.mark.parametrize("name,make,attrs", CASES, ids=[c[0] for c in CASES])
def test_bfloat16_result_is_the_float32_result_rounded_once(name, make, attrs):
    inputs = make()
    a = attrs_of(name, **attrs)
    got = run(name, inputs, a)
    want = rounded(run(name, widen(inputs), a))
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            assert g.dtype == BFLOAT16 and same_bits(g, w)
    else:
        assert got.dtype == BFLOAT16, got.dtype
        assert same_bits(got, want)


@pytest.mark.parametrize("name,fn", [("add", np.add), ("subtract", np.subtract),
                                     ("multiply", np.multiply), ("divide", np.divide)])
def test_arithmetic_is_correctly_rounded(name, fn):
    """float32 has 24 >= 2 * 8 + 2 bits: rounding the float32 result to bfloat16 is
    rounding the exact one."""
    a = RNG.integers(0, 1 << 16, size=100_000, dtype=np.uint32).astype(np.uint16)
    b = RNG.integers(0, 1 << 16, size=100_000, dtype=np.uint32).astype(np.uint16)
    a, b = a.view(BFLOAT16), b.view(BFLOAT16)
    got = run(name, [a, b])
    with np.errstate(all="ignore"):
        exact = fn(from_bfloat16(a).astype(np.float64), from_bfloat16(b).astype(np.float64))
    # exact -> float32 is itself correctly rounded; then one rounding to bfloat16
    with np.errstate(all="ignore"):
        want = to_bfloat16(exact.astype(F32))
    assert same_bits(got, want)


@pytest.mark.parametrize("name,fn", [("less", np.less), ("equal", np.equal),
                                     ("greater_equal", np.greater_equal)])
def test_comparisons_are_boolean_and_exact(name, fn):
    a, b = bf16((100,)), bf16((100,))
    b = np.concatenate([b[:50], a[50:]])
    got = run(name, [a, b])
    assert got.dtype == np.bool_ and np.array_equal(got, fn(from_bfloat16(a), from_bfloat16(b)))


def test_index_and_classification_results_keep_their_dtypes():
    x = to_bfloat16(np.array([[1.0, np.nan, 3.0], [np.inf, -2.0, 0.5]], F32))
    assert run("argmax", [x], attrs_of("argmax", axis=[1])).dtype == np.int32
    assert np.array_equal(run("isnan", [x]), [[False, True, False], [False, False, False]])
    assert np.array_equal(run("isinf", [x]), [[False, False, False], [True, False, False]])
    assert np.array_equal(run("shape_of", [x], attrs_of("shape_of")), [2, 3])


def test_fast_math_is_exact_for_bfloat16_as_in_tvm():
    """TVM approximates fast_exp/fast_tanh/fast_erf for float32 only: bfloat16 gets
    exp/tanh/erf computed in float32, rounded."""
    x = bf16((200,))
    for fast, exact in [("fast_exp", "exp"), ("fast_tanh", "tanh"), ("fast_erf", "erf")]:
        assert same_bits(run(fast, [x]), run(exact, [x])), fast
    assert same_bits(run("nn.fast_softmax", [x.reshape(4, 50)], attrs_of("nn.fast_softmax")),
                     run("nn.softmax", [x.reshape(4, 50)], attrs_of("nn.softmax")))


def test_out_dtype_decides_whether_the_result_is_rounded():
    a, b = bf16((5, 64)), bf16((7, 64))
    wide = run("nn.dense", [a, b], attrs_of("nn.dense", out_dtype="float32"))
    assert wide.dtype == F32 and same_bits(wide, np.matmul(from_bfloat16(a), from_bfloat16(b).T))
    narrow = run("nn.dense", [a, b], attrs_of("nn.dense", out_dtype="bfloat16"))
    assert same_bits(narrow, to_bfloat16(wide))
    # float32 operands, a bfloat16 result: computed in float32, rounded once
    fa, fb = from_bfloat16(a), from_bfloat16(b)
    assert same_bits(run("nn.dense", [fa, fb], attrs_of("nn.dense", out_dtype="bfloat16")),
                     to_bfloat16(wide))


def test_ops_that_make_tensors_of_a_bfloat16_dtype():
    z = run("zeros", [], attrs_of("zeros", shape=[2, 3], dtype="bfloat16"))
    assert z.dtype == BFLOAT16 and not bits_of(z).any()
    o = run("ones", [], attrs_of("ones", shape=[2], dtype="bfloat16"))
    assert np.array_equal(bits_of(o), [0x3F80, 0x3F80])
    fill = to_bfloat16(np.array(0.1, F32))
    f = run("full", [fill], attrs_of("full", shape=[3], dtype=""))
    assert f.dtype == BFLOAT16 and np.all(bits_of(f) == bits_of(fill))
    wide = run("full", [fill], attrs_of("full", shape=[3], dtype="float32"))
    assert wide.dtype == F32 and np.all(wide == from_bfloat16(fill))
    hot = run("one_hot", [np.array([0, 2], np.int32), to_bfloat16(1.0), to_bfloat16(0.0)],
              attrs_of("one_hot", depth=3, axis=-1, dtype="bfloat16"))
    assert hot.dtype == BFLOAT16 and np.array_equal(from_bfloat16(hot), [[1, 0, 0], [0, 0, 1]])


def test_shape_ops_with_a_float32_like_keep_the_data_dtype():
    x, like = bf16((2, 3)), np.zeros((3, 2), F32)
    out = run("reshape_like", [x, like], attrs_of("reshape_like"))
    assert out.dtype == BFLOAT16 and same_bits(out.ravel(), x.ravel())
    out = run("reshape_like", [from_bfloat16(x), to_bfloat16(like)], attrs_of("reshape_like"))
    assert out.dtype == F32


def test_every_numpy_kernel_takes_bfloat16_or_is_a_pass_through():
    """Every op whose kernel computes gets the bfloat16 treatment: registered through
    numpy_support.implement (wrapped, or handling the carrier itself)."""
    passing = {"on_device", "device_copy", "call_lowered", "memory.alloc_storage",
               "memory.alloc_tensor", "memory.kill", "vm.shape_of", "vm.invoke_tvm_op",
               "vm.reshape_tensor",
               "call_dps_packed"}       # the external callee gets the arrays as they are
    own = {"cast", "cast_like", "reinterpret"}
    for opdef in all_ops():
        impl = implementation(opdef.name, "numpy")
        if impl is None or opdef.name in passing or opdef.name.startswith("annotation."):
            continue
        inner = getattr(impl, "__wrapped__", impl)
        handled = (impl is not inner or getattr(inner, "handles_bfloat16", False)
                   or opdef.name in own)
        assert handled, opdef.name


# ---------------------------------------------------------------- casts

def test_cast_to_and_from_bfloat16():
    x = np.concatenate([(RNG.standard_normal(500) * 100).astype(F32),
                        f32_from_bits(0x3F808000, 0x7F7FFFFF, 0x7F800001, 0x00008000)])
    b = run("cast", [x], attrs_of("cast", dtype="bfloat16"))
    assert b.dtype == BFLOAT16 and same_bits(b, to_bfloat16(x))
    back = run("cast", [b], attrs_of("cast", dtype="float32"))
    assert back.dtype == F32 and same_bits(back, from_bfloat16(b))
    # float32 -> bfloat16 -> float32 -> bfloat16: the second rounding changes nothing
    assert same_bits(run("cast", [back], attrs_of("cast", dtype="bfloat16")), b)
    again = run("cast", [b], attrs_of("cast", dtype="bfloat16"))
    assert same_bits(again, b) and again is not b


def test_casts_between_bfloat16_and_other_dtypes_go_through_float32():
    b = to_bfloat16(np.array([-2.75, 0.5, 3.5, 300.0, 70000.0], F32))
    as_int = run("cast", [b], attrs_of("cast", dtype="int32"))
    assert as_int.dtype == np.int32 and as_int.tolist() == [-2, 0, 3, 300, 70144]
    ints = np.array([1, 255, 257, 65535], np.int32)
    assert from_bfloat16(run("cast", [ints], attrs_of("cast", dtype="bfloat16"))).tolist() == \
        [1, 255, 256, 65536]
    half = run("cast", [b], attrs_of("cast", dtype="float16"))
    assert half.dtype == np.float16 and half.tolist() == [-2.75, 0.5, 3.5, 300.0, np.inf]
    assert same_bits(run("cast", [half], attrs_of("cast", dtype="bfloat16")),
                     to_bfloat16(half.astype(F32)))
    f64 = run("cast", [b], attrs_of("cast", dtype="float64"))
    assert f64.dtype == np.float64 and np.array_equal(f64, from_bfloat16(b))
    flags = run("cast", [b], attrs_of("cast", dtype="bool"))
    assert flags.dtype == np.bool_ and flags.all()


def test_cast_like_and_reinterpret():
    b = bf16((6,))
    like = run("cast_like", [from_bfloat16(b), np.zeros(1, BFLOAT16)], None)
    assert same_bits(like, b)
    assert run("cast_like", [b, np.zeros(1, F32)], None).dtype == F32
    raw = run("reinterpret", [b], attrs_of("reinterpret", dtype="uint16"))
    assert raw.dtype == np.uint16 and np.array_equal(raw, bits_of(b))
    assert same_bits(run("reinterpret", [raw], attrs_of("reinterpret", dtype="bfloat16")), b)
    signed = run("reinterpret", [b], attrs_of("reinterpret", dtype="int16"))
    assert np.array_equal(signed.view(np.uint16), bits_of(b))


# ---------------------------------------------------------------- programs

def test_a_bfloat16_program_runs_in_the_interpreter_per_op_rounded():
    mod = rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32]) -> Tensor[(2, 4), float32] {
  %0 = cast(%x, dtype="bfloat16");
  %1 = cast(%w, dtype="bfloat16");
  %2 = nn.dense(%0, %1);
  %3 = nn.softmax(%2);
  %4 = add(%3, %3);
  cast(%4, dtype="float32")
}
""")
    x = RNG.standard_normal((2, 8)).astype(F32)
    w = RNG.standard_normal((4, 8)).astype(F32)
    from relaylang.backend.interpreter.executor import evaluate
    got = evaluate(mod, x, w)
    xb, wb = to_bfloat16(x), to_bfloat16(w)
    d = to_bfloat16(from_bfloat16(xb) @ from_bfloat16(wb).T)
    s = run("nn.softmax", [d], attrs_of("nn.softmax"))
    want = from_bfloat16(to_bfloat16(from_bfloat16(s) * 2))
    assert np.asarray(got).dtype == F32 and same_bits(np.asarray(got), want)


# A bfloat16 constant that FoldConstant computes (the carrier dtype) types as bfloat16.
def test_a_folded_bfloat16_constant_type_checks():
    mod = rl.parse("""#[version = "0.0.5"]
def @main(%x: Tensor[(2), bfloat16]) {
  add(%x, cast(1.5f, dtype="bfloat16"))
}
""")
    folded = rl.transform.FoldConstant()(mod)
    rl.transform.InferType()(folded)
