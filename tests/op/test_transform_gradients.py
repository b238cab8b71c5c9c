"""Gradient rules of the transform family (relaylang/op/transform/gradients.py) against
central finite differences in float64 on random shapes (hypothesis), interpreter and
LLVM (grad_check.check_rule); integer inputs (indices, lengths) get zeros."""
from __future__ import annotations

import numpy as np
import pytest
from grad_check import check_rule, rule_outputs
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from relaylang.op import registry

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
dims = st.integers(1, 4)
shapes = st.lists(dims, min_size=1, max_size=4)


def rand(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape)


def ints(*values) -> np.ndarray:
    return np.array(values, dtype="int32")


@SETTINGS
@given(shape=shapes, seed=st.integers(0, 99), data=st.data())
def test_reshape_transpose_expand_squeeze(shape, seed, data):
    x = rand(seed, *shape)
    check_rule("reshape", [x], newshape=(-1,))
    perm = tuple(data.draw(st.permutations(range(len(shape)))))
    check_rule("transpose", [x], axes=perm)
    check_rule("transpose", [x], axes=None)
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check_rule("expand_dims", [x], axis=axis, num_newaxis=data.draw(st.integers(1, 2)))
    check_rule("squeeze", [x], axis=None)


def test_squeeze_axes_and_reshape_like():
    check_rule("squeeze", [rand(0, 2, 1, 3, 1)], axis=(1,))
    check_rule("reshape_like", [rand(1, 2, 3, 4), rand(2, 4, 6)], nondiff=(1,))


@SETTINGS
@given(base=shapes, data=st.data(), n=st.integers(1, 3), seed=st.integers(0, 99))
def test_concatenate(base, data, n, seed):
    axis = data.draw(st.integers(-len(base), len(base) - 1))
    parts = []
    for i in range(n):
        shape = list(base)
        shape[axis] = data.draw(st.integers(1, 3))
        parts.append(rand(seed + i, *shape))
    check_rule("concatenate", [tuple(parts)], axis=axis)


def test_concatenate_of_a_tuple_variable():
    # after ANF the gradient pass hands the rule a tuple-typed Var
    check_rule("concatenate", [(rand(0, 2, 3), rand(1, 2, 1))], axis=1, tuple_var=True,
               llvm=False)


@SETTINGS
@given(shape=shapes, data=st.data(), n=st.integers(1, 3), seed=st.integers(0, 99))
def test_stack(shape, data, n, seed):
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    check_rule("stack", [tuple(rand(seed + i, *shape) for i in range(n))], axis=axis)


@SETTINGS
@given(shape=shapes, data=st.data(), seed=st.integers(0, 99))
def test_split(shape, data, seed):
    axis = data.draw(st.integers(0, len(shape) - 1))
    size = shape[axis]
    sections = data.draw(st.sampled_from([d for d in range(1, size + 1) if size % d == 0]))
    check_rule("split", [rand(seed, *shape)], indices_or_sections=sections, axis=axis)
    if size > 1:
        points = tuple(sorted(set(data.draw(st.lists(st.integers(1, size - 1), max_size=2)))))
        check_rule("split", [rand(seed, *shape)], indices_or_sections=points, axis=axis)


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), data=st.data(), seed=st.integers(0, 99))
def test_broadcasts(shape, data, seed):
    """broadcast_to / broadcast_to_like sum back over new and size-1 axes."""
    small = [data.draw(st.sampled_from([1, d])) for d in shape]
    drop = data.draw(st.integers(0, len(small) - 1))
    small = small[drop:]
    check_rule("broadcast_to", [rand(seed, *small)], shape=tuple(shape))
    check_rule("broadcast_to_like", [rand(seed, *small), rand(seed + 1, *shape)],
               nondiff=(1,))
    check_rule("collapse_sum_like", [rand(seed, *shape), rand(seed + 1, *small)],
               nondiff=(1,))


@SETTINGS
@given(shape=st.lists(dims, min_size=1, max_size=3), reps=st.lists(st.integers(1, 3),
       min_size=1, max_size=4), seed=st.integers(0, 99))
def test_tile(shape, reps, seed):
    check_rule("tile", [rand(seed, *shape)], reps=tuple(reps))


@SETTINGS
@given(shape=shapes, data=st.data(), seed=st.integers(0, 99))
def test_repeat_and_reverse(shape, data, seed):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    x = rand(seed, *shape)
    check_rule("repeat", [x], repeats=data.draw(st.integers(1, 3)), axis=axis)
    check_rule("reverse", [x], axis=axis)


def test_reverse_sequence():
    check_rule("reverse_sequence", [rand(0, 3, 4, 2), ints(1, 3, 4)], seq_axis=1, batch_axis=0,
               nondiff=(1,))


def test_layout_transform():
    check_rule("layout_transform", [rand(0, 1, 4, 3, 3)], src_layout="NCHW",
               dst_layout="NCHW2c")
    check_rule("layout_transform", [rand(1, 2, 3, 3, 4)], src_layout="NHWC",
               dst_layout="NCHW")


