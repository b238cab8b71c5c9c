"""The scatter family (scatter_elements, scatter_nd): the kernels against their relations
and a plain-loop reference (duplicates: the last update wins, reductions combine them
all), negative indices, clear errors for indices out of range, relation errors."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.types import TensorType

HEAD = '#[version = "0.0.5"]\n'
COMBINE = {"update": lambda x, u: u, "add": lambda x, u: x + u, "mul": lambda x, u: x * u,
           "min": np.minimum, "max": np.maximum}


def a(values, dtype="float32"):
    return np.array(values, dtype=dtype)


def ref_elements(data, idx, upd, axis=0, reduction="update"):
    """ONNX's ScatterElements, one update at a time in row-major order."""
    out = data.copy()
    axis %= data.ndim
    for pos in itertools.product(*map(range, idx.shape)):
        at = list(pos)
        at[axis] = int(idx[pos]) % data.shape[axis]
        out[tuple(at)] = COMBINE[reduction](out[tuple(at)], upd[pos])
    return out


def ref_nd(data, idx, upd, mode="update"):
    """TVM's scatter_nd: indices (M, Y...), updates (Y..., data.shape[M:])."""
    out = data.copy()
    m = idx.shape[0]
    for y in itertools.product(*map(range, idx.shape[1:])):
        at = tuple(int(idx[(p,) + y]) % data.shape[p] for p in range(m))
        out[at] = COMBINE[mode](out[at], upd[y])
    return out


rng = np.random.default_rng(0)
D = rng.standard_normal((3, 4)).astype("float32")
IDX = a([[1, 0, 2, 0], [0, -1, 1, 0]], "int64")
UPD = rng.standard_normal((2, 4)).astype("float32")
IDX1 = a([[3, -4], [1, 1], [0, 3]], "int32")
UPD1 = rng.standard_normal((3, 2)).astype("float32")
DI = rng.integers(-9, 9, (4, 3)).astype("int32")
ND_IDX = a([[0, 3, -1, 0]], "int64")               # M = 1, Y = (4,)
ND_UPD = rng.integers(-5, 5, (4, 3)).astype("int32")
ND_IDX2 = a([[[0, 2], [1, 2]], [[1, 0], [-1, 0]]], "int64")    # M = 2, Y = (2, 2)
ND_UPD2 = rng.standard_normal((2, 2)).astype("float32")

AGREEMENT = [
    *[("scatter_elements", [D, IDX, UPD], {"reduction": r},
       ref_elements(D, IDX, UPD, 0, r)) for r in ("update", "add", "mul", "min", "max")],
    ("scatter_elements", [D, IDX1, UPD1], {"axis": -1},
     ref_elements(D, IDX1, UPD1, 1)),
    ("scatter_elements", [D, IDX1, UPD1], {"axis": 1, "reduction": "add"},
     ref_elements(D, IDX1, UPD1, 1, "add")),
    ("scatter_elements", [D.astype("float16"), IDX, UPD.astype("float16")], {"reduction": "max"},
     ref_elements(D.astype("float16"), IDX, UPD.astype("float16"), 0, "max")),
    ("scatter_elements", [a([True, False, True], "bool"), a([2, 2], "int8"),
                          a([False, True], "bool")], {}, a([True, False, True], "bool")),
    ("scatter_elements", [D, np.zeros((0, 4), "int64"), np.zeros((0, 4), "float32")], {}, D),
    *[("scatter_nd", [DI, ND_IDX, ND_UPD], {"mode": r}, ref_nd(DI, ND_IDX, ND_UPD, r))
      for r in ("update", "add", "mul", "min", "max")],
    ("scatter_nd", [D, ND_IDX2, ND_UPD2], {}, ref_nd(D, ND_IDX2, ND_UPD2)),
    ("scatter_nd", [D, ND_IDX2, ND_UPD2], {"mode": "add"}, ref_nd(D, ND_IDX2, ND_UPD2, "add")),
    ("scatter_nd", [a([1, 2, 3, 4]), a([[1, 3]], "int32"), a([9, 10])], {},
     a([1, 9, 3, 10])),
]


