"""The dyn family (TVM's dynamic-shape ops): relations (rank from the static length of the
shape tensor, every dimension it decides `?`), kernels (the static twin's semantics on
the values, over edge shapes), clear errors for bad values, the text format and the
interpreter."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import TensorType
from relaylang.op import get_op_def

HEAD = '#[version = "0.0.5"]\n'
S = T(())


def a(values, dtype="int64"):
    return np.array(values, dtype=dtype)


def data(shape, dtype="float32"):
    return np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)


def eq(got, expected) -> bool:
    return rl.structural_equal(got, expected)


def type_of(x: np.ndarray) -> TensorType:
    return TensorType(tuple(x.shape), x.dtype.name)


# ---------------------------------------------------------------- kernel vs relation
# (op, inputs, attributes, the expected value): the relation on the inputs' types must
# promise the kernel's rank and dtype, with `?` for every dimension the values decide.
X234 = data((2, 3, 4))
AGREEMENT = [
    ("dyn.reshape", [X234, a([-1, 4])], {}, X234.reshape(6, 4)),
    ("dyn.reshape", [X234, a([0, -1])], {}, X234.reshape(2, 12)),
    ("dyn.reshape", [X234, a([4, 0, 2])], {}, X234.reshape(4, 3, 2)),
    ("dyn.reshape", [X234, a([-3, 4], "int32")], {}, X234.reshape(6, 4)),
    ("dyn.reshape", [data((0, 4)), a([-1, 2])], {}, np.zeros((0, 2), "float32")),
    ("dyn.reshape", [data((0, 3)), a([0, 3])], {"allowzero": True}, np.zeros((0, 3), "float32")),
    ("dyn.reshape", [data((1,)), a([], "int64")], {}, np.array(0, "float32")),
    ("dyn.reshape", [data((1, 1)), a([1, 1, 1])], {}, np.zeros((1, 1, 1), "float32")),
    ("dyn.broadcast_to", [data((3, 1), "uint8"), a([2, 3, 4])], {},
     np.broadcast_to(data((3, 1), "uint8"), (2, 3, 4))),
    ("dyn.broadcast_to", [data((1,)), a([0])], {}, np.zeros((0,), "float32")),
    ("dyn.broadcast_to", [np.array(5, "int32"), a([2, 1])], {}, np.full((2, 1), 5, "int32")),
    ("dyn.tile", [data((2, 3)), a([2, 1, 2])], {}, np.tile(data((2, 3)), (2, 1, 2))),
    ("dyn.tile", [data((2, 3)), a([0, 1])], {}, np.zeros((0, 3), "float32")),
    ("dyn.tile", [data((2, 3)), a([3])], {}, np.tile(data((2, 3)), 3)),
    ("dyn.zeros", [a([2, 3])], {"dtype": "int8"}, np.zeros((2, 3), "int8")),
    ("dyn.zeros", [a([], "int32")], {}, np.zeros((), "float32")),
    ("dyn.ones", [a([0, 2])], {"dtype": "float16"}, np.ones((0, 2), "float16")),
    ("dyn.ones", [a([1])], {"dtype": "bool"}, np.ones((1,), "bool")),
    ("dyn.full", [np.array(7, "int32"), a([2, 1])], {}, np.full((2, 1), 7, "int32")),
    ("dyn.full", [np.array(2.5, "float32"), a([3])], {"dtype": "float64"},
     np.full((3,), 2.5, "float64")),
    ("dyn.strided_slice", [data((4, 5, 6)), a([3, 1]), a([0, 5]), a([-2, 2])], {},
     data((4, 5, 6))[3:0:-2, 1:5:2]),
    ("dyn.strided_slice", [data((4, 5, 6)), a([1]), a([2]), a([1])], {"slice_mode": "size"},
     data((4, 5, 6))[1:3]),
    ("dyn.strided_slice", [data((4, 5)), a([-3, 0]), a([-1, 100]), a([1, 1])], {},
     data((4, 5))[1:3, :]),
    ("dyn.strided_slice", [data((4, 5)), a([1, 0]), a([1, 5]), a([1, 1])], {},
     np.zeros((0, 5), "float32")),
    ("dyn.expand_dims", [data((2, 3)), np.array(-1, "int32")], {"num_newaxis": 2},
     data((2, 3)).reshape(2, 3, 1, 1)),
    ("dyn.expand_dims", [data((2, 3)), np.array(0, "int64")], {}, data((2, 3))[None]),
    ("dyn.expand_dims", [np.array(3.0, "float32"), np.array(-1, "int64")], {},
     np.array([3.0], "float32")),
    ("dyn.expand_dims", [data((0, 2)), np.array(1, "int64")], {"num_newaxis": 0},
     np.zeros((0, 2), "float32")),
    ("dyn.squeeze", [data((1, 3, 1)), a([0, -1])], {}, data((3,))),
    ("dyn.squeeze", [data((1, 3, 1)), a([], "int64")], {}, data((1, 3, 1))),
    ("dyn.squeeze", [data((1, 0)), a([0])], {}, np.zeros((0,), "float32")),
    ("dyn.one_hot", [a([[0, 2, 5], [1, -1, 3]], "int32"), np.array(1.0, "float32"),
                     np.array(0.0, "float32"), np.array(4, "int32")], {},
     np.eye(4, dtype="float32")[[[0, 2, 0], [1, 0, 3]]] * np.array(
         [[1, 1, 0], [1, 0, 1]], "float32")[..., None]),
    ("dyn.one_hot", [a([1, 0], "int64"), np.array(5, "int32"), np.array(-1, "int32"),
                     np.array(3, "int64")], {"axis": 0, "dtype": "int8"},
     np.array([[-1, 5], [5, -1], [-1, -1]], "int8")),
    ("dyn.one_hot", [a([], "int32"), np.array(1.0, "float32"), np.array(0.0, "float32"),
                     np.array(2, "int32")], {}, np.zeros((0, 2), "float32")),
    ("dyn.nn.pad", [data((2, 3)), a([[1, 0], [2, 1]]), np.array(9.0, "float32")], {},
     np.pad(data((2, 3)), [(1, 0), (2, 1)], constant_values=9.0)),
    ("dyn.nn.pad", [data((2, 3), "int32"), a([[0, 0], [1, 1]], "int32"),
                    np.array(0, "int32")], {"pad_mode": "edge"},
     np.pad(data((2, 3), "int32"), [(0, 0), (1, 1)], mode="edge")),
    ("dyn.nn.pad", [data((3, 3)), a([[2, 2], [0, 1]]), np.array(0.0, "float32")],
     {"pad_mode": "reflect"}, np.pad(data((3, 3)), [(2, 2), (0, 1)], mode="reflect")),
    ("dyn.nn.pad", [data((0, 2)), a([[1, 1], [0, 0]]), np.array(3.0, "float32")], {},
     np.full((2, 2), 3.0, "float32")),
    ("dyn.topk", [data((3, 4)), np.array(2, "int32")], {"ret_type": "values", "axis": 0},
     data((3, 4))[::-1][:2]),
    ("dyn.topk", [data((3, 4)), a([3])], {"ret_type": "indices", "is_ascend": True,
                                          "dtype": "int64"}, np.tile(a([0, 1, 2]), (3, 1))),
    ("dyn.topk", [data((1, 5)), np.array(0, "int64")], {"ret_type": "values"},
     data((1, 5))[:, ::-1]),
    ("dyn.image.resize2d", [data((1, 2, 2, 3)), a([4, 6], "int32"), np.zeros(4, "float32")],
     {"method": "nearest_neighbor", "coordinate_transformation_mode": "asymmetric"},
     data((1, 2, 2, 3)).repeat(2, axis=2).repeat(2, axis=3)),
    ("dyn.image.resize2d", [data((1, 3, 1, 2), "uint8"), a([2.0, 3.7], "float32"),
                            np.zeros(4, "float32")],
     {"layout": "NHWC", "method": "nearest_neighbor", "out_dtype": "float32"},
     np.zeros((1, 2, 3, 2), "float32") + data((1, 3, 1, 2), "uint8")[:, [0, 2]].astype(
         "float32")),
    ("dyn.nn.upsampling", [data((1, 2, 2, 3), "int8"), np.array(2.0, "float32"),
                           np.array(3.0, "float64")], {},
     data((1, 2, 2, 3), "int8").repeat(2, axis=2).repeat(3, axis=3)),
    ("dyn.nn.upsampling", [data((1, 1, 1, 2)), np.array(1, "int32"), np.array(0.5, "float32")],
     {}, data((1, 1, 1, 1))),
    ("dyn.nn.upsampling3d", [data((1, 1, 1, 2, 2), "int32"), np.array(2.0, "float32"),
                             np.array(1.0, "float32"), np.array(2.0, "float32")],
     {"coordinate_transformation_mode": "asymmetric"},
     data((1, 1, 1, 2, 2), "int32").repeat(2, axis=2).repeat(2, axis=4)),
    ("dyn.nn.upsampling3d", [data((1, 2, 1, 1, 1)), np.array(1.0, "float32"),
                             np.array(1.0, "float32"), np.array(1.0, "float32")],
     {"layout": "NDHWC"}, data((1, 2, 1, 1, 1))),
    ("dyn.sparse_to_dense", [a([0, 2]), a([5.0, 6.0], "float32"), np.array(1.0, "float32"),
                             a([3])], {}, np.array([5.0, 1.0, 6.0], "float32")),
    ("dyn.sparse_to_dense", [a([[1, 0]], "int32"), a([7], "int8"), np.array(0, "int8"),
                             a([2, 2], "int32")], {}, np.array([[0, 0], [7, 0]], "int8")),
]


@pytest.mark.parametrize("op, inputs, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_static_semantics(op, inputs, kw, expected):
    promised = rel(op, *[type_of(x) for x in inputs], **kw)
    out = run(op, *inputs, **kw)
    assert isinstance(promised, TensorType)
    assert len(promised.shape) == out.ndim and promised.dtype == out.dtype.name
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_every_dyn_op_is_in_the_agreement_table():
    from relaylang.op import all_ops
    family = {d.name for d in all_ops() if d.package == "relaylang.op.dyn"}
    assert family == {c[0] for c in AGREEMENT}
    assert len(family) == 16


# ---------------------------------------------------------------- relations

def test_relations_give_rank_from_the_shape_length_and_unknown_dims():
    assert eq(rel("dyn.reshape", T((2, 3, 4)), T((3,), "int64")), T((ANY, ANY, ANY)))
    assert eq(rel("dyn.reshape", T((2, 3), "int8"), T((0,), "int32")), T((), "int8"))
    assert eq(rel("dyn.broadcast_to", T((3, 1), "uint8"), T((3,), "int64")),
              T((ANY,) * 3, "uint8"))
    assert eq(rel("dyn.tile", T((2, 3)), T((1,), "int64")), T((ANY, ANY)))
    assert eq(rel("dyn.tile", T((2,)), T((3,), "int64")), T((ANY,) * 3))
    assert eq(rel("dyn.zeros", T((2,), "int64")), T((ANY, ANY)))          # float32 default
    assert eq(rel("dyn.ones", T((1,), "int64"), dtype="int32"), T((ANY,), "int32"))
    assert eq(rel("dyn.full", T((), "int8"), T((2,), "int64")), T((ANY, ANY), "int8"))
    assert eq(rel("dyn.full", S, T((1,), "int64"), dtype="float16"), T((ANY,), "float16"))
    i64 = T((1,), "int64")
    assert eq(rel("dyn.strided_slice", T((4, 5, 6)), i64, i64, i64), T((ANY, 5, 6)))
    assert eq(rel("dyn.expand_dims", T((2, 3)), T((), "int32"), num_newaxis=2), T((ANY,) * 4))
    assert eq(rel("dyn.expand_dims", T((2, 3)), T((), "int32"), num_newaxis=0), T((ANY,) * 2))
    assert eq(rel("dyn.squeeze", T((1, 3, 1)), T((2,), "int64")), T((ANY,)))
    assert eq(rel("dyn.one_hot", T((2, 3), "int32"), S, S, T((), "int64")), T((2, 3, ANY)))
    assert eq(rel("dyn.one_hot", T((2, 3), "int32"), T((), "int8"), T((), "int8"),
              T((), "int64"), axis=0), T((ANY, 2, 3), "int8"))
    assert eq(rel("dyn.one_hot", T((2, 3), "int32"), S, S, T((), "int64"), axis=-2,
              dtype="int32"), T((2, ANY, 3), "int32"))
    assert eq(rel("dyn.nn.pad", T((2, 3), "int32"), T((2, 2), "int64"), T((), "int32")),
              T((ANY, ANY), "int32"))
    assert eq(rel("dyn.nn.pad", T((ANY, 3)), T((ANY, 2), "int64"), S), T((ANY, ANY)))


def test_relations_of_the_resampling_topk_and_sparse_ops():
    assert eq(rel("dyn.topk", T((3, 4)), T((), "int32"), axis=0),
              rl.TupleType([T((ANY, 4)), T((ANY, 4), "int32")]))
    assert eq(rel("dyn.topk", T((3, 4)), T((1,), "int64"), ret_type="indices", dtype="int64"),
              T((3, ANY), "int64"))
    assert eq(rel("dyn.image.resize2d", T((1, 2, 3, 4), "uint8"), T((2,)), T((4,)),
                  out_dtype="float32"), T((1, 2, ANY, ANY)))
    assert eq(rel("dyn.image.resize2d", T((1, 3, 4, 2)), T((2,), "int64"), T((4,)),
                  layout="NHWC"), T((1, ANY, ANY, 2)))
    assert eq(rel("dyn.nn.upsampling", T((1, 2, 3, 4), "int8"), S, S),
              T((1, 2, ANY, ANY), "int8"))
    assert eq(rel("dyn.nn.upsampling", T((1, 2, 3, 4, 16)), S, S, layout="NCHW16c"),
              T((1, 2, ANY, ANY, 16)))
    assert eq(rel("dyn.nn.upsampling3d", T((1, 2, 3, 4, 5)), S, S, S, layout="NDHWC"),
              T((1, ANY, ANY, ANY, 5)))
    assert eq(rel("dyn.sparse_to_dense", T((2, 2), "int32"), T((2,), "int8"), T((), "int8"),
                  T((2,), "int64")), T((ANY, ANY), "int8"))
    rel_error("dyn.topk", [T((3, 4)), T((2,), "int32")], "k must be a scalar", 1)
    rel_error("dyn.topk", [T((3, 4)), T((), "float32")], "k must be an integer", 1)
    rel_error("dyn.topk", [T((3, 4)), T((), "int32")], "dtype of the indices", None,
              dtype="float32")
    rel_error("dyn.image.resize2d", [T((1, 2, 3, 4)), T((3,)), T((4,))], "size must hold 2",
              1)
    rel_error("dyn.image.resize2d", [T((1, 2, 3, 4)), T((2,)), T(())], "roi must have rank 1",
              2)
    rel_error("dyn.nn.upsampling", [T((1, 2, 3, 4)), T((1,)), S], "scale_h must be a scalar",
              1)
    rel_error("dyn.nn.upsampling", [T((1, 2, 3)), S, S], "layout NCHW has 4 axes", 0)
    rel_error("dyn.nn.upsampling3d", [T((1, 2, 3, 4, 5)), S, S, S], "method must be one of",
              None, method="bilinear")
    rel_error("dyn.sparse_to_dense", [T((2,), "int32"), T((2,)), S, T((ANY,), "int64")],
              "a dynamic rank is not supported", 3)
    rel_error("dyn.sparse_to_dense", [T((2,), "int32"), T((3,)), S, T((1,), "int64")],
              "3 values for 2", 1)


def test_dyn_topk_both_is_the_static_topk():
    x = data((4, 3))
    values, indices = run("dyn.topk", x, np.array(2, "int32"), axis=0)
    np.testing.assert_array_equal(values, x[::-1][:2])
    np.testing.assert_array_equal(indices, np.array([[3, 3, 3], [2, 2, 2]], "int32"))


def test_relations_wait_for_unknown_arguments():
    from relaylang.ir.types import IncompleteType
    u = IncompleteType()
    assert rel("dyn.reshape", T((2, 3)), u) is None
    assert rel("dyn.reshape", u, T((2,), "int64")) is None
    assert rel("dyn.zeros", u) is None
    assert rel("dyn.strided_slice", T((2,)), T((1,), "int64"), u, T((1,), "int64")) is None
    assert rel("dyn.one_hot", T((2,), "int32"), S, S, u) is None
    assert rel("dyn.nn.pad", T((2,)), T((1, 2), "int64"), u) is None


def test_relation_errors_name_the_argument():
    rel_error("dyn.reshape", [T((2, 3)), T((2, 2), "int64")], "newshape must have rank 1", 1)
    rel_error("dyn.reshape", [T((2, 3)), T((2,))], "newshape must be an integer tensor", 1)
    rel_error("dyn.reshape", [T((2, 3)), T((ANY,), "int64")], "a dynamic rank is not supported",
              1)
    rel_error("dyn.zeros", [T((), "int64")], "shape must have rank 1", 0)
    rel_error("dyn.broadcast_to", [T((2, 3)), T((1,), "int64")], "cannot broadcast data of "
              "rank 2 to a shape of 1 dimensions", 1)
    rel_error("dyn.full", [T((1,)), T((1,), "int64")], "fill_value must be a scalar", 0)
    i64 = T((1,), "int64")
    rel_error("dyn.strided_slice", [T((4, 5)), i64, T((2,), "int64"), i64],
              "begin, end and strides must have the same length, got 1, 2 and 1", 2)
    three = T((3,), "int64")
    rel_error("dyn.strided_slice", [T((4, 5)), three, three, three],
              "begin has 3 values but data has rank 2", 1)
    rel_error("dyn.strided_slice", [T((4,)), i64, i64, i64], "slice_mode must be one of",
              None, slice_mode="step")
    rel_error("dyn.expand_dims", [T((2,)), T((1,), "int64")], "axis must be a scalar", 1)
    rel_error("dyn.expand_dims", [T((2,)), T((), "float32")], "axis must be an integer", 1)
    rel_error("dyn.expand_dims", [T((2,)), T((), "int64")], "num_newaxis must be non-negative",
              None, num_newaxis=-1)
    rel_error("dyn.squeeze", [T((1,)), T((2,), "int64")], "cannot squeeze 2 axes from a tensor "
              "of rank 1", 1)
    rel_error("dyn.one_hot", [T((2,), "float32"), S, S, T((), "int64")],
              "indices must be an integer tensor", 0)
    rel_error("dyn.one_hot", [T((2,), "int32"), S, S, T((1,), "int64")],
              "depth must be a scalar", 3)
    rel_error("dyn.one_hot", [T((2,), "int32"), S, T((1,)), T((), "int64")],
              "off_value must be a scalar", 2)
    rel_error("dyn.one_hot", [T((2,), "int32"), S, S, T((), "int64")], "axis 3 is out of range",
              0, axis=3)
    rel_error("dyn.nn.pad", [T((2, 3)), T((2,), "int64"), S], "pad_width must have rank 2", 1)
    rel_error("dyn.nn.pad", [T((2, 3)), T((3, 2), "int64"), S], "pad_width must have shape "
              "(2, 2) for data of rank 2, got (3, 2)", 1)
    rel_error("dyn.nn.pad", [T((2, 3)), T((2, 2), "int64"), T((1,))], "pad_val must be a "
              "scalar", 2)
    rel_error("dyn.nn.pad", [T((2,)), T((1, 2), "int64"), S], "pad_mode must be one of", None,
              pad_mode="wrap")


# ---------------------------------------------------------------- bad values

@pytest.mark.parametrize("op, inputs, kw, fragment", [
    ("dyn.reshape", [X234, a([-2])], {}, "value -2 is not valid in a dynamic reshape"),
    ("dyn.reshape", [X234, a([-4, 2, 1, 0, 0])], {}, "value -4 is not valid"),
    ("dyn.reshape", [X234, a([-5, 24])], {}, "unsupported special value -5"),
    ("dyn.reshape", [X234, a([5, -1])], {}, "24 elements do not divide into parts of 5"),
    ("dyn.reshape", [X234, a([5, 5])], {}, "cannot reshape a tensor of shape (2, 3, 4)"),
    ("dyn.reshape", [X234, a([-1, -1])], {}, "more than one -1"),
    ("dyn.broadcast_to", [data((3, 2)), a([3, 4])], {}, "cannot broadcast data"),
    ("dyn.tile", [data((2,)), a([-1])], {}, "reps must be non-negative"),
    ("dyn.zeros", [a([2, -3])], {}, "must not have negative dimensions"),
    ("dyn.full", [np.array(1.0, "float32"), a([-1])], {}, "must not have negative dimensions"),
    ("dyn.strided_slice", [data((4,)), a([0]), a([2]), a([0])], {}, "strides must be non-zero"),
    ("dyn.expand_dims", [data((2, 3)), np.array(3, "int64")], {}, "axis 3 is out of range"),
    ("dyn.expand_dims", [data((2, 3)), np.array(-4, "int64")], {}, "axis -4 is out of range"),
    ("dyn.squeeze", [data((1, 3)), a([1])], {}, "cannot squeeze axis 1: its dimension is 3"),
    ("dyn.squeeze", [data((1, 3)), a([0, 0])], {}, "not of the rank and dtype"),
    ("dyn.squeeze", [data((1, 3)), a([2])], {}, "axis 2 is out of range"),
    ("dyn.one_hot", [a([0], "int32"), np.array(1.0, "float32"), np.array(0.0, "float32"),
                     np.array(0, "int32")], {}, "depth must be positive"),
    ("dyn.nn.pad", [data((2,)), a([[-1, 0]]), np.array(0.0, "float32")], {},
     "must be non-negative"),
    ("dyn.nn.pad", [data((2,)), a([[2, 0]]), np.array(0.0, "float32")], {"pad_mode": "reflect"},
     "reflect padding [2, 0] on axis 0 needs a dimension larger than 2"),
    ("dyn.topk", [data((3, 4)), np.array(5, "int32")], {}, "k = 5 is larger than the axis"),
    ("dyn.image.resize2d", [data((1, 1, 2, 2)), a([0, 3]), np.zeros(4, "float32")], {},
     "size must be positive"),
    ("dyn.image.resize2d", [data((1, 1, 2, 2)), a([2, 2]), np.zeros(3, "float32")],
     {"coordinate_transformation_mode": "tf_crop_and_resize"}, "tf_crop_and_resize needs roi"),
    ("dyn.nn.upsampling", [data((1, 1, 2, 2)), np.array(np.nan, "float32"),
                           np.array(1.0, "float32")], {}, "scale_h must be finite"),
    ("dyn.sparse_to_dense", [a([0]), a([1.0], "float32"), np.array(0.0, "float32"), a([-2])],
     {}, "non-negative"),
])
def test_bad_values_fail_with_the_static_ops_message(op, inputs, kw, fragment):
    with pytest.raises(ValueError) as info:
        run(op, *inputs, **kw)
    assert fragment in str(info.value), str(info.value)


def test_dyn_kernels_are_the_families_own_and_reuse_the_static_ones():
    from relaylang.op import implementation
    for name in ("dyn.reshape", "dyn.nn.pad", "dyn.one_hot"):
        impl = implementation(name, "numpy")
        assert getattr(impl, "__wrapped__", impl).__module__ == "relaylang.op.dyn.numpy_kernels"
    from relaylang.op.dyn.twins import TWINS
    assert set(TWINS) == {d for d in (c[0] for c in AGREEMENT)}
    for name, twin in TWINS.items():
        dyn, static = get_op_def(name), get_op_def(twin.op)
        assert static is not None and static.name == name.removeprefix("dyn.")
        assert sorted(twin.inputs + twin.values) == list(range(dyn.num_inputs))


def test_ops_follow_tvm_declarations():
    names = {"dyn.reshape": ("data", "newshape"), "dyn.broadcast_to": ("data", "shape"),
             "dyn.tile": ("data", "reps"), "dyn.zeros": ("shape",), "dyn.ones": ("shape",),
             "dyn.full": ("fill_value", "shape"),
             "dyn.strided_slice": ("data", "begin", "end", "strides"),
             "dyn.expand_dims": ("data", "axis"), "dyn.squeeze": ("data", "axes"),
             "dyn.one_hot": ("indices", "on_value", "off_value", "depth"),
             "dyn.nn.pad": ("data", "pad_width", "pad_val")}
    for name, inputs in names.items():
        assert get_op_def(name).input_names == inputs
    keys = {n: get_op_def(n).attrs.type_key for n in names}
    assert keys["dyn.reshape"] == "relay.attrs.ReshapeAttrs"
    assert keys["dyn.expand_dims"] == "relay.attrs.DynExpandDimsAttrs"
    assert keys["dyn.nn.pad"] == "relay.attrs.PadAttrs"
    assert get_op_def("dyn.reshape").attrs is get_op_def("reshape").attrs
    from relaylang.op.registry import OpPattern
    assert get_op_def("dyn.full").pattern is OpPattern.ELEMWISE
    assert get_op_def("dyn.broadcast_to").pattern is OpPattern.BROADCAST
    assert get_op_def("dyn.one_hot").pattern is OpPattern.OUT_ELEMWISE_FUSABLE
    assert get_op_def("dyn.nn.pad").pattern is OpPattern.INJECTIVE


# ---------------------------------------------------------------- text and interpreter

PROGRAMS = [
    ("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]", "dyn.reshape(%x, %s)",
     "Tensor[(?, ?), float32]"),
    ("%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]",
     "dyn.reshape(%x, %s, allowzero=True)", "Tensor[(?, ?), float32]"),
    ("%x: Tensor[(3, 1), uint8], %s: Tensor[(3), int32]", "dyn.broadcast_to(%x, %s)",
     "Tensor[(?, ?, ?), uint8]"),
    ("%x: Tensor[(2, 3), float32], %s: Tensor[(3), int64]", "dyn.tile(%x, %s)",
     "Tensor[(?, ?, ?), float32]"),
    ("%s: Tensor[(2), int64]", 'dyn.zeros(%s, dtype="int8")', "Tensor[(?, ?), int8]"),
    ("%s: Tensor[(1), int64]", 'dyn.ones(%s, dtype="float16")', "Tensor[(?), float16]"),
    ("%v: int32, %s: Tensor[(2), int64]", "dyn.full(%v, %s)", "Tensor[(?, ?), int32]"),
    (("%x: Tensor[(4, 5, 6), float32], %b: Tensor[(2), int64], %e: Tensor[(2), int64], "
      "%t: Tensor[(2), int64]"), 'dyn.strided_slice(%x, %b, %e, %t, slice_mode="size")',
     "Tensor[(?, ?, 6), float32]"),
    ("%x: Tensor[(2, 3), float32], %a: int64", "dyn.expand_dims(%x, %a, num_newaxis=2)",
     "Tensor[(?, ?, ?, ?), float32]"),
    ("%x: Tensor[(1, 3, 1), float32], %a: Tensor[(2), int64]", "dyn.squeeze(%x, %a)",
     "Tensor[(?), float32]"),
    ("%i: Tensor[(2, 3), int32], %d: int32", 'dyn.one_hot(%i, 1f, 0f, %d, axis=1, dtype="int8")',
     "Tensor[(2, ?, 3), int8]"),
    ("%x: Tensor[(2, 3), float32], %w: Tensor[(2, 2), int64]",
     'dyn.nn.pad(%x, %w, 0f, pad_mode="edge")', "Tensor[(?, ?), float32]"),
]


@pytest.mark.parametrize("params, call, ty", PROGRAMS, ids=[p[1].split("(")[0] + f"-{i}"
                                                            for i, p in enumerate(PROGRAMS)])
def test_text_round_trip_and_type(params, call, ty):
    mod = rl.transform.InferType()(rl.parse(f"{HEAD}def @main({params}) {{\n  {call}\n}}\n"))
    text = rl.astext(mod)
    again = rl.transform.InferType()(rl.parse(text))
    assert rl.structural_equal(again, mod)
    assert rl.astext(mod["main"].body.checked_type) == ty
    expected = rl.parse(f"{HEAD}def @main({params}) -> {ty} {{\n  {call}\n}}\n")
    assert rl.transform.InferType()(expected)["main"].checked_type is not None


def test_parse_type_check_and_evaluate_on_the_interpreter():
    mod = rl.parse(HEAD + """def @main(%x: Tensor[(2, 3, 4), float32], %s: Tensor[(2), int64]) {
      %0 = dyn.reshape(%x, %s);
      %1 = shape_of(%0);
      %2 = dyn.zeros(%1, dtype="float32");
      add(%0, %2)
    }""")
    typed = rl.transform.InferType()(mod)
    assert rl.astext(typed["main"].body.checked_type) == "Tensor[(?, ?), float32]"
    out = rl.evaluate(mod, X234, a([4, -1]))
    np.testing.assert_array_equal(np.asarray(out), X234.reshape(4, 6))
    out = rl.evaluate(mod, X234, a([0, -1]))        # 0 copies the input's dimension
    np.testing.assert_array_equal(np.asarray(out), X234.reshape(2, 12))


def test_interpreter_reports_a_bad_value():
    mod = rl.parse(HEAD + """def @main(%x: Tensor[(2, 3), float32], %s: Tensor[(1), int64]) {
      dyn.reshape(%x, %s)
    }""")
    with pytest.raises(Exception, match="dyn.reshape failed: cannot reshape a tensor of shape"):
        rl.evaluate(mod, data((2, 3)), a([5]))


def test_builders():
    x, s = rl.var("x", shape=(2, 3), dtype="float32"), rl.var("s", shape=(1,), dtype="int64")
    call = rl.dyn.reshape(x, s)
    assert call.op.name == "dyn.reshape" and call.attrs.allowzero is False
    w = rl.var("w", shape=(2, 2), dtype="int64")
    pad = rl.dyn.nn.pad(x, w, rl.const(0.0), pad_mode="reflect")
    assert pad.op.name == "dyn.nn.pad" and pad.attrs.pad_mode == "reflect"
    mod = rl.transform.InferType()(rl.IRModule.from_expr(rl.Function([x, w], pad)))
    assert rl.astext(mod["main"].body.checked_type) == "Tensor[(?, ?), float32]"
