"""CombineParallelConv2D and CombineParallelDense: fewer ops, same results, safe groups."""
from __future__ import annotations

import time
from functools import partial

import pytest
from pass_helpers import main_args
from pass_helpers import same_value as shared_same_value

import relaylang as rl
from relaylang.ir.expr import Call, Function, GlobalVar, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op.nn import DenseAttrs
from relaylang.transform import InferType, get_pass
from relaylang.transform.combine_parallel.common import combine_function
from relaylang.transform.combine_parallel.conv2d import ATOL, RTOL
from relaylang.transform.combine_parallel.dense import DenseToBatchCombiner
from relaylang.transform.pass_infra import pass_text

same_value = partial(shared_same_value, rtol=RTOL, atol=ATOL)
HEADER = '#[version = "0.0.5"]\n'
CONV2 = get_pass("CombineParallelConv2D{min_num_branches=2}")
DENSE2 = get_pass("CombineParallelDense{min_num_branches=2}")
WIDE2 = get_pass("CombineParallelDense{min_num_branches=2,to_batch=false}")


def check(p, before: IRModule, after: IRModule) -> None:
    """Re-parses and type-checks, idempotent, and the same results on random inputs."""
    again = InferType()(rl.parse(rl.astext(after)))
    assert rl.astext(p(again)) == rl.astext(again)
    args = main_args(before)
    assert same_value(rl.evaluate(before, *args), rl.evaluate(after, *args))


def count(mod: IRModule, name: str) -> int:
    return sum(1 for fn in mod.functions.values() for n in post_order(fn)
               if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name == name)


def run(p, text: str) -> tuple[IRModule, IRModule]:
    before = rl.parse(HEADER + text)
    after = p(before)
    check(p, before, after)
    return before, after


def test_options_and_levels_follow_tvm():
    conv, dense = get_pass("CombineParallelConv2D"), get_pass("CombineParallelDense")
    assert (conv.min_num_branches, conv.opt_level) == (3, 4)
    assert (dense.min_num_branches, dense.to_batch, dense.opt_level) == (3, True, 4)
    assert pass_text(WIDE2) == "CombineParallelDense{min_num_branches=2,to_batch=False}"
    assert get_pass(pass_text(WIDE2)) == WIDE2


INCEPTION = """def @main(%x: Tensor[(1, 3, 6, 6), float32], %w1: Tensor[(2, 3, 1, 1), float32],
    %w2: Tensor[(4, 3, 1, 1), float32], %w3: Tensor[(3, 3, 1, 1), float32],
    %b1: Tensor[(2, 1, 1), float32], %b2: Tensor[(4, 1, 1), float32],
    %b3: Tensor[(3, 1, 1), float32], %k: Tensor[(2, 4, 3, 3), float32]) {
  %0 = nn.relu(add(nn.conv2d(%x, %w1), %b1));
  %1 = nn.relu(add(nn.conv2d(%x, %w2), %b2));
  %2 = nn.relu(add(nn.conv2d(%x, %w3), %b3));
  %3 = nn.conv2d(%1, %k, padding=[1, 1, 1, 1]);
  concatenate((%0, %3, %2), axis=1)
}"""


def test_conv2d_inception_branches_become_one_conv():
    before, after = run(get_pass("CombineParallelConv2D"), INCEPTION)
    assert count(before, "nn.conv2d") == 4 and count(after, "nn.conv2d") == 2
    assert count(after, "add") == 1 and count(after, "nn.relu") == 1
    assert count(after, "strided_slice") == 3


def test_conv2d_below_min_num_branches_is_unchanged():
    mod = InferType()(rl.parse(HEADER + INCEPTION))
    out = get_pass("CombineParallelConv2D{min_num_branches=4}")(mod)
    assert rl.structural_equal(out, mod)


