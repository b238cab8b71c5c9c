"""Every program in examples/ run by the reference interpreter on concrete inputs.

The expected results are the ones each file's header comment states, and the same
computations done independently: by a Python formula for the scalar programs, by
NumPy (from the same random weights) for conv_bn_relu, mlp and attention.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.backend.interpreter.values import Closure, ConstructorValue

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
COVERED = {"attention", "closures", "conv_bn_relu", "digits_mlp", "list_adt", "mlp",
           "recursion", "references",
           "train_mlp"}      # run and trained by tests/examples/test_train_mlp.py


def text_of(name: str) -> str:
    return (EXAMPLES / f"{name}.relay").read_text()


def executor(name: str, extra: str = ""):
    """An executor for the example, with `extra` definitions appended to its text."""
    return rl.create_executor(rl.parse(text_of(name) + extra, source_name=f"{name}.relay"))


def ints(values) -> list:
    return [v.item() for v in values]


def list_items(value: ConstructorValue) -> list:
    items = []
    while value.name == "Cons":
        head, value = value.fields
        items.append(head.item())
    assert value.name == "Nil"
    return items


def test_every_example_has_a_run_test():
    assert {p.stem for p in EXAMPLES.glob("*.relay")} == COVERED


# ------------------------------------------------------------------ recursion.relay


@pytest.mark.parametrize("n, expected", [(10, (3628800, 55)), (12, (479001600, 78)),
                                         (0, (1, 0))])
def test_recursion_documented_results(n, expected):
    out = executor("recursion")(n)
    assert all(v.dtype == np.int32 and v.shape == () for v in out)
    assert tuple(ints(out)) == expected


def test_recursion_matches_the_formulas():
    ex = executor("recursion")
    for n in range(1, 13):
        assert tuple(ints(ex(n))) == (math.factorial(n), n * (n + 1) // 2)


def test_recursion_deep_sum_to():
    out = executor("recursion")(65535, 0, entry="sum_to")
    assert out.item() == 65535 * 65536 // 2 == 2147450880


# ------------------------------------------------------------------ closures.relay


@pytest.mark.parametrize("n, expected", [(3, (12, 42)), (0, (6, 0)), (1, (8, 6))])
def test_closures_documented_results(n, expected):
    assert tuple(ints(executor("closures")(n))) == expected


def test_closures_match_the_formula():
    ex = executor("closures")
    for n in range(6):
        acc = 0
        for _ in range(n):
            acc = (acc + 3) * 2
        assert tuple(ints(ex(n))) == ((n + 3) * 2, acc)


def test_closures_make_adder_returns_a_callable_closure():
    adder = executor("closures")(40, entry="make_adder")
    assert isinstance(adder, Closure)
    assert adder(np.asarray(2, dtype="int32")).item() == 42


# ------------------------------------------------------------------ list_adt.relay

LIST_EXTRA = """
def @rebuild(%r: List[int32]) -> List[int32] { @foldr(Cons, Nil, %r) }
def @last_of_nothing() -> int32 { @last(Nil) }
"""


@pytest.mark.parametrize("k, expected", [(3, (30, 3)), (0, (0, 0))])
def test_list_adt_documented_results(k, expected):
    assert tuple(ints(executor("list_adt")(k))) == expected


def test_list_adt_matches_the_formula():
    ex = executor("list_adt")
    for k in (1, 2, 7, 20):
        # [1, 2, 3, 4] scaled by k sums to 10k; @range(0, k) has k elements.
        assert tuple(ints(ex(k))) == (10 * k, k)


def test_list_adt_helpers():
    ex = executor("list_adt", LIST_EXTRA)
    hundred = ex(1, 101, entry="range")
    assert list_items(hundred) == list(range(1, 101))
    assert ex(hundred, entry="sum_list").item() == 5050
    assert ex(ex(0, 5, entry="range"), entry="last").item() == 4
    assert ex(hundred, entry="length").item() == 100
    rebuilt = ex(hundred, entry="rebuild")
    assert rebuilt is not hundred and list_items(rebuilt) == list(range(1, 101))


def test_list_adt_last_of_nil_is_a_runtime_error_at_the_partial_match():
    lines = text_of("list_adt").splitlines()
    line = next(i for i, s in enumerate(lines, 1) if "match?" in s)
    with pytest.raises(InterpreterError) as info:
        executor("list_adt", LIST_EXTRA)(entry="last_of_nothing")
    assert info.value.span is not None
    assert (info.value.span.source_name, info.value.span.line) == ("list_adt.relay", line)


# ------------------------------------------------------------------ references.relay


@pytest.mark.parametrize("n, expected", [(10, (10, 55, 102)), (0, (0, 0, 102))])
def test_references_documented_results(n, expected):
    assert tuple(ints(executor("references")(n))) == expected


def test_references_match_the_formula():
    ex = executor("references")
    for n in (1, 5, 100):
        assert tuple(ints(ex(n))) == (n, n * (n + 1) // 2, 102)


def test_references_counter_object_from_python():
    incr, get = executor("references")(5, entry="make_counter")
    incr()
    incr()
    incr()
    assert get().item() == 8


# ------------------------------------------------------------------ tensor programs

RNG = np.random.default_rng(2024)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype("float32")


def conv2d_pad1(x, w):
    """3x3 convolution, padding 1, stride 1: a sum of shifted windows (float64)."""
    x = np.pad(x.astype("float64"), ((0, 0), (0, 0), (1, 1), (1, 1)))
    n, _, h, wd = x.shape
    out = np.zeros((n, w.shape[0], h - 2, wd - 2))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", x[:, :, i:i + h - 2, j:j + wd - 2], w[:, :, i, j])
    return out


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def conv_bn_relu_numpy(data, weight, gamma, beta, mean, var):
    conv = conv2d_pad1(data, weight)
    c = (slice(None), None, None)
    bn = (conv - mean[c]) / np.sqrt(var[c] + 2e-5) * gamma[c] + beta[c]
    return np.maximum(bn, 0)


def test_conv_bn_relu_documented_result():
    out = executor("conv_bn_relu")(
        np.ones((1, 3, 32, 32), "float32"), np.full((16, 3, 3, 3), 0.1, "float32"),
        np.full(16, 2.0, "float32"), np.full(16, -3.0, "float32"),
        np.full(16, 0.5, "float32"), np.full(16, 1.0, "float32"))
    assert out.shape == (1, 16, 32, 32) and out.dtype == np.float32
    interior = (2.7 - 0.5) / math.sqrt(1 + 2e-5) * 2 - 3
    assert abs(interior - 1.399956) < 1e-6
    np.testing.assert_allclose(out[:, :, 1:31, 1:31], interior, rtol=1e-5)
    border = out.copy()
    border[:, :, 1:31, 1:31] = 0
    assert not border.any()
    np.testing.assert_allclose(out.sum(dtype="float64"), 16 * 900 * interior, rtol=1e-5)


def test_conv_bn_relu_random_weights_match_numpy():
    args = [normal(1, 3, 32, 32), normal(16, 3, 3, 3, scale=0.3), normal(16), normal(16),
            normal(16, scale=0.1), (RNG.random(16) + 0.5).astype("float32")]
    out = executor("conv_bn_relu")(*args)
    expected = conv_bn_relu_numpy(*args)
    assert 0 < (expected > 0).mean() < 1          # the ReLU clips some values, not all
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)


def test_mlp_documented_result():
    fc2 = np.repeat((np.arange(10) / 128).astype("float32")[:, None], 128, axis=1)
    out = executor("mlp")(np.ones((1, 1, 28, 28), "float32"),
                          np.full((128, 784), 1 / 784, "float32"), np.zeros(128, "float32"),
                          fc2, np.zeros(10, "float32"))
    assert out.shape == (1, 10) and out.dtype == np.float32
    stated = [7.8013e-05, 2.1206e-04, 5.7645e-04, 1.5669e-03, 4.2594e-03,
              1.1578e-02, 3.1473e-02, 8.5552e-02, 2.3255e-01, 6.3215e-01]
    np.testing.assert_allclose(out[0], stated, rtol=1e-3)
    e = np.exp(np.arange(10.0))
    np.testing.assert_allclose(out[0], e / e.sum(), rtol=1e-5)


def test_mlp_random_weights_match_numpy():
    data, w1, b1 = normal(1, 1, 28, 28), normal(128, 784, scale=0.05), normal(128, scale=0.1)
    w2, b2 = normal(10, 128, scale=0.2), normal(10, scale=0.1)
    out = executor("mlp")(data, w1, b1, w2, b2)
    x = data.reshape(1, 784).astype("float64")
    hidden = np.maximum(x @ w1.T.astype("float64") + b1, 0)
    expected = softmax(hidden @ w2.T.astype("float64") + b2)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(out.sum(), 1.0, rtol=1e-5)


def attention_numpy(x, wq, wk, wv, wo, bo):
    tokens = x.reshape(4, 16).astype("float64")
    q, k, v = tokens @ wq.T, tokens @ wk.T, tokens @ wv.T
    p = softmax(q @ k.T / 4.0)
    return ((p @ v) @ wo.T + bo).reshape(1, 4, 16)


def test_attention_documented_result():
    x = np.repeat(np.arange(4, dtype="float32")[None, :, None], 16, axis=2)
    zeros, eye = np.zeros((16, 16), "float32"), np.eye(16, dtype="float32")
    out = executor("attention")(x, zeros, zeros, eye, eye, np.full(16, 0.5, "float32"))
    assert out.shape == (1, 4, 16) and out.dtype == np.float32
    np.testing.assert_allclose(out, 2.0, rtol=1e-6)


def test_attention_random_weights_match_numpy():
    args = [normal(1, 4, 16), normal(16, 16, scale=0.5), normal(16, 16, scale=0.5),
            normal(16, 16, scale=0.3), normal(16, 16, scale=0.3), normal(16)]
    out = executor("attention")(*args)
    np.testing.assert_allclose(out, attention_numpy(*args), rtol=1e-4, atol=1e-5)


def test_digits_mlp_documented_result_and_numpy():
    # The trained weights and the sample image ship beside the program.
    x = np.load(EXAMPLES / "digits_sample.npy")
    with np.load(EXAMPLES / "digits_mlp.npz") as params:
        w1, b1, w2, b2 = (params[k] for k in ("w1", "b1", "w2", "b2"))
    out = executor("digits_mlp")(x, w1, b1, w2, b2)
    assert out.shape == (1, 10) and out.dtype == np.float32
    assert int(out.argmax()) == 3
    stated = [1.8053e-12, 2.4801e-13, 1.5639e-10, 9.9999e-01, 9.5429e-20,
              1.5268e-07, 3.7789e-19, 1.8368e-08, 5.6394e-12, 1.0157e-05]
    np.testing.assert_allclose(out[0], stated, rtol=2e-3, atol=1e-20)
    f64 = [a.astype("float64") for a in (x, w1, b1, w2, b2)]
    hidden = np.maximum(f64[0] @ f64[1].T + f64[2], 0)
    np.testing.assert_allclose(out, softmax(hidden @ f64[3].T + f64[4]), rtol=1e-4, atol=1e-12)
