"""The LLVM lowering of sparse_to_dense against the interpreter: 0-D, 1-D and 2-D indices,
rows of fewer coordinates than the rank, repeated indices (the last wins), indices
outside the shape (ignored), scalar values, a default of another dtype, empty shapes."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, run_native

import relaylang as rl

HEAD = '#[version = "0.0.5"]\n'


def _program(params, body):
    return rl.parse(HEAD + f"def @main({', '.join(params)}) {{ {body} }}\n")


@pytest.mark.parametrize("dtype", ["float32", "int8", "float64", "int64"])
def test_sparse_to_dense(dtype: str) -> None:
    rows = np.array([[0, 0, 1], [1, 2, 3], [0, 0, 1], [5, 0, 0], [-1, 1, 1]], "int32")
    vals = np.array([1, 2, 3, 4, 5], dtype)
    mod = _program(["%i: Tensor[(5, 3), int32]", f"%v: Tensor[(5), {dtype}]",
                    f"%d: {dtype}"],
                   "(sparse_to_dense(%i, %v, %d, output_shape=[2, 3, 4]), "
                   "sparse_to_dense(%i, %v, %d, output_shape=[6, 3, 2]))")
    out = assert_matches_interpreter(mod, rows, vals, np.array(7, dtype))
    assert out[0][0, 0, 1] == 3 and out[0][1, 2, 3] == 2


def test_sparse_to_dense_shapes() -> None:
    mod = _program(["%a: int64", "%b: Tensor[(3), int32]", "%c: Tensor[(2, 1), int64]",
                    "%v: float32", "%w: Tensor[(3), float32]", "%d: int32"],
                   "(sparse_to_dense(%a, %v, %d, output_shape=[5]), "
                   "sparse_to_dense(%b, %w, %d, output_shape=[4, 2]), "
                   "sparse_to_dense(%c, %v, %d, output_shape=[3, 1, 2]), "
                   "sparse_to_dense(%a, %v, %d, output_shape=[1]), "
                   "sparse_to_dense(%b, %w, %d, output_shape=[0, 3]))")
    out = assert_matches_interpreter(mod, np.array(1, "int64"), np.array([3, 0, 3], "int32"),
                                     np.array([[2], [0]], "int64"), np.array(2.5, "float32"),
                                     np.array([1.0, 2.0, 3.0], "float32"), np.array(-1, "int32"))
    np.testing.assert_array_equal(out[0], [-1, 2.5, -1, -1, -1])
    np.testing.assert_array_equal(out[1][3], [3.0, 3.0])


def test_many_indices_run_the_numpy_kernel() -> None:
    from relaylang.backend.llvm.lower import NoLowering
    mod = _program(["%i: Tensor[(100), int32]", "%v: Tensor[(100), float32]", "%d: float32"],
                   "sparse_to_dense(%i, %v, %d, output_shape=[100])")
    with pytest.raises(NoLowering):
        run_native(mod, np.arange(100, dtype="int32"), np.ones(100, "float32"),
                   np.array(0, "float32"))
    lib = rl.build(mod, target="llvm", cache=False)
    np.testing.assert_array_equal(lib(np.arange(100, dtype="int32")[::-1].copy(),
                                      np.arange(100, dtype="float32"), np.array(0, "float32")),
                                  np.arange(100, dtype="float32")[::-1])
