"""Type relations and NumPy kernels of the reduce family (relaylang/op/reduce/,
relaylang/op/reduce/numpy_kernels.py)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from relaylang.ir.attrs import make_attrs
from relaylang.ir.node import ANY, MetaObject
from relaylang.ir.types import IncompleteType, TensorType, TupleType
from relaylang.op import get_op_def
from relaylang.op.numpy_support import np_dtype
from relaylang.op.reduce import REDUCE, ArgReduceAttrs, ReduceAttrs, VarianceAttrs
from relaylang.op.relation import TypeRelError

SYM = MetaObject("tir.SizeVar", '{"name": "n"}')


def T(shape, dtype="float32"):
    return TensorType(tuple(shape), dtype)


def attrs_for(name, **values):
    schema = ArgReduceAttrs if name in ("argmax", "argmin") else \
        VarianceAttrs if name == "variance" else ReduceAttrs
    return make_attrs(schema, values)


def rel(name, *args, **values):
    return get_op_def(name).type_rel(list(args), attrs_for(name, **values))


def run(name, *inputs, **values):
    return get_op_def(name).kernel([np.asarray(x) for x in inputs], attrs_for(name, **values))


def rel_error(name, *args, **values) -> TypeRelError:
    with pytest.raises(TypeRelError) as info:
        rel(name, *args, **values)
    return info.value


def shape_of(t):
    assert isinstance(t, TensorType)
    return t.shape


# ---------------------------------------------------------------- relations

@pytest.mark.parametrize("values, out", [
    ({}, ()),                                              # axis None: every axis
    ({"axis": ()}, ()),                                    # empty axis: every axis too (TVM)
    ({"axis": (1,)}, (2, 4, 5)),
    ({"axis": (-1,)}, (2, 3, 4)),
    ({"axis": (0, -2)}, (3, 5)),
    ({"axis": (1,), "keepdims": True}, (2, 1, 4, 5)),
    ({"keepdims": True}, (1, 1, 1, 1)),
    ({"axis": (1,), "exclude": True}, (3,)),              # reduce all axes but 1
    ({"axis": (1, 3), "exclude": True, "keepdims": True}, (1, 3, 1, 5)),
    ({"axis": (0, 1, 2, 3), "exclude": True}, (2, 3, 4, 5)),   # nothing left to reduce
    ({"exclude": True}, ()),                               # nothing listed: all reduced
])
def test_reduce_shapes(values, out):
    assert shape_of(rel("sum", T((2, 3, 4, 5)), **values)) == out


def test_reduce_keeps_dtype_and_unknown_dims():
    out = rel("max", T((ANY, SYM, 3), "int8"), axis=(2,))
    assert out.shape == (ANY, SYM) and out.dtype == "int8"
    assert rel("mean", T((ANY, 3)), axis=(0,), keepdims=True).shape == (1, 3)


def test_reduce_of_a_scalar():
    assert shape_of(rel("sum", T(()))) == ()
    assert rel("prod", IncompleteType()) is None


def test_axis_out_of_range():
    e = rel_error("sum", T((2, 3)), axis=(2,))
    assert e.message == "axis 2 is out of range for a tensor of rank 2" and e.arg == 0
    e = rel_error("mean", T((2, 3)), axis=(-3,))
    assert "axis -3 is out of range" in e.message
    e = rel_error("sum", T(()), axis=(0,))
    assert "rank 0" in e.message


def test_repeated_axis():
    e = rel_error("sum", T((2, 3)), axis=(1, -1))
    assert "axis 1 is listed twice" in e.message and e.arg == 0


def test_reduce_rejects_a_tuple():
    e = rel_error("sum", TupleType((T((2,)),)))
    assert "data must be a tensor" in e.message and e.arg == 0


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_need_bool(name):
    assert rel(name, T((2, 3), "bool"), axis=(0,)).dtype == "bool"
    e = rel_error(name, T((2, 3), "int32"))
    assert "data must be a bool tensor, got dtype int32" in e.message and e.arg == 0


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduce_relation(name):
    out = rel(name, T((2, ANY, 4), "float16"), axis=(1,), keepdims=True)
    assert out.shape == (2, 1, 4) and out.dtype == "int32"
    assert shape_of(rel(name, T((2, 3)))) == ()
    assert shape_of(rel(name, T((2, 3, 4)), axis=(1,), exclude=True)) == (3,)
    e = rel_error(name, T(()))
    assert "rank at least 1, got a scalar" in e.message and e.arg == 0
    assert rel(name, IncompleteType()) is None


def test_variance_relation():
    out = rel("variance", T((2, 3, 4)), T((2, 1, 4)), axis=(1,))
    assert out.shape == (2, 4) and out.dtype == "float32"
    assert rel("variance", T((2, ANY)), T((1, 1)), keepdims=True).shape == (1, 1)
    assert rel("variance", T((2, 3)), IncompleteType()) is None


def test_variance_errors():
    e = rel_error("variance", T((2, 3)), T((3,)), axis=(0,))
    assert "mean has rank 1 but data has rank 2" in e.message and e.arg == 1
    e = rel_error("variance", T((2, 3)), T((1, 3), "float16"))
    assert "data has dtype float32 but mean has dtype float16" in e.message and e.arg == 1
    e = rel_error("variance", T((2, 3)), T((2, 4)))
    assert "mean has 4 at dimension 1 where data has 3" in e.message
    assert e.arg == 1 and e.dim == 1
    e = rel_error("variance", T(()), T(()))
    assert "got a scalar" in e.message


# ---------------------------------------------------------------- kernels against NumPy

X = np.random.default_rng(7).normal(size=(2, 3, 4)).astype("float32")

AXES = [{}, {"axis": (1,)}, {"axis": (0, 2)}, {"axis": (-1,), "keepdims": True},
        {"axis": (1,), "exclude": True}, {"axis": (0, 1), "exclude": True, "keepdims": True}]


def numpy_axes(values, rank):
    listed = [a % rank for a in values.get("axis") or range(rank)]
    axes = [a for a in range(rank) if a not in listed] if values.get("exclude") else listed
    return tuple(axes)


@pytest.mark.parametrize("name, fn", [("sum", np.sum), ("mean", np.mean), ("max", np.max),
                                      ("min", np.min), ("prod", np.prod)])
@pytest.mark.parametrize("values", AXES)
def test_float_reductions(name, fn, values):
    want = fn(X.astype("float64"), axis=numpy_axes(values, 3),
              keepdims=values.get("keepdims", False))
    got = run(name, X, **values)
    assert got.dtype == np.float32 and got.shape == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_integer_sum_wraps_and_mean_truncates():
    big = np.array([2**31 - 1, 1], dtype="int32")
    assert run("sum", big).tolist() == -(2**31)
    assert run("mean", np.array([-3, -4], dtype="int32")).tolist() == -3     # -3.5 toward zero
    assert run("mean", np.array([[7, 8], [1, 1]], dtype="int64"), axis=(1,)).tolist() == [7, 1]


def test_float16_mean_accumulates_in_float32():
    x = np.full(4096, 1.0, dtype="float16")        # a float16 running sum stalls at 2048
    got = run("mean", x)
    assert got.dtype == np.float16 and float(got) == 1.0


def test_empty_reductions_give_identities():
    empty = np.zeros((0, 3), dtype="float32")
    assert run("max", empty, axis=(0,)).tolist() == [-np.inf] * 3
    assert run("min", empty, axis=(0,)).tolist() == [np.inf] * 3
    assert run("sum", empty, axis=(0,)).tolist() == [0.0] * 3
    assert run("max", np.zeros((0,), dtype="int8")).tolist() == -128
    assert run("argmax", empty, axis=(0,)).tolist() == [-1, -1, -1]


def test_all_any_and_bool_sum():
    b = np.array([[True, False, True], [True, True, True]])
    assert run("all", b, axis=(1,)).tolist() == [False, True]
    assert run("any", ~b, axis=(1,)).tolist() == [True, False]
    assert run("all", b, axis=(1,), exclude=True).tolist() == [True, False, True]
    assert run("sum", b, axis=(1,)).tolist() == [False, True]      # 1-bit sums wrap: parity


def test_reduce_of_scalar_is_identity():
    assert run("sum", np.array(3.5, dtype="float32")).tolist() == 3.5
    assert isinstance(run("max", np.array(2, dtype="int32")), np.ndarray)


def _argmax_by_loops(x, axes, last=False, fn=np.argmax):
    """Independent reference: loop over the kept positions and flatten each slice."""
    kept = [i for i in range(x.ndim) if i not in axes]
    out = np.zeros([x.shape[i] for i in kept], dtype="int64")
    for pos in itertools.product(*(range(x.shape[i]) for i in kept)):
        index = [slice(None)] * x.ndim
        for k, p in zip(kept, pos):
            index[k] = p
        flat = x[tuple(index)].ravel()
        out[pos] = flat.size - 1 - fn(flat[::-1]) if last else fn(flat)
    return out


@pytest.mark.parametrize("name, fn", [("argmax", np.argmax), ("argmin", np.argmin)])
@pytest.mark.parametrize("axes", [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1, 2)])
def test_arg_reductions_over_several_axes(name, fn, axes):
    x = np.random.default_rng(len(axes)).integers(0, 3, size=(2, 3, 4)).astype("float32")
    for last in (False, True):       # many ties: the tie-break matters
        got = run(name, x, axis=axes, select_last_index=last)
        assert got.dtype == np.int32
        assert got.tolist() == _argmax_by_loops(x, axes, last, fn).tolist()


def test_arg_reduce_keepdims_and_exclude():
    x = np.array([[1, 5, 5], [7, 0, 7]], dtype="int32")
    assert run("argmax", x, axis=(1,), keepdims=True).tolist() == [[1], [0]]
    assert run("argmax", x, axis=(1,), keepdims=True, select_last_index=True).tolist() == \
        [[2], [2]]
    assert run("argmin", x, axis=(1,), exclude=True).tolist() == [0, 1, 0]
    assert run("argmax", x).tolist() == 3              # flat index over every axis


@pytest.mark.parametrize("values, ddof", [
    ({"axis": (1,)}, 0),
    ({"axis": (1,), "unbiased": True}, 1),
    ({"axis": (0, 2), "keepdims": True}, 0),
    ({"axis": (1,), "exclude": True, "unbiased": True}, 1),
    ({}, 0),
])
def test_variance_against_numpy_var(values, ddof):
    axes = numpy_axes(values, 3)
    mean = X.mean(axis=axes, keepdims=True)
    got = run("variance", X, mean, **values)
    want = np.var(X.astype("float64"), axis=axes, ddof=ddof, keepdims=values.get("keepdims", False))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_integer_variance_truncates():
    x = np.array([[1, 2, 4]], dtype="int32")
    mean = np.array([[2]], dtype="int32")
    assert run("variance", x, mean, axis=(1,)).tolist() == [1]          # (1 + 0 + 4) / 3
    assert run("variance", x, mean, axis=(1,), unbiased=True).tolist() == [2]


# ---------------------------------------------------------------- kernel agrees with relation

def random_value(t: TensorType, rng: np.random.Generator) -> np.ndarray:
    dtype = np_dtype(t.dtype)
    if dtype == bool:
        return rng.random(t.shape) < 0.5
    if dtype.kind in "iu":
        return rng.integers(0 if dtype.kind == "u" else -9, 10, size=t.shape).astype(dtype)
    return rng.normal(size=t.shape).astype(dtype)


def _cases():
    for name in [*REDUCE, "argmax", "argmin"]:
        dtypes = ["bool"] if name in ("all", "any") else ["float32", "int32", "float16", "uint8"]
        for dtype in dtypes:
            for shape, values in [((2, 3, 4), v) for v in AXES] + [((0, 3), {"axis": (1,)}),
                                                                  ((5,), {})]:
                yield name, [T(shape, dtype)], values
        if name not in ("argmax", "argmin"):
            yield name, [T((), dtypes[0])], {}
    for values in AXES:
        yield "variance", [T((2, 3, 4)), T((2, 1, 4))], values
        yield "variance", [T((2, 3, 4), "float16"), T((1, 1, 1), "float16")], values
        yield "variance", [T((2, 3, 4), "int32"), T((1, 3, 1), "int32")], values


CASES = list(_cases())


def test_cases_cover_every_reduce_op():
    assert {name for name, _, _ in CASES} == set(REDUCE) | {"argmax", "argmin", "variance"}


@pytest.mark.parametrize("name, args, values", CASES,
                         ids=[f"{n}-{a[0].dtype}-{i}" for i, (n, a, _) in enumerate(CASES)])
def test_kernel_output_matches_relation(name, args, values):
    result = rel(name, *args, **values)
    rng = np.random.default_rng(len(name))
    out = get_op_def(name).kernel([random_value(a, rng) for a in args],
                                  attrs_for(name, **values))
    assert isinstance(out, np.ndarray)
    assert out.shape == result.shape
    assert out.dtype == np_dtype(result.dtype)
