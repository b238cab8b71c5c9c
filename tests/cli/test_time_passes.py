"""Timing tables (issue 17, item 5): `relaylang.ir.timing` formats them; `relay opt
--time-passes` and `relay build --time` print them (the profiler will too).

Checked: every pass that ran has a row whose calls are how often it ran, times are
non-negative, rows are sorted longest first, and the totals row is the sum of the rows.
"""
from __future__ import annotations

import time
from pathlib import Path

import pytest

import relaylang as rl
from relaylang.cli import main
from relaylang.ir.timing import TimingRow, aggregate, read_timing_table, timing_table
from relaylang.transform.instruments import PassTimingInstrument
from relaylang.transform.pass_infra import PassContext, PassInfo, PassInstrument
from relaylang.transform.tvm_pipeline import default_pipeline

HEADER = '#[version = "0.0.5"]\n'
PROGRAM = HEADER + """def @main(%x: Tensor[(4, 4), float32], %w: Tensor[(4, 4), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = multiply(%0, 2f);
  %2 = add(%1, %1);
  nn.softmax(tanh(%2))
}
"""
COLUMNS = ["calls", "total ms", "mean ms", "share %"]


@pytest.fixture
def src(tmp_path: Path) -> str:
    path = tmp_path / "p.relay"
    path.write_text(PROGRAM)
    return str(path)


def _check_table(text: str, name_header: str) -> dict[str, tuple[int, float]]:
    """The rows of a timing table as name -> (calls, total ms), after checking what every
    table must hold."""
    header, rows, totals = read_timing_table(text)
    assert header == [name_header, *COLUMNS]
    assert totals[0] == "total" and len(totals) == 5
    found: dict[str, tuple[int, float]] = {}
    for name, calls, total, mean, share in rows:
        assert name not in found, f"{name} has two rows"
        assert int(calls) >= 1 and float(total) >= 0 and float(mean) >= 0
        assert float(mean) == pytest.approx(float(total) / int(calls), abs=1e-3)
        assert 0 <= float(share) <= 100
        found[name] = (int(calls), float(total))
    totals_ms = [ms for _, ms in found.values()]
    assert totals_ms == sorted(totals_ms, reverse=True)            # longest first
    assert int(totals[1]) == sum(calls for calls, _ in found.values())
    # each row is rounded to a microsecond: the sum may differ by that much per row
    assert float(totals[2]) == pytest.approx(sum(totals_ms), abs=1e-3 * (len(rows) + 1))
    if found and float(totals[2]) > 0:
        assert float(totals[4]) == 100.0
        assert sum(float(r[4]) for r in rows) == pytest.approx(100.0, abs=0.05 * len(rows))
    return found


# ---------------------------------------------------------------- the formatter


def test_table_rows_sorted_with_calls_means_shares_and_totals() -> None:
    rows = aggregate([("InferType", 0.004), ("FoldConstant", 0.012), ("InferType", 0.002),
                      ("FuseOps", 0.0)])
    text = timing_table(rows, name_header="pass")
    found = _check_table(text, "pass")
    assert list(found) == ["FoldConstant", "InferType", "FuseOps"]
    assert found["InferType"] == (2, 6.0) and found["FuseOps"] == (1, 0.0)
    _, table_rows, totals = read_timing_table(text)
    assert table_rows[1] == ["InferType", "2", "6.000", "3.000", "33.3"]
    assert totals == ["total", "4", "18.000", "4.500", "100.0"]


def test_table_extra_columns_measured_total_and_footer() -> None:
    rows = [TimingRow("fused_nn_conv2d_add", 2, 0.03, {"ops": "nn.conv2d, add",
                                                       "GFLOPS": "41.5"}),
            TimingRow("fused  softmax", 1, 0.01)]       # two spaces never reach a cell
    text = timing_table(rows, extra_headers=("ops", "GFLOPS"), total=0.05,
                        footer=["profiler overhead: 0.2 ms"])
    header, table_rows, totals = read_timing_table(text)
    assert header == ["name", *COLUMNS, "ops", "GFLOPS"]
    assert table_rows == [["fused_nn_conv2d_add", "2", "30.000", "15.000", "60.0",
                           "nn.conv2d, add", "41.5"],
                          ["fused softmax", "1", "10.000", "10.000", "20.0", "-", "-"]]
    assert totals == ["total", "3", "40.000", "13.333", "80.0"]   # shares of the total
    assert text.endswith("profiler overhead: 0.2 ms\n")