def test_conv2d_shape_changing_follower_is_not_combined():
    # expand_dims is a broadcast op in TVM's table, but combining it would move the
    # channel axis the slices are taken on.
    _, after = run(CONV2, """def @main(%x: Tensor[(1, 2, 3, 3), float32],
        %w1: Tensor[(1, 2, 1, 1), float32], %w2: Tensor[(2, 2, 1, 1), float32]) {
      (expand_dims(nn.conv2d(%x, %w1), axis=0), expand_dims(nn.conv2d(%x, %w2), axis=0))
    }""")
    assert count(after, "nn.conv2d") == 1 and count(after, "expand_dims") == 2


def test_conv2d_out_dtype_and_int_values():
    _, after = run(CONV2, """def @main(%x: Tensor[(1, 2, 3, 3), int8],
        %w1: Tensor[(1, 2, 1, 1), int8], %w2: Tensor[(2, 2, 1, 1), int8]) {
      (nn.conv2d(%x, %w1, out_dtype="int32"), nn.conv2d(%x, %w2, out_dtype="int32"))
    }""")
    assert count(after, "nn.conv2d") == 1


def test_conv2d_branch_reading_the_other_is_kept_apart():
    # The second conv's weight is computed from the first: combining would need a cycle.
    _, after = run(CONV2, """def @main(%x: Tensor[(1, 1, 1, 1), float32],
        %w: Tensor[(2, 1, 1, 1), float32]) {
      %0 = nn.conv2d(%x, %w);
      let %v = reshape(%0, newshape=[2, 1, 1, 1]);
      (%0, nn.conv2d(%x, %v))
    }""")
    assert count(after, "nn.conv2d") == 2 and count(after, "strided_slice") == 0


DENSE3 = """def @main(%x: Tensor[(2, 3), float32], %w1: Tensor[(4, 3), float32],
    %w2: Tensor[(4, 3), float32], %w3: Tensor[(4, 3), float32], %b1: Tensor[(4), float32],
    %b2: Tensor[(4), float32], %b3: Tensor[(4), float32]) {
  %0 = clip(add(nn.dense(%x, %w1), %b1), a_min=0f, a_max=1.2f);
  %1 = clip(add(nn.dense(%x, %w2), %b2), a_min=0f, a_max=1.2f);
  %2 = clip(add(nn.dense(%x, %w3), %b3), a_min=0f, a_max=1.2f);
  (%0, %1, %2)
}"""


def test_dense_to_batch_matmul():
    _, after = run(get_pass("CombineParallelDense"), DENSE3)
    assert count(after, "nn.dense") == 0 and count(after, "nn.batch_matmul") == 1
    assert count(after, "add") == 1 and count(after, "clip") == 1
    assert count(after, "split") == 1 and count(after, "squeeze") == 3


def test_dense_to_dense():
    _, after = run(get_pass("CombineParallelDense{to_batch=false}"),
                        DENSE3.replace("%w2: Tensor[(4, 3)", "%w2: Tensor[(5, 3)")
                        .replace("%b2: Tensor[(4)", "%b2: Tensor[(5)"))
    assert count(after, "nn.dense") == 1 and count(after, "add") == 1
    dense = next(n for n in post_order(after["main"]) if isinstance(n, Call)
                 and isinstance(n.op, Op) and n.op.name == "nn.dense")
    assert dense.attrs.units == 13


def test_dense_to_dense_repeats_broadcast_columns():
    _, after = run(WIDE2, """def @main(%x: Tensor[(2, 3), float32],
        %w1: Tensor[(4, 3), float32], %w2: Tensor[(3, 3), float32], %s1: float32,
        %s2: float32, %c1: Tensor[(2, 1), float32], %c2: Tensor[(2, 3), float32]) {
      (multiply(subtract(nn.dense(%x, %w1), %s1), %c1),
       multiply(subtract(nn.dense(%x, %w2), %s2), %c2))
    }""")
    assert count(after, "repeat") == 3 and count(after, "multiply") == 1


