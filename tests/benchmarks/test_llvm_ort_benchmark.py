"""benchmarks/llvm.py's side-by-side rows against onnxruntime, on the two smallest
workloads (MLP b1 and MNIST) with --repeat 1: the rows exist and relaylang's outputs
matched ORT's. No timing is asserted."""
from __future__ import annotations

import json

import pytest
from bench_helpers import load_benchmark

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

bench = load_benchmark("llvm")


def test_smallest_workloads_match_onnxruntime(capsys: pytest.CaptureFixture[str]) -> None:
    status = bench.main(["--only", "ort-mlp,ort-mnist", "--repeat", "1", "--json"])
    out = capsys.readouterr().out
    rows = json.loads(out)
    assert status == 0, out
    by_name = {(r["name"], r["threads"]): r for r in rows}
    assert set(by_name) == {("mlp", 1), ("mnist", 1)}
    for r in rows:
        assert r["matched"], r
        assert r["baseline"] == "onnxruntime"
        assert r["relay_s"] > 0 and r["ort_s"] > 0
    assert by_name[("mlp", 1)]["numpy_s"] is not None      # also against direct NumPy
    assert by_name[("mnist", 1)]["gflops"] is not None     # conv workloads report GFLOPS


def test_threads_option_and_table(capsys: pytest.CaptureFixture[str]) -> None:
    status = bench.main(["--only", "ort-mlp", "--repeat", "1", "--threads", "1,2"])
    out = capsys.readouterr().out
    assert status == 0, out
    lines = [line.split() for line in out.splitlines() if line.startswith("mlp ")]
    assert [line[1] for line in lines] == ["1", "2"]


def test_workload_models_are_valid() -> None:
    import onnx
    ow = load_benchmark("onnx_workloads")
    for name in ("conv_bn_relu", "mobilenet", "mnist", "mlp", "gpt2"):
        w = ow.BUILDERS[name]()
        onnx.checker.check_model(w.model)
        assert w.feeds
