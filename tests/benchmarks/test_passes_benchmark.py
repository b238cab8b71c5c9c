"""benchmarks/passes.py runs every registered pass end to end (tiny sizes)."""
from __future__ import annotations

import json

from bench_helpers import load_benchmark

passes = load_benchmark("passes")


def test_every_pass_runs_on_both_chain_shapes(capsys) -> None:
    assert passes.main(["--sizes", "50,200", "--repeat", "1", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    names = {r["pass"] for r in report["results"]}
    assert {"InferType", "ToANormalForm", "ToGraphNormalForm", "ToBasicBlockNormalForm",
            "ToCPS", "UnCPS"} <= names
    assert all(len(r["ms_per_10k"]) == 2 for r in report["results"])
