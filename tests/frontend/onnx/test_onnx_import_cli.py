"""`relay import MODEL.onnx`: the program text, the weights (--params-out, --inline-params),
--shape and --opset, and one-line errors with exit status 1."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("onnx")

import onnx
from onnx import helper
from onnx_check import make_model

import relaylang as rl
from relaylang.cli import main


def _add_relu(opset: int = 13) -> onnx.ModelProto:
    return make_model([helper.make_node("Add", ["input.1", "w/0"], ["t"], name="add1"),
                       helper.make_node("Relu", ["t"], ["out"], name="relu1")],
                      inputs={"input.1": (["N", 4], "float32")}, outputs=["out"],
                      initializers={"w/0": np.array([0.5, -1.0, 2.0, 3.0], np.float32)},
                      opset=opset)


@pytest.fixture
def model_file(tmp_path: Path) -> Path:
    path = tmp_path / "add_relu.onnx"
    onnx.save(_add_relu(), str(path))
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["import", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_prints_the_program_and_notes_unwritten_weights(model_file, capsys) -> None:
    code, out, err = _run(capsys, str(model_file))
    assert code == 0
    mod = rl.parse(out)
    assert [p.name_hint for p in mod["main"].params] == ["input._1", "w/0"]
    assert "Tensor[(?, 4), float32]" in out
    assert "--params-out" in err and "1 weight(s)" in err and "error" not in err


def test_params_out_writes_an_archive_relay_run_reads(model_file, tmp_path, capsys) -> None:
    out_file, params_file = tmp_path / "m.relay", tmp_path / "m.npz"
    code, out, err = _run(capsys, str(model_file), "-o", str(out_file),
                          "--params-out", str(params_file), "--shape", "input.1=2,4")
    assert (code, out, err) == (0, "", "")
    text = out_file.read_text()
    assert "Tensor[(2, 4), float32]" in text
    saved = dict(np.load(params_file))
    assert list(saved) == ["w/0"]
    np.testing.assert_array_equal(saved["w/0"], [0.5, -1.0, 2.0, 3.0])
    # the archive binds by @main's parameter names: relay run --params
    x = np.array([[1, 2, 3, 4], [-9, 0, -9, 0]], np.float32)
    np.save(tmp_path / "x.npy", x)
    code = main(["run", str(out_file), "--params", str(params_file),
                 "--input", f"input._1={tmp_path / 'x.npy'}",
                 "--output", str(tmp_path / "y.npy")])
    capsys.readouterr()
    assert code == 0
    np.testing.assert_allclose(np.load(tmp_path / "y.npy"),
                               np.maximum(x + saved["w/0"], 0))
    # and relay build --params
    code = main(["build", str(out_file), "--params", str(params_file),
                 "-o", str(tmp_path / "m.rlib")])
    capsys.readouterr()
    assert code == 0 and (tmp_path / "m.rlib").exists()


def test_the_output_is_fmt_clean(model_file, tmp_path, capsys) -> None:
    for extra in ([], ["--inline-params"]):
        out_file = tmp_path / "m.relay"
        code, _, _ = _run(capsys, str(model_file), "-o", str(out_file), *extra)
        assert code == 0
        assert "/* ty=" not in out_file.read_text()
        assert main(["fmt", "--check", str(out_file)]) == 0
        assert capsys.readouterr().out == ""


def test_inline_params_makes_constants_in_a_metadata_section(model_file, capsys) -> None:
    code, out, err = _run(capsys, str(model_file), "--inline-params")
    assert (code, err) == (0, "")
    assert "#[metadata]" in out and "meta[relay.Constant]" in out
    mod = rl.parse(out)
    assert [p.name_hint for p in mod["main"].params] == ["input._1"]
    x = np.array([[1, 2, 3, 4]], np.float32)
    np.testing.assert_allclose(rl.evaluate(mod, x),
                               np.maximum(x + np.array([0.5, -1, 2, 3], np.float32), 0))


def test_params_out_and_inline_params_exclude_each_other(model_file, tmp_path) -> None:
    with pytest.raises(SystemExit) as e:
        main(["import", str(model_file), "--inline-params", "--params-out",
              str(tmp_path / "p.npz")])
    assert e.value.code == 2


def test_shape_with_unknown_dims_and_opset(model_file, capsys) -> None:
    code, out, _ = _run(capsys, str(model_file), "--shape", "input.1=?,4", "--opset", "14",
                        "--inline-params")
    assert code == 0 and "Tensor[(?, 4), float32]" in out
    code, out, _ = _run(capsys, str(model_file), "--shape", "input.1=-1,4", "--inline-params")
    assert code == 0 and "Tensor[(?, 4), float32]" in out


@pytest.mark.parametrize("spec", ["input.1", "=1,2", "input.1=1,x"])
def test_a_bad_shape_is_a_usage_error(model_file, capsys, spec) -> None:
    code, out, err = _run(capsys, str(model_file), "--shape", spec)
    assert code == 2 and out == ""
    assert err.startswith("relay import: error: --shape") and err.count("\n") == 1


def test_shape_of_an_unknown_input(model_file, capsys) -> None:
    code, out, err = _run(capsys, str(model_file), "--shape", "nope=1,4")
    assert code == 1 and out == ""
    assert err == f"{model_file}: error: --shape names 'nope', which is not an input of " \
                  "the model (inputs: input.1)\n"


def test_missing_file(tmp_path, capsys) -> None:
    path = tmp_path / "missing.onnx"
    code, out, err = _run(capsys, str(path))
    assert (code, out) == (1, "")
    assert err == f"{path}: error: cannot read file: No such file or directory\n"


@pytest.mark.parametrize("data", [b"\x00\x01garbage" * 10, b"", b"#[version]\nnot onnx"])
def test_corrupt_or_foreign_file(tmp_path, capsys, data) -> None:
    path = tmp_path / "bad.onnx"
    path.write_bytes(data)
    code, out, err = _run(capsys, str(path))
    assert (code, out) == (1, "")
    assert err.startswith(f"{path}: error: not an ONNX model") and err.count("\n") == 1
    assert "Traceback" not in err


def test_unsupported_ops_are_all_named_with_node_and_opset(tmp_path, capsys) -> None:
    model = make_model([helper.make_node("FancyOp", ["x"], ["y"], name="n1", domain="my"),
                        helper.make_node("Relu", ["y"], ["r"], name="relu"),
                        helper.make_node("OtherOp", ["r"], ["z"], name="n2", domain="my")],
                       inputs={"x": ((2,), "float32")}, outputs={"z": ((2,), "float32")},
                       opset=15)
    path = tmp_path / "unsupported.onnx"
    onnx.save(model, str(path))
    out_file = tmp_path / "out.relay"
    code, out, err = _run(capsys, str(path), "-o", str(out_file))
    assert (code, out) == (1, "")
    assert err.count("\n") == 1 and err.startswith(f"{path}: error: unsupported ONNX operator")
    assert "my.FancyOp (node n1, opset 15)" in err and "my.OtherOp (node n2, opset 15)" in err
    assert "Relu" not in err
    assert not out_file.exists()


def test_unwritable_output(model_file, tmp_path, capsys) -> None:
    code, _, err = _run(capsys, str(model_file), "-o", str(tmp_path / "no" / "m.relay"),
                        "--inline-params")
    assert code == 1 and "cannot write file" in err
