"""The algorithm family (argsort, sort, topk, unique, argwhere): the kernels against
their relations and NumPy (stable orders, NaN largest, ties lower position first in both
directions), `?` lengths for unique and argwhere, relation errors, and the interpreter."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import TensorType, TupleType

HEAD = '#[version = "0.0.5"]\n'


def a(values, dtype="float32"):
    return np.array(values, dtype=dtype)


X = a([[3, 1, 2, 1, 5], [0, 0, -1, 7, 7]])
NAN = a([2.0, np.nan, -1.0, np.nan, 2.0, 0.0])
I8 = a([[4, -3, 4], [1, 1, 0]], "int8")
U64 = a([5, 18446744073709551615, 0, 5], "uint64")

# (op, inputs, attributes, expected value: an array, or a tuple of arrays)
AGREEMENT = [
    ("argsort", [X], {}, np.argsort(X, axis=-1, kind="stable").astype("int32")),
    ("argsort", [X], {"axis": 0, "dtype": "int64"}, np.argsort(X, axis=0, kind="stable")),
    ("argsort", [X], {"is_ascend": False}, a([[4, 0, 2, 1, 3], [3, 4, 0, 1, 2]], "int32")),
    ("argsort", [NAN], {}, a([2, 5, 0, 4, 1, 3], "int32")),
    ("argsort", [NAN], {"is_ascend": False}, a([1, 3, 0, 4, 5, 2], "int32")),
    ("argsort", [a([7.0])], {}, a([0], "int32")),
    ("argsort", [np.zeros((2, 0), "float32")], {}, np.zeros((2, 0), "int32")),
    ("sort", [X], {}, np.sort(X, axis=-1)),
    ("sort", [I8], {"axis": 0, "is_ascend": False}, a([[4, 1, 4], [1, -3, 0]], "int8")),
    ("sort", [NAN], {"is_ascend": False}, a([np.nan, np.nan, 2, 2, 0, -1])),
    ("sort", [U64], {}, np.sort(U64)),
    ("sort", [a([True, False, True], "bool")], {}, a([False, True, True], "bool")),
    ("topk", [X], {"k": 2}, (a([[5, 3], [7, 7]]), a([[4, 0], [3, 4]], "int32"))),
    ("topk", [X], {"k": 3, "is_ascend": True, "dtype": "int64"},
     (a([[1, 1, 2], [-1, 0, 0]]), a([[1, 3, 2], [2, 0, 1]], "int64"))),
    ("topk", [X], {"k": 1, "axis": 0, "ret_type": "values"}, a([[3, 1, 2, 7, 7]])),
    ("topk", [X], {"k": 2, "axis": -2, "ret_type": "indices"},
     a([[0, 0, 0, 1, 1], [1, 1, 1, 0, 0]], "int32")),
    ("topk", [NAN], {"k": 0}, (a([np.nan, np.nan, 2, 2, 0, -1]), a([1, 3, 0, 4, 5, 2], "int32"))),
    ("topk", [U64], {"k": 2}, (a([18446744073709551615, 5], "uint64"), a([1, 0], "int32"))),
    ("unique", [a([2, 1, 1, 3, 4, 3])], {},
     (a([1, 2, 3, 4]), a([1, 0, 3, 4], "int32"), a([1, 0, 0, 2, 3, 2], "int32"),
      a([4], "int32"))),
    ("unique", [a([2, 1, 1, 3, 4, 3])], {"sorted": False, "return_counts": True},
     (a([2, 1, 3, 4]), a([0, 1, 3, 4], "int32"), a([0, 1, 1, 2, 3, 2], "int32"),
      a([4], "int32"), a([1, 2, 2, 1], "int32"))),
    ("unique", [a([[1, 0, 0], [1, 0, 0], [2, 3, 4]], "int64")], {"axis": 0, "return_counts": True},
     (a([[1, 0, 0], [2, 3, 4]], "int64"), a([0, 2], "int32"), a([0, 0, 1], "int32"),
      a([2], "int32"), a([2, 1], "int32"))),
    ("unique", [a([[2, 1, 2], [0, 3, 0]])], {"axis": -1, "sorted": False},
     (a([[2, 1], [0, 3]]), a([0, 1], "int32"), a([0, 1, 0], "int32"), a([2], "int32"))),
    ("unique", [a([[5]], "int8")], {}, (a([5], "int8"), a([0], "int32"), a([0], "int32"),
                                       a([1], "int32"))),
    ("argwhere", [a([[0, 1], [2, 0]])], {}, a([[0, 1], [1, 0]], "int32")),
    ("argwhere", [a([True, False, True], "bool")], {}, a([[0], [2]], "int32")),
    ("argwhere", [np.zeros((2, 3), "int32")], {}, np.zeros((0, 2), "int32")),
]


def _type(x):
    return TensorType(tuple(x.shape), x.dtype.name)


def _agrees(promised, out, expected):
    assert isinstance(promised, TensorType)
    assert len(promised.shape) == out.ndim and promised.dtype == out.dtype.name
    for d, n in zip(promised.shape, out.shape):
        assert d is ANY or d == n, (promised, out.shape)
    assert out.dtype == expected.dtype and out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("op, inputs, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_numpy(op, inputs, kw, expected):
    promised = rel(op, *[_type(x) for x in inputs], **kw)
    out = run(op, *inputs, **kw)
    if isinstance(expected, tuple):
        assert isinstance(promised, TupleType) and isinstance(out, tuple)
        assert len(promised.fields) == len(out) == len(expected)
        for p, o, e in zip(promised.fields, out, expected):
            _agrees(p, o, e)
    else:
        _agrees(promised, out, expected)


def test_every_algorithm_op_is_in_the_agreement_table():
    from relaylang.op import all_ops
    family = {d.name for d in all_ops() if d.package == "relaylang.op.algorithm"}
    assert family == {c[0] for c in AGREEMENT} == {"argsort", "sort", "topk", "unique",
                                                   "argwhere"}


def eq(got, expected) -> bool:
    return rl.structural_equal(got, expected)


def test_relations():
    assert eq(rel("topk", T((3, 7)), k=2, axis=0), TupleType(
        (T((2, 7)), T((2, 7), "int32"))))
    assert eq(rel("topk", T((3, ANY)), k=2, ret_type="values"), T((3, 2)))
    assert eq(rel("topk", T((3, 7)), k=-1, ret_type="indices", dtype="int64"),
              T((3, 7), "int64"))
    assert eq(rel("argsort", T((ANY, 4), "int8"), axis=0), T((ANY, 4), "int32"))
    u = rel("unique", T((2, 3)), return_counts=True)
    assert eq(u, TupleType((T((ANY,)), T((ANY,), "int32"), T((6,), "int32"),
                            T((1,), "int32"), T((ANY,), "int32"))))
    assert eq(rel("unique", T((2, 3)), axis=1).fields[0], T((2, ANY)))
    assert eq(rel("argwhere", T((2, 3, 4), "bool")), T((ANY, 3), "int32"))
    assert eq(rel("argwhere", T(())), T((ANY, 0), "int32"))


def test_relation_errors():
    rel_error("topk", [T((3, 4))], "larger than the axis", arg=0, k=5)
    rel_error("topk", [T((3, 4))], "ret_type must be one of", k=1, ret_type="all")
    rel_error("topk", [T((3, 4))], "out of range", arg=0, axis=2)
    rel_error("argsort", [T(())], "rank 1 or more", arg=0)
    rel_error("argsort", [T((3,))], "integer dtype", dtype="float32")
    rel_error("sort", [T((3,))], "out of range", arg=0, axis=-2)
    rel_error("unique", [T(())], "rank 1 or more", arg=0, axis=0)


def test_kernel_refuses_k_beyond_the_axis():
    with pytest.raises(ValueError, match="larger than the axis"):
        run("topk", X, k=6)


def test_interpreter_and_text():
    mod = rl.parse(HEAD + "def @main(%x: Tensor[(2, 5), float32]) {\n"
                   "  %0 = topk(%x, k=2, dtype=\"int64\");\n"
                   "  (%0.0, %0.1, argsort(%x, is_ascend=False), sort(%x, axis=0),\n"
                   "   argwhere(%x), unique(%x, return_counts=True))\n}\n")
    mod = rl.transform.InferType()(mod)
    out = rl.evaluate(mod, X)
    np.testing.assert_array_equal(out[0], [[5, 3], [7, 7]])
    np.testing.assert_array_equal(out[1], [[4, 0], [3, 4]])
    np.testing.assert_array_equal(out[2], [[4, 0, 2, 1, 3], [3, 4, 0, 1, 2]])
    np.testing.assert_array_equal(out[3], np.sort(X, axis=0))
    np.testing.assert_array_equal(out[4], np.argwhere(X))
    np.testing.assert_array_equal(out[5][0], np.unique(X))
    np.testing.assert_array_equal(out[5][4], np.unique(X, return_counts=True)[1])
    assert "topk(%x, k=2" in rl.astext(mod)
