"""SimplifyExpr and CanonicalizeOps: examples (re-parse, type-check, idempotence, same
results), targeted rules and where they must not fire, and a 100,000-node chain."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_cse import EXAMPLES, HEADER, inputs, same_value

import relaylang as rl
from relaylang.ir.equal import structural_equal
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import BiasAddAttrs
from relaylang.op.transform import ReshapeAttrs
from relaylang.transform import InferType, PassContext
from relaylang.transform.canonicalize_ops import CanonicalizeOps
from relaylang.transform.simplify_expr import SimplifyExpr

PASSES = {"SimplifyExpr": SimplifyExpr(), "CanonicalizeOps": CanonicalizeOps()}


def run(name: str, mod: IRModule) -> IRModule:
    with PassContext(opt_level=3):
        return PASSES[name](mod)


def ops(mod: IRModule) -> list[str]:
    return [n.op.name for n in post_order(mod["main"])
            if isinstance(n, Call) and hasattr(n.op, "name")]


def check(name: str, mod: IRModule, *args) -> IRModule:
    out = run(name, mod)
    InferType()(rl.parse(rl.astext(out)))
    assert structural_equal(run(name, out), out)
    if args:
        assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))
    return out


@pytest.mark.parametrize("name", sorted(PASSES))
@pytest.mark.parametrize("path", sorted(p for p in EXAMPLES.glob("*.relay")
                                        if p.stem != "digits_mlp"), ids=lambda p: p.stem)
def test_examples(path: Path, name: str) -> None:
    mod = rl.parse(path.read_text())
    check(name, mod, *(inputs(mod) or []))


def test_neutral_elements() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 3), float32]) {
      subtract(add(0f, multiply(1f, divide(multiply(%x, 1f), 1f))), 0f)
    }""")
    out = check("SimplifyExpr", mod, np.ones((2, 3), "float32"))
    assert ops(out) == [] and isinstance(out["main"].body, Var)


def test_neutral_elements_that_broadcast_stay() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(3), float32], %y: Tensor[(2, 3), float32]) {
      (add(%x, multiply(%y, 1f)), subtract(0f, %x), multiply(%x, 2f))
    }""")
    out = check("SimplifyExpr", mod, np.ones(3, "float32"), np.ones((2, 3), "float32"))
    assert sorted(ops(out)) == ["add", "multiply", "subtract"]


def test_ones_tensor_constant_that_broadcasts_stays() -> None:
    x = Var("x", TensorType((3,), "float32"))
    body = Call(get_op("multiply"), (x, Constant(np.ones((2, 3), "float32"))))
    mod = IRModule({GlobalVar("main"): Function((x,), body)})
    assert ops(check("SimplifyExpr", mod, np.ones(3, "float32"))) == ["multiply"]


def test_reshape_transpose_cast() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 3, 4), float32]) {
      (reshape(reshape(%x, newshape=[6, 4]), newshape=[-1]),
       transpose(transpose(%x, axes=[1, 0, 2]), axes=[0, 2, 1]),
       transpose(transpose(%x)), cast(%x, dtype="float32"), cast(%x, dtype="float16"))
    }""")
    x = np.arange(24, dtype="float32").reshape(2, 3, 4)
    out = check("SimplifyExpr", mod, x)
    assert sorted(ops(out)) == ["cast", "reshape", "transpose"]


def test_bias_add() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 4, 3), float32], %b: Tensor[(4), float32],
                                         %c: Tensor[(3), float32]) {
      nn.bias_add(nn.bias_add(%x, %b), %c, axis=-1)
    }""")
    rng = np.random.default_rng(1)
    args = [rng.normal(size=s).astype("float32") for s in ((2, 4, 3), (4,), (3,))]
    out = check("CanonicalizeOps", mod, *args)
    assert sorted(ops(out)) == ["add", "add", "expand_dims"]


def test_deep_chain() -> None:
    x = Var("x", TensorType((2, 3), "float32"))
    body, one, b = x, Constant(np.array(1, "float32")), Var("b", TensorType((3,), "float32"))
    for i in range(50_000):
        body = Call(get_op("multiply"), (body, one)) if i % 2 else \
            Call(get_op("nn.bias_add"), (body, b), BiasAddAttrs(axis=1))
    body = Call(get_op("reshape"), (Call(get_op("reshape"), (body,), ReshapeAttrs(newshape=(3, 2))),),
                ReshapeAttrs(newshape=(6,)))
    mod = IRModule({GlobalVar("main"): Function((x, b), body)})
    out = run("SimplifyExpr", mod)
    assert ops(out).count("multiply") == 0 and ops(out).count("reshape") == 1
    assert ops(run("CanonicalizeOps", mod)).count("nn.bias_add") == 0
