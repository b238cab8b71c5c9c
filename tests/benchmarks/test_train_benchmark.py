"""benchmarks/train.py (issue 20): one interleaved round of training examples/train_mlp.relay
on the LLVM backend and in PyTorch runs and reports comparable figures (skipped without
torch, a `bench` extra)."""
from __future__ import annotations

import json

import pytest
from bench_helpers import load_benchmark

pytest.importorskip("torch")
bench = load_benchmark("train")


def test_one_round_reports_both_loops(capsys: pytest.CaptureFixture[str]) -> None:
    assert bench.main(["--rounds", "1", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["steps_per_epoch"] == 40 and result["batch"] == 32
    assert result["relaylang_ms"][1] > 0 and result["torch_ms"][1] > 0
    assert result["ratio"] == pytest.approx(result["relaylang_ms"][1] / result["torch_ms"][1])
    # the same weights, data order and update: the two loops train the same model
    losses = result["last_loss"]
    assert losses["relaylang"] == pytest.approx(losses["torch"], rel=1e-3)
