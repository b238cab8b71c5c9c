"""ToCPS / UnCPS against TVM v0.19's tests/python/relay/test_pass_to_cps.py: test_cps_pe
(CPS, then PartialEvaluate and DeadCodeElimination remove every reference). The other
tests of that file are golden cases in tests/golden/tvm/to_cps/. Each pipeline runs
through the golden harness (re-parse, idempotence where it applies, same values)."""
from __future__ import annotations

from tvm_golden import run_golden

import relaylang as rl
from relaylang.ir.expr import RefCreate
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.transform import InferType
from relaylang.transform.gradient import gradient


def destroy_ref(fn) -> None:
    """TVM's destroy_ref: after ToCPS (and UnCPS type-checking), PartialEvaluate and
    DeadCodeElimination(inline_once, ignore_impurity) leave no reference."""
    mod = InferType()(IRModule.from_expr(fn))
    run_golden(mod, "ToCPS,InferType,UnCPS,InferType", skip=("idempotent", "interp"))
    out = run_golden(mod, "ToCPS,InferType,PartialEvaluate,InferType,"
                     "DeadCodeElimination{inline_once=true,ignore_impurity=true}",
                     skip=("idempotent", "interp"))
    assert not any(isinstance(n, RefCreate) for n in post_order(out["main"])), rl.astext(out)


# TVM's test_cps_pe (its three programs: a reference written in both branches, and the
# gradients of two functions with an `if`)
def test_cps_pe() -> None:
    unit = rl.Function([], rl.const(0.0, "float32"))
    f_ref = rl.var("f_ref")
    one, two = rl.const(1.0, "float32"), rl.const(2.0, "float32")
    cond = rl.var("cond", shape=(), dtype="bool")
    if_expr = rl.If(cond, rl.RefWrite(f_ref, rl.Function([], one)),
                    rl.RefWrite(f_ref, rl.Function([], two)))
    stmt = rl.Let(f_ref, rl.RefCreate(unit),
                  rl.Let(rl.var("x"), if_expr, rl.Call(rl.RefRead(f_ref), [])))
    destroy_ref(rl.Function([cond], stmt))

    g = InferType()(IRModule.from_expr(rl.Function([cond], rl.If(cond, one, two))))["main"]
    destroy_ref(gradient(g))

    x, y, z = (rl.var(n, shape=(1, 16)) for n in ("x", "y", "z"))
    cond = rl.var("cond", shape=(), dtype="bool")
    h = rl.Function([cond, x, y, z], rl.add(rl.If(cond, x, y), z))
    destroy_ref(gradient(InferType()(IRModule.from_expr(h))["main"]))
