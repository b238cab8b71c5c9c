"""The nn, pool and transform gradient rules through the gradient pass
(relaylang/transform/gradient.py), both modes, against central finite differences in
float64: one op per program (f = adjoint * op(params), whose gradient is that of
sum(adjoint * op)), a classifier's loss (dense, bias_add, relu, log_softmax,
cross_entropy_with_logits), a small CNN (conv2d, pools, batch_norm, pad, batch_flatten)
and a training-mode batch norm written with mean and variance; on the interpreter and
natively (LLVM)."""
from __future__ import annotations

import numpy as np
import pytest
from grad_check import build_forward, numeric_gradients, random_adjoints

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.ir.types import TupleType
from relaylang.op import make

gradient = rl.transform.gradient
MODES = ("first_order", "higher_order")


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def distinct(seed: int, *shape: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.1).reshape(shape)


def ints(*values) -> np.ndarray:
    return np.array(values, dtype="int32")


def _flat(v):
    if isinstance(v, (tuple, list)):
        return [leaf for x in v for leaf in _flat(x)]
    return [np.asarray(v)]


CASES = [
    ("nn.dense", [rand(0, 3, 4), rand(1, 5, 4)], {}),
    ("nn.batch_matmul", [rand(0, 2, 3, 4), rand(1, 1, 5, 4)], {"transpose_b": True}),
    ("nn.bias_add", [rand(0, 2, 3, 4), rand(1, 3)], {}),
    ("nn.prelu", [rand(0, 2, 3) + 0.05, rand(1, 3)], {}),
    ("nn.softmax", [rand(0, 2, 5)], {}),
    ("nn.log_softmax", [rand(0, 2, 5)], {"axis": 0}),
    ("nn.conv2d", [rand(0, 2, 4, 6, 5), rand(1, 6, 2, 3, 2)],
     {"groups": 2, "strides": (2, 1), "padding": (1, 0, 1, 1), "dilation": (1, 2)}),
    ("nn.batch_norm", [rand(0, 2, 3, 4), rand(1, 3), rand(2, 3), rand(3, 3),
                       np.abs(rand(4, 3)) + 0.5], {}),
    ("nn.layer_norm", [rand(0, 2, 5), rand(1, 5), rand(2, 5)], {}),
    ("nn.pad", [rand(0, 2, 3), np.array(0.5)], {"pad_width": ((1, 0), (0, 2))}),
    ("nn.cross_entropy", [np.abs(rand(0, 3, 4)) + 0.2, rand(1, 3, 4)], {}),
    ("nn.nll_loss", [rand(0, 3, 4), ints(0, 3, 3), np.abs(rand(1, 4)) + 0.5], {}),
    ("nn.max_pool2d", [distinct(0, 1, 2, 5, 5)], {"pool_size": (3, 3), "strides": (2, 2),
                                                  "padding": (1, 1)}),
    ("nn.avg_pool2d", [distinct(0, 1, 2, 5, 5)], {"pool_size": (2, 2), "ceil_mode": True}),
    ("nn.global_avg_pool2d", [rand(0, 2, 3, 4, 4)], {}),
    ("nn.adaptive_max_pool2d", [distinct(0, 1, 2, 5, 4)], {"output_size": (2, 3)}),
    ("concatenate", [(rand(0, 2, 3), rand(1, 2, 2))], {"axis": 1}),
    ("split", [rand(0, 6, 2)], {"indices_or_sections": (2, 5)}),
    ("take", [rand(0, 4, 3), ints(1, 3, 1)], {"axis": 0}),
    ("strided_slice", [rand(0, 5, 6)], {"begin": (4, 1), "end": (0, 6), "strides": (-2, 2)}),
    ("transpose", [rand(0, 2, 3, 4)], {"axes": (1, 2, 0)}),
    ("broadcast_to", [rand(0, 3, 1)], {"shape": (2, 3, 4)}),
    ("tile", [rand(0, 2, 3)], {"reps": (2, 1, 2)}),
    ("stack", [(rand(0, 2, 3), rand(1, 2, 3))], {"axis": 2}),
]
NONDIFF = {"take": (1,), "nn.nll_loss": (1,)}


def _program(op, inputs, attrs, adjoints):
    """fn(params) = adjoint * op(params) (a tuple of them for a tuple result)."""
    params, call, values = build_forward(op, inputs, attrs)
    t = call.checked_type
    if isinstance(t, TupleType):
        body = rl.Tuple([make.multiply(rl.TupleGetItem(call, i), rl.const(a, str(a.dtype)))
                         for i, a in enumerate(adjoints)])
    else:
        body = make.multiply(call, rl.const(adjoints[0], str(adjoints[0].dtype)))
    return rl.Function(params, body), values


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("op, inputs, attrs", CASES, ids=[f"{c[0]}-{i}" for i, c in
                                                         enumerate(CASES)])
def test_rule_through_the_pass(op, inputs, attrs, mode):
    adjoints = random_adjoints(op, inputs, attrs, np.random.default_rng(7))
    fn, values = _program(op, inputs, attrs, adjoints)
    want = numeric_gradients(op, inputs, attrs, adjoints, NONDIFF.get(op, ()))
    want_flat = []
    for i, w in enumerate(want):
        want_flat.extend(_flat(w) if w is not None else [None] * len(_flat(inputs[i])))
    g = gradient(fn, mode=mode)
    for target in ("interp", "llvm"):
        _, grads = rl.evaluate(IRModule.from_expr(g), *values, target=target)
        got = _flat(grads)
        assert len(got) == len(want_flat)
        for k, (a, w) in enumerate(zip(got, want_flat)):
            if w is None:
                assert not np.any(a)
            else:
                np.testing.assert_allclose(a, w, rtol=1e-5, atol=1e-6,
                                           err_msg=f"{op} gradient {k} ({mode}, {target})")


