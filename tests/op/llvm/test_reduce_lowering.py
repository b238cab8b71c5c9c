"""Every LLVM lowering of the reduce family against the interpreter (the NumPy kernels),
per dtype: negative axes, keepdims, exclude, every axis, size-1 and size-0 dimensions,
odd sizes, NaN and infinities. The calls of one dtype run as one program (a tuple of
results), so each case compiles one module."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

from relaylang.op.registry import all_ops, implementation

HEAD = '#[version = "0.0.5"]\n'
DTYPES = ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "bool"]
ATTRS = ["", "axis=[1]", "axis=[-1]", "axis=[0, 2], keepdims=True", "axis=[1], exclude=True",
         "axis=[-3, -1]", "keepdims=True", "axis=[0, -2, 2], exclude=True"]
EMPTY_ATTRS = ["axis=[1]", "axis=[0]", "", "axis=[1], keepdims=True"]


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.3
    if dtype.startswith("uint"):
        return rng.integers(0, 5, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-4, 5, shape).astype(dtype)
    return (rng.standard_normal(shape) + 0.25).astype(dtype)


def _program(params: str, calls: list[str]) -> str:
    return HEAD + f"def @main({params}) {{ ({', '.join(calls)}) }}\n"


def test_every_reduction_is_lowered() -> None:
    names = {op.name for op in all_ops() if op.package.endswith("op.reduce")}
    assert names
    assert {n for n in names if implementation(n, "llvm") is None} == set()


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions(dtype: str) -> None:
    ops = ["sum", "max", "min", "prod", "mean", "argmax", "argmin"]
    if dtype == "bool":
        ops += ["all", "any"]
    calls = [f"{op}(%x{', ' + a if a else ''})" for op in ops for a in ATTRS]
    calls += [f"{op}(%e{', ' + a if a else ''})" for op in ops for a in EMPTY_ATTRS]
    calls += [f"{op}(%s, axis=[0])" for op in ops]
    calls += [f"{op}(%x, axis=[0, 1], select_last_index=True)" for op in ("argmax", "argmin")]
    calls += [f"{op}(%e, axis=[0], select_last_index=True)" for op in ("argmax", "argmin")]
    if dtype != "bool":
        calls += ["variance(%x, mean(%x, axis=[1], keepdims=True), axis=[1])",
                  ("variance(%x, mean(%x, axis=[0, 2], keepdims=True), axis=[0, 2], "
                   "unbiased=True, keepdims=True)"),
                  "variance(%e, mean(%e, axis=[1], keepdims=True), axis=[1])"]
    params = (f"%x: Tensor[(3, 17, 5), {dtype}], %e: Tensor[(2, 0, 3), {dtype}], "
              f"%s: Tensor[(1), {dtype}]")
    rng = np.random.default_rng(7)
    x = _values((3, 17, 5), dtype, rng)
    if dtype.startswith("float"):
        x[0, 3, 1] = np.nan
        x[1, 5, 2] = np.inf
        x[2, 7, 3] = -np.inf
        x[2, 8, 3] = -np.inf
    if dtype.startswith(("int", "uint")):
        x[1, 4] = x[1, 9]             # ties for argmax/argmin
    rtol = 2e-2 if dtype == "float16" else 1e-4 if dtype == "float32" else None
    assert_matches_interpreter(_program(params, calls), x, _values((2, 0, 3), dtype, rng),
                               _values((1,), dtype, rng), rtol=rtol, atol=1e-5)


def test_integer_mean_truncates_and_wraps() -> None:
    calls = ["mean(%x, axis=[1])", "sum(%x, axis=[1])", "mean(%y)", "mean(%b, axis=[0])",
             "prod(%y, axis=[0])", "max(%b, axis=[1])", "min(%y)"]
    params = ("%x: Tensor[(4, 7), int8], %y: Tensor[(300), int8], "
              "%b: Tensor[(3, 260), uint8]")
    rng = np.random.default_rng(8)
    x = rng.integers(-128, 127, (4, 7)).astype("int8")
    y = rng.integers(-128, 127, (300,)).astype("int8")
    u = rng.integers(0, 255, (3, 260)).astype("uint8")
    assert_matches_interpreter(_program(params, calls), x, y, u)


def test_float16_sums_accumulate_in_float32() -> None:
    calls = ["sum(%x)", "mean(%x, axis=[-1])", "sum(%x, axis=[0])", "prod(%p, axis=[0])",
             "variance(%x, mean(%x, axis=[1], keepdims=True), axis=[1])"]
    params = "%x: Tensor[(5, 1001), float16], %p: Tensor[(33, 3), float16]"
    rng = np.random.default_rng(9)
    x = (rng.random((5, 1001)) * 4).astype("float16")
    p = (1 + rng.random((33, 3)) * 0.05).astype("float16")
    assert_matches_interpreter(_program(params, calls), x, p, rtol=2e-3)


def test_reductions_fused_with_elementwise() -> None:
    text = HEAD + """def @main(%x: Tensor[(6, 33), float32]) {
  %0 = exp(%x);
  %1 = sum(%0, axis=[-1], keepdims=True);
  %2 = max(%x, axis=[1], keepdims=True);
  %3 = subtract(%x, %2);
  (divide(%0, %1), argmax(%3, axis=[1]), mean(multiply(%x, %x), axis=[0]))
}
"""
    x = np.random.default_rng(10).standard_normal((6, 33)).astype("float32")
    assert_matches_interpreter(text, x, rtol=1e-5)
