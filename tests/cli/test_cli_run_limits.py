"""`relay run` at the limits: endless recursion (`--max-depth`), random inputs too large
to make, random inputs outside an op's domain."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from relaylang.backend.params import InputSourceError, random_input
from relaylang.cli import main
from relaylang.ir.types import TensorType

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
Capture = pytest.CaptureFixture[str]


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_endless_recursion_is_a_located_error_at_max_depth(tmp_path: Path,
                                                           capsys: Capture) -> None:
    path = _write(tmp_path, "loop.relay", HEADER + (
        "def @loop(%n: int64) -> int64 {\n"
        "  add(%n, @loop(add(%n, 1i64)))\n"
        "}\n"
        "def @main() -> int64 { @loop(0i64) }\n"))
    assert main(["run", path, "--max-depth", "2000"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:11: error: recursion too deep: more than 2,000 calls pending in @loop" \
        in err
    assert "Traceback" not in err


def test_max_depth_must_be_a_positive_integer(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "one.relay", HEADER + "def @main() { 1f }\n")
    for bad in ("0", "-3", "many"):
        with pytest.raises(SystemExit) as info:
            main(["run", path, "--max-depth", bad])
        assert info.value.code == 2
    assert "--max-depth: expected a positive integer" in capsys.readouterr().err


def test_huge_random_input_is_a_located_error_not_an_internal_one(tmp_path: Path,
                                                                  capsys: Capture) -> None:
    path = _write(tmp_path, "huge.relay", HEADER + (
        "def @main(%x: Tensor[(1000000, 1000000, 8192), float32]) {\n  %x\n}\n"))
    assert main(["run", path, "--random-inputs"]) == 1
    err = capsys.readouterr().err
    # 8.19e15 float32 elements: 29.10 PiB (in float64 it would have been twice that)
    assert f"{path}:2:11: error: cannot make a random input for %x" in err
    assert "it needs 29.10 PiB" in err and "internal error" not in err


def test_random_input_is_made_in_its_dtype_and_bounded() -> None:
    rng = np.random.default_rng(0)
    for dtype in ("float16", "float32", "float64", "int8", "uint8", "int64", "bool"):
        array = random_input("x", TensorType((3, 4), dtype), rng)
        assert array.dtype == np.dtype(dtype) and array.shape == (3, 4)
    with pytest.raises(InputSourceError, match="it needs 4.00 KiB, more than the 1.00 KiB"):
        random_input("x", TensorType((1024,), "float32"), rng, max_bytes=1024)
    positive = random_input("v", TensorType((1000,), "float32"), rng, positive=True)
    assert positive.dtype == np.float32 and positive.min() >= 0.5


def test_random_batch_norm_variances_are_positive(capsys: Capture) -> None:
    # A random moving_var came out negative: sqrt(var + eps) made the whole result NaN.
    example = str(ROOT / "examples" / "conv_bn_relu.relay")
    for seed in ("0", "1", "2"):
        assert main(["run", example, "--random-inputs", "--seed", seed]) == 0
        out, err = capsys.readouterr()
        assert "nan" not in out and "NaN" not in err


def test_nan_result_from_random_inputs_is_warned_about(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "sqrt.relay", HEADER + (
        "def @main(%x: Tensor[(64), float32]) {\n  sqrt(%x)\n}\n"))
    assert main(["run", path, "--random-inputs"]) == 0
    assert f"{path}: warning: the result contains NaN" in capsys.readouterr().err
