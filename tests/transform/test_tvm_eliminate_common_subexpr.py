"""EliminateCommonSubexpr against TVM v0.19's
tests/python/relay/test_pass_eliminate_common_subexpr.py: TVM's before and expected
programs built with the IR builder; the pass runs through the golden harness (re-parse,
idempotence, same values on the interpreter)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from pass_helpers import registered_passes
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.transform.eliminate_common_subexpr import EliminateCommonSubexpr


def cse(fn, pipeline: str = "EliminateCommonSubexpr") -> IRModule:
    return run_golden(IRModule.from_expr(fn), pipeline, opt_level=3)


def _relu_add_twice():
    x = rl.var("x", shape=(1, 16))
    y1 = rl.add(rl.nn.relu(x), rl.const(1.0, "float32"))
    y2 = rl.add(rl.nn.relu(x), rl.const(1.0, "float32"))
    return x, y1, y2


# TVM's test_simple
def test_simple() -> None:
    x, y1, y2 = _relu_add_twice()
    before = rl.Function([x], rl.add(y1, y2))
    x = rl.var("x", shape=(1, 16))
    y = rl.add(rl.nn.relu(x), rl.const(1.0, "float32"))
    assert_same(cse(before), IRModule.from_expr(rl.Function([x], rl.add(y, y))))


def _skip_add(expr: Any) -> bool:
    return isinstance(expr, rl.Call) and getattr(expr.op, "name", None) == "add"


@dataclass(frozen=True)
class CSESkipAdd(EliminateCommonSubexpr):
    """TVM's test_callback's pass: EliminateCommonSubexpr(fskip) skipping `add` calls."""

    name: ClassVar[str] = "TestCSESkipAdd"
    fskip: Any = field(default=_skip_add)


# TVM's test_callback: fskip keeps the add calls apart; the relu calls still merge
def test_callback() -> None:
    x, y1, y2 = _relu_add_twice()
    before = rl.Function([x], rl.add(y1, y2))
    x = rl.var("x", shape=(1, 16))
    y = rl.nn.relu(x)
    y1 = rl.add(y, rl.const(1.0, "float32"))
    y2 = rl.add(y, rl.const(1.0, "float32"))
    with registered_passes(CSESkipAdd):
        after = cse(before, "TestCSESkipAdd")
    assert_same(after, IRModule.from_expr(rl.Function([x], rl.add(y1, y2))))


# TVM's test_tuple_get_time: two projections of the same batch_norm merge
def test_tuple_get_time() -> None:
    def params():
        return (rl.var("x", shape=(1, 16, 1, 1)), *(rl.var(n, shape=(16,))
                                                    for n in ("var", "mean", "beta", "gamma")))
    x, var, mean, beta, gamma = params()
    bn = rl.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5)
    before = rl.Function([x, var, mean, beta, gamma],
                         rl.add(rl.TupleGetItem(bn, 0), rl.TupleGetItem(bn, 0)))
    x, var, mean, beta, gamma = params()
    t1 = rl.TupleGetItem(rl.nn.batch_norm(x, gamma, beta, mean, var, epsilon=1e-5), 0)
    expected = rl.Function([x, var, mean, beta, gamma], rl.add(t1, t1))
    assert_same(cse(before), IRModule.from_expr(expected))


# TVM's test_tuple_arg: calls with equal tuple arguments (concatenate) merge
def test_tuple_arg() -> None:
    x, y1, y2 = _relu_add_twice()
    c0 = rl.const(np.ones((1, 16)), "float32")
    y1 = rl.concatenate([y1, c0], axis=0)
    y2 = rl.concatenate([y2, c0], axis=0)
    before = rl.Function([x], rl.add(y1, y2))
    x = rl.var("x", shape=(1, 16))
    y = rl.add(rl.nn.relu(x), rl.const(1.0, "float32"))
    y = rl.concatenate([y, c0], axis=0)
    assert_same(cse(before), IRModule.from_expr(rl.Function([x], rl.add(y, y))))
