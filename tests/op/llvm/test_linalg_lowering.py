"""The LLVM lowering of det (Gaussian elimination with partial pivoting, unrolled into
stages, in float64) against the interpreter (numpy.linalg.det): 1 x 1 to 9 x 9 matrices,
batches of several axes and of size 1, 0 x 0 matrices (1), singular matrices, a zero
first column, permutations (sign), rows needing every pivot swap, float32, float16 and
float64; empty batches and matrices beyond MAX_ORDER have no lowering."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module, run_native

import relaylang as rl
from relaylang.backend.llvm.lower import NoLowering, lower_primitive
from relaylang.op.linalg.llvm_lowering import MAX_ORDER

HEAD = '#[version = "0.0.5"]\n'


def _t(shape: tuple, dtype: str) -> str:
    return f"Tensor[({', '.join(map(str, shape))}{',' if len(shape) == 1 else ''}), {dtype}]"


def _det_program(shape: tuple, dtype: str) -> str:
    return HEAD + f"def @main(%x: {_t(shape, dtype)}) {{ det(%x) }}\n"


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64"])
@pytest.mark.parametrize("shape", [(1, 1), (2, 2), (3, 3), (5, 5), (4, 7, 7), (2, 1, 3, 3),
                                   (1, 9, 9), (2, 0, 0)], ids=str)
def test_det(shape: tuple, dtype: str) -> None:
    rng = np.random.default_rng(sum(shape))
    x = rng.standard_normal(shape).astype(dtype)
    rtol = {"float16": 2e-2, "float32": 1e-5, "float64": 1e-10}[dtype]
    assert_matches_interpreter(_det_program(shape, dtype), x, rtol=rtol, atol=rtol)


def test_det_special_matrices() -> None:
    singular = [[1, 2, 3], [2, 4, 6], [0, 1, 1]]
    zero_column = [[0, 1, 2], [0, 3, 4], [0, 5, 7]]
    odd_perm = np.eye(3)[[1, 0, 2]].tolist()
    cycle = np.eye(3)[[1, 2, 0]].tolist()
    growing = [[1, 0, 0], [2, 1, 0], [4, 3, 1]]        # the largest pivot is always below
    ties = [[1, 1, 0], [-1, 2, 1], [1, 0, 3]]          # |pivots| tie: the first is taken
    x = np.array([singular, zero_column, odd_perm, cycle, growing, ties], "float32")
    out = run_native(_det_program(x.shape, "float32"), x)
    np.testing.assert_allclose(out, np.linalg.det(x.astype(np.float64)), atol=1e-6)
    assert out[0] == 0 and out[1] == 0 and out[2] == -1 and out[3] == 1
    assert_matches_interpreter(_det_program(x.shape, "float32"), x, atol=1e-6)


def _assert_no_lowering(shape: tuple) -> None:
    fn = fused_module(_det_program(shape, "float32"))["main"].body.op
    assert isinstance(fn, rl.ir.expr.Function)
    with pytest.raises(NoLowering):
        lower_primitive(fn, "no_det")


def test_det_without_lowering() -> None:
    _assert_no_lowering((0, 3, 3))
    _assert_no_lowering((MAX_ORDER + 1, MAX_ORDER + 1))
