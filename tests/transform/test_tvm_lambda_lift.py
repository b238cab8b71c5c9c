"""LambdaLift against TVM v0.19's tests/python/relay/test_pass_lambda_lift.py: TVM's programs
built with the IR builder, run through the golden harness (re-parse, idempotence, same
values on the interpreter); TVM checks the number of functions after lifting."""
from __future__ import annotations

from tvm_golden import run_golden

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.transform import InferType


def lift(fn) -> IRModule:
    return run_golden(InferType()(IRModule.from_expr(fn)), "LambdaLift")


# TVM's test_basic: a nested function becomes a second global
def test_basic() -> None:
    x2, y2 = rl.var("x2", shape=(10, 5)), rl.var("y2", shape=(1, 5))
    level2 = rl.Function([x2, y2], rl.add(x2, y2))
    x1, y1 = rl.var("x1", shape=(10, 5)), rl.var("y1", shape=(1, 5))
    assert len(lift(rl.Function([x1, y1], rl.Call(level2, [x1, y1]))).functions) == 2


# TVM's test_closure: a closure and the function returning it are lifted (3 globals)
def test_closure() -> None:
    x, y = rl.var("x", shape=(2,)), rl.var("y", shape=(2,))
    inner = rl.Function([x], rl.add(x, y))
    outer = rl.Function([y], inner)
    clo = rl.Call(outer, [rl.ones(shape=(2,), dtype="float32")])
    main = rl.Function([], rl.Call(clo, [rl.zeros(shape=(2,), dtype="float32")]))
    assert len(lift(main).functions) == 3


# TVM's test_recursive: a let-bound recursive loop becomes one lifted global
def test_recursive() -> None:
    x = rl.var("x", shape=(2,))
    i, s = rl.var("i", shape=(), dtype="int32"), rl.var("s", shape=(2,))
    loop = rl.var("while_loop")
    body = rl.If(rl.less(i, rl.const(10, "int32")),
                 rl.Call(loop, [rl.add(i, rl.const(1, "int32")), rl.add(s, x)]), s)
    func = rl.Function([i, s], body)
    ret = rl.Let(loop, func, rl.Call(loop, [rl.const(0, "int32"),
                                            rl.zeros(shape=(2,), dtype="float32")]))
    assert len(lift(rl.Function([x], ret)).functions) == 2
