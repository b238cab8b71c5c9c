"""The linalg family (det): its relation ((..., n, n) float -> (...), errors for
non-square, rank < 2 and integer inputs), the NumPy kernel against determinants known
in closed form and the Leibniz formula over edge shapes (1 x 1, 0 x 0, empty batches,
singular and permutation matrices), the text format and the interpreter."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(8)


def matrices(shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


def leibniz(x):
    """det by the permutation sum, in float64 (for small n)."""
    x = x.astype(np.float64)
    n = x.shape[-1]
    out = np.zeros(x.shape[:-2])
    for perm in itertools.permutations(range(n)):
        inversions = sum(1 for i in range(n) for j in range(i + 1, n) if perm[i] > perm[j])
        term = np.ones(x.shape[:-2])
        for i, p in enumerate(perm):
            term = term * x[..., i, p]
        out = out + (-1) ** inversions * term
    return out


SINGULAR = np.array([[1, 2, 3], [2, 4, 6], [0, 1, 1]], "float32")
PERMUTED = np.eye(4, dtype="float32")[[2, 0, 3, 1]]
ZERO_COLUMN = np.array([[0, 1, 2], [0, 3, 4], [0, 5, 7]], "float64")

# (op, inputs, attributes): the relation promises the kernel's shape and dtype, and the
# kernel computes the determinant.
AGREEMENT = [
    ("det", [matrices((2, 2))], {}),
    ("det", [matrices((3, 4, 4))], {}),
    ("det", [matrices((1, 1))], {}),
    ("det", [matrices((2, 1, 5, 5), "float64")], {}),
    ("det", [matrices((2, 3, 3), "float16")], {}),
    ("det", [matrices((2, 0, 0))], {}),
    ("det", [matrices((0, 3, 3))], {}),
    ("det", [SINGULAR], {}),
    ("det", [PERMUTED], {}),
    ("det", [ZERO_COLUMN], {}),
]


@pytest.mark.parametrize("op, inputs, kw", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_leibniz(op, inputs, kw):
    (x,) = inputs
    promised = rel(op, T(x.shape, x.dtype.name), **kw)
    out = run(op, *inputs, **kw)
    assert out.shape == tuple(promised.shape) and out.dtype.name == promised.dtype
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-12}[x.dtype.name]
    np.testing.assert_allclose(out, leibniz(x), rtol=tol, atol=tol)


def test_known_determinants():
    assert run("det", np.diag(np.array([2, 3, -4], "float32"))) == np.float32(-24)
    assert run("det", PERMUTED) == np.float32(-1)          # a 4-cycle: odd
    assert run("det", np.eye(3, dtype="float32")[[1, 0, 2]]) == np.float32(-1)
    assert run("det", SINGULAR) == np.float32(0)
    assert run("det", np.zeros((0, 0), "float32")) == np.float32(1)


def test_relation():
    assert rl.structural_equal(rel("det", T((2, 3, 3))), T((2,)))
    assert rl.structural_equal(rel("det", T((4, 4), "float64")), T((), "float64"))
    assert rl.structural_equal(rel("det", T((ANY, 5, ANY))), T((ANY,)))
    rel_error("det", [T((2, 3))], "square", arg=0)
    rel_error("det", [T((3,))], "rank >= 2", arg=0)
    rel_error("det", [T((2, 2), "int32")], "float tensor", arg=0)


def test_text_and_interpreter():
    text = HEAD + "def @main(%x: Tensor[(2, 3, 3), float32]) { det(%x) }\n"
    mod = rl.parse(text)
    assert "det(%x)" in rl.astext(mod)
    x = matrices((2, 3, 3))
    np.testing.assert_allclose(rl.evaluate(mod, x), np.linalg.det(x), rtol=1e-5)