def test_dense_to_batch_keeps_out_dtype():
    # TVM gives the batch_matmul an empty out_dtype: int8 products would stay int8.
    _, after = run(DENSE2, """def @main(%x: Tensor[(2, 3), int8],
        %w1: Tensor[(4, 3), int8], %w2: Tensor[(4, 3), int8]) {
      (nn.dense(%x, %w1, out_dtype="int32"), nn.dense(%x, %w2, out_dtype="int32"))
    }""")
    assert count(after, "nn.batch_matmul") == 1
    assert after["main"].checked_type.ret_type.fields[0].dtype == "int32"


def test_groups_reading_each_other_combine_one_at_most():
    # Group A (over %x) takes a weight from group B's op and B one from A's: combining
    # both would make each wait for the other. The first group found wins.
    _, after = run(WIDE2, """def @main(%x: Tensor[(2, 3), float32],
        %y: Tensor[(4, 5), float32], %wa: Tensor[(5, 3), float32],
        %wb: Tensor[(3, 5), float32]) {
      %0 = nn.dense(%x, %wa);
      %1 = nn.dense(%y, %wb);
      (%0, %1, nn.dense(%x, %1), nn.dense(%y, %0))
    }""")
    assert count(after, "nn.dense") == 3


def test_untyped_module_built_directly():
    x = Var("x", TensorType((2, 3), "float32"))
    ws = [Var(f"w{i}", TensorType((4, 3), "float32")) for i in range(3)]
    body = rl.ir.expr.Tuple(tuple(Call(get_op("nn.dense"), (x, w), DenseAttrs(units=None))
                                  for w in ws))
    mod = IRModule({GlobalVar("main"): Function((x, *ws), body)})
    out = get_pass("CombineParallelDense")(mod)
    assert count(out, "nn.batch_matmul") == 1


def _deep_branches(depth: int, typed: bool = False) -> IRModule:
    """`depth` relus on %x, then three dense layers, each followed by depth/10 negations.
    `typed` sets the types by hand (type inference of 100,000 nodes is tested elsewhere)."""
    def call(name: str, *args, attrs=None, shape=(2, 3)):
        e = Call(get_op(name), args, attrs)
        if typed:
            e.set_checked_type(TensorType(shape, "float32"))
        return e

    x = Var("x", TensorType((2, 3), "float32"))
    ws = [Var(f"w{i}", TensorType((4, 3), "float32")) for i in range(3)]
    if typed:
        for v in (x, *ws):
            v.set_checked_type(v.type_annotation)
    data = x
    for _ in range(depth):
        data = call("nn.relu", data)
    outs = []
    for w in ws:
        e = call("nn.dense", data, w, attrs=DenseAttrs(units=None), shape=(2, 4))
        for _ in range(depth // 10):
            e = call("negative", e, shape=(2, 4))
        outs.append(e)
    return IRModule({GlobalVar("main"): Function((x, *ws), rl.ir.expr.Tuple(tuple(outs)))})


def test_deep_chain_and_long_branches():
    fn = _deep_branches(100_000, typed=True)["main"]
    start = time.perf_counter()
    out = combine_function(fn, DenseToBatchCombiner(), 3)
    assert time.perf_counter() - start < 30
    kinds = [n.op.name for n in post_order(out) if isinstance(n, Call) and isinstance(n.op, Op)]
    assert kinds.count("nn.batch_matmul") == 1 and "nn.dense" not in kinds
    assert kinds.count("negative") == 10_000          # the 10,000 levels, combined


def test_long_branches_same_values():
    small = _deep_branches(30)
    args = main_args(small)
    out = get_pass("CombineParallelDense")(small)
    assert count(out, "negative") == 3
    assert same_value(rl.evaluate(small, *args), rl.evaluate(out, *args))


@pytest.mark.parametrize("name", ["CombineParallelConv2D", "CombineParallelDense"])
def test_skipped_below_opt_level_4(name):
    mod = rl.parse(HEADER + DENSE3)
    with rl.transform.PassContext(opt_level=3):
        out = rl.transform.Sequential([get_pass(name)])(mod)
    assert out is mod
