"""`relay run`: inputs, weights, random inputs, printing, saving, and every error path."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.params import InputSourceError, literal_array, random_input, split_input
from relaylang.cli import main
from relaylang.ir.types import TensorType

ROOT = Path(__file__).resolve().parents[2]
RECURSION = str(ROOT / "examples" / "recursion.relay")
MLP = str(ROOT / "examples" / "mlp.relay")
WEIGHTS = ("fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias")
HEADER = '#[version = "0.0.5"]\n'
PARTIAL_MATCH = HEADER + (
    "type Opt {\n"
    "  Some(int32),\n"
    "  None,\n"
    "}\n"
    "\n"
    "def @main(%x: int32) -> int32 {\n"
    "  %0 = if (less(%x, 0)) { None } else { Some(%x) };\n"
    "  match? (%0) {\n"
    "    Some(%y) => add(%y, 1),\n"
    "  }\n"
    "}\n")

Capture = pytest.CaptureFixture[str]


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def _run(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    status = main(["run", *argv])
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out, out.err


def _mlp_arrays(seed: int) -> dict[str, np.ndarray]:
    """What --random-inputs draws: one generator, parameters in order, standard normal
    drawn in the parameter's dtype (float32: never a float64 array as large)."""
    rng = np.random.default_rng(seed)
    fn = rl.parse(Path(MLP).read_text())["main"]
    shapes = {p.name_hint: tuple(int(d) for d in p.type_annotation.shape) for p in fn.params}
    return {name: rng.standard_normal(shape, dtype="float32") for name, shape in shapes.items()}


# ---------------------------------------------------------------- running


def test_recursion_prints_each_tuple_field(capsys: Capture) -> None:
    status, out, err = _run(capsys, RECURSION, "--input", "n=10")
    assert (status, out, err) == (0, "[0] = 3628800\n[1] = 55\n", "")


def test_input_names_may_be_spelled_as_printed_or_with_percent(capsys: Capture) -> None:
    assert _run(capsys, RECURSION, "--input", "%n1=12")[1] == "[0] = 479001600\n[1] = 78\n"


def test_mlp_with_random_inputs_is_reproducible(tmp_path: Path, capsys: Capture) -> None:
    out_file = str(tmp_path / "out.npy")
    status, out, _ = _run(capsys, MLP, "--random-inputs", "--seed", "0", "--output", out_file)
    assert status == 0
    expected = rl.evaluate(rl.parse(Path(MLP).read_text()), *_mlp_arrays(0).values())
    np.testing.assert_allclose(np.load(out_file), expected, rtol=1e-6)
    assert out == np.array2string(expected) + "\n"
    assert _run(capsys, MLP, "--random-inputs", "--seed", "0")[1] == out


def test_params_npz_binds_weights_and_input_npy_feeds_data(tmp_path: Path,
                                                          capsys: Capture) -> None:
    arrays = _mlp_arrays(3)
    npz, data, result = tmp_path / "w.npz", tmp_path / "data.npy", tmp_path / "r.npy"
    np.savez(npz, **{k: arrays[k] for k in WEIGHTS})
    np.save(data, arrays["data"])
    status, _, err = _run(capsys, MLP, "--params", str(npz), "--input", f"data={data}",
                          "--output", str(result))
    assert (status, err) == (0, "")
    expected = rl.evaluate(rl.parse(Path(MLP).read_text()), *arrays.values())
    np.testing.assert_allclose(np.load(result), expected, rtol=1e-6)


def test_literals_take_the_parameter_dtype(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "lit.relay", HEADER + (
        "def @main(%v: Tensor[(3), int64], %f: float32, %b: bool) {\n"
        "  (sum(%v), multiply(%f, 2f), logical_not(%b))\n}\n"))
    status, out, _ = _run(capsys, path, "--input", "v=[1, 2, 3]", "--input", "f=2.5",
                          "--input", "b=true")
    assert (status, out) == (0, "[0] = 6\n[1] = 5.\n[2] = False\n")


def test_arrays_are_summarised_unless_full(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "id.relay", HEADER + "def @main(%x: Tensor[(2000), int32]) { %x }\n")
    x = tmp_path / "x.npy"
    np.save(x, np.arange(2000, dtype="int32"))
    short = _run(capsys, path, "--input", f"x={x}")[1]
    assert short.startswith("[   0    1    2 ...") and "1999]" in short and "1000" not in short
    full = _run(capsys, path, "--input", f"x={x}", "--full")[1]
    assert "..." not in full and [int(t) for t in re.findall(r"\d+", full)] == list(range(2000))


def test_adt_results_print_by_constructor(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "adt.relay", PARTIAL_MATCH.replace(
        "def @main(%x: int32) -> int32 {", "def @main(%x: int32) {\n  (Some(%x), None)\n}\n"
        "def @unused(%x: int32) -> int32 {"))
    assert _run(capsys, path, "--input", "x=7")[1] == "[0] = Some(7)\n[1] = None\n"


