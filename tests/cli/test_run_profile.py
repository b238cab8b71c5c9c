"""`relay run --profile` / `--trace`: the table on stdout after the result, the trace
file, both targets, library files, and one-line errors for bad paths."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import relaylang as rl
from relaylang.cli import main
from relaylang.ir.timing import read_timing_table

MLP = """#[version = "0.0.5"]
def @main(%x: Tensor[(2, 16), float32], %w1: Tensor[(32, 16), float32],
          %w2: Tensor[(8, 32), float32], %w3: Tensor[(4, 8), float32]) {
  %0 = nn.relu(nn.dense(%x, %w1));
  %1 = nn.relu(nn.dense(%0, %w2));
  nn.dense(%1, %w3)
}
"""


@pytest.fixture
def model(tmp_path: Path) -> str:
    path = tmp_path / "mlp.relay"
    path.write_text(MLP)
    return str(path)


def _table_after_result(out: str) -> tuple[list[str], list[list[str]], list[str]]:
    """The profile table of `relay run --profile`'s stdout (after the result)."""
    start = re.search(r"\n(op|kernel) +calls", out).start()
    return read_timing_table(out[start:].split("\n\n")[0] + "\n")


@pytest.mark.parametrize("target", ["interp", "llvm"])
def test_profile_prints_table(model: str, target: str, tmp_path: Path, capsys: Any) -> None:
    trace = tmp_path / f"trace_{target}.json"
    status = main(["run", model, "--random-inputs", "--profile", "--target", target,
                   "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.startswith("[[")                       # the result first
    header, rows, totals = _table_after_result(out)
    assert header[0] == ("op" if target == "interp" else "kernel")
    assert "GFLOPS" in header and "shapes" in header
    if target == "interp":
        calls = {}
        for r in rows:
            calls[r[0]] = calls.get(r[0], 0) + int(r[1])
        assert calls == {"nn.dense": 3, "nn.relu": 2}
    else:
        assert len(rows) == 3 and int(totals[1]) == 3
    assert "measured:" in out and "overhead:" in out and "op kind" in out
    data = json.loads(trace.read_text())
    assert all({"name", "ph", "ts", "dur", "pid", "tid"} <= set(e) for e in data["traceEvents"])
    assert sum(e["ph"] == "X" and e.get("cat") != "run" for e in data["traceEvents"]) == \
        (5 if target == "interp" else 3)


def test_trace_implies_profile(model: str, tmp_path: Path, capsys: Any) -> None:
    trace = tmp_path / "t.json"
    assert main(["run", model, "--random-inputs", "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "total" in out and trace.exists()


def test_without_profile_no_table(model: str, capsys: Any) -> None:
    assert main(["run", model, "--random-inputs"]) == 0
    assert "GFLOPS" not in capsys.readouterr().out


def test_profile_library_file(model: str, tmp_path: Path, capsys: Any) -> None:
    lib = rl.build(rl.parse(MLP), target="llvm")
    path = tmp_path / "mlp.rlib"
    lib.export_library(str(path))
    x = tmp_path / "x.npy"
    np.save(x, np.ones((2, 16), "float32"))
    status = main(["run", str(path), "--random-inputs", "--input", f"x={x}", "--profile"])
    out, err = capsys.readouterr()
    assert status == 0, err
    _, rows, _ = _table_after_result(out)
    assert len(rows) == 3 and all(float(r[-1]) > 0 for r in rows)      # GFLOPS


@pytest.mark.parametrize("where", ["missing_folder", "folder"])
def test_unwritable_trace_is_one_line(model: str, tmp_path: Path, where: str,
                                      capsys: Any) -> None:
    trace = tmp_path / "no" / "such" / "t.json" if where == "missing_folder" else tmp_path
    status = main(["run", model, "--random-inputs", "--profile", "--trace", str(trace)])
    out, err = capsys.readouterr()
    assert status == 1
    assert out == ""                                   # refused before running
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{trace}: error: cannot write the trace")


def test_missing_file_is_one_line(tmp_path: Path, capsys: Any) -> None:
    missing = tmp_path / "missing.relay"
    status = main(["run", str(missing), "--profile"])
    _, err = capsys.readouterr()
    assert status == 1
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{missing}: error:")


def test_bad_input_under_profile_is_one_line(model: str, tmp_path: Path,
                                             capsys: Any) -> None:
    x = tmp_path / "x.npy"
    np.save(x, np.ones((3, 3), "float32"))
    status = main(["run", model, "--random-inputs", "--input", f"x={x}", "--profile"])
    _, err = capsys.readouterr()
    assert status == 1
    assert len(err.strip().splitlines()) == 1 and "error:" in err


def test_run_time_error_under_profile(tmp_path: Path, capsys: Any) -> None:
    path = tmp_path / "partial.relay"
    path.write_text('#[version = "0.0.5"]\n'
                    "type Opt {\n  Some(int32),\n  None,\n}\n\n"
                    "def @main(%x: int32) -> int32 {\n"
                    "  %0 = if (less(%x, 0)) { None } else { Some(%x) };\n"
                    "  match? (%0) {\n    Some(%y) => add(%y, 1),\n  }\n}\n")
    assert main(["run", str(path), "--input", "x=3", "--profile"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("4\n") and "add" in out
    assert main(["run", str(path), "--input", "x=-1", "--profile"]) == 1
    out, err = capsys.readouterr()
    assert out == "" and f"{path.name}:9:3: error" in err.replace(str(path), path.name)