@st.composite
def slices(draw):
    shape = draw(st.lists(st.integers(1, 6), min_size=1, max_size=3))
    begin, end, strides = [], [], []
    for n in shape:
        step = draw(st.sampled_from([1, 2, 3, -1, -2]))
        b = draw(st.integers(-n, n - 1))
        e = draw(st.integers(-n - 1, n))
        assume(len(range(n)[b:e:step]) > 0)         # an empty slice is a type error
        begin.append(b)
        end.append(e)
        strides.append(step)
    return shape, tuple(begin), tuple(end), tuple(strides)


@SETTINGS
@given(case=slices(), seed=st.integers(0, 99))
def test_strided_slice(case, seed):
    shape, begin, end, strides = case
    check_rule("strided_slice", [rand(seed, *shape)], begin=begin, end=end, strides=strides)


def test_strided_slice_axes_and_size_mode():
    check_rule("strided_slice", [rand(0, 7, 6, 3)], begin=(1,), end=(6,), strides=(3,),
               axes=(0,))
    check_rule("strided_slice", [rand(1, 7, 6)], begin=(1, 2), end=(3, -1), strides=(1, 1),
               slice_mode="size")
    check_rule("strided_slice", [rand(2, 4, 5)], begin=(3, 0), end=(3, 5), strides=(1, 1))


def test_slice_like():
    check_rule("slice_like", [rand(0, 4, 5), rand(1, 2, 3)], axes=None, nondiff=(1,))
    check_rule("slice_like", [rand(0, 4, 5), rand(1, 2, 3)], axes=(1,), nondiff=(1,))


@SETTINGS
@given(shape=shapes, data=st.data(), seed=st.integers(0, 99))
def test_take(shape, data, seed):
    """Repeated indices add up; clip and wrap modes read the indices as the kernel does."""
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    n = int(np.prod(shape)) if axis is None else shape[axis]
    mode = data.draw(st.sampled_from(["clip", "wrap", "fast"]))
    lo, hi = (-n, n - 1) if mode == "fast" else (-2 * n, 2 * n)
    idx_shape = data.draw(st.lists(st.integers(1, 3), max_size=2))
    idx = np.random.default_rng(seed).integers(lo, hi + 1, size=idx_shape).astype("int32")
    check_rule("take", [rand(seed, *shape), idx], axis=axis, mode=mode, nondiff=(1,))


def test_gather_and_gather_nd():
    check_rule("gather", [rand(0, 3, 4), ints([0, 2, 2], [1, 1, 0])], axis=1, nondiff=(1,))
    check_rule("gather", [rand(0, 3, 4), ints([0, 2, 2, 0], [1, 1, 0, 2])], axis=0,
               nondiff=(1,))
    check_rule("gather_nd", [rand(1, 3, 4), ints([0, 2, 2], [1, 1, 0])], nondiff=(1,))
    check_rule("gather_nd", [rand(2, 3, 4, 2), ints([0, 2, 0])], nondiff=(1,))


def test_fills():
    check_rule("full", [np.array(1.5)], shape=(2, 3), dtype="float64")
    check_rule("full_like", [rand(0, 2, 3), np.array(1.5)], nondiff=(0,))
    check_rule("one_hot", [ints(0, 2, 1, 2), np.array(1.5), np.array(-0.5)], depth=3, axis=0,
               dtype="float64", nondiff=(0,))
    check_rule("shape_of", [rand(0, 2, 3)], nondiff=(0,))
    assert registry.implementation("zeros", "gradient")(None, None) == []


def test_arange_start_and_step():
    """arange's length is `?` to the type checker: its adjoint is given by value."""
    start, stop, step = np.array(1.0), np.array(4.0), np.array(0.5)
    adj = rand(0, 6)
    got = rule_outputs("arange", [start, stop, step], {"dtype": "float64"}, [adj])
    np.testing.assert_allclose(got[0], adj.sum())
    np.testing.assert_allclose(got[1], 0.0)
    np.testing.assert_allclose(got[2], (adj * np.arange(6)).sum())


@SETTINGS
@given(shape=shapes, data=st.data(), seed=st.integers(0, 99))
def test_cumsum(shape, data, seed):
    axis = data.draw(st.one_of(st.none(), st.integers(-len(shape), len(shape) - 1)))
    check_rule("cumsum", [rand(seed, *shape)], axis=axis, exclusive=data.draw(st.booleans()))


def test_unsupported_attributes_are_named():
    from relaylang.op.nn.gradients import GradientNotSupported
    with pytest.raises(GradientNotSupported, match="batch_dims"):
        rule_outputs("gather_nd", [rand(0, 2, 3, 4), ints([[0, 1]], [[1, 2]])],
                     {"batch_dims": 1}, [rand(1, 2, 2, 4)])


def test_every_differentiable_transform_op_has_a_rule():
    names = ["reshape", "reshape_like", "transpose", "expand_dims", "squeeze", "concatenate",
             "stack", "split", "take", "strided_slice", "slice_like", "broadcast_to",
             "broadcast_to_like", "collapse_sum_like", "tile", "repeat", "reverse",
             "reverse_sequence", "layout_transform", "gather", "gather_nd", "zeros", "ones",
             "full", "full_like", "arange", "one_hot", "shape_of", "cumsum"]
    assert [n for n in names if registry.implementation(n, "gradient") is None] == []
