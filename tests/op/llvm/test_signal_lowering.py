"""The LLVM lowering of dft (the O(n^2) sum in float64) against the interpreter (numpy.fft
in the input's precision): forward and inverse, lengths 1, 2, odd, prime and powers of
two, batches of several axes and of size 1, float32, float16 and float64; a dft inside
a fused program; an empty tensor has no lowering (the NumPy kernel runs)."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module

import relaylang as rl
from relaylang.backend.llvm.lower import NoLowering, lower_primitive

HEAD = '#[version = "0.0.5"]\n'
SHAPES = [(1,), (2,), (7,), (3, 16), (2, 1, 13), (1, 4, 1), (5, 9)]


def _t(shape: tuple, dtype: str) -> str:
    return f"Tensor[({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}), {dtype}]"


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_dft(shape: tuple, dtype: str) -> None:
    rng = np.random.default_rng(len(shape) * 31 + shape[-1])
    re = (rng.standard_normal(shape) * 3).astype(dtype)
    im = (rng.standard_normal(shape) * 3).astype(dtype)
    text = HEAD + (f"def @main(%re: {_t(shape, dtype)}, %im: {_t(shape, dtype)}) {{ "
                   "(dft(%re, %im), dft(%re, %im, inverse=True)) }\n")
    # the kernel's float32 FFT and the lowering's float64 sum differ by float32 rounding
    # of terms of size |x| sqrt(n): absolute tolerance on that scale
    n = shape[-1]
    atol = {"float16": 0.05, "float32": 3e-6, "float64": 1e-12}[dtype] * 3 * np.sqrt(n)
    rtol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-10}[dtype]
    assert_matches_interpreter(text, re, im, rtol=rtol, atol=atol)


def test_dft_in_a_fused_program() -> None:
    # the parts come from computations and the outputs feed one: the op is opaque, so it
    # is a primitive function of its own between two fused ones
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 10)).astype("float32")
    text = HEAD + ("def @main(%x: Tensor[(3, 10), float32]) { "
                   "let %z = dft(%x * 2f, zeros_like(%x)); "
                   "let %b = dft(%z.0, %z.1, inverse=True); "
                   "add(%b.0, %b.1) }\n")
    mod = rl.parse(text)
    lib = rl.build(mod, target="llvm")
    assert lib.fallback_ops == []
    want = rl.evaluate(mod, x)
    got = lib(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got, x * 2, rtol=1e-5, atol=1e-5)     # imaginary part ~0


def test_empty_dft_has_no_lowering() -> None:
    text = HEAD + ("def @main(%re: Tensor[(2, 0), float32], %im: Tensor[(2, 0), float32]) "
                   "{ dft(%re, %im) }\n")
    mod = fused_module(text)
    fn = mod["main"].body.op
    assert isinstance(fn, rl.ir.expr.Function)
    with pytest.raises(NoLowering):
        lower_primitive(fn, "empty_dft")
