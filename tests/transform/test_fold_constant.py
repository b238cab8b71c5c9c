"""FoldConstant: which calls, tuples, projections, `if`s and lets fold, which must not
(stateful ops, Primitive functions, results above `max_elements`), on every example and
on a 100,000-deep chain.

Each output re-parses and type-checks, the pass is idempotent on it, and the
interpreter agrees before and after.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Let, Tuple, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass
from relaylang.transform.fold_constant import FoldConstant, fold_constant

inputs = main_args
same = shared_same_value

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'
FOLD = get_pass("FoldConstant")


def parse(text: str) -> IRModule:
    return InferType()(rl.parse(HEADER + text))


def check(before: IRModule, p=FOLD) -> IRModule:
    after = p(before)
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(again, after)
    assert rl.structural_equal(p(again), after)          # idempotent
    if "main" in before:
        args = inputs(before)
        assert same(rl.evaluate(before, *args), rl.evaluate(after, *args))
    return after


def calls(expr) -> list[str]:
    return [n.op.name for n in post_order(expr) if isinstance(n, Call) and hasattr(n.op, "name")]


@pytest.mark.parametrize("name", sorted(p.name for p in EXAMPLES.glob("*.relay")
                                        if p.name != "digits_mlp.relay"))
def test_examples(name: str) -> None:
    check(InferType()(rl.parse((EXAMPLES / name).read_text())))


def test_calls_lets_tuples_and_if_fold() -> None:
    mod = parse("""def @main(%x: float32) -> float32 {
      let %c = add(1f, 2f);
      %0 = (subtract(5f, %c), 4f);
      %1 = if (greater(2f, 1f)) { %0.0 } else { %x };
      multiply(add(%1, %0.1), %x)
    }""")
    out = check(mod)
    body = out["main"].body
    assert isinstance(body, Call) and calls(body) == ["multiply"]
    assert isinstance(body.args[0], Constant) and float(body.args[0].data) == 6.0


def test_tensor_and_tuple_results() -> None:
    out = check(parse("""def @main(%x: Tensor[(4), float32]) -> Tensor[(4), float32] {
      %0 = split(arange(0f, 4f, 1f, dtype="float32"), indices_or_sections=2);
      add(%x, concatenate((%0.1, %0.0)))
    }"""))
    const = out["main"].body.args[1]
    assert isinstance(const, Constant)
    assert const.data.dtype == np.float32 and list(const.data) == [2, 3, 0, 1]


def test_not_folded() -> None:
    out = check(parse("""def @main(%x: Tensor[(2), float32], %b: bool) -> Tensor[(2), float32] {
      %0 = nn.dropout(ones(shape=[2], dtype="float32"));
      %1 = fn (%y: Tensor[(2), float32], Primitive=1) -> Tensor[(2), float32] {
        add(%y, add(1f, 1f))
      };
      %2 = if (%b) { %x } else { %0.0 };
      %1(add(%2, %x))
    }"""))
    names = calls(out["main"])
    assert "nn.dropout" in names and names.count("add") == 3 and "ones" not in names


def test_max_elements() -> None:
    text = """def @main(%x: Tensor[(8), float32]) -> Tensor[(8), float32] {
      add(%x, multiply(ones(shape=[8], dtype="float32"), 2f))
    }"""
    small = check(parse(text), get_pass("FoldConstant{max_elements=4}"))
    assert calls(small["main"]) == ["ones", "multiply", "add"]
    assert FoldConstant(max_elements=4) == get_pass("FoldConstant{max_elements=4}")
    big = check(parse(text))
    assert calls(big["main"]) == ["add"]


def test_failing_kernel_stays() -> None:
    # reshape to an impossible shape is rejected by type checking, so build it untyped
    expr = Call(get_op("reshape"), (Constant(np.ones(3, "float32")),),
                rl.parse_expr('fn (%x: Tensor[(4), float32]) { reshape(%x, newshape=[2, 2]) }').body.attrs)
    assert fold_constant(expr) is expr


def test_deep_chain() -> None:
    x, one, add = Var("x", TensorType((), "float32")), Constant(np.array(1, "float32")), \
        get_op("add")
    body: object = Constant(np.array(0, "float32"))
    for _ in range(100_000):                     # a 100,000-deep nest of constant adds
        body = Call(add, (body, one))
    variables = [Var(f"v{i}") for i in range(100_000)]
    chain: object = Call(add, (variables[-1], x))
    for i in reversed(range(100_000)):           # and a 100,000-long let chain of them
        prev = body if i == 0 else variables[i - 1]
        chain = Let(variables[i], Call(add, (prev, one)), chain)
    out = FOLD(IRModule({GlobalVar("main"): Function((x,), chain)}))
    result = out["main"].body
    assert isinstance(result, Call) and isinstance(result.args[0], Constant)
    assert float(result.args[0].data) == 200_000.0
    assert not isinstance(result, (Let, Tuple))
