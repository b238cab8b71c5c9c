"""Graph inputs the conversion needs at import (axes, sizes, scales fed at run time):
`NeedsInputValues` names them, `from_onnx(bind=...)` and `relay import --bind` make them
constants, and the conformance backend specialises per run on their values."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx
from onnx import helper
from onnx_check import make_model, run_onnxruntime

import relaylang as rl
from relaylang.cli import main
from relaylang.frontend.onnx import NeedsInputValues, OnnxImportError, from_onnx
from relaylang.frontend.onnx_backend import RelayBackend


def _reduce_sum(keepdims: int = 0) -> onnx.ModelProto:
    return make_model([helper.make_node("ReduceSum", ["x", "axes"], ["y"], name="sum1",
                                        keepdims=keepdims)],
                      inputs={"x": ((2, 3, 4), "float32"), "axes": ((1,), "int64")},
                      outputs={"y": (["d0", "d1", "d2"][:3 - (1 - keepdims)], "float32")},
                      opset=13)


def _x() -> np.ndarray:
    return np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 5.0


def test_a_run_time_axes_input_is_named() -> None:
    with pytest.raises(NeedsInputValues, match=r"ReduceSum node 'sum1': the axes input must "
                                               r"be known at import.*'axes'") as info:
        from_onnx(_reduce_sum())
    assert info.value.inputs == ["axes"] and info.value.node == "sum1"


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_bind_makes_the_input_a_constant(axis: int) -> None:
    mod, params = from_onnx(_reduce_sum(), bind={"axes": np.array([axis])})
    assert [p.name_hint for p in mod["main"].params] == ["x"] and params == {}
    got = rl.evaluate(mod, _x())
    np.testing.assert_allclose(got, _x().sum(axis=axis), rtol=1e-6)
    # the value's dtype follows the input's declaration; a scalar fits a (1,) input
    mod2, _ = from_onnx(_reduce_sum(), bind={"axes": np.int32(axis)})
    np.testing.assert_allclose(rl.evaluate(mod2, _x()), _x().sum(axis=axis), rtol=1e-6)


def test_bind_errors_name_the_input() -> None:
    with pytest.raises(OnnxImportError, match=r"bind= names 'nope', which is not an input "
                                              r"of the model \(inputs: x, axes\)"):
        from_onnx(_reduce_sum(), bind={"nope": [1]})
    with pytest.raises(OnnxImportError, match=r"bind= gives graph input 'axes' a value of "
                                              r"shape \(2,\); the input is declared \(1\)"):
        from_onnx(_reduce_sum(), bind={"axes": [0, 1]})


@pytest.mark.parametrize("target", ["interp", "llvm"])
def test_the_backend_specialises_per_value(target: str) -> None:
    model = _reduce_sum(keepdims=1)
    rep = RelayBackend.prepare(model, target=target)
    assert rep.executor is None and rep.bind_inputs == ["axes"]
    for axis in (0, 2, 0, -2):
        axes = np.array([axis], np.int64)
        (got,) = rep.run([_x(), axes])
        (want,) = run_onnxruntime(model, {"x": _x(), "axes": axes})
        np.testing.assert_allclose(got, want, rtol=1e-6)
        assert got.shape == want.shape
    assert len(rep.specialised) == 3            # 0, 2 and -2: the repeat is a cache hit


def test_a_shape_computed_from_a_bound_input_is_static() -> None:
    # Reshape's shape input fed at run time: bound, ONNX's inference types the output
    model = make_model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
                       inputs={"x": ((2, 6), "float32"), "shape": ((3,), "int64")},
                       outputs=["y"], opset=14)
    mod, _ = from_onnx(model, bind={"shape": np.array([3, -1, 2])})
    assert tuple(mod["main"].checked_type.ret_type.shape) == (3, 2, 2)
    x = np.arange(12, dtype=np.float32).reshape(2, 6)
    np.testing.assert_array_equal(rl.evaluate(mod, x), x.reshape(3, 2, 2))


def test_relay_import_bind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "sum.onnx"
    onnx.save(_reduce_sum(), str(path))
    assert main(["import", str(path)]) == 1
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1
    assert "computed from graph input(s) 'axes'" in err and "--bind" in err
    out_file = tmp_path / "sum.relay"
    assert main(["import", str(path), "--bind", "axes=1", "-o", str(out_file)]) == 0
    mod = rl.parse(out_file.read_text())
    np.testing.assert_allclose(rl.evaluate(mod, _x()), _x().sum(axis=1), rtol=1e-6)
    assert main(["import", str(path), "--bind", "axes=one"]) == 2
    assert "must be numbers" in capsys.readouterr().err
    assert main(["import", str(path), "--bind", "axis=1"]) == 1
    assert "--bind names 'axis', which is not an input" in capsys.readouterr().err
