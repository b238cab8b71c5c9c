"""`relay build` and the native side of `relay run` (`--target llvm`, `relay run LIB`)."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from relaylang.cli import main
from relaylang.ir.timing import read_timing_table

ROOT = Path(__file__).resolve().parents[2]
MLP = str(ROOT / "examples" / "mlp.relay")
RECURSION = str(ROOT / "examples" / "recursion.relay")
HEADER = '#[version = "0.0.5"]\n'


def _run(capsys, *argv):
    status = main(list(argv))
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    return status, out.out, out.err


@pytest.fixture()
def mlp_files(tmp_path):
    rng = np.random.default_rng(0)
    weights = tmp_path / "w.npz"
    np.savez(weights, fc1_weight=rng.standard_normal((128, 784)).astype("float32") * 0.05,
             fc1_bias=np.zeros(128, "float32"),
             fc2_weight=rng.standard_normal((10, 128)).astype("float32") * 0.05,
             fc2_bias=np.zeros(10, "float32"))
    data = tmp_path / "x.npy"
    np.save(data, rng.standard_normal((1, 1, 28, 28)).astype("float32"))
    return str(weights), str(data)


def test_build_then_run_library(tmp_path, capsys, mlp_files):
    weights, data = mlp_files
    lib = str(tmp_path / "mlp.rlib")
    status, _, err = _run(capsys, "build", MLP, "--params", weights, "-o", lib)
    assert status == 0, err
    native, interp = tmp_path / "n.npy", tmp_path / "i.npy"
    status, text, err = _run(capsys, "run", lib, "--input", f"data={data}", "--output",
                             str(native))
    assert status == 0, err
    assert text.startswith("[[")
    status, _, err = _run(capsys, "run", MLP, "--params", weights, "--input",
                          f"data={data}", "--output", str(interp))
    assert status == 0, err
    np.testing.assert_allclose(np.load(native), np.load(interp), rtol=1e-4)


def test_run_target_llvm_same_flags(tmp_path, capsys, mlp_files):
    weights, data = mlp_files
    out_native, out_interp = tmp_path / "n.npy", tmp_path / "i.npy"
    status, text, err = _run(capsys, "run", MLP, "--params", weights, "--input",
                             f"data={data}", "--target", "llvm", "--time", "--top-k", "3",
                             "--output", str(out_native))
    assert status == 0, err
    assert "time:" in err and "top-3:" in text
    status, _, err = _run(capsys, "run", MLP, "--params", weights, "--input", f"data={data}",
                          "--output", str(out_interp))
    assert status == 0
    np.testing.assert_allclose(np.load(out_native), np.load(out_interp), rtol=1e-4)


def test_run_target_llvm_mixed_mode(capsys):
    status, native, err = _run(capsys, "run", RECURSION, "--input", "n=5", "--target", "llvm")
    assert status == 0, err
    status, interp, _ = _run(capsys, "run", RECURSION, "--input", "n=5")
    assert native == interp


def test_build_emit_and_time(tmp_path, capsys):
    src = tmp_path / "p.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(8), float32]) { exp(add(%x, %x)) }")
    for emit, check in (("ll", "define"), ("asm", "fused_")):
        out = tmp_path / f"p.{emit}"
        status, _, err = _run(capsys, "build", str(src), "-o", str(out), "--emit", emit)
        assert status == 0, err
        assert check in out.read_text()
    obj = tmp_path / "p.o"
    status, _, err = _run(capsys, "build", str(src), "-o", str(obj), "--emit", "obj",
                          "--time", "--no-cache")
    assert status == 0, err
    assert obj.read_bytes()[:4] == b"\x7fELF"
    _, rows, _ = read_timing_table(err)
    phases = [row[0] for row in rows]
    for phase in ("parse", "types", "passes", "lowering", "LLVM optimisation", "codegen"):
        assert phase in phases


def test_fallback_ops_warning(tmp_path, capsys):
    src = tmp_path / "p.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(1, 4, 3, 3), float32]) { nn.lrn(%x) }")
    status, _, err = _run(capsys, "build", str(src), "-o", str(tmp_path / "p.rlib"))
    assert status == 0
    from relaylang.backend.runtime import load_module
    if load_module(str(tmp_path / "p.rlib")).fallback_ops:
        assert "warning:" in err and "nn.lrn" in err


def test_bad_input_is_a_located_diagnostic(tmp_path, capsys):
    src = tmp_path / "bad.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(4), float32]) { add(%x, %y) }")
    status, _, err = _run(capsys, "build", str(src), "-o", str(tmp_path / "o.rlib"))
    assert status == 1 and "bad.relay:2:" in err
    src.write_text(HEADER + "def @main(%x: Tensor[(4), float32]) { add(%x, 1) }")
    status, _, err = _run(capsys, "build", str(src), "-o", str(tmp_path / "o.rlib"))
    assert status == 1 and "bad.relay:2:" in err       # a type error, located
    status, _, err = _run(capsys, "build", str(tmp_path / "none.relay"), "-o", "x")
    assert status == 1 and "cannot read file" in err
    src.write_text(HEADER + "def @main(%x: Tensor[(4), float32]) { %x }")
    status, _, err = _run(capsys, "build", str(src), "--entry", "other", "-o", "x")
    assert status == 1 and "no function @other" in err
    status, _, err = _run(capsys, "build", str(src), "--params", str(src), "-o", "x")
    assert status == 1 and "error:" in err


def test_run_library_errors(tmp_path, capsys):
    src = tmp_path / "p.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(4), float32]) { negative(%x) }")
    lib = str(tmp_path / "p.rlib")
    assert _run(capsys, "build", str(src), "-o", lib)[0] == 0
    status, out, err = _run(capsys, "run", lib, "--input", "x=[1, 2, 3, 4]")
    assert status == 0 and "-1." in out
    status, _, err = _run(capsys, "run", lib, "--input", "x=[1, 2, 3]")
    assert status == 1 and "expected shape (4), got (3,)" in err and len(err.strip().splitlines()) == 1
    status, _, err = _run(capsys, "run", lib)
    assert status == 1 and "no input for %x" in err
    status, _, err = _run(capsys, "run", lib, "--params", str(tmp_path / "w.npz"))
    assert status == 1 and "bound when it was built" in err
    junk = tmp_path / "junk.rlib"
    junk.write_bytes(b"PK\x03\x04 broken")
    status, _, err = _run(capsys, "run", str(junk))
    assert status == 1 and "junk.rlib: error:" in err


def test_run_time_error_is_located(tmp_path, capsys):
    src = tmp_path / "div.relay"
    src.write_text(HEADER + "def @main(%x: Tensor[(2), int32], %y: Tensor[(2), int32]) "
                   "{ floor_divide(%x, %y) }")
    status, _, err = _run(capsys, "run", str(src), "--input", "x=[1, 2]", "--input",
                          "y=[1, 0]", "--target", "llvm")
    assert status == 1 and "div.relay:2:" in err and "integer division by zero" in err


ENDLESS = HEADER + (
    "def @loop(%n: int64) -> int64 {\n"
    "  add(%n, @loop(add(%n, 1i64)))\n"
    "}\n"
    "def @main() -> int64 { @loop(0i64) }\n")


def test_endless_recursion_natively_is_a_located_error(tmp_path, capsys):
    src = tmp_path / "loop.relay"
    src.write_text(ENDLESS)
    status, _, err = _run(capsys, "run", str(src), "--target", "llvm")
    assert status == 1
    assert f"{src}:3:11: error: recursion too deep" in err and "@loop" in err
    assert "^^^" in err                                  # the source line, underlined
    # with --max-depth the interpreter's machine counts the calls, as without --target
    status, _, err = _run(capsys, "run", str(src), "--target", "llvm", "--max-depth", "2000")
    assert status == 1
    assert f"{src}:3:11: error: recursion too deep: more than 2,000 calls pending in @loop" \
        in err
    lib = str(tmp_path / "loop.rlib")
    assert _run(capsys, "build", str(src), "-o", lib)[0] == 0
    status, _, err = _run(capsys, "run", lib)
    assert status == 1 and f"{src}:3:11: error: recursion too deep" in err


def test_build_program_library_and_emits(tmp_path, capsys):
    lib = str(tmp_path / "rec.rlib")
    status, _, err = _run(capsys, "build", RECURSION, "-o", lib)
    assert status == 0 and "note:" not in err
    status, native, err = _run(capsys, "run", lib, "--input", "n=10")
    assert status == 0, err
    status, interp, _ = _run(capsys, "run", RECURSION, "--input", "n=10")
    assert native == interp
    for emit, check in (("ll", "define"), ("asm", "rl_")):
        out = tmp_path / f"rec.{emit}"
        status, _, err = _run(capsys, "build", RECURSION, "-o", str(out), "--emit", emit)
        assert status == 0, err
        assert check in out.read_text()
    obj = tmp_path / "rec.o"
    assert _run(capsys, "build", RECURSION, "-o", str(obj), "--emit", "obj")[0] == 0
    assert obj.read_bytes()[:4] == b"\x7fELF"


def test_build_mixed_mode_says_why(tmp_path, capsys):
    status, _, err = _run(capsys, "build", str(ROOT / "examples" / "closures.relay"), "-o",
                          str(tmp_path / "c.rlib"))
    assert status == 0 and "note:" in err and "mixed mode" in err
