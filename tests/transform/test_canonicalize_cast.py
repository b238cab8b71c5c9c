"""CanonicalizeCast: shared upcasts copied into their elementwise users in TVM's order, the
same results, the registry entry, and a 100k-use program."""
from __future__ import annotations

from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.ir.expr import Call, Function, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.tensor import CastAttrs
from relaylang.transform import PassContext, get_pass
from relaylang.transform.canonicalize_cast import canonicalize_cast

CC = get_pass("CanonicalizeCast")
HEADER = '#[version = "0.0.5"]\n'


def casts(mod: IRModule) -> list[Call]:
    return [n for n in post_order(mod["main"]) if isinstance(n, Call)
            and getattr(n.op, "name", None) == "cast"]


def test_registered_as_tvm() -> None:
    assert CC.name == "CanonicalizeCast" and CC.info.opt_level == 3
    assert "CanonicalizeCast" in [p.name for p in rl.transform.default_pipeline(3).passes]


def test_each_later_elementwise_use_gets_its_own_cast_and_results_agree() -> None:
    src = HEADER + """def @main(%x: Tensor[(2, 3), uint8], %y: Tensor[(2, 3), float32]) {
  %0 = cast(%x, dtype="float32");
  %1 = add(%0, %y);
  %2 = subtract(%1, %0);
  %3 = maximum(%0, %2);
  (%3, nn.softmax(%0))
}"""
    mod = rl.parse(src)
    with PassContext(opt_level=3):
        out = CC(mod)
    # add keeps the original (first in TVM's order), subtract and maximum get copies; the
    # softmax (not elementwise) shares the original.
    assert len(casts(out)) == 3
    uses = {c: 0 for c in map(id, casts(out))}
    for node in post_order(out["main"]):
        for child in node.children():
            if id(child) in uses:
                uses[id(child)] += 1
    assert sorted(uses.values()) == [1, 1, 2]
    args = main_args(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))
    with PassContext(opt_level=3):
        assert rl.astext(CC(out)) == rl.astext(out)                   # idempotent


def test_nothing_to_copy_returns_the_module_unchanged() -> None:
    src = HEADER + """def @main(%x: Tensor[(4), float32]) {
  %0 = cast(%x, dtype="float16");
  (abs(%0), negative(%0))
}"""
    mod = rl.transform.InferType()(rl.parse(src))
    with PassContext(opt_level=3):
        out = CC(mod)
    assert out["main"] is mod["main"]


def test_100k_uses_of_one_upcast() -> None:
    # add(add(add(c, c), c), ...) 100k deep: every add after the first gets its own copy.
    # Only the cast's input needs a type for the rule; typing 100k nodes is tested elsewhere.
    x = Var("x", TensorType((2,), "int8"))
    x.set_checked_type(TensorType((2,), "int8"))
    c = Call(get_op("cast"), (x,), CastAttrs(dtype="float32"))
    e: Call = c
    for _ in range(100_000):
        e = Call(get_op("add"), (e, c))
    out = canonicalize_cast(Function((x,), e))
    copies = [n for n in post_order(out) if isinstance(n, Call) and n.op.name == "cast"]
    # 100,001 elementwise uses: the deepest add's lhs keeps the original, the rest copy.
    assert len(copies) == 100_001
