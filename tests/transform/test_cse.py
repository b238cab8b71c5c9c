"""EliminateCommonSubexpr: examples (re-parse, type-check, idempotence, same results),
targeted merges and non-merges, the `fskip` option, and a 100,000-node chain."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.equal import structural_equal
from relaylang.ir.expr import Call, Function, GlobalVar, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, PassContext, get_pass
from relaylang.transform.eliminate_common_subexpr import EliminateCommonSubexpr

inputs = main_args
same_value = partial(shared_same_value, atol=1e-8, equal_nan=True)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HEADER = '#[version = "0.0.5"]\n'


def cse(mod: IRModule, **options) -> IRModule:
    with PassContext(opt_level=3):
        return EliminateCommonSubexpr(**options)(mod)


def count_calls(mod: IRModule, name: str) -> int:
    return sum(1 for n in post_order(mod["main"])
               if isinstance(n, Call) and getattr(n.op, "name", None) == name)


@pytest.mark.parametrize("path", sorted(p for p in EXAMPLES.glob("*.relay")
                                        if p.stem != "digits_mlp"), ids=lambda p: p.stem)
def test_examples(path: Path) -> None:
    mod = rl.parse(path.read_text())
    out = cse(mod)
    InferType()(rl.parse(rl.astext(out)))
    assert structural_equal(cse(out), out)
    args = inputs(mod)
    if args is not None:
        assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))


def test_merges_calls_and_their_users() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2), float32]) {
      %0 = add(%x, 1f); %1 = add(%x, 1f);
      (multiply(%0, %1), multiply(%1, %0), multiply(%0, %1))
    }""")
    out = cse(mod)
    assert count_calls(out, "add") == 1 and count_calls(out, "multiply") == 1


def test_keeps_different_attrs_and_stateful_ops() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2, 3), float32]) {
      (sum(%x, axis=[0]), sum(%x, axis=[1]), nn.dropout(%x).0, nn.dropout(%x).0)
    }""")
    out = cse(mod)
    assert count_calls(out, "sum") == 2 and count_calls(out, "nn.dropout") == 2


def test_never_merges_between_branches() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2), float32], %c: bool) {
      if (%c) { exp(%x) } else { exp(%x) }
    }""")
    assert count_calls(cse(mod), "exp") == 2


def test_fskip() -> None:
    mod = rl.parse(HEADER + """def @main(%x: Tensor[(2), float32]) {
      (exp(%x), exp(%x), tanh(%x), tanh(%x))
    }""")
    out = cse(mod, fskip=lambda call: call.op.name == "exp")
    assert count_calls(out, "exp") == 2 and count_calls(out, "tanh") == 1
    assert get_pass("EliminateCommonSubexpr").fskip is None


def test_opt_level_three_in_sequential() -> None:
    mod = rl.parse(HEADER + "def @main(%x: float32) { (exp(%x), exp(%x)) }")
    seq = rl.transform.Sequential([EliminateCommonSubexpr()])
    assert count_calls(seq(mod), "exp") == 2              # the default opt level is 2
    assert count_calls(cse(mod), "exp") == 1


def test_deep_chain() -> None:
    x = Var("x", TensorType((2,), "float32"))
    body, add = x, get_op("add")
    for _ in range(100_000):
        body = Call(add, (Call(get_op("negative"), (body,)), Call(get_op("negative"), (body,))))
    out = cse(IRModule({GlobalVar("main"): Function((x,), body)}))
    assert count_calls(out, "negative") == 100_000
