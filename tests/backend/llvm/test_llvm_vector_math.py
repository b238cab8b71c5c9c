"""Vectorisable math in codegen: tanh, erf, log (log2, log10), exp in float32 (float16
computes in float32) and exp in float64 are straight-line arithmetic, within a few ulp of
libm over wide ranges (NaN, infinities, huge and tiny values included); GELU in both forms
vectorises."""
from __future__ import annotations

import re

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module

from relaylang.backend.llvm import loop_ir as L
from relaylang.backend.llvm.jit import aligned_copy, aligned_empty, compile_kernels, compile_module
from relaylang.backend.llvm.lower import lower_primitive
from relaylang.backend.llvm.schedule import schedule
from relaylang.backend.llvm.te import LowerContext

HEAD = '#[version = "0.0.5"]\n'


def _values(dtype: str) -> np.ndarray:
    big = 3e38 if dtype == "float32" else 1e300
    x = np.concatenate([np.linspace(-100, 100, 40001), np.geomspace(1e-45, big, 20000),
                        -np.geomspace(1e-45, big, 20000), np.linspace(-5, 5, 20001),
                        [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.7, 89.0, -87.4, -103.9,
                         709.7, 709.8, -745.1, -745.2]])
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _native(name: str, x: np.ndarray) -> np.ndarray:
    b = LowerContext()
    t = b.placeholder(x.shape, str(x.dtype), "x")
    out = b.compute(x.shape, lambda i: b.call(name, t[i]))
    buf = L.Buffer("out", x.shape, str(x.dtype))
    body, par = schedule(b, [out], [buf])
    prim = L.PrimFunc(f"vm_{name}_{x.dtype}", (t.buffer, buf), body, 1, par)
    k = compile_kernels([prim])[prim.name]
    res = aligned_empty(x.shape, x.dtype)
    k([aligned_copy(x), res])
    return res


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    dt = got.dtype
    with np.errstate(all="ignore"):
        want = want.astype(dt)
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        u = np.abs(got.astype(np.float64) - want.astype(np.float64)) / np.spacing(
            np.abs(want)).astype(np.float64)
    u[same] = 0
    u[np.isnan(u)] = np.inf
    return u


def _reference(name: str, x: np.ndarray) -> np.ndarray:
    import math
    xd = x.astype(np.float64)
    with np.errstate(all="ignore"):
        if name == "erf":
            return np.array([math.erf(v) if not np.isnan(v) else np.nan for v in xd])
        return getattr(np, name)(xd)


@pytest.mark.parametrize("name,dtype,max_ulp", [
    ("exp", "float32", 2), ("tanh", "float32", 3), ("erf", "float32", 3),
    ("log", "float32", 2), ("log2", "float32", 3), ("log10", "float32", 3),
    ("exp", "float64", 2), ("log", "float64", 2), ("tanh", "float64", 3)])
def test_accuracy_over_wide_ranges(name: str, dtype: str, max_ulp: int) -> None:
    x = _values(dtype)
    got = _native(name, x)
    want = _reference(name, x)
    u = _ulps(got, want)
    worst = int(np.argmax(u))
    assert u.max() <= max_ulp, (x[worst], got[worst], want[worst])
    # signs of zero and the special values exactly
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan], dtype)
    got, want = _native(name, specials), _reference(name, specials).astype(dtype)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


def _gelu(dtype: str, form: str) -> str:
    s = {"float32": "f", "float16": "f16", "float64": "f64"}[dtype]
    if form == "tanh":
        body = (f"%0 = power(%x, 3{s}); %1 = add(%x, multiply(0.044715{s}, %0));"
                f" %2 = tanh(multiply(0.797885{s}, %1));"
                f" multiply(multiply(0.5{s}, %x), add(1{s}, %2))")
    else:
        body = f"multiply(multiply(0.5{s}, %x), add(1{s}, erf(multiply(%x, 0.707107{s}))))"
    return HEAD + f"def @main(%x: Tensor[(8, 768), {dtype}]) {{ {body} }}\n"


@pytest.mark.parametrize("form", ["tanh", "erf"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_gelu_vectorises_and_matches(form: str, dtype: str) -> None:
    text = _gelu(dtype, form)
    prim = lower_primitive(fused_module(text)["main"].body.op, f"gelu_{form}_{dtype}")
    opt = compile_module([prim], cache=False).get_source("ll")
    assert re.search(r"<(8|16|32) x (float|double)>", opt)
    assert not re.search(r"@(tanhf?|erff?|expf?)\(", opt), "a libm call is left"
    x = (np.random.default_rng(3).standard_normal((8, 768)) * 3).astype(dtype)
    # 1 + tanh(y) cancels for x < -3: one ulp of tanh near -1 is 3e-8 * |x| absolute
    # (float16: one ulp of the rounded tanh near -1 is 4.9e-4, times |x| / 2)
    assert_matches_interpreter(text, x, atol=1e-6 if dtype == "float32" else 3e-3)


def test_float64_exp_and_sigmoid_vectorise() -> None:
    text = HEAD + "def @main(%x: Tensor[(4, 100), float64]) { add(exp(%x), sigmoid(%x)) }\n"
    prim = lower_primitive(fused_module(text)["main"].body.op, "exp64")
    opt = compile_module([prim], cache=False).get_source("ll")
    assert re.search(r"<(4|8) x double>", opt) and "@exp(" not in opt
    x = np.random.default_rng(4).standard_normal((4, 100)) * 30
    assert_matches_interpreter(text, x)


def test_pow_with_a_tensor_exponent_vectorises_and_keeps_c_special_cases() -> None:
    sp = np.array([0, -0.0, 1, -1, 2, -2, 0.5, -0.5, 3, -3, np.inf, -np.inf, np.nan, 1e-30,
                   -1e-30, 1e30, 0.3, 2.5, -2.5, 1e-45], "float32")
    xs, ys = np.meshgrid(sp, sp)
    rng = np.random.default_rng(5)
    x = np.concatenate([xs.ravel(), (rng.standard_normal(4000) * 10),
                        np.abs(rng.standard_normal(4000) * 5)]).astype("float32")
    y = np.concatenate([ys.ravel(), np.round(rng.standard_normal(4000) * 5),
                        rng.standard_normal(4000) * 20]).astype("float32")
    n = x.size
    text = HEAD + (f"def @main(%x: Tensor[({n}), float32], %y: Tensor[({n}), float32])"
                   " { power(%x, %y) }\n")
    prim = lower_primitive(fused_module(text)["main"].body.op, "pow_vec")
    opt = compile_module([prim], cache=False).get_source("ll")
    assert "@powf(" not in opt and "@pow(" not in opt
    assert re.search(r"<(4|8|16) x double>", opt)
    got = assert_matches_interpreter(text, x, y)
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    assert (_ulps(got, want) <= 1).all()
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))


@pytest.mark.parametrize("dtype", ["int8", "int32", "int64", "uint8"])
def test_nan_and_out_of_range_to_integer_as_numpy(dtype: str) -> None:
    # log of a negative integer is NaN in float64, cast back: NumPy's (x86) value, not
    # whatever LLVM folds poison to once the vectorised log exposes the NaN
    text = HEAD + (f"def @main(%x: Tensor[(9), {dtype}], %f: Tensor[(6), float32]) {{"
                   f" (log(%x), cast(%f, dtype=\"{dtype}\")) }}\n")
    x = np.array([-6, 2, 0, 90, -94, 1, -1, 7, 100]).astype(dtype)
    f = np.array([np.nan, np.inf, -np.inf, 3e9, -3e9, 1e20], "float32")
    assert_matches_interpreter(text, x, f)
