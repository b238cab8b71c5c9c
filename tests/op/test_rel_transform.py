"""Type relations and NumPy kernels of the transform ops (reshape, slicing, indexing,
layout, creation): shape rules with their edge cases and `?` dims, every error
message, kernel output agreeing with the relation, and kernels checked against
NumPy written independently here."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run, shape

from relaylang.ir.expr import Constant
from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType, TupleType
from relaylang.op import get_op_def

RNG = np.random.default_rng(0)


def arr(shape, dtype="float32", high=None):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(0, high or 5, size=shape).astype(dtype)
    if dtype == "bool":
        return RNG.integers(0, 2, size=shape).astype(bool)
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- reshape

@pytest.mark.parametrize("newshape, expected", [
    ((6, 4), (6, 4)),
    ((0, -1), (2, 12)),
    ((-1,), (24,)),
    ((-1, 3, 2), (4, 3, 2)),
    ((0, 0, 2, 2), (2, 3, 2, 2)),
    ((-2,), (2, 3, 4)),
    ((-2, 1, 1), (2, 3, 4, 1, 1)),
    ((2, -2), (2, 3, 4)),
    ((-3, 4), (6, 4)),
    ((2, -3), (2, 12)),
    ((-4, 1, 2, -2), (1, 2, 3, 4)),
    ((-4, -1, 2, -2), (1, 2, 3, 4)),
    ((0, -4, 3, -1, 4), (2, 3, 1, 4)),
])
def test_reshape_special_values(newshape, expected):
    assert shape("reshape", T((2, 3, 4)), newshape=newshape) == expected
    x = arr((2, 3, 4))
    np.testing.assert_array_equal(run("reshape", x, newshape=newshape), x.reshape(expected))


def test_reshape_allowzero_keeps_literal_zero():
    assert shape("reshape", T((0, 3)), newshape=(0, 3), allowzero=True) == (0, 3)
    assert shape("reshape", T((2, 3)), newshape=(0, 3)) == (2, 3)       # 0 copies dim 0
    rel_error("reshape", [T((2, 3))], "(6 elements) into shape (0, 3) (0 elements)", arg=0,
              newshape=(0, 3), allowzero=True)


def test_reshape_any_dims():
    assert shape("reshape", T((ANY, 3, 4)), newshape=(0, -1)) == (ANY, 12)
    assert shape("reshape", T((ANY, 3, 4)), newshape=(-1, 4)) == (ANY, 4)
    assert shape("reshape", T((ANY, 3)), newshape=(-3,)) == (ANY,)
    assert shape("reshape", T((ANY, 3)), newshape=(-4, 2, -1, 3)) == (2, ANY, 3)
    assert rel("reshape", IncompleteType(), newshape=(1,)) is None


def test_reshape_errors():
    x = [T((2, 3))]
    rel_error("reshape", x, "(6 elements) into shape (4, 2) (8 elements)", 0, newshape=(4, 2))
    rel_error("reshape", x, "has more than one -1", 0, newshape=(-1, -1))
    rel_error("reshape", x, "cannot infer the -1", 0, newshape=(4, -1))
    rel_error("reshape", x, "needs input dimension 2, but the input has rank 2", 0,
              newshape=(0, 0, 0))
    rel_error("reshape", x, "needs input dimension 2", 0, newshape=(0, -3))
    rel_error("reshape", x, "must be followed by two values", 0, newshape=(-4, 2))
    rel_error("reshape", x, "cannot infer both parts", 0, newshape=(-4, -1, -1, 3))
    rel_error("reshape", x, "unsupported special value -5", 0, newshape=(-5,))


def test_reshape_like():
    assert shape("reshape_like", T((2, 3, 4)), T((6, 4))) == (6, 4)
    assert shape("reshape_like", T((2, 3, 4)), T((6, 9)), lhs_begin=0, lhs_end=2,
                 rhs_begin=0, rhs_end=1) == (6, 4)
    assert shape("reshape_like", T((2, 3, 4)), T((1, 12)), lhs_begin=1, rhs_begin=1) \
        == (2, 12)
    rel_error("reshape_like", [T((2, 3)), T((5,))], "(6 elements) into shape (5,)", 1)
    rel_error("reshape_like", [T((2, 3)), T((6,))], "lhs range [3, None)", None, lhs_begin=3)
    x, like = arr((2, 3, 4)), arr((1, 12))
    np.testing.assert_array_equal(run("reshape_like", x, like, lhs_begin=1, rhs_begin=1),
                                  x.reshape(2, 12))


# ---------------------------------------------------------------- axes

def test_transpose():
    assert shape("transpose", T((2, 3, 4))) == (4, 3, 2)
    assert shape("transpose", T((2, 3, 4)), axes=(0, 2, 1)) == (2, 4, 3)
    assert shape("transpose", T((2, ANY, 4)), axes=(-1, 0, 1)) == (4, 2, ANY)
    rel_error("transpose", [T((2, 3))], "has 3 entries but the input has rank 2", 0,
              axes=(0, 1, 1))
    rel_error("transpose", [T((2, 3))], "is not a permutation", 0, axes=(1, 1))
    rel_error("transpose", [T((2, 3))], "transpose axis 2 is out of range", 0, axes=(0, 2))
    x = arr((2, 3, 4))
    np.testing.assert_array_equal(run("transpose", x, axes=(2, 0, 1)), np.moveaxis(x, 2, 0))
    np.testing.assert_array_equal(run("transpose", x), x.T)


def test_expand_dims_and_squeeze():
    assert shape("expand_dims", T((2, 3)), axis=1, num_newaxis=2) == (2, 1, 1, 3)
    assert shape("expand_dims", T((2, 3)), axis=-1) == (2, 3, 1)
    assert shape("expand_dims", T(()), axis=0) == (1,)
    rel_error("expand_dims", [T((2, 3))], "axis 3 is out of range for a tensor of rank 3", 0,
              axis=3)
    rel_error("expand_dims", [T((2,))], "num_newaxis must be non-negative", None, axis=0,
              num_newaxis=-1)
    assert shape("squeeze", T((1, 3, 1, 2))) == (3, 2)
    assert shape("squeeze", T((1, 3, 1, 2)), axis=(-2,)) == (1, 3, 2)
    assert shape("squeeze", T((ANY, 3)), axis=(0,)) == (3,)
    e = rel_error("squeeze", [T((1, 3))], "cannot squeeze axis 1: its dimension is 3, not 1", 0,
                  axis=(1,))
    assert e.dim == 1
    rel_error("squeeze", [T((1, ANY))], "squeeze without axis needs known dimensions", 0)
    x = arr((1, 3, 1))
    assert run("squeeze", x).shape == (3,)
    assert run("expand_dims", x, axis=0, num_newaxis=2).shape == (1, 1, 1, 3, 1)


# ---------------------------------------------------------------- join and cut

def test_concatenate():
    tup = TupleType((T((2, 3)), T((4, 3)), T((ANY, 3))))
    assert shape("concatenate", tup, axis=0) == (ANY, 3)
    assert shape("concatenate", TupleType((T((2, 3)), T((2, 5)))), axis=-1) == (2, 8)
    assert shape("concatenate", TupleType((T((ANY, 3)), T((2, 3)))), axis=1) == (2, 6)
    assert rel("concatenate", TupleType((T((2,)), IncompleteType())), axis=0) is None
    rel_error("concatenate", [TupleType((T((2, 3)), T((2, 4))))],
              "tensor 0 has 3 at dimension 1 but tensor 1 has 4 (concatenating along axis 0)",
              0, axis=0)
    rel_error("concatenate", [TupleType((T((2,)), T((2,), "int32")))],
              "tensor 0 has dtype float32 but tensor 1 has dtype int32", 0)
    rel_error("concatenate", [TupleType((T((2,)), T((2, 1))))], "tensor 0 has rank 1 but "
              "tensor 1 has rank 2", 0)
    rel_error("concatenate", [TupleType(())], "needs at least one tensor", 0)
    rel_error("concatenate", [T((2,))], "takes a tuple of tensors", 0)
    rel_error("concatenate", [TupleType((T(()),))], "cannot concatenate scalars", 0)
    rel_error("concatenate", [TupleType((T((2,)),))], "axis 1 is out of range", 0, axis=1)
    a, b = arr((2, 3)), arr((2, 1))
    np.testing.assert_array_equal(run("concatenate", (a, b), axis=1), np.hstack([a, b]))


def test_stack():
    tup = TupleType((T((2, 3)), T((2, ANY))))
    assert shape("stack", tup, axis=0) == (2, 2, 3)
    assert shape("stack", tup, axis=-1) == (2, 3, 2)
    rel_error("stack", [TupleType((T((2, 3)), T((3, 3))))], "(stacked tensors must have one "
              "shape)", 0)
    a, b = arr((2, 3)), arr((2, 3))
    np.testing.assert_array_equal(run("stack", (a, b), axis=1)[:, 1], b)


def test_split_returns_tuple_type():
    out = rel("split", T((6, 4)), indices_or_sections=3)
    assert isinstance(out, TupleType) and [f.shape for f in out.fields] == [(2, 4)] * 3
    out = rel("split", T((6, 4)), indices_or_sections=(1, 4), axis=0)
    assert [f.shape for f in out.fields] == [(1, 4), (3, 4), (2, 4)]
    out = rel("split", T((ANY, 4)), indices_or_sections=(1,))
    assert [f.shape for f in out.fields] == [(1, 4), (ANY, 4)]
    out = rel("split", T((3, ANY)), indices_or_sections=2, axis=-1)
    assert [f.shape for f in out.fields] == [(3, ANY)] * 2
    rel_error("split", [T((6, 4))], "cannot split dimension 1 of size 4 into 3 equal", 0,
              indices_or_sections=3, axis=1)
    rel_error("split", [T((6,))], "must be positive and ascending", None,
              indices_or_sections=(3, 2))
    rel_error("split", [T((6,))], "must be positive and ascending", None,
              indices_or_sections=(0, 2))
    rel_error("split", [T((6,))], "split index 6 is not below the size 6", 0,
              indices_or_sections=(6,))
    rel_error("split", [T(())], "cannot split a scalar", 0, indices_or_sections=2)
    rel_error("split", [T((4,))], "indices_or_sections must be positive", None,
              indices_or_sections=0)
    x = arr((6, 4))
    parts = run("split", x, indices_or_sections=(1, 4))
    for got, want in zip(parts, [x[:1], x[1:4], x[4:]]):
        np.testing.assert_array_equal(got, want)


SLICES = [
    # (begin, end, strides, extra attrs, python slice of a (4, 5, 6) array)
    ((1, 0), (3, 4), (1, 2), {}, np.s_[1:3, 0:4:2]),
    ((0,), (4,), None, {}, np.s_[0:4]),
    ((3,), (0,), (-1,), {}, np.s_[3:0:-1]),
    ((-1, -1), (-5, -7), (-1, -2), {}, np.s_[::-1, ::-2]),
    ((-100,), (100,), (1,), {}, np.s_[:]),
    ((1, 2), (2, -1), (1,), {"slice_mode": "size"}, np.s_[1:3, 2:]),
    ((2,), (3,), (1,), {"axes": (2,)}, np.s_[:, :, 2:3]),
    ((2,), (3,), (1,), {"axes": (2,), "slice_mode": "size"}, np.s_[:, :, 2:5]),
    ((1, 0), (2, 6), (1, -1), {"axes": (0, 2)}, np.s_[1:2, :, 0:6:-1]),
]


@pytest.mark.parametrize("begin, end, strides, extra, want", SLICES)
def test_strided_slice_against_python_slicing(begin, end, strides, extra, want):
    x = arr((4, 5, 6))
    kw = dict(begin=begin, end=end, strides=strides, **extra)
    if want == np.s_[1:2, :, 0:6:-1]:        # begin 0 end 6 with stride -1 selects nothing
        rel_error("strided_slice", [T((4, 5, 6))], "begin 0 and end 6 select nothing", 0, **kw)
        return
    expected = x[want]
    assert shape("strided_slice", T((4, 5, 6)), **kw) == expected.shape
    np.testing.assert_array_equal(run("strided_slice", x, **kw), expected)


def test_strided_slice_any_and_errors():
    assert shape("strided_slice", T((ANY, 5)), begin=(0, 1), end=(2, 3), strides=(1, 1)) \
        == (ANY, 2)
    rel_error("strided_slice", [T((4,))], "strides must be non-zero", None, begin=(0,),
              end=(2,), strides=(0,))
    rel_error("strided_slice", [T((4,))], "begin has 2 values but data has rank 1", 0,
              begin=(0, 0), end=(1,), strides=None)
    rel_error("strided_slice", [T((4, 4))], "must have the same length", None, begin=(0,),
              end=(1, 1), strides=(1,), axes=(0,))
    rel_error("strided_slice", [T((4,))], "slice_mode must be", None, begin=(0,), end=(1,),
              strides=None, slice_mode="bad")


def test_slice_like():
    assert shape("slice_like", T((4, 5, 6)), T((2, 3))) == (2, 3, 6)
    assert shape("slice_like", T((4, 5, 6)), T((2, 3, 1)), axes=(-1,)) == (4, 5, 1)
    rel_error("slice_like", [T((4, 5)), T((2, 7))], "shape_like has 7 at axis 1 but data has "
              "only 5", 1)
    rel_error("slice_like", [T((4, 5)), T((2,))], "axis 1 is beyond shape_like's rank 1", 1,
              axes=(1,))
    x = arr((4, 5, 6))
    np.testing.assert_array_equal(run("slice_like", x, arr((2, 3))), x[:2, :3])


# ---------------------------------------------------------------- broadcasting

def test_broadcast_family():
    assert shape("broadcast_to", T((3, 1)), shape=(2, 3, 4)) == (2, 3, 4)
    assert shape("broadcast_to", T((ANY,)), shape=(2, 5)) == (2, 5)
    e = rel_error("broadcast_to", [T((3, 4))], "dimension 0 is 3, target 2", 0, shape=(2, 4))
    assert e.dim == 0
    rel_error("broadcast_to", [T((1, 3, 4))], "it has more dimensions", 0, shape=(3, 4))
    assert rel("broadcast_to_like", T((1, 4), "int8"), T((3, 4))).dtype == "int8"
    rel_error("broadcast_to_like", [T((2,)), T((3,))], "dimension 0 is 2, target 3", 0)
    assert rel("collapse_sum_like", T((2, 3, 4)), T((3, 1), "float16")).shape == (3, 1)
    rel_error("collapse_sum_like", [T((2, 3)), T((4,))], "cannot broadcast collapse_type", 1)
    x = arr((2, 3, 4))
    np.testing.assert_allclose(run("collapse_sum_like", x, arr((3, 1))),
                               x.sum(axis=(0, 2))[:, None], rtol=1e-5)
    np.testing.assert_array_equal(run("broadcast_to", arr((3, 1)), shape=(2, 3, 4)).shape,
                                  (2, 3, 4))


def test_tile_repeat_reverse():
    assert shape("tile", T((2, 3)), reps=(2,)) == (2, 6)
    assert shape("tile", T((3,)), reps=(2, 2)) == (2, 6)
    assert shape("tile", T((ANY, 3)), reps=(2, 1)) == (ANY, 3)
    rel_error("tile", [T((2,))], "reps must be non-negative", None, reps=(-1,))
    assert shape("repeat", T((2, 3)), repeats=2, axis=-1) == (2, 6)
    assert shape("repeat", T((2, 3)), repeats=2) == (12,)
    rel_error("repeat", [T((2,))], "repeats must be a positive integer", None, repeats=0,
              axis=0)
    rel_error("repeat", [T((2,))], "axis 1 is out of range", 0, repeats=2, axis=1)
    rel_error("reverse", [T((2,))], "axis -2 is out of range", 0, axis=-2)
    x = arr((2, 3))
    np.testing.assert_array_equal(run("tile", x, reps=(2, 1)), np.vstack([x, x]))
    np.testing.assert_array_equal(run("repeat", x, repeats=2, axis=1)[:, 1], x[:, 0])
    np.testing.assert_array_equal(run("reverse", x, axis=1), x[:, ::-1])


def test_reverse_sequence():
    assert shape("reverse_sequence", T((4, 3, 2)), T((3,), "int32"), seq_axis=0,
                 batch_axis=1) == (4, 3, 2)
    rel_error("reverse_sequence", [T((4, 3)), T((4,), "int32")], "seq_lengths has 4 entries "
              "but the batch axis 1 of data has 3", 1, seq_axis=0, batch_axis=1)
    rel_error("reverse_sequence", [T((4, 3)), T((3,))], "must be an integer tensor", 1,
              seq_axis=0, batch_axis=1)
    rel_error("reverse_sequence", [T((4,)), T((3,), "int32")], "rank 2 or more", 0)
    rel_error("reverse_sequence", [T((4, 3)), T((4,), "int32")], "both axis 0", None,
              seq_axis=0, batch_axis=0)
    x = arr((5, 3, 2))
    lengths = np.array([2, 5, 9], "int32")
    got = run("reverse_sequence", x, lengths, seq_axis=0, batch_axis=1)
    want = x.copy()
    for b, n in enumerate(lengths):
        n = min(n, 5)
        want[:n, b] = x[:n, b][::-1]
    np.testing.assert_array_equal(got, want)


def test_layout_transform():
    assert shape("layout_transform", T((1, 8, 5, 6)), src_layout="NCHW",
                 dst_layout="NHWC") == (1, 5, 6, 8)
    assert shape("layout_transform", T((1, 8, 5, 6)), src_layout="NCHW",
                 dst_layout="NCHW4c") == (1, 2, 5, 6, 4)
    assert shape("layout_transform", T((1, 6, 5, 6)), src_layout="NCHW",
                 dst_layout="NCHW4c") == (1, 2, 5, 6, 4)             # padded, as TVM's ceil
    assert shape("layout_transform", T((1, 2, 5, 6, 4)), src_layout="NCHW4c",
                 dst_layout="NHWC") == (1, 5, 6, 8)
    assert shape("layout_transform", T((ANY, 2, 5, 6, 4)), src_layout="NCHW4c",
                 dst_layout="NCHW2c") == (ANY, 4, 5, 6, 2)
    rel_error("layout_transform", [T((1, 2, 3))], "has 4 axes but data has rank 3", 0,
              src_layout="NCHW", dst_layout="NHWC")
    rel_error("layout_transform", [T((1, 2, 3, 4))], "different primal axes", None,
              src_layout="NCHW", dst_layout="NCDH")
    rel_error("layout_transform", [T((1, 2, 3, 4, 3))], "sub-axis 4c", 0,
              src_layout="NCHW4c", dst_layout="NCHW")
    rel_error("layout_transform", [T((1, 2, 3, 4))], "needs a factor", None,
              src_layout="NCHW", dst_layout="NCHWc")
    rel_error("layout_transform", [T((1, 2, 3, 4))], "names an axis twice", None,
              src_layout="NCHC", dst_layout="NCHW")
    x = arr((2, 8, 3, 5))
    np.testing.assert_array_equal(
        run("layout_transform", x, src_layout="NCHW", dst_layout="NHWC"),
        x.transpose(0, 2, 3, 1))
    packed = run("layout_transform", x, src_layout="NCHW", dst_layout="NCHW4c")
    n, cc, h, w, c = np.indices(packed.shape)
    np.testing.assert_array_equal(packed, x[n, cc * 4 + c, h, w])
    back = run("layout_transform", packed, src_layout="NCHW4c", dst_layout="NCHW")
    np.testing.assert_array_equal(back, x)
    odd = arr((1, 3, 2, 2))
    padded = run("layout_transform", odd, src_layout="NCHW", dst_layout="NCHW2c")
    assert padded.shape == (1, 2, 2, 2, 2) and np.all(padded[:, 1, :, :, 1] == 0)


def test_shape_of():
    assert rel("shape_of", T((2, ANY, 3))).shape == (3,)
    assert rel("shape_of", T((2, 3))).dtype == "int64"
    assert rel("shape_of", T((2, 3)), dtype="int32").dtype == "int32"
    assert rel("shape_of", T(())).shape == ()          # TVM's RankShape
    np.testing.assert_array_equal(run("shape_of", arr((2, 7))), [2, 7])


# ---------------------------------------------------------------- indexing

def test_take_shapes():
    assert shape("take", T((4, 5)), T((2, 3), "int32")) == (2, 3)
    assert shape("take", T((4, 5, 6)), T((2,), "int64"), axis=1) == (4, 2, 6)
    assert shape("take", T((4, 5, 6)), T((4, 2), "int32"), axis=1, batch_dims=1) == (4, 2, 6)
    assert shape("take", T((4, ANY)), T((ANY,), "int32"), axis=-1) == (4, ANY)
    rel_error("take", [T((4,)), T((2,))], "indices must be an integer tensor", 1)
    rel_error("take", [T((4,)), T((2,), "int32")], "mode must be one of", None, axis=0,
              mode="bad")
    rel_error("take", [T((4, 5)), T((3, 2), "int32")], "batch dimension 0 is 4 in data but 3 "
              "in indices", 1, axis=1, batch_dims=1)
    rel_error("take", [T((4, 5)), T((4,), "int32")], "batch_dims 2 must be between", None,
              axis=1, batch_dims=2)


def test_take_modes_against_numpy():
    x = arr((4, 5))
    idx = np.array([[-6, 0], [4, 7]], "int32")
    np.testing.assert_array_equal(run("take", x, idx, axis=1, mode="clip"),
                                  x[:, np.clip(idx, 0, 4)])
    np.testing.assert_array_equal(run("take", x, idx, axis=1, mode="wrap"),
                                  x[:, ((idx % 5) + 5) % 5])
    ok = np.array([3, 1], "int32")
    np.testing.assert_array_equal(run("take", x, ok, axis=0, mode="fast"), x[[3, 1]])
    np.testing.assert_array_equal(run("take", x, idx), x.reshape(-1)[np.clip(idx, 0, 19)])
    data = arr((3, 4, 5))
    bidx = RNG.integers(0, 5, size=(3, 2)).astype("int32")
    got = run("take", data, bidx, axis=2, batch_dims=1)
    want = np.stack([data[b][:, bidx[b]] for b in range(3)])
    np.testing.assert_array_equal(got, want)


def test_gather_and_gather_nd():
    assert shape("gather", T((4, 5)), T((4, 2), "int32"), axis=1) == (4, 2)
    rel_error("gather", [T((4, 5)), T((4,), "int32")], "must have the rank of data (2)", 1,
              axis=0)
    rel_error("gather", [T((4,)), T((4,), "int32")], "gather needs an axis", None)
    x = arr((4, 5))
    idx = RNG.integers(0, 5, size=(3, 2)).astype("int64")
    got = run("gather", x, idx, axis=1)
    want = np.array([[x[i, idx[i, j]] for j in range(2)] for i in range(3)])
    np.testing.assert_array_equal(got, want)

    assert shape("gather_nd", T((4, 5, 6)), T((2, 3), "int32")) == (3, 6)
    assert shape("gather_nd", T((4, 5, 6)), T((1, 4, 3), "int32"), batch_dims=1) == (4, 3, 6)
    assert shape("gather_nd", T((4, 5)), T((ANY, 3), "int32"), index_rank=1) == (3, 5)
    rel_error("gather_nd", [T((4, 5)), T((ANY, 3), "int32")], "must be known", 1)
    rel_error("gather_nd", [T((4, 5)), T((3, 2), "int32")], "indices address 3 dimensions", 1)
    rel_error("gather_nd", [T((4, 5)), T((), "int32")], "rank 1 or more", 1)
    data = arr((4, 5, 6))
    idx = np.stack([RNG.integers(0, 4, 3), RNG.integers(0, 5, 3)]).astype("int32")
    np.testing.assert_array_equal(run("gather_nd", data, idx),
                                  np.stack([data[idx[0, k], idx[1, k]] for k in range(3)]))
    bidx = RNG.integers(0, 5, size=(1, 4, 2)).astype("int32")
    got = run("gather_nd", data, bidx, batch_dims=1)
    want = np.stack([np.stack([data[b, bidx[0, b, k]] for k in range(2)]) for b in range(4)])
    np.testing.assert_array_equal(got, want)


def test_one_hot():
    s = T((), "float32")
    out = rel("one_hot", T((2, 3), "int32"), s, s, depth=4, dtype="int8")
    assert (out.shape, out.dtype) == ((2, 3, 4), "int8")
    assert shape("one_hot", T((2, 3), "int32"), s, s, depth=4, axis=0) == (4, 2, 3)
    assert rel("one_hot", T((2,), "int32"), s, s, depth=4).dtype == "float32"
    rel_error("one_hot", [T((2,), "int32"), T((2,)), s], "on_value must be a scalar", 1,
              depth=2)
    rel_error("one_hot", [T((2,), "int32"), s, s], "depth must be positive", None, depth=0)
    idx = np.array([[0, 3], [1, 2]], "int32")
    got = run("one_hot", idx, np.array(5, "float32"), np.array(-1, "float32"), depth=4,
              axis=1, dtype="float32")
    want = np.where(np.eye(4)[idx] == 1, 5, -1).transpose(0, 2, 1)
    np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- creation

def test_init_ops():
    assert rel("zeros", shape=(2, 3), dtype="int32").shape == (2, 3)
    assert rel("ones", shape=(), dtype="").dtype == "float32"
    assert rel("full", T((), "int8"), shape=(4,)).dtype == "int8"
    assert rel("full", T(()), shape=(4,), dtype="float16").dtype == "float16"
    rel_error("full", [T((2,))], "fill_value must be a scalar", 0, shape=(4,))
    rel_error("zeros", [], "must not have negative dimensions", None, shape=(-1,))
    assert rel("full_like", T((2, 3), "int32"), T((), "int32")).shape == (2, 3)
    rel_error("full_like", [T((2,)), T((1,))], "fill_value must be a scalar", 1)
    np.testing.assert_array_equal(run("full", np.array(7, "int8"), shape=(2, 2)),
                                  np.full((2, 2), 7, "int8"))
    np.testing.assert_array_equal(run("full_like", arr((2,)), np.array(3.5, "float32")),
                                  [3.5, 3.5])


def test_arange():
    s = T((), "float32")

    def c(v):
        return Constant(np.array(v, "float32"))
    out = rel("arange", s, s, s, start=c(0), stop=c(5), step=c(2), dtype="float32")
    assert out.shape == (3,)
    assert rel("arange", s, s, s, start=None, stop=None, step=None, dtype="float32").shape \
        == (ANY,)
    rel_error("arange", [s, s, T((), "int32")], "step has dtype int32 but arange's dtype is "
              "float32", 2, start=None, stop=None, step=None, dtype="float32")
    rel_error("arange", [s, s, s], "has no elements", None, start=c(5), stop=c(0), step=c(1),
              dtype="float32")
    got = run("arange", np.array(1, "float32"), np.array(2, "float32"),
              np.array(0.25, "float32"), start=c(1), stop=c(2), step=c(0.25), dtype="float32")
    np.testing.assert_allclose(got, np.arange(1, 2, 0.25, dtype="float32"))


# ---------------------------------------------------------------- kernel agreement

S = T((), "float32")
# op, argument types, attributes, int bound for integer inputs
AGREEMENT = [
    ("reshape", [T((2, 3, 4))], {"newshape": (-1, 4)}, None),
    ("reshape_like", [T((2, 3, 4)), T((6, 4))], {}, None),
    ("transpose", [T((2, 3, 4), "int16")], {"axes": (1, 0, 2)}, None),
    ("expand_dims", [T((2, 3))], {"axis": -1, "num_newaxis": 2}, None),
    ("squeeze", [T((1, 3, 1))], {"axis": (0,)}, None),
    ("concatenate", [TupleType((T((2, 3)), T((2, 1))))], {"axis": 1}, None),
    ("stack", [TupleType((T((2, 3)), T((2, 3))))], {"axis": 2}, None),
    ("split", [T((6, 4))], {"indices_or_sections": 2}, None),
    ("split", [T((6, 4))], {"indices_or_sections": (1, 3), "axis": 1}, None),
    ("take", [T((4, 5)), T((2, 3), "int32")], {"axis": 1, "mode": "wrap"}, 5),
    ("take", [T((4, 5)), T((4, 3), "int32")], {"axis": 1, "batch_dims": 1}, 5),
    ("strided_slice", [T((4, 5, 6))], {"begin": (3, 1), "end": (0, 5), "strides": (-2, 2)},
     None),
    ("strided_slice", [T((4, 5, 6))], {"begin": (1,), "end": (2,), "strides": (1,),
                                       "slice_mode": "size", "axes": (2,)}, None),
    ("slice_like", [T((4, 5)), T((2, 3))], {"axes": (1,)}, None),
    ("broadcast_to", [T((3, 1), "uint8")], {"shape": (2, 3, 4)}, None),
    ("broadcast_to_like", [T((1, 4)), T((3, 4))], {}, None),
    ("collapse_sum_like", [T((2, 3, 4)), T((3, 1))], {}, None),
    ("tile", [T((2, 3))], {"reps": (2, 1, 2)}, None),
    ("repeat", [T((2, 3))], {"repeats": 3, "axis": 0}, None),
    ("reverse", [T((2, 3))], {"axis": 0}, None),
    ("reverse_sequence", [T((4, 3)), T((3,), "int32")], {"seq_axis": 0, "batch_axis": 1}, 5),
    ("layout_transform", [T((1, 6, 2, 3))], {"src_layout": "NCHW", "dst_layout": "NHWC4c"},
     None),
    ("gather", [T((4, 5)), T((4, 2), "int32")], {"axis": 1}, 5),
    ("gather_nd", [T((4, 5, 6)), T((2, 3), "int32")], {}, 4),
    ("one_hot", [T((2, 3), "int32"), S, S], {"depth": 4, "dtype": "int32"}, 4),
    ("zeros", [], {"shape": (2, 3), "dtype": "int8"}, None),
    ("ones", [], {"shape": (2,), "dtype": "float16"}, None),
    ("full", [T((), "int32")], {"shape": (2, 3), "dtype": "float32"}, None),
    ("full_like", [T((2, 3), "int32"), T((), "int32")], {}, None),
    ("shape_of", [T((2, 3))], {"dtype": "int32"}, None),
    ("cumsum", [T((2, 3, 4))], {"axis": -1, "exclusive": True}, None),
    ("cumsum", [T((2, 3), "int8")], {"dtype": "int64"}, 5),
    ("cumprod", [T((3, 2), "int32")], {"axis": 0}, 5),
    ("cumprod", [T((2, 3), "float16")], {"dtype": "float32", "exclusive": True}, None),
    ("sparse_to_dense", [T((), "int32"), T((), "float32"), T((), "float32")],
     {"output_shape": (5,)}, 5),
    ("sparse_to_dense", [T((3, 2), "int64"), T((3,), "int8"), T((), "int8")],
     {"output_shape": (3, 4)}, 3),
    ("sparse_to_dense", [T((4,), "int32"), T((4,), "float64"), T((), "int32")],
     {"output_shape": (4, 2)}, 4),
]


def random_value(t, high):
    if isinstance(t, TupleType):
        return tuple(random_value(f, high) for f in t.fields)
    return arr(t.shape, t.dtype, high)


def assert_agrees(out, value):
    if isinstance(out, TupleType):
        assert isinstance(value, tuple) and len(value) == len(out.fields)
        for f, v in zip(out.fields, value):
            assert_agrees(f, v)
        return
    assert value.shape == out.shape and str(value.dtype) == out.dtype, \
        (value.shape, value.dtype, out.shape, out.dtype)


@pytest.mark.parametrize("op, types, kw, high", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw, high):
    out = rel(op, *types, **kw)
    assert_agrees(out, run(op, *[random_value(t, high) for t in types], **kw))


def test_every_transform_op_has_relation_and_kernel():
    from relaylang.op import all_ops
    covered = {a[0] for a in AGREEMENT} | {"arange"}
    family = [d.name for d in all_ops() if d.package == "relaylang.op.transform"]
    assert "reshape" in family
    for name in family:
        d = get_op_def(name)
        assert d.type_rel is not None and d.kernel is not None, name
        assert name in covered, name


def test_remaining_error_messages():
    def c(v):
        return Constant(np.array(v, "float32"))
    s = T(())
    rel_error("layout_transform", [T((1, 2, 3, 4))], "primal axis C cannot have a factor", None,
              src_layout="N16CHW", dst_layout="NCHW")
    rel_error("layout_transform", [T((1, 2, 3, 4))], "'NC-HW' is not a layout", None,
              src_layout="NCHW", dst_layout="NC-HW")
    rel_error("layout_transform", [T((1, 2, 3, 4))], "splits axis D, which it lacks", None,
              src_layout="NCHW", dst_layout="NCHW4d")
    rel_error("concatenate", [TupleType((T((2,)), TupleType(())))], "field 1 of the tuple must "
              "be a tensor", 0)
    rel_error("slice_like", [T((4, 5)), T((2, 3))], "axes must not be empty", None, axes=())
    rel_error("arange", [s, s, s], "arange step must not be zero", None, start=c(0), stop=c(1),
              step=c(0), dtype="float32")
    rel_error("take", [TupleType(()), T((1,), "int32")], "data must be a tensor", 0)


# ---------------------------------------------------------------- sparse_to_dense

def test_sparse_to_dense_relation():
    assert shape("sparse_to_dense", T((2, 2), "int32"), T((2,), "int8"), T((), "int8"),
                 output_shape=(3, 4)) == (3, 4)
    assert rel("sparse_to_dense", T((2,), "int64"), T((2,), "float64"), T((), "int32"),
               output_shape=(5,)).dtype == "float64"            # the values' dtype
    rel_error("sparse_to_dense", [T((2,), "float32"), T((2,)), T(())], "integer tensor", 0,
              output_shape=(5,))
    rel_error("sparse_to_dense", [T((2, 2, 1), "int32"), T((2,)), T(())], "0-D, 1-D or 2-D",
              0, output_shape=(5,))
    rel_error("sparse_to_dense", [T((2,), "int32"), T((2, 1)), T(())], "0-D or 1-D", 1,
              output_shape=(5,))
    rel_error("sparse_to_dense", [T((2,), "int32"), T((3,)), T(())], "3 values for 2", 1,
              output_shape=(5,))
    rel_error("sparse_to_dense", [T((2,), "int32"), T((2,)), T((1,))], "must be a scalar", 2,
              output_shape=(5,))
    rel_error("sparse_to_dense", [T((2, 3), "int32"), T((2,)), T(())], "3 coordinates", 0,
              output_shape=(5, 2))
    rel_error("sparse_to_dense", [T((2,), "int32"), T((2,)), T(())], "non-negative", None,
              output_shape=(5, -1))


def test_sparse_to_dense_values():
    # TVM's test_sparse_to_dense cases (tests/python/relay/test_op_level3.py)
    out = run("sparse_to_dense", np.array(1), np.array(3), np.array(0), output_shape=(5,))
    np.testing.assert_array_equal(out, [0, 3, 0, 0, 0])
    out = run("sparse_to_dense", np.array([[0, 0], [1, 2]]), np.array([1, 2]), np.array(0),
              output_shape=(3, 4))
    np.testing.assert_array_equal(out, [[1, 0, 0, 0], [0, 0, 2, 0], [0, 0, 0, 0]])
    out = run("sparse_to_dense", np.array([0, 1, 4]), np.array([3.1, 3.1, 3.1]),
              np.array(3.5), output_shape=(5,))
    np.testing.assert_array_equal(out, [3.1, 3.1, 3.5, 3.5, 3.1])
    # 1-D indices fill whole rows; rows of fewer coordinates than the rank fill slices;
    # a later index wins; indices outside the shape (or negative) are ignored; a scalar
    # value goes everywhere; the default is cast to the values' dtype
    out = run("sparse_to_dense", np.array([2, 0, 2, 7, -1], "int32"),
              np.array([1, 2, 3, 4, 5], "int8"), np.array(9, "int64"), output_shape=(3, 2))
    np.testing.assert_array_equal(out, [[2, 2], [9, 9], [3, 3]])
    assert out.dtype == np.int8
    out = run("sparse_to_dense", np.array([[1], [0]]), np.array(6.0, "float32"),
              np.array(0.5, "float32"), output_shape=(2, 2))
    np.testing.assert_array_equal(out, [[6, 6], [6, 6]])
    out = run("sparse_to_dense", np.zeros((0, 2), "int64"), np.zeros((0,), "float32"),
              np.array(1.5, "float32"), output_shape=(2, 0))
    assert out.shape == (2, 0)
