"""benchmarks/passes.py runs every registered pass end to end (tiny sizes)."""
from __future__ import annotations

import json

import pytest
from bench_helpers import load_benchmark

import relaylang as rl

passes = load_benchmark("passes")


def test_every_pass_runs_on_every_shape(capsys) -> None:
    assert passes.main(["--sizes", "50,200", "--repeat", "1", "--json", "--small"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {r["pass"] for r in report["results"]}
    assert {"InferType", "ToANormalForm", "ToGraphNormalForm", "ToBasicBlockNormalForm",
            "ToCPS", "UnCPS", "FuseOps"} <= names
    assert {r["shape"] for r in report["results"]} == {"graph", "let", "if", "tuple"}
    assert {r["shape"] for r in report["results"] if r["pass"] == passes.BASELINE} == \
        {"graph", "let", "if", "tuple"}
    for r in report["results"]:
        assert not r["timeout"], r
        assert len(r["us_per_node"]) == len(r["seconds"]) == 2
        assert r["ratio"] is not None or r["seconds"][0] == 0    # a pass with nothing to do
        assert r["nodes"][1] > r["nodes"][0] >= 50


def test_shapes_parse_and_type_check() -> None:
    for shape, text in passes.SHAPES.items():
        mod = rl.transform.InferType()(rl.parse(text(20)))
        assert mod["main"].checked_type is not None, shape


def test_selected_passes_and_shapes_and_the_budget(capsys) -> None:
    args = ["--sizes", "20,40", "--repeat", "1", "--no-o3", "--passes", "FuseOps",
            "--shapes", "let,tuple"]
    assert passes.main(args) == 0
    table = capsys.readouterr().out
    assert "FuseOps" in table and " let " in table and " tuple " in table
    assert "InferType" not in table and " graph " not in table


def test_a_run_over_budget_is_stopped_and_reported(monkeypatch) -> None:
    """A quadratic pass would take hours at 100k: `_timed` stops it, and the pass's row
    says so, the larger sizes skipped."""
    def spin() -> None:
        import time
        end = time.process_time() + 10
        while time.process_time() < end:
            pass
    with pytest.raises(passes._Timeout):
        passes._timed(spin, budget=0.05)
    real = passes.time_pass
    sizes_run = []

    def over_budget(name, text, typed, repeat, budget):
        if name == "FuseOps":
            sizes_run.append(len(text))
            raise passes._Timeout
        return real(name, text, typed, repeat, budget)
    monkeypatch.setattr(passes, "time_pass", over_budget)
    [row] = [r for r in passes.scaling(["FuseOps"], ["let"], [20, 40], 1, budget=60)
             if r["pass"] == "FuseOps"]
    assert row["timeout"] and not row["linear"] and row["seconds"] == []
    assert len(sizes_run) == 1