def test_an_empty_table_still_has_its_totals_row() -> None:
    _, rows, totals = read_timing_table(timing_table([], name_header="pass"))
    assert rows == [] and totals == ["total", "0", "0.000", "0.000", "0.0"]


def test_a_pass_run_inside_another_is_not_counted_twice() -> None:
    """FoldScaleAxis runs three passes inside its own run: the rows still add up to the
    time spent in passes, which the pipeline's wall time bounds."""
    mod = rl.parse(PROGRAM)
    timing = PassTimingInstrument()
    start = time.perf_counter()
    with PassContext(opt_level=3, instruments=[timing]):
        default_pipeline(3)(mod)
    wall = time.perf_counter() - start
    names = [name for name, _ in timing.timings]
    assert {"FoldScaleAxis", "BackwardFoldScaleAxis", "ForwardFoldScaleAxis"} <= set(names)
    assert all(t >= 0 for _, t in timing.timings)
    assert sum(t for _, t in timing.timings) <= wall
    found = _check_table(timing.report(), "pass")
    assert {name: calls for name, (calls, _) in found.items()} == \
        {name: names.count(name) for name in names}


# ---------------------------------------------------------------- relay opt --time-passes


class _Ran(PassInstrument):
    """Names of the passes that ran, as the instruments see them."""

    def __init__(self) -> None:
        self.names: list[str] = []

    def run_after_pass(self, mod: object, info: PassInfo) -> None:
        self.names.append(info.name)


def test_opt_time_passes_lists_every_pass_that_ran(src: str, capsys) -> None:
    ran = _Ran()
    with PassContext(opt_level=3, instruments=[ran]):
        default_pipeline(3)(rl.parse(PROGRAM))
    expected = {name: ran.names.count(name) for name in ran.names}
    assert main(["opt", src, "-O3", "--time-passes"]) == 0
    out, err = capsys.readouterr()
    assert "def @main" in out and "total ms" not in out
    found = _check_table(err, "pass")
    assert {name: calls for name, (calls, _) in found.items()} == expected
    assert found["InferType"][0] >= 2


def test_opt_time_passes_counts_repeated_passes(src: str, capsys) -> None:
    assert main(["opt", src, "-p", "InferType,FoldConstant,FoldConstant,SimplifyExpr",
                 "--time-passes", "--opt-level", "3", "--quiet"]) == 0
    found = _check_table(capsys.readouterr().err, "pass")
    assert {name: calls for name, (calls, _) in found.items()} == \
        {"InferType": 1, "FoldConstant": 2, "SimplifyExpr": 1}


# ---------------------------------------------------------------- relay build --time


def test_build_time_lists_phases_then_passes(src: str, tmp_path: Path, capsys) -> None:
    assert main(["build", src, "-o", str(tmp_path / "p.rlib"), "--time", "--no-cache"]) == 0
    err = capsys.readouterr().err
    phases_text, _, passes_text = err.partition("\n\n")
    phases = _check_table(phases_text, "phase")
    for phase in ("parse", "types", "passes", "lowering", "LLVM optimisation", "codegen",
                  "write"):
        assert phase in phases, phase
    assert phases["lowering"][0] == 2          # kernels' loop IR, then their LLVM IR
    passes = _check_table(passes_text, "pass")
    assert {"InferType", "FuseOps", "FoldConstant"} <= set(passes)
    # the passes ran inside the "passes" phase
    assert sum(ms for _, ms in passes.values()) <= phases["passes"][1] + 1e-3 * len(passes)


def test_build_without_time_prints_no_table(src: str, tmp_path: Path, capsys) -> None:
    assert main(["build", src, "-o", str(tmp_path / "p.rlib")]) == 0
    assert "total ms" not in capsys.readouterr().err
