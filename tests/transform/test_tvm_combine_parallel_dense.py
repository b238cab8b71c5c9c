"""CombineParallelDense against TVM v0.19's
tests/python/relay/test_pass_combine_parallel_dense.py: TVM's before and expected programs
(every check of each test) built with the IR builder; the pass runs at opt level 4 through
the golden harness (re-parse, idempotence, same values on the interpreter). TVM's
relay.nn.batch_matmul defaults to transpose_b=True; it is written out here."""
from __future__ import annotations

from tvm_golden import assert_same, run_golden

import relaylang as rl
from relaylang.ir.module import IRModule


def combine(fn, min_num_branches: int = 2, to_batch: bool = True) -> IRModule:
    return run_golden(IRModule.from_expr(fn), "CombineParallelDense{min_num_branches="
                      f"{min_num_branches},to_batch={str(to_batch).lower()}}}", opt_level=4)


def check(before, expected, **options) -> None:
    assert_same(combine(before, **options), IRModule.from_expr(expected))


def split_squeeze(y, n: int):
    parts = rl.split(y, indices_or_sections=n)
    return [rl.squeeze(rl.TupleGetItem(parts, i), axis=[0]) for i in range(n)]


def ssize(y, begin: list[int], size: list[int]):
    return rl.strided_slice(y, begin=begin, end=size, strides=[1] * len(begin),
                            slice_mode="size")


# TVM's test_combine_parallel_dense: to batch_matmul; w3 (another shape) stays
def test_combine_parallel_dense() -> None:
    for i, j, k in ((3, 5, 4), (100, 200, 300)):
        def params(i=i, j=j, k=k):
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(j, k)), rl.var("w3", shape=(j + 1, k)),
                    rl.var("w4", shape=(j, k))]
        x, w1, w2, w3, w4 = args = params()
        before = rl.Function(args, rl.Tuple([rl.nn.dense(x, w) for w in (w1, w2, w3, w4)]))
        x, w1, w2, w3, w4 = args = params()
        y = rl.nn.batch_matmul(rl.stack([x, x, x], axis=0), rl.stack([w1, w2, w4], axis=0),
                               transpose_b=True)
        y1, y2, y4 = split_squeeze(y, 3)
        check(before, rl.Function(args, rl.Tuple([y1, y2, rl.nn.dense(x, w3), y4])))


# TVM's test_combine_parallel_dense_biasadd (1-D and 2-D biases)
def test_combine_parallel_dense_biasadd() -> None:
    for i, j, k, is_2d in ((3, 5, 4, False), (100, 200, 300, False), (3, 5, 4, True),
                           (100, 200, 300, True)):
        def params(i=i, j=j, k=k, is_2d=is_2d):
            bshape = (i, j) if is_2d else (j,)
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(j, k)), rl.var("b1", shape=bshape),
                    rl.var("b2", shape=bshape)]
        x, w1, w2, b1, b2 = args = params()
        before = rl.Function(args, rl.Tuple([rl.add(rl.nn.dense(x, w1), b1),
                                             rl.add(rl.nn.dense(x, w2), b2)]))
        x, w1, w2, b1, b2 = args = params()
        y = rl.nn.batch_matmul(rl.stack([x, x], axis=0), rl.stack([w1, w2], axis=0),
                               transpose_b=True)
        if not is_2d:
            b1, b2 = rl.expand_dims(b1, axis=0), rl.expand_dims(b2, axis=0)
        y = rl.add(y, rl.stack([b1, b2], axis=0))
        check(before, rl.Function(args, rl.Tuple(split_squeeze(y, 2))))


# TVM's test_combine_parallel_dense_biasadd_scale_reshape
def test_combine_parallel_dense_biasadd_scale_reshape() -> None:
    for i, j, k, newshape in ((3, 5, 4, (1, 1, 15)), (100, 200, 300, (1, 1, 20000))):
        def params(i=i, j=j, k=k):
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(j, k)), rl.var("b1", shape=(j,)),
                    rl.var("b2", shape=(j,)), rl.var("scale1", shape=(1,)),
                    rl.var("scale2", shape=(1,))]
        x, w1, w2, b1, b2, s1, s2 = args = params()
        ys = [rl.reshape(rl.multiply(rl.add(rl.nn.dense(x, w), b), s), newshape=newshape)
              for w, b, s in ((w1, b1, s1), (w2, b2, s2))]
        before = rl.Function(args, rl.Tuple(ys))
        x, w1, w2, b1, b2, s1, s2 = args = params()
        y = rl.nn.batch_matmul(rl.stack([x, x], axis=0), rl.stack([w1, w2], axis=0),
                               transpose_b=True)
        y = rl.add(y, rl.stack([rl.expand_dims(b1, axis=0), rl.expand_dims(b2, axis=0)],
                               axis=0))
        y = rl.multiply(y, rl.stack([rl.expand_dims(s1, axis=0), rl.expand_dims(s2, axis=0)],
                                    axis=0))
        y1, y2 = split_squeeze(y, 2)
        expected = rl.Function(args, rl.Tuple([rl.reshape(y1, newshape=newshape),
                                               rl.reshape(y2, newshape=newshape)]))
        check(before, expected)


