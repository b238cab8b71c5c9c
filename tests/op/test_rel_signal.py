"""The signal family (dft): its relation (tuple of two tensors of the input's type,
errors for mismatched parts, non-float dtypes and scalars), the NumPy kernel against a
direct O(n^2) sum in float64 over edge shapes (size 1, odd lengths, empty axes), the
text format and the interpreter."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import TensorType, TupleType

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(5)


def signal(shape, dtype="float32"):
    return (RNG.standard_normal(shape) * 2).astype(dtype)


def direct_dft(re, im, inverse):
    """The DFT along the last axis as the defining sum, in float64."""
    n = re.shape[-1]
    z = re.astype(np.float64) + 1j * im.astype(np.float64)
    k = np.arange(n)
    w = np.exp((2j if inverse else -2j) * np.pi * np.outer(k, k) / max(n, 1))
    out = z @ w.T
    if inverse and n:
        out = out / n
    return out.real, out.imag


# ---------------------------------------------------------------- kernel vs relation
# (op, inputs, attributes): the relation on the inputs' types must promise the kernel's
# shapes and dtypes, and the kernel must compute the defining sum.
AGREEMENT = [
    ("dft", [signal((2, 7)), signal((2, 7))], {}),
    ("dft", [signal((2, 7)), signal((2, 7))], {"inverse": True}),
    ("dft", [signal((1,)), signal((1,))], {}),
    ("dft", [signal((3, 1, 8), "float64"), signal((3, 1, 8), "float64")], {"inverse": True}),
    ("dft", [signal((4, 5), "float16"), signal((4, 5), "float16")], {}),
    ("dft", [signal((2, 0)), signal((2, 0))], {}),
    ("dft", [signal((0, 3)), signal((0, 3))], {"inverse": True}),
    ("dft", [signal((1, 2, 1, 9)), np.zeros((1, 2, 1, 9), "float32")], {}),
]


@pytest.mark.parametrize("op, inputs, kw", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_the_defining_sum(op, inputs, kw):
    promised = rel(op, *[T(x.shape, x.dtype.name) for x in inputs], **kw)
    re, im = run(op, *inputs, **kw)
    assert isinstance(promised, TupleType) and len(promised.fields) == 2
    for part, t in zip((re, im), promised.fields):
        assert part.shape == tuple(t.shape) and part.dtype.name == t.dtype
    want_re, want_im = direct_dft(*inputs, kw.get("inverse", False))
    n = max(inputs[0].shape[-1], 1)
    tol = {"float16": 2e-2, "float32": 2e-6, "float64": 1e-12}[inputs[0].dtype.name]
    scale = np.sqrt(n) * 2 * (1 if not kw.get("inverse") else 1 / n)
    np.testing.assert_allclose(re, want_re, rtol=tol, atol=tol * scale * 4)
    np.testing.assert_allclose(im, want_im, rtol=tol, atol=tol * scale * 4)


def test_forward_then_inverse_is_the_identity():
    re, im = signal((3, 11), "float64"), signal((3, 11), "float64")
    fr, fi = run("dft", re, im)
    br, bi = run("dft", fr, fi, inverse=True)
    np.testing.assert_allclose(br, re, atol=1e-12)
    np.testing.assert_allclose(bi, im, atol=1e-12)


def test_float32_is_numpy_fft_in_single_precision():
    # ONNX's reference DFT computes numpy.fft on the float32 signal: matched bit for bit
    re, im = signal((2, 10)), signal((2, 10))
    out = np.fft.ifft(re + 1j * im, axis=-1)
    assert out.dtype == np.complex64
    got_re, got_im = run("dft", re, im, inverse=True)
    np.testing.assert_array_equal(got_re, out.real)
    np.testing.assert_array_equal(got_im, out.imag)


# ---------------------------------------------------------------- relation

def test_relation_gives_a_pair_of_the_input_type():
    out = rel("dft", T((2, ANY, 5)), T((2, 3, ANY)))
    assert rl.structural_equal(out, TupleType((T((2, 3, 5)), T((2, 3, 5)))))
    out = rel("dft", T((4,), "float64"), T((4,), "float64"), inverse=True)
    assert rl.structural_equal(out.fields[0], TensorType((4,), "float64"))
    assert rel("dft", rl.ir.types.IncompleteType(), T((4,))) is None


def test_relation_errors():
    rel_error("dft", [T((2, 3)), T((2, 4))], "same shape", arg=1)
    rel_error("dft", [T((2, 3)), T((3,))], "same shape", arg=1)
    rel_error("dft", [T((2, 3)), T((2, 3), "float64")], "dtype", arg=1)
    rel_error("dft", [T((2, 3), "int32"), T((2, 3), "int32")], "float tensor", arg=0)
    rel_error("dft", [T(()), T(())], "rank >= 1", arg=0)


# ---------------------------------------------------------------- text and interpreter

def test_text_round_trip_and_interpreter():
    text = HEAD + ("def @main(%re: Tensor[(2, 5), float32], %im: Tensor[(2, 5), float32]) "
                   "{ dft(%re, %im, inverse=True) }\n")
    mod = rl.parse(text)
    assert "dft(%re, %im, inverse=True)" in rl.astext(mod)
    re, im = signal((2, 5)), signal((2, 5))
    out = rl.evaluate(mod, re, im)
    want = np.fft.ifft(re.astype(np.float64) + 1j * im, axis=-1)
    np.testing.assert_allclose(out[0], want.real, atol=1e-6)
    np.testing.assert_allclose(out[1], want.imag, atol=1e-6)
    typed = rl.transform.InferType()(mod)
    assert rl.astext(typed["main"].checked_type.ret_type) == \
        "(Tensor[(2, 5), float32], Tensor[(2, 5), float32])"
