"""FastMath against TVM v0.19's tests/python/relay/test_pass_fast_math.py: the pass called
on its own, and the standard pipeline (TVM's `relay.optimize`) with FastMath required at
opt level 3 (the pass's own level is 4, as TVM's). Where TVM checks only that the fast op's
name is in the printed module, the pass also runs through the golden harness (re-parse,
idempotence, same values on the interpreter within its tolerance) and its result is
compared with the program calling the fast op."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.expr import Call
from relaylang.ir.module import IRModule
from relaylang.op import get as get_op
from relaylang.transform import FastMath, PassContext
from relaylang.transform.tvm_pipeline import optimize


def fast(name: str) -> Callable:
    """A builder of the call of op `name` with the attributes of the call it replaces."""
    def build(call):
        return Call(get_op(name), call.args, call.attrs, call.type_args)
    return build


def check(op: Callable, shape: tuple[int, ...], fast_name: str, direct: bool = True) -> None:
    x = rl.var("x", shape=shape, dtype="float32")
    mod = IRModule.from_expr(rl.Function([x], op(x)))
    if direct:
        # TVM: FastMath()(mod), the fast op in the text
        fast_mod = FastMath()(mod)
        assert fast_name in rl.astext(fast_mod)
        out = run_golden(mod, "FastMath", opt_level=4)
        y = rl.var("x", shape=shape, dtype="float32")
        assert_same(out, IRModule.from_expr(rl.Function([y], fast(fast_name)(op(y)))))
    # TVM: relay.optimize under PassContext(opt_level=3, required_pass=["FastMath"])
    with PassContext(opt_level=3, required_pass=["FastMath"]):
        fast_mod = optimize(mod, opt_level=3)
    assert fast_name in rl.astext(fast_mod)
    # and not without it: opt level 3 leaves the exact op
    with PassContext(opt_level=3):
        exact = optimize(mod, opt_level=3)
    assert fast_name not in rl.astext(exact)


# TVM's test_exp
def test_exp() -> None:
    check(rl.exp, (1, 16, 16, 16), "fast_exp")


# TVM's test_tanh
def test_tanh() -> None:
    check(rl.tanh, (1, 16, 16, 16), "fast_tanh")


# TVM's test_erf
def test_erf() -> None:
    check(rl.erf, (1, 16, 16, 16), "fast_erf")


# TVM's test_softmax (TVM checks the pipeline only; the pass alone is checked too)
@pytest.mark.parametrize("direct", [False, True])
def test_softmax(direct: bool) -> None:
    check(rl.nn.softmax, (1, 16), "nn.fast_softmax", direct=direct)