# TVM's test_combine_parallel_dense_flat: to one dense over concatenated weights
def test_combine_parallel_dense_flat() -> None:
    for i, j, k in ((3, 5, 4), (100, 200, 300)):
        def params(i=i, j=j, k=k):
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(2 * j, k)), rl.var("w3", shape=(3 * j, k))]
        x, w1, w2, w3 = args = params()
        before = rl.Function(args, rl.Tuple([rl.nn.dense(x, w) for w in (w1, w2, w3)]))
        x, w1, w2, w3 = args = params()
        y = rl.nn.dense(x, rl.concatenate([w1, w2, w3], axis=0), units=6 * j)
        expected = rl.Function(args, rl.Tuple([ssize(y, [0, 0], [-1, j]),
                                               ssize(y, [0, j], [-1, 2 * j]),
                                               ssize(y, [0, 3 * j], [-1, 3 * j])]))
        check(before, expected, min_num_branches=3, to_batch=False)


# TVM's test_combine_parallel_dense_flat_biasadd (its eleven bias shapes)
def test_combine_parallel_dense_flat_biasadd() -> None:
    i, j, k = 3, 5, 4
    for bs1, bs2 in (((), ()), ((1,), (1,)), ((5,), (1,)), ((1,), (10,)), ((3, 1), (3, 1)),
                     ((3, 5), (3, 10)), ((3, 1), (3, 10)), ((3, 5), (3, 1)),
                     ((9, 3, 5), (9, 3, 10)), ((9, 3, 5), (9, 3, 1)), ((9, 3, 1), (9, 3, 10))):
        def params(bs1=bs1, bs2=bs2):
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(2 * j, k)), rl.var("b1", shape=bs1),
                    rl.var("b2", shape=bs2)]
        x, w1, w2, b1, b2 = args = params()
        before = rl.Function(args, rl.Tuple([rl.add(rl.nn.dense(x, w1), b1),
                                             rl.add(rl.nn.dense(x, w2), b2)]))
        x, w1, w2, b1, b2 = args = params()
        y = rl.nn.dense(x, rl.concatenate([w1, w2], axis=0), units=3 * j)
        n_out_dims = max(len(bs1), 2)
        if len(bs1) == 0:
            b1 = rl.repeat(rl.expand_dims(b1, axis=-1), repeats=j, axis=0)
        elif bs1[-1] == 1:
            b1 = rl.repeat(b1, repeats=j, axis=len(bs1) - 1)
        if len(bs2) == 0:
            b2 = rl.repeat(rl.expand_dims(b2, axis=-1), repeats=2 * j, axis=0)
        elif bs2[-1] == 1:
            b2 = rl.repeat(b2, repeats=2 * j, axis=len(bs2) - 1)
        y = rl.add(y, rl.concatenate([b1, b2], axis=max(0, len(bs1) - 1)))
        begin, end = [0] * (n_out_dims - 1), [-1] * (n_out_dims - 1)
        expected = rl.Function(args, rl.Tuple([ssize(y, begin + [0], end + [j]),
                                               ssize(y, begin + [j], end + [2 * j])]))
        check(before, expected, to_batch=False)


# TVM's test_combine_parallel_dense_flat_biasadd_scale_reshape
def test_combine_parallel_dense_flat_biasadd_scale_reshape() -> None:
    for i, j, k, ns1, ns2 in ((3, 5, 4, (1, 1, 15), (1, 1, 30)),
                              (100, 200, 300, (1, 1, 20000), (1, 1, 40000))):
        def params(i=i, j=j, k=k):
            return [rl.var("x", shape=(i, k)), rl.var("w1", shape=(j, k)),
                    rl.var("w2", shape=(2 * j, k)), rl.var("b1", shape=(j,)),
                    rl.var("b2", shape=(2 * j,)), rl.var("scale1", shape=(1,)),
                    rl.var("scale2", shape=(1,))]
        x, w1, w2, b1, b2, s1, s2 = args = params()
        ys = [rl.reshape(rl.multiply(rl.add(rl.nn.dense(x, w), b), s), newshape=ns)
              for w, b, s, ns in ((w1, b1, s1, ns1), (w2, b2, s2, ns2))]
        before = rl.Function(args, rl.Tuple(ys))
        x, w1, w2, b1, b2, s1, s2 = args = params()
        y = rl.nn.dense(x, rl.concatenate([w1, w2], axis=0), units=3 * j)
        y = rl.add(y, rl.concatenate([b1, b2], axis=0))
        scale = rl.concatenate([rl.repeat(s1, repeats=j, axis=0),
                                rl.repeat(s2, repeats=2 * j, axis=0)], axis=0)
        y = rl.multiply(y, scale)
        expected = rl.Function(args, rl.Tuple([
            rl.reshape(ssize(y, [0, 0], [-1, j]), newshape=ns1),
            rl.reshape(ssize(y, [0, j], [-1, 2 * j]), newshape=ns2)]))
        check(before, expected, to_batch=False)


# TVM's test_combine_parallel_dense_expand_dims: the slices cut the right axis after an
# expand_dims
def test_combine_parallel_dense_expand_dims() -> None:
    def params():
        return [rl.var("x", shape=(2, 32)), rl.var("w1", shape=(16, 32)),
                rl.var("w2", shape=(8, 32))]
    x, w1, w2 = args = params()
    before = rl.Function(args, rl.Tuple([rl.expand_dims(rl.nn.dense(x, w1), axis=2),
                                         rl.expand_dims(rl.nn.dense(x, w2), axis=2)]))
    x, w1, w2 = args = params()
    y = rl.expand_dims(rl.nn.dense(x, rl.concatenate([w1, w2], axis=0), units=24), axis=2)
    expected = rl.Function(args, rl.Tuple([ssize(y, [0, 0, 0], [-1, 16, -1]),
                                           ssize(y, [0, 16, 0], [-1, 8, -1])]))
    check(before, expected, to_batch=False)
