"""FuseOps and DefuseOps: Primitive groups by OpPattern, undone exactly, same results."""
from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Constant, Function, GlobalVar, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.transform import InferType, get_pass

inputs = partial(main_args, bools="random")
same_value = shared_same_value

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NAMES = sorted(p.name for p in EXAMPLES.glob("*.relay") if p.name != "digits_mlp.relay")
FUSE = get_pass("FuseOps")
DEFUSE = get_pass("DefuseOps")


def primitives(mod: IRModule) -> list[Function]:
    return [n for fn in mod.functions.values() for n in post_order(fn)
            if isinstance(n, Function) and n.attrs is not None and n.attrs.get("Primitive")]


def bare_op_calls(mod: IRModule) -> int:
    """Operator calls outside any Primitive function (FuseOps leaves none)."""
    inside = {id(n) for p in primitives(mod) for n in post_order(p.body)}
    return sum(1 for fn in mod.functions.values() for n in post_order(fn)
               if isinstance(n, Call) and isinstance(n.op, Op) and id(n) not in inside)


def check(before: IRModule, after: IRModule) -> None:
    InferType()(rl.parse(rl.astext(after)))
    assert rl.structural_equal(FUSE(after), after)          # idempotent
    assert bare_op_calls(after) == 0
    args = inputs(before)
    assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


@pytest.mark.parametrize("path", NAMES)
def test_examples(path):
    mod = rl.parse((EXAMPLES / path).read_text())
    fused = FUSE(mod)
    check(mod, fused)
    defused = DEFUSE(fused)
    assert not primitives(defused)
    args = inputs(mod)
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(defused, *args))


