"""LLVM lowerings of scatter_elements and scatter_nd against the interpreter: every
reduction, duplicate and negative indices, indices smaller than data off the axis,
negative axes, size-1, size-0 and odd sizes, per dtype (exact except float sums and
products of several updates, whose order differs). Out-of-range indices: the NumPy
kernel raises, the native code never reads or writes outside a buffer and leaves the
element as it was."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, run_native

HEAD = '#[version = "0.0.5"]\n'
REDUCTIONS = ["update", "add", "mul", "min", "max"]


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(0, 5, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-4, 4, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "uint8",
                                   "int64"])
@pytest.mark.parametrize("itype", ["int32", "int64"])
def test_scatter_elements(dtype: str, itype: str) -> None:
    calls = []
    for r in REDUCTIONS:
        calls += [f'scatter_elements(%d, %i, %u, reduction="{r}")',
                  f'scatter_elements(%d, %j, %v, axis=-1, reduction="{r}")',
                  f'scatter_elements(%d, %k, %w, axis=1, reduction="{r}")']
    calls += ['scatter_elements(%o, %oi, %o)', 'scatter_elements(%z, %zi, %z)']
    params = (f"%d: Tensor[(5, 3, 7), {dtype}], %i: Tensor[(4, 3, 7), {itype}], "
              f"%u: Tensor[(4, 3, 7), {dtype}], %j: Tensor[(2, 1, 9), {itype}], "
              f"%v: Tensor[(2, 1, 9), {dtype}], %k: Tensor[(5, 2, 1), {itype}], "
              f"%w: Tensor[(5, 2, 1), {dtype}], %o: Tensor[(1), {dtype}], "
              f"%oi: Tensor[(1), {itype}], %z: Tensor[(0, 3), {dtype}], "
              f"%zi: Tensor[(0, 3), {itype}]")
    rng = np.random.default_rng(11)
    args = [_values((5, 3, 7), dtype, rng), rng.integers(-5, 5, (4, 3, 7)).astype(itype),
            _values((4, 3, 7), dtype, rng), rng.integers(-7, 7, (2, 1, 9)).astype(itype),
            _values((2, 1, 9), dtype, rng), rng.integers(-3, 3, (5, 2, 1)).astype(itype),
            _values((5, 2, 1), dtype, rng), _values((1,), dtype, rng),
            np.array([-1], itype), _values((0, 3), dtype, rng), np.zeros((0, 3), itype)]
    text = HEAD + f"def @main({params}) {{ ({', '.join(calls)}) }}\n"
    exact = not dtype.startswith("float")
    assert_matches_interpreter(text, *args, rtol=0 if exact else None,
                               atol=0 if exact else 1e-2 if dtype == "float16" else 1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int64", "bool"])
def test_scatter_nd(dtype: str) -> None:
    reductions = ["update"] if dtype == "bool" else REDUCTIONS
    calls = []
    for r in reductions:
        calls += [f'scatter_nd(%d, %i, %u, mode="{r}")',       # M = 1, Y = (6,)
                  f'scatter_nd(%d, %j, %v, mode="{r}")',       # M = 2, Y = (2, 3)
                  f'scatter_nd(%d, %k, %w, mode="{r}")']       # M = 3: elements
    calls += ['scatter_nd(%o, %oi, %o)', 'scatter_nd(%d, %zi, %zu)']
    params = (f"%d: Tensor[(4, 3, 5), {dtype}], %i: Tensor[(1, 6), int64], "
              f"%u: Tensor[(6, 3, 5), {dtype}], %j: Tensor[(2, 2, 3), int32], "
              f"%v: Tensor[(2, 3, 5), {dtype}], %k: Tensor[(3, 7), int64], "
              f"%w: Tensor[(7), {dtype}], %o: Tensor[(1), {dtype}], %oi: Tensor[(1, 1), int64], "
              f"%zi: Tensor[(1, 0), int64], %zu: Tensor[(0, 3, 5), {dtype}]")
    rng = np.random.default_rng(12)
    k = np.stack([rng.integers(-4, 4, 7), rng.integers(-3, 3, 7), rng.integers(-5, 5, 7)])
    args = [_values((4, 3, 5), dtype, rng), rng.integers(-4, 4, (1, 6)),
            _values((6, 3, 5), dtype, rng),
            np.stack([rng.integers(-4, 4, (2, 3)), rng.integers(-3, 3, (2, 3))]).astype("int32"),
            _values((2, 3, 5), dtype, rng), k, _values((7,), dtype, rng),
            _values((1,), dtype, rng), np.array([[0]]), np.zeros((1, 0), "int64"),
            _values((0, 3, 5), dtype, rng)]
    text = HEAD + f"def @main({params}) {{ ({', '.join(calls)}) }}\n"
    exact = not dtype.startswith("float")
    assert_matches_interpreter(text, *args, rtol=0 if exact else None,
                               atol=0 if exact else 1e-2 if dtype == "float16" else 1e-5)


def test_out_of_range_indices_touch_nothing_natively() -> None:
    text = HEAD + ("def @main(%d: Tensor[(3, 2), float32], %i: Tensor[(2, 2), int64], "
                   "%u: Tensor[(2, 2), float32], %n: Tensor[(1, 2), int64]) {\n"
                   "  (scatter_elements(%d, %i, %u), scatter_nd(%d, %n, %u, mode=\"add\"))\n}\n")
    d = np.zeros((3, 2), "float32")
    i = np.array([[1, 100], [-50, 2]])
    u = np.array([[1, 2], [3, 4]], "float32")
    n = np.array([[7, 0]])
    elements, nd = run_native(text, d, i, u, n)
    np.testing.assert_array_equal(elements, [[0, 0], [1, 0], [0, 4]])
    np.testing.assert_array_equal(nd, [[3, 4], [0, 0], [0, 0]])
