"""The importer's core: names, params, shapes, folding, errors."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper  # noqa: E402
from onnx_check import check_model, make_model  # noqa: E402

import relaylang as rl  # noqa: E402
from relaylang.frontend.onnx import OnnxImportError, UnsupportedOps, sanitize  # noqa: E402


def _add_relu(opset: int = 13):
    return make_model([helper.make_node("Add", ["input.1", "0"], ["t"], name="add1"),
                       helper.make_node("Relu", ["t"], ["out"], name="relu1")],
                      inputs={"input.1": (["N", 4], "float32")}, outputs=["out"],
                      initializers={"0": np.arange(4, dtype=np.float32)}, opset=opset)


def test_names_params_and_symbolic_dims() -> None:
    mod, params = rl.frontend.from_onnx(_add_relu())
    fn = mod["main"]
    assert [p.name_hint for p in fn.params] == ["input._1", "_0"]
    assert list(params) == ["_0"]
    text = rl.astext(mod)
    assert "Tensor[(?, 4), float32]" in text
    assert rl.structural_equal(rl.parse(text), mod)


def test_shape_fixes_dims_and_freeze_params_inlines_constants() -> None:
    mod, params = rl.frontend.from_onnx(_add_relu(), shape={"input.1": (2, 4)},
                                        freeze_params=True)
    assert params == {}
    assert [p.name_hint for p in mod["main"].params] == ["input._1"]
    x = np.full((2, 4), -1.5, np.float32)
    np.testing.assert_array_equal(rl.evaluate(mod, x), np.maximum(x + np.arange(4), 0))


def test_against_onnxruntime_on_both_backends() -> None:
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    check_model(_add_relu(), {"input.1": x})


@pytest.mark.parametrize("name,want", [("input.1", "input._1"), ("0", "_0"),
                                       ("conv1/7x7_s2", "conv1/7x7_s2"), ("a-b:c", "a_b_c"),
                                       ("", "_")])
def test_sanitize(name: str, want: str) -> None:
    assert sanitize(name) == want


def test_unsupported_ops_are_listed_together() -> None:
    model = make_model([helper.make_node("FancyOp", ["x"], ["y"], name="n1", domain="my"),
                        helper.make_node("OtherOp", ["y"], ["z"], name="n2", domain="my")],
                       inputs={"x": ((2,), "float32")}, outputs={"z": ((2,), "float32")})
    with pytest.raises(UnsupportedOps) as info:
        rl.frontend.from_onnx(model)
    message = str(info.value)
    assert "my.FancyOp (node n1" in message and "my.OtherOp (node n2" in message
    assert len(info.value.missing) == 2


def test_corrupt_and_missing_files(tmp_path) -> None:
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x00\x01garbage" * 10)
    with pytest.raises(OnnxImportError, match="not an ONNX model"):
        rl.frontend.from_onnx(str(bad))
    with pytest.raises(OnnxImportError, match="No such file"):
        rl.frontend.from_onnx(str(tmp_path / "missing.onnx"))


def test_shape_of_an_unknown_input_is_an_error() -> None:
    with pytest.raises(OnnxImportError, match="not an input of the model"):
        rl.frontend.from_onnx(_add_relu(), shape={"nope": (1, 4)})


def test_a_shape_chain_indexed_by_initializers_folds() -> None:
    """Shape -> Gather (indices an initializer) -> Concat -> Reshape becomes a static
    reshape; a node reading only initializers (a transposed weight) stays a call on the
    parameter."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "idx"], ["d"], axis=0),
             helper.make_node("Concat", ["d", "minus1"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["r"]),
             helper.make_node("Transpose", ["w"], ["wt"]),
             helper.make_node("MatMul", ["r", "wt"], ["y"])]
    model = make_model(nodes, inputs={"x": ((2, 3, 4), "float32")},
                       outputs={"y": ((2, 5), "float32")},
                       initializers={"idx": np.array([0], np.int64),
                                     "minus1": np.array([-1], np.int64),
                                     "w": np.ones((5, 12), np.float32)}, opset=13)
    mod, params = rl.frontend.from_onnx(model)
    text = rl.astext(mod)
    assert "shape_of" not in text and "newshape=[2, 12]" in text, text
    assert "transpose(%w" in text and set(params) == {"w"}, text
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    check_model(model, {"x": x})
