"""SimplifyInference against TVM v0.19's tests/python/relay/test_pass_simplify_inference.py:
TVM's before program and its expected unfolding of batch_norm built with the IR builder; the
pass runs through the golden harness (re-parse, idempotence, same values on the
interpreter)."""
from __future__ import annotations

from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.module import IRModule


def _simple_bn(x, gamma, beta, mean, var, axis, epsilon, ndim, dtype):
    # TVM's expectation: (x - mean) / sqrt(var + eps) * gamma + beta, unfolded
    scale = rl.multiply(rl.divide(rl.const(1, dtype), rl.sqrt(rl.add(var, rl.const(epsilon, dtype)))),
                        gamma)
    shift = rl.add(rl.multiply(rl.negative(mean), scale), beta)
    num_newaxis = ndim - (axis + 1)
    if num_newaxis:
        scale = rl.expand_dims(scale, axis=1, num_newaxis=num_newaxis)
        shift = rl.expand_dims(shift, axis=1, num_newaxis=num_newaxis)
    return rl.add(rl.multiply(x, scale), shift)


def _check(dim: int, axis: int, nstep: int, dtype: str = "float32") -> None:
    eps = 0.01
    def params():
        return (rl.var("x", shape=(10,) * dim, dtype=dtype),
                *(rl.var(n, shape=(10,), dtype=dtype)
                  for n in ("beta", "gamma", "moving_var", "moving_mean")))
    x, beta, gamma, var, mean = params()
    y1 = x
    for _ in range(nstep):
        bn = rl.nn.batch_norm(rl.add(y1, rl.const(1, dtype)), gamma, beta, mean, var,
                              epsilon=eps, axis=axis)
        y1 = rl.TupleGetItem(rl.nn.dropout(rl.TupleGetItem(bn, 0)), 0)
    before = rl.Function([x, beta, gamma, var, mean], y1)
    x, beta, gamma, var, mean = params()
    y2 = x
    for _ in range(nstep):
        y2 = _simple_bn(rl.add(y2, rl.const(1, dtype)), gamma, beta, mean, var, axis, eps,
                        dim, dtype)
    expected = rl.Function([x, beta, gamma, var, mean], y2)
    # float16: the unfolded form rounds differently than batch_norm's float32 kernel
    # (well beyond the harness's 1e-5), so the value check is for float32 only.
    skip = ("interp",) if dtype == "float16" else ()
    after = run_golden(IRModule.from_expr(before), "SimplifyInference", skip)
    assert_same(after, IRModule.from_expr(expected))


# TVM's test_simplify_batchnorm (its three checks; float32 as the test's default, and
# float16 as its __main__ runs it)
def test_simplify_batchnorm() -> None:
    for dtype in ("float32", "float16"):
        _check(2, 1, 1, dtype)
        _check(4, 1, 1, dtype)
        _check(4, 0, 3, dtype)