@pytest.mark.parametrize("op, inputs, kw, expected", AGREEMENT,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation_and_reference(op, inputs, kw, expected):
    promised = rel(op, *[TensorType(tuple(x.shape), x.dtype.name) for x in inputs], **kw)
    out = run(op, *inputs, **kw)
    assert isinstance(promised, TensorType)
    assert tuple(promised.shape) == out.shape and promised.dtype == out.dtype.name
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(out.astype("float64"), expected.astype("float64"), rtol=1e-6)


def test_every_scatter_op_is_in_the_agreement_table():
    from relaylang.op import all_ops
    family = {d.name for d in all_ops() if d.package == "relaylang.op.scatter"}
    assert family == {c[0] for c in AGREEMENT} == {"scatter_elements", "scatter_nd"}


def test_the_last_duplicate_wins():
    out = run("scatter_elements", np.zeros((1, 5), "float32"), a([[1, 1]], "int64"),
              a([[1.1, 2.1]]), axis=1)
    np.testing.assert_array_equal(out, a([[0, 2.1, 0, 0, 0]]))


@pytest.mark.parametrize("bad", [3, -4, 100])
def test_indices_out_of_range_are_a_clear_error(bad):
    with pytest.raises(ValueError, match=f"index {bad} is out of range for an axis of size 3"):
        run("scatter_elements", D, a([[0, bad, 0, 0]], "int64"), UPD[:1])
    with pytest.raises(ValueError, match=f"index {bad} is out of range"):
        run("scatter_nd", D, a([[bad]], "int64"), UPD[:1])


def test_relation_errors():
    rel_error("scatter_elements", [T((3, 4)), T((2, 4)), T((2, 4))], "integer tensor", arg=1)
    rel_error("scatter_elements", [T((3, 4)), T((2,), "int32"), T((2,))], "rank of data", arg=1)
    rel_error("scatter_elements", [T((3, 4)), T((2, 4), "int32"), T((2, 3))],
              "shape of indices", arg=2)
    rel_error("scatter_elements", [T((3, 4)), T((2, 5), "int32"), T((2, 5))],
              "more than data", arg=1)
    rel_error("scatter_elements", [T((3, 4)), T((2, 4), "int32"), T((2, 4), "int32")],
              "dtype", arg=2)
    rel_error("scatter_elements", [T((3, 4)), T((2, 4), "int32"), T((2, 4))],
              "reduction must be one of", reduction="mean")
    rel_error("scatter_nd", [T((3, 4)), T((3, 2), "int32"), T((2,))], "address 3", arg=1)
    rel_error("scatter_nd", [T((3, 4)), T((1, 2), "int32"), T((2, 3))], "updates must have shape",
              arg=2)
    rel_error("scatter_nd", [T((3, 4)), T((1, 2), "int32"), T((2, 4))], "mode must be one of",
              mode="set")


def test_interpreter_and_text():
    mod = rl.parse(HEAD + "def @main(%d: Tensor[(3, 4), float32], %i: Tensor[(2, 4), int64], "
                   "%u: Tensor[(2, 4), float32], %j: Tensor[(2, 2, 2), int64], "
                   "%v: Tensor[(2, 2), float32]) {\n"
                   "  (scatter_elements(%d, %i, %u, reduction=\"add\"),\n"
                   "   scatter_nd(%d, %j, %v, mode=\"max\"))\n}\n")
    out = rl.evaluate(mod, D, IDX, UPD, ND_IDX2, ND_UPD2)
    np.testing.assert_allclose(out[0], ref_elements(D, IDX, UPD, 0, "add"), rtol=1e-6)
    np.testing.assert_allclose(out[1], ref_nd(D, ND_IDX2, ND_UPD2, "max"), rtol=1e-6)
