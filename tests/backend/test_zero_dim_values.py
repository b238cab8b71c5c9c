"""0-d tensors stay 0-d through constants, kernels, the plan and library files (NumPy's
ascontiguousarray makes them 1-d; relaylang uses asarray(order="C"))."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl

HEAD = '#[version = "0.0.5"]\n'


@pytest.mark.parametrize("target", ["interp", "llvm"])
def test_a_scalar_constant_in_the_result_is_0_d(target: str, tmp_path) -> None:
    mod = rl.parse(HEAD + "def @main(%x: Tensor[(2), float32]) { (%x, 3f, transpose(4f)) }")
    x = np.ones(2, np.float32)
    out = rl.evaluate(mod, x, target=target)
    assert [np.asarray(o).shape for o in out] == [(2,), (), ()]
    if target == "llvm":
        lib = rl.build(mod, target="llvm")
        path = tmp_path / "m.rlib"
        lib.export_library(str(path))
        again = rl.runtime.load_module(str(path))(x)
        assert [np.asarray(o).shape for o in again] == [(2,), (), ()]
        assert float(again[1]) == 3.0
