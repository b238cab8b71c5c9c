"""benchmarks/byoc.py runs end to end on the small ResNet-50 (outputs of the blas and
onnxruntime builds checked against the plain LLVM build's; no timing is asserted)."""
from __future__ import annotations

import json

import pytest
from bench_helpers import load_benchmark

pytest.importorskip("onnxruntime")
bench = load_benchmark("byoc")


def test_small_run_checks_results_and_prints_a_row(capsys):
    assert bench.main(["--small", "--repeat", "1", "--block", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip().startswith("1 ")]
    assert len(rows) == 1 and "WRONG" not in rows[0]
    assert "blas regions" in rows[0] and "onnxruntime regions 1" in rows[0]


def test_json_output_has_the_ratios(capsys):
    assert bench.main(["--small", "--repeat", "1", "--block", "1", "--threads", "1",
                       "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    assert row["blas_ok"] and row["ort_ok"] and row["blas_regions"] >= 1
    assert row["blas_ratio"] > 0 and row["ort_ratio"] > 0