def test_time_goes_to_stderr(capsys: Capture) -> None:
    status, out, err = _run(capsys, RECURSION, "--input", "n=3", "--time")
    assert status == 0 and out == "[0] = 6\n[1] = 6\n"
    assert re.fullmatch(r"time: \d+\.\d{3} ms\n", err)


def test_entry_option_runs_another_function(capsys: Capture) -> None:
    status, out, _ = _run(capsys, RECURSION, "--entry", "sum_to", "--input", "n2=4",
                          "--input", "acc=100")
    assert (status, out) == (0, "110\n")


# ---------------------------------------------------------------- errors


def test_missing_inputs_are_one_line_each(capsys: Capture) -> None:
    status, out, err = _run(capsys, MLP, "--input", "data=0")
    assert status == 1 and out == ""
    lines = err.splitlines()
    assert len(lines) == 4
    assert lines[0] == (f"{MLP}: error: no input for %fc1_weight: Tensor[(128, 784), float32] "
                        "(give --input fc1_weight=FILE.npy or fc1_weight=LITERAL, "
                        "or --random-inputs)")


def test_bad_literals(capsys: Capture) -> None:
    status, _, err = _run(capsys, RECURSION, "--input", "n=abc")
    assert status == 1
    assert err == (f"{RECURSION}: error: --input n: 'abc' is not a literal of dtype int32 "
                   "(expected a number, a boolean or a nested list)\n")
    assert "the value does not fit int32" in _run(capsys, RECURSION, "--input", "n=2.5")[2]
    assert "expected NAME=FILE.npy or NAME=LITERAL" in _run(capsys, RECURSION, "--input", "n")[2]


def test_unknown_and_repeated_input_names(capsys: Capture) -> None:
    status, _, err = _run(capsys, RECURSION, "--input", "m=1")
    assert status == 1 and err == (f"{RECURSION}: error: --input m: @main has no parameter %m "
                                   "(no such parameter; parameters: %n1)\n")
    status, _, err = _run(capsys, RECURSION, "--input", "n=1", "--input", "n1=2")
    assert status == 1 and "%n1 is given twice" in err


def test_input_bound_by_params_is_reported_as_such(tmp_path: Path, capsys: Capture) -> None:
    npz = tmp_path / "w.npz"
    np.savez(npz, **{k: v for k, v in _mlp_arrays(0).items() if k in WEIGHTS})
    status, _, err = _run(capsys, MLP, "--params", str(npz), "--input", "fc1_bias=0")
    assert status == 1 and "has no parameter %fc1_bias (bound by --params" in err


def test_npy_of_wrong_shape_or_dtype_and_missing_npy(tmp_path: Path, capsys: Capture) -> None:
    wrong_shape, wrong_dtype = tmp_path / "s.npy", tmp_path / "d.npy"
    np.save(wrong_shape, np.zeros((1, 28, 28), dtype="float32"))
    np.save(wrong_dtype, np.zeros((1, 1, 28, 28)))
    args = (MLP, "--random-inputs", "--input")
    status, _, err = _run(capsys, *args, f"data={wrong_shape}")
    assert status == 1 and err == (f"{MLP}: error: argument %data of @main: expected shape "
                                   "(1, 1, 28, 28), got (1, 28, 28)\n")
    status, _, err = _run(capsys, *args, f"data={wrong_dtype}")
    assert status == 1 and "expected dtype float32, got an array of float64" in err
    missing = str(tmp_path / "none.npy")
    status, _, err = _run(capsys, *args, f"data={missing}")
    assert status == 1
    assert err == f"{missing}: error: cannot read array: No such file or directory\n"


def test_params_errors(tmp_path: Path, capsys: Capture) -> None:
    arrays = _mlp_arrays(0)
    bad = tmp_path / "bad.npz"
    np.savez(bad, fc1_weight=arrays["fc1_weight"].T)
    status, _, err = _run(capsys, MLP, "--random-inputs", "--params", str(bad))
    assert status == 1 and err == (
        f"{bad}: error: BindParams(@main): parameter %fc1_weight has type "
        "Tensor[(128, 784), float32], but the array bound to it is Tensor[(784, 128), float32]\n")
    unknown = tmp_path / "unknown.npz"
    np.savez(unknown, fc3_weight=arrays["fc1_bias"])
    assert "no parameter %fc3_weight" in _run(capsys, MLP, "--params", str(unknown))[2]
    junk = _write(tmp_path, "junk.npz", "not an archive")
    status, _, err = _run(capsys, MLP, "--params", junk)
    assert status == 1 and err.startswith(f"{junk}: error: cannot read arrays: ")
    status, _, err = _run(capsys, MLP, "--params", str(tmp_path / "none.npz"))
    assert status == 1 and "No such file or directory" in err


def test_runtime_error_is_located(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "m.relay", PARTIAL_MATCH)
    assert _run(capsys, path, "--input", "x=3")[1] == "4\n"
    status, out, err = _run(capsys, path, "--input", "x=-3")
    assert status == 1 and out == ""
    assert err == (f"{path}:9:3: error: no clause of this match accepts the value None\n"
                   "  |\n9 |   match? (%0) {\n  |   ^^^^^^^^^^^^^\n")


