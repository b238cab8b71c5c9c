"""CombineParallelConv2D against TVM v0.19's
tests/python/relay/test_pass_combine_parallel_conv2d.py: TVM's before and expected programs
built with the IR builder; the pass (min_num_branches=2, at opt level 4) runs through the
golden harness (re-parse, idempotence, same values on the interpreter)."""
from __future__ import annotations

from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.module import IRModule


def combine(fn) -> IRModule:
    return run_golden(IRModule.from_expr(fn), "CombineParallelConv2D{min_num_branches=2}",
                      opt_level=4)


def ssize(y, begin: int, size: int):
    return rl.strided_slice(y, begin=[0, begin], end=[-1, size], strides=[1, 1],
                            slice_mode="size")


# TVM's test_combine_parallel_conv2d (both checks): the 1x1 convolutions combine, the
# 3x3 one and the pool stay (pool_size written out: TVM's default (1, 1), which
# relaylang's builder does not default)
def test_combine_parallel_conv2d() -> None:
    for shape, c1, c2, c3, c4 in (((1, 4, 16, 16), 4, 4, 4, 4), ((1, 4, 16, 16), 4, 8, 4, 7)):
        def params(shape=shape, c1=c1, c2=c2, c3=c3, c4=c4):
            x = rl.var("x", shape=shape)
            return [x] + [rl.var(f"w{i}", shape=(c, shape[1], k, k))
                          for i, (c, k) in enumerate(((c1, 1), (c2, 1), (c3, 3), (c4, 1)), 1)]
        x, w1, w2, w3, w4 = args = params()
        before = rl.Function(args, rl.Tuple([rl.nn.conv2d(x, w) for w in (w1, w2, w3, w4)]
                                            + [rl.nn.max_pool2d(x, pool_size=(1, 1))]))
        x, w1, w2, w3, w4 = args = params()
        y = rl.nn.conv2d(x, rl.concatenate([w1, w2, w4], axis=0), channels=c1 + c2 + c4)
        expected = rl.Function(args, rl.Tuple([ssize(y, 0, c1), ssize(y, c1, c2),
                                               rl.nn.conv2d(x, w3), ssize(y, c1 + c2, c4),
                                               rl.nn.max_pool2d(x, pool_size=(1, 1))]))
        assert_same(combine(before), IRModule.from_expr(expected))


# TVM's test_combine_parallel_conv2d_scale_relu: the per-channel scales and the relu join
# the combined convolution
def test_combine_parallel_conv2d_scale_relu() -> None:
    c1, c2 = 4, 8

    def params():
        return [rl.var("x", shape=(1, 4, 16, 16)), rl.var("w1", shape=(c1, 4, 1, 1)),
                rl.var("w2", shape=(c2, 4, 1, 1)), rl.var("scale1", shape=(c1, 1, 1)),
                rl.var("scale2", shape=(c2, 1, 1)), rl.var("bias", shape=(c2, 1, 1))]
    x, w1, w2, s1, s2, bias = args = params()
    y1 = rl.nn.relu(rl.multiply(rl.nn.conv2d(x, w1), s1))
    y2 = rl.add(rl.nn.relu(rl.multiply(rl.nn.conv2d(x, w2), s2)), bias)
    before = rl.Function(args, rl.Tuple([y1, y2]))
    x, w1, w2, s1, s2, bias = args = params()
    y = rl.nn.conv2d(x, rl.concatenate([w1, w2], axis=0), channels=c1 + c2)
    y = rl.nn.relu(rl.multiply(y, rl.concatenate([s1, s2], axis=0)))
    expected = rl.Function(args, rl.Tuple([ssize(y, 0, c1), rl.add(ssize(y, c1, c2), bias)]))
    assert_same(combine(before), IRModule.from_expr(expected))


# TVM's test_combine_parallel_conv2d_scale: scales of shape (1,) do not combine
def test_combine_parallel_conv2d_scale() -> None:
    c1, c2 = 4, 8

    def params():
        return [rl.var("x", shape=(1, 4, 16, 16)), rl.var("w1", shape=(c1, 4, 1, 1)),
                rl.var("w2", shape=(c2, 4, 1, 1)), rl.var("scale1", shape=(1,)),
                rl.var("scale2", shape=(1,))]
    x, w1, w2, s1, s2 = args = params()
    before = rl.Function(args, rl.Tuple([rl.multiply(rl.nn.conv2d(x, w1), s1),
                                         rl.multiply(rl.nn.conv2d(x, w2), s2)]))
    x, w1, w2, s1, s2 = args = params()
    y = rl.nn.conv2d(x, rl.concatenate([w1, w2], axis=0), channels=c1 + c2)
    expected = rl.Function(args, rl.Tuple([rl.multiply(ssize(y, 0, c1), s1),
                                           rl.multiply(ssize(y, c1, c2), s2)]))
    assert_same(combine(before), IRModule.from_expr(expected))


# TVM's test_combine_parallel_conv2d_multiple_blocks: four blocks, each combined
def test_combine_parallel_conv2d_multiple_blocks() -> None:
    def params():
        return rl.var("x", shape=(1, 4, 16, 16)), rl.var("w", shape=(2, 4, 1, 1))
    x, w = params()
    y = x
    for _ in range(4):
        y = rl.concatenate([rl.nn.conv2d(y, w), rl.nn.conv2d(y, w)], axis=1)
    before = rl.Function([x, w], y)
    x, w = params()
    y = x
    for _ in range(4):
        y = rl.nn.conv2d(y, rl.concatenate([w, w], axis=0), channels=4)
        y = rl.concatenate([ssize(y, 0, 2), ssize(y, 2, 2)], axis=1)
    assert_same(combine(before), IRModule.from_expr(rl.Function([x, w], y)))
