"""LLVM lowerings of argsort, sort and topk against the interpreter (the NumPy kernels),
bit for bit: ties (stable, lower position first in both directions), NaN and -0.0,
negative axes, size-1, size-0 and odd sizes, per dtype. unique and argwhere have no
lowering (value-dependent shapes): the executor runs their NumPy kernels."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, run_native

from relaylang.op.registry import implementation

HEAD = '#[version = "0.0.5"]\n'
DTYPES = ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "uint64", "bool"]


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(0, 6, shape).astype(dtype)          # many ties
    if dtype.startswith("int"):
        return rng.integers(-3, 3, shape).astype(dtype)
    x = rng.integers(-3, 3, shape).astype(dtype) * 0.5
    if x.size > 4:
        flat = x.reshape(-1)
        flat[1], flat[3], flat[-1] = np.nan, -0.0, np.nan
    return x


def test_which_ops_are_lowered() -> None:
    for name in ("argsort", "sort", "topk"):
        assert implementation(name, "llvm") is not None, name
    for name in ("unique", "argwhere"):
        assert implementation(name, "llvm") is None, name


CALLS = [
    "argsort(%x)", "argsort(%x, axis=0, is_ascend=False)", "argsort(%x, axis=-2, dtype=\"int64\")",
    "sort(%x)", "sort(%x, axis=1, is_ascend=False)", "sort(%x, axis=-3)",
    "topk(%x, k=3)", "topk(%x, k=1, axis=0, is_ascend=True, dtype=\"int64\")",
    "topk(%x, k=2, axis=-2, ret_type=\"values\")", "topk(%x, k=7, ret_type=\"indices\")",
    "topk(%x, k=0, is_ascend=True)",
    "sort(%o)", "argsort(%o, axis=0)", "topk(%o, k=1)",
    "sort(%z, axis=1)", "argsort(%z)", "topk(%z, k=2, axis=-1)",
]


@pytest.mark.parametrize("dtype", DTYPES)
def test_sorting_ops(dtype: str) -> None:
    params = (f"%x: Tensor[(3, 5, 7), {dtype}], %o: Tensor[(1, 1), {dtype}], "
              f"%z: Tensor[(0, 3, 4), {dtype}]")
    rng = np.random.default_rng(7)
    args = [_values(s, dtype, rng) for s in [(3, 5, 7), (1, 1), (0, 3, 4)]]
    text = HEAD + f"def @main({params}) {{ ({', '.join(CALLS)}) }}\n"
    assert_matches_interpreter(text, *args, rtol=0)


def test_topk_of_ties_keeps_the_lower_index_first() -> None:
    text = HEAD + ("def @main(%x: Tensor[(2, 6), float32]) "
                   "{ (topk(%x, k=4), topk(%x, k=4, is_ascend=True)) }\n")
    x = np.array([[1, 2, 2, 1, 2, 0], [5, 5, 5, 5, 5, 5]], "float32")
    (v, i), (v2, i2) = run_native(text, x)
    np.testing.assert_array_equal(i, [[1, 2, 4, 0], [0, 1, 2, 3]])
    np.testing.assert_array_equal(v, [[2, 2, 2, 1], [5, 5, 5, 5]])
    np.testing.assert_array_equal(i2, [[5, 0, 3, 1], [0, 1, 2, 3]])
    np.testing.assert_array_equal(v2, [[0, 1, 1, 2], [5, 5, 5, 5]])


def test_long_axes_fall_back_to_numpy() -> None:
    from relaylang.op.algorithm.llvm_lowering import SORT_MAX
    n = SORT_MAX + 1
    text = HEAD + f"def @main(%x: Tensor[({n}), float32]) {{ argsort(%x) }}\n"
    import relaylang as rl
    x = np.random.default_rng(0).standard_normal(n).astype("float32")
    out = rl.evaluate(rl.parse(text), x, target="llvm")
    np.testing.assert_array_equal(out, np.argsort(x, kind="stable").astype("int32"))
