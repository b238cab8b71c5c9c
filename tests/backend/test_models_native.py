"""The standard model families (relaylang.testing.models, small sizes) built natively:
the same values as the interpreter in float32 and float16, no NumPy fallback, and an
export -> load round trip giving identical outputs."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.testing.models import MODELS, example_inputs, get_workload

TOLERANCE = {"float32": dict(rtol=1e-4, atol=1e-5), "float16": dict(rtol=1e-2, atol=1e-2)}


def _interpreter(mod: rl.IRModule, params: dict, inputs: list) -> np.ndarray:
    return rl.create_executor(mod, params=params)(*inputs)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_runs_natively_like_the_interpreter(name: str, dtype: str,
                                                  tmp_path: Path) -> None:
    mod, params = get_workload(name, small=True, dtype=dtype)
    inputs = example_inputs(mod, params)
    lib = rl.build(mod, target="llvm", params=params)
    assert lib.mode == "graph" and lib.fallback_ops == []
    native = lib(*inputs)
    expected = _interpreter(mod, params, inputs)
    assert native.dtype == expected.dtype and native.shape == expected.shape
    np.testing.assert_allclose(native.astype("float64"), expected.astype("float64"),
                               **TOLERANCE[dtype])
    path = tmp_path / f"{name}.rlib"
    lib.export_library(str(path))
    loaded = rl.runtime.load_module(str(path))
    np.testing.assert_array_equal(loaded(*inputs), native)
