"""LambdaLift against TVM v0.19's tests/python/relay/test_pass_lambda_lift.py: TVM's programs
built with the IR builder, run through the golden harness (re-parse, idempotence, same
values on the interpreter); TVM checks the number of functions after lifting."""
from __future__ import annotations

from pathlib import Path

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.testing.cases import split_cases
from relaylang.testing.golden import run_case
from relaylang.transform import InferType


def run_golden(mod: IRModule | str, pipeline: str, skip: tuple[str, ...] = (),
               opt_level: int | None = None) -> IRModule:
    """`relay opt [--opt-level N] -p PIPELINE` on `mod` through the golden harness
    (relaylang/testing):
    its automatic checks (re-parse, idempotence, same values on the interpreter) must hold;
    the typed output module."""
    text = mod if isinstance(mod, str) else rl.astext(mod)
    level = "" if opt_level is None else f" --opt-level {opt_level}"
    head = f"// RUN: relay opt %s{level} -p {pipeline}\n"
    if skip:
        head += f"// GOLDEN-SKIP: {', '.join(skip)}\n"
    run = run_case(split_cases(Path("tvm_case.relay"), head + text)[0])
    assert [r.exit_code for r in run.results] == [0], run.results[0].stderr
    assert not run.problems, "\n".join(run.problems)
    return InferType()(rl.parse(run.stdout))


def assert_same(actual: IRModule, expected: IRModule) -> None:
    expected = InferType()(expected)
    assert rl.structural_equal(actual, expected, map_free_vars=True), \
        f"actual:\n{rl.astext(actual)}\nexpected:\n{rl.astext(expected)}"


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