def test_output_needs_a_tensor_and_a_writable_path(tmp_path: Path, capsys: Capture) -> None:
    target = str(tmp_path / "r.npy")
    status, out, err = _run(capsys, RECURSION, "--input", "n=3", "--output", target)
    assert status == 1 and out == "[0] = 6\n[1] = 6\n"
    assert err == (f"{target}: error: --output needs a tensor result; @main returned "
                   "a tuple of 2 values\n")
    unwritable = str(tmp_path / "no" / "r.npy")
    status, _, err = _run(capsys, RECURSION, "--entry", "factorial", "--input", "n=3",
                          "--output", unwritable)
    assert status == 1
    assert err == f"{unwritable}: error: cannot write file: No such file or directory\n"


def test_file_type_and_entry_errors(tmp_path: Path, capsys: Capture) -> None:
    missing = str(tmp_path / "nope.relay")
    assert _run(capsys, missing) == (
        1, "", f"{missing}: error: cannot read file: No such file or directory\n")
    bad_type = _write(tmp_path, "t.relay", HEADER + "def @main(%x: int32) { add(%x, 1f) }\n")
    status, _, err = _run(capsys, bad_type, "--input", "x=1")
    assert status == 1 and f"{bad_type}:2:" in err and "error:" in err and "|" in err
    status, _, err = _run(capsys, RECURSION, "--entry", "nope")
    assert status == 1 and err == (f"{RECURSION}: error: the module has no function @nope "
                                   "(functions: @factorial, @main, @sum_to)\n")


def test_random_inputs_need_known_tensor_shapes(tmp_path: Path, capsys: Capture) -> None:
    path = _write(tmp_path, "any.relay", HEADER + "def @main(%x: Tensor[(?), float32]) { %x }\n")
    status, _, err = _run(capsys, path, "--random-inputs")
    assert status == 1 and err == (f"{path}:2:11: error: cannot make a random input for %x of "
                                   "type Tensor[(?), float32]: its shape is not fully known\n")


def test_usage_errors_exit_2_and_no_traceback_from_the_command(tmp_path: Path) -> None:
    with pytest.raises(SystemExit) as info:
        main(["run"])
    assert info.value.code == 2
    result = subprocess.run([sys.executable, "-m", "relaylang", "run", RECURSION,
                             "--input", "n=[1,"], capture_output=True, text=True, check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "is not a literal of dtype int32" in result.stderr


# ---------------------------------------------------------------- params.py helpers


def test_random_input_kinds() -> None:
    rng = np.random.default_rng(0)
    ints = random_input("i", TensorType((1000,), "int8"), rng)
    assert ints.dtype == np.int8 and ints.min() == 0 and ints.max() == 9
    bools = random_input("b", TensorType((1000,), "bool"), rng)
    assert bools.dtype == np.bool_ and 0 < bools.sum() < 1000
    floats = random_input("f", TensorType((2, 3), "float16"), rng)
    assert floats.dtype == np.float16 and floats.shape == (2, 3)


def test_literal_conversion_refuses_lossy_values() -> None:
    assert literal_array("x", "[[1, 2], [3, 4]]", "float32").dtype == np.float32
    assert np.isnan(literal_array("x", "nan", "float32"))
    assert literal_array("x", "1", "bool").item() is True
    for text, dtype in [("300", "int8"), ("2", "bool"), ("-1", "uint8"), ("[1, [2]]", "int32"),
                        ("'s'", "float32"), ("2**3", "int32")]:
        with pytest.raises(InputSourceError):
            literal_array("x", text, dtype)
    assert split_input("%x = 3") == ("x", "3")


def test_top_k_prints_the_predicted_class(capsys) -> None:
    from pathlib import Path

    from relaylang.cli import main as relay_main
    root = Path(__file__).resolve().parents[2] / "examples"
    code = relay_main(["run", str(root / "digits_mlp.relay"), "--params",
                       str(root / "digits_mlp.npz"), "--input",
                       f"x={root / 'digits_sample.npy'}", "--top-k", "2"])
    assert code == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("top-2: 3 (0.99")


def test_top_k_needs_a_tensor_result(tmp_path, capsys) -> None:
    from relaylang.cli import main as relay_main
    path = tmp_path / "t.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main() { (1, 2) }\n')
    assert relay_main(["run", str(path), "--top-k", "1"]) == 1
    assert "--top-k needs a tensor result" in capsys.readouterr().err


def test_run_time_error_is_located(tmp_path, capsys) -> None:
    from relaylang.cli import main as relay_main
    path = tmp_path / "dz.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: int32) -> int32 {\n  %x / 0\n}\n')
    assert relay_main(["run", str(path), "--input", "x=1"]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:6: error: divide failed: integer division by zero" in err
    assert "Traceback" not in err