# ------------------------------------------------------------------ whole programs


def _numeric(fn, values, eps=1e-6):
    """Central differences of the scalar fn at values (every parameter)."""
    ex = rl.create_executor(IRModule.from_expr(fn))

    def at(i, idx, d):
        args = list(values)
        args[i] = values[i].copy()
        args[i][idx] += d
        return float(ex(*args))
    out = []
    for i, v in enumerate(values):
        g = np.zeros_like(v)
        for idx in np.ndindex(v.shape):
            g[idx] = (at(i, idx, eps) - at(i, idx, -eps)) / (2 * eps)
        out.append(g)
    return out


def _check_program(fn, values, skip=(), rtol=1e-5, atol=1e-6):
    want = _numeric(fn, values)
    for mode in MODES:
        g = gradient(fn, mode=mode)
        for target in ("interp", "llvm"):
            value, grads = rl.evaluate(IRModule.from_expr(g), *values, target=target)
            np.testing.assert_allclose(value, rl.evaluate(IRModule.from_expr(fn), *values),
                                       rtol=1e-10)
            for i, (a, w) in enumerate(zip(grads, want)):
                if i not in skip:
                    np.testing.assert_allclose(a, w, rtol=rtol, atol=atol,
                                               err_msg=f"param {i} ({mode}, {target})")


def test_classifier_loss():
    x = rl.var("x", shape=(4, 5), dtype="float64")
    w1 = rl.var("w1", shape=(6, 5), dtype="float64")
    b1 = rl.var("b1", shape=(6,), dtype="float64")
    w2 = rl.var("w2", shape=(3, 6), dtype="float64")
    y = rl.var("y", shape=(4, 3), dtype="float64")
    h = make.nn.relu(make.nn.bias_add(make.nn.dense(x, w1), b1))
    loss = make.nn.cross_entropy_with_logits(make.nn.log_softmax(make.nn.dense(h, w2)), y)
    fn = rl.Function([x, w1, b1, w2, y], loss)
    r = np.random.default_rng(0)
    values = [r.standard_normal((4, 5)), r.standard_normal((6, 5)), r.standard_normal(6),
              r.standard_normal((3, 6)), np.eye(3)[[0, 1, 2, 1]]]
    _check_program(fn, values)


def test_small_cnn():
    x = rl.var("x", shape=(2, 1, 6, 6), dtype="float64")
    w = rl.var("w", shape=(3, 1, 3, 3), dtype="float64")
    gamma = rl.var("gamma", shape=(3,), dtype="float64")
    beta = rl.var("beta", shape=(3,), dtype="float64")
    fc = rl.var("fc", shape=(2, 12), dtype="float64")
    y = rl.var("y", shape=(2, 2), dtype="float64")
    mean = rl.const(np.zeros(3), "float64")
    var = rl.const(np.ones(3), "float64")
    c = make.nn.conv2d(make.nn.pad(x, rl.const(0.0, "float64"),
                                   pad_width=((0, 0), (0, 0), (1, 0), (1, 0))), w,
                       padding=(1, 1), strides=(1, 1))
    bn = rl.TupleGetItem(make.nn.batch_norm(c, gamma, beta, mean, var), 0)
    p = make.nn.avg_pool2d(make.nn.max_pool2d(make.nn.leaky_relu(bn, alpha=0.1),
                                              pool_size=(2, 2), strides=(2, 2)),
                           pool_size=(2, 2), strides=(1, 1), ceil_mode=True)
    logits = make.nn.dense(make.nn.batch_flatten(p), fc)
    loss = make.nn.cross_entropy(make.nn.softmax(logits), y)
    fn = rl.Function([x, w, gamma, beta, fc, y], loss)
    r = np.random.default_rng(3)
    values = [r.standard_normal((2, 1, 6, 6)), r.standard_normal((3, 1, 3, 3)),
              r.standard_normal(3), r.standard_normal(3), r.standard_normal((2, 12)),
              np.eye(2)[[0, 1]]]
    _check_program(fn, values, rtol=1e-4, atol=1e-6)


def test_training_mode_batch_norm_written_with_mean_and_variance():
    """Batch statistics (TVM's training-mode batch norm is mean/variance arithmetic):
    the reduce family's rules with bias_add and the nn rules."""
    x = rl.var("x", shape=(5, 3), dtype="float64")
    gamma = rl.var("gamma", shape=(3,), dtype="float64")
    beta = rl.var("beta", shape=(3,), dtype="float64")
    mu = make.mean(x, axis=(0,), keepdims=True)
    var = make.variance(x, mu, axis=(0,), keepdims=True)
    xhat = make.divide(make.subtract(x, mu),
                       make.sqrt(make.add(var, rl.const(1e-3, "float64"))))
    out = make.nn.bias_add(make.multiply(xhat, gamma), beta, axis=1)
    target = rl.const(np.random.default_rng(1).standard_normal((5, 3)), "float64")
    loss = make.sum(make.multiply(make.nn.relu(out), target))
    fn = rl.Function([x, gamma, beta], loss)
    r = np.random.default_rng(2)
    _check_program(fn, [r.standard_normal((5, 3)), r.standard_normal(3), r.standard_normal(3)],
                   rtol=1e-4, atol=1e-6)