GRAPH = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(4, 3), float32], %b: Tensor[(4), float32]) {
  %0 = add(%x, 1f);
  %1 = nn.dense(%0, %w, units=4);
  %2 = add(%1, %b);
  %3 = nn.relu(%2);
  %4 = exp(%3);
  %5 = sum(%4, axis=[1]);
  (%5, sigmoid(%3), negative(%0))
}
"""


def test_defuse_gives_back_the_graph():
    mod = InferType()(rl.parse(GRAPH))
    fused = FUSE(mod)
    assert len(primitives(fused)) > 1
    assert rl.structural_equal(DEFUSE(fused), mod)
    assert rl.structural_equal(DEFUSE(mod), mod)            # nothing to inline


def test_groups_follow_patterns():
    fused = FUSE(rl.parse(GRAPH))
    groups = sorted(tuple(sorted(n.name for n in post_order(p.body) if isinstance(n, Op)))
                    for p in primitives(fused))
    # %0 and %3 have two users: each ends its group; exp fuses into sum.
    assert groups == [("add",), ("add", "nn.dense", "nn.relu"), ("exp", "sum"),
                      ("negative",), ("sigmoid",)]


def test_level_zero_wraps_each_op_alone():
    mod = rl.parse(GRAPH)
    for fused in (get_pass("FuseOps{fuse_opt_level=0}")(mod),
                  rl.transform.PassContext(opt_level=0).run(FUSE, mod)):
        bodies = [p.body for p in primitives(fused)]
        assert len(bodies) == 8
        assert all(isinstance(b, Call) and isinstance(b.op, Op) for b in bodies)
        check(mod, fused)


def test_parameters_typed_and_scalar_constants_inside():
    fused = FUSE(rl.parse(GRAPH))
    for prim in primitives(fused):
        assert all(isinstance(p.type_annotation, TensorType) for p in prim.params)
    first = [p for p in primitives(fused) if any(isinstance(n, Constant)
                                                  for n in post_order(p.body))]
    assert len(first) == 1 and len(first[0].params) == 1       # add(%p0, 1f)


def chain(n: int) -> IRModule:
    x = Var("x", TensorType((2,), "float32"))
    body = x
    for i in range(n):
        body = Call(get_op("negative" if i % 2 else "exp"), (body,))
    return IRModule({GlobalVar("main"): Function((x,), body)})


def test_max_fuse_depth():
    fused = get_pass("FuseOps{max_fuse_depth=4}")(chain(10))
    sizes = sorted(sum(isinstance(n, Call) for n in post_order(p.body))
                   for p in primitives(fused))
    assert sizes == [2, 4, 4]
    assert rl.structural_equal(DEFUSE(fused), InferType()(chain(10)))


def test_deep_chain():
    mod = chain(100_000)
    fused = FUSE(mod)
    assert len(primitives(fused)) == 100_000 // 256 + 1
    back = DEFUSE(fused)
    assert isinstance(back["main"].body, Call) and back["main"].body.op.name == "negative"


DIAMONDS = """#[version = "0.0.5"]
def @main(%x: Tensor[(1, 2, 4, 4), float32], %w: Tensor[(2, 2, 3, 3), float32]) {
  %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);
  %1 = nn.relu(%0);
  %2 = exp(%0);
  %3 = add(%1, %2);
  %4 = nn.conv2d(%3, %w, padding=[1, 1, 1, 1]);
  %5 = add(%4, %3);
  %6 = sigmoid(%5);
  %7 = nn.layer_norm(%5, %w, %w, axis=2);
  (%6, %7)
}
"""


def op_groups(mod: IRModule) -> list[tuple[str, ...]]:
    return sorted(tuple(sorted(n.name for n in post_order(p.body) if isinstance(n, Op)))
                  for p in primitives(mod))


def test_diamonds_fuse_into_their_post_dominator():
    mod = InferType()(rl.parse(DIAMONDS.replace("%w, %w, axis=2", "%g, %g, axis=2")
                              .replace("%w: Tensor[(2, 2, 3, 3), float32])",
                                       "%w: Tensor[(2, 2, 3, 3), float32], "
                                       "%g: Tensor[(4), float32])")))
    fused = FUSE(mod)
    # conv2d + both paths + add; the residual add joins the second conv2d; %5 feeds a
    # tuple and an OPAQUE op, so it ends its group and sigmoid stands alone.
    assert op_groups(fused) == [("add", "exp", "nn.conv2d", "nn.relu"), ("add", "nn.conv2d"),
                                ("nn.layer_norm",), ("sigmoid",)]
    check(mod, fused)
    assert rl.structural_equal(DEFUSE(fused), mod)


def ladder(n: int) -> IRModule:
    """n diamonds in a row: %i = add(sigmoid(%i-1), negative(%i-1))."""
    x = Var("x", TensorType((2,), "float32"))
    body: Call | Var = x
    for _ in range(n):
        body = Call(get_op("add"), (Call(get_op("sigmoid"), (body,)),
                                    Call(get_op("negative"), (body,))))
    return IRModule({GlobalVar("main"): Function((x,), body)})


def test_diamond_ladder_respects_max_depth():
    fused = get_pass("FuseOps{max_fuse_depth=7}")(ladder(5))
    sizes = sorted(sum(isinstance(n, Call) for n in post_order(p.body))
                   for p in primitives(fused))
    assert sizes == [3, 6, 6]      # whole diamonds only; the first has no shared call
    assert rl.structural_equal(DEFUSE(fused), InferType()(ladder(5)))
    check(ladder(5), fused)


def test_deep_diamond_ladder():
    mod = ladder(35_000)           # 105,000 calls, every one shared or post-dominated
    fused = FUSE(mod)
    assert len(primitives(fused)) == 35_000 // 85 + 1     # 85 diamonds = 255 calls
    back = DEFUSE(fused)
    assert isinstance(back["main"].body, Call) and back["main"].body.op.name == "add"


def test_output_is_typed_as_built_without_inferring_again(monkeypatch):
    """FuseOps changes no type, so it types what it builds: re-running InferType over the
    whole result doubled the pass's time (a 100k-binding let chain). The types it sets are
    the ones InferType gives the printed result."""
    from relaylang import typing as rl_typing
    mod = InferType()(rl.parse(GRAPH))
    runs = []
    real = rl_typing.check_module
    monkeypatch.setattr(rl_typing, "check_module", lambda *a, **k: runs.append(a) or real(*a, **k))
    fused = FUSE(mod)
    assert runs == []
    monkeypatch.undo()
    again = InferType()(rl.parse(rl.astext(fused)))
    ours, theirs = post_order(fused["main"]), post_order(again["main"])
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        if not isinstance(a, (Op, GlobalVar)):
            assert a.checked_type is not None, a
            assert rl.structural_equal(a.checked_type, b.checked_type), (a, b)


def test_non_computational_calls_stay_outside_primitive_functions() -> None:
    """As TVM's FuseMutator: memory.alloc_storage / memory.kill (and device_copy,
    on_device) are in no Primitive function; the result prints back and parses (a
    kernel parameter of type `Storage[]` would need core.rly's `extern type Storage`).
    The program: TVM's test_impure_op, from the DeadCodeElimination goldens."""
    from pathlib import Path
    golden = Path(__file__).resolve().parent.parent / "golden" / "tvm" / "dead_code_elimination" / \
        "dead_code_elimination.relay"
    section = next(s for s in golden.read_text().split("// -----")
                   if "memory.kill" in s and "test_impure_op" in s)
    mod = rl.parse('#[version = "0.0.5"]\n' + section)
    out = rl.transform.InferType()(
        rl.transform.Sequential([rl.transform.InferType(), rl.transform.FuseOps()])(mod))
    printed = rl.astext(out)
    assert "memory.kill(%" in printed and ": Storage" not in printed    # no kernel takes it
    assert rl.structural_equal(rl.parse(printed), out)
