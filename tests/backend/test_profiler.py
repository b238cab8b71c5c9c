"""`rl.profile`: the table's rows and counts, FLOPs, totals and overhead, the Chrome
trace, on both backends (interpreter; LLVM graph, mixed and program modes)."""
from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.profiler import (
    Profile,
    ProfileError,
    call_flops,
    function_flops,
    profile,
)
from relaylang.ir.timing import read_timing_table

HEADER = '#[version = "0.0.5"]\n'

MLP = HEADER + """
def @main(%x: Tensor[(4, 64), float32], %w1: Tensor[(128, 64), float32],
          %w2: Tensor[(32, 128), float32], %w3: Tensor[(10, 32), float32]) {
  %0 = nn.dense(%x, %w1);
  %1 = nn.relu(%0);
  %2 = nn.dense(%1, %w2);
  %3 = nn.relu(%2);
  nn.dense(%3, %w3)
}
"""
MLP_SHAPES = [(4, 64), (128, 64), (32, 128), (10, 32)]
# (2 * M * N * K) per dense
MLP_FLOPS = {(4, 128): 2 * 4 * 128 * 64, (4, 32): 2 * 4 * 32 * 128, (4, 10): 2 * 4 * 10 * 32}

CONV = HEADER + """
def @main(%x: Tensor[(1, 3, 16, 16), float32], %w1: Tensor[(8, 3, 3, 3), float32],
          %w2: Tensor[(8, 8, 3, 3), float32], %w3: Tensor[(10, 392), float32]) {
  %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1], channels=8, kernel_size=[3, 3]);
  %1 = nn.relu(%0);
  %2 = nn.conv2d(%1, %w2, channels=8, kernel_size=[3, 3]);
  %3 = nn.relu(%2);
  %4 = nn.max_pool2d(%3, pool_size=[2, 2], strides=[2, 2]);
  %5 = reshape(%4, newshape=[1, 392]);
  nn.dense(%5, %w3)
}
"""
CONV_SHAPES = [(1, 3, 16, 16), (8, 3, 3, 3), (8, 8, 3, 3), (10, 392)]

CONTROL = HEADER + """
def @main(%x: Tensor[(4, 64), float32], %w: Tensor[(16, 64), float32], %c: bool) {
  %0 = nn.relu(nn.dense(%x, %w));
  if (%c) { add(%0, 1f) } else { multiply(%0, 2f) }
}
"""


def _inputs(shapes: list[tuple[int, ...]], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype("float32") for s in shapes]


def _table(prof: Profile) -> tuple[list[str], list[dict[str, str]], list[str]]:
    header, rows, totals = read_timing_table(prof.table())
    return header, [dict(zip(header, r)) for r in rows], totals


def _footer_ms(prof: Profile) -> tuple[float, float]:
    """(measured total ms, ms in no row) as the footer states them."""
    text = prof.table()
    measured = float(re.search(r"measured: ([0-9.]+) ms", text).group(1))
    outside = float(re.search(r"overhead: (-?[0-9.]+) ms", text).group(1))
    return measured, outside


def _check_totals(prof: Profile) -> None:
    """The rows add up to the measured total within the stated overhead."""
    _, rows, totals = _table(prof)
    row_ms = sum(float(r["total ms"]) for r in rows)
    assert float(totals[2]) == pytest.approx(row_ms, abs=0.001 * len(rows) + 1e-9)
    measured, outside = _footer_ms(prof)
    assert row_ms + outside == pytest.approx(measured, abs=0.001 * (len(rows) + 2))
    assert prof.row_seconds <= prof.total + 1e-9
    assert prof.outside >= 0
    assert prof.total == pytest.approx(prof.row_seconds + prof.outside)
    assert prof.overhead_per_call >= 0
    assert prof.unprofiled > 0


def _check_trace(path: Path, prof: Profile) -> list[dict[str, Any]]:
    """The trace event schema: every event has name, ph, ts, dur, pid, tid; complete
    events are non-decreasing in ts per thread and lie inside their run."""
    data = json.loads(path.read_text())
    events = data["traceEvents"]
    assert events
    for e in events:
        assert {"name", "ph", "ts", "dur", "pid", "tid"} <= set(e), e
        assert isinstance(e["name"], str) and e["ph"] in ("X", "M")
        assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
        assert e["dur"] >= 0 and isinstance(e["pid"], int) and isinstance(e["tid"], int)
    last: dict[int, float] = {}
    for e in events:
        assert e["ts"] >= last.get(e["tid"], float("-inf"))
        last[e["tid"]] = e["ts"]
    complete = [e for e in events if e["ph"] == "X"]
    runs = [e for e in complete if e.get("cat") == "run"]
    calls = [e for e in complete if e.get("cat") != "run"]
    assert len(runs) == prof.repeat
    assert len(calls) == prof.calls
    for e in calls:
        assert any(r["ts"] <= e["ts"] and e["ts"] + e["dur"] <= r["ts"] + r["dur"] + 1e-3
                   for r in runs)
    return calls


# ---------------------------------------------------------------- FLOP counting

def test_call_flops_from_shapes_and_attrs() -> None:
    class A:
        def __init__(self, **kw: Any) -> None:
            self.__dict__.update(kw)
    assert call_flops("nn.dense", A(), [(4, 64), (128, 64)], (4, 128)) == 2 * 4 * 128 * 64
    assert call_flops("nn.matmul", A(transpose_a=True, transpose_b=False),
                      [(64, 4), (64, 128)], (4, 128)) == 2 * 4 * 128 * 64
    assert call_flops("nn.batch_matmul", A(transpose_a=False, transpose_b=True),
                      [(3, 4, 5), (3, 6, 5)], (3, 4, 6)) == 2 * 3 * 4 * 6 * 5
    # grouped (depthwise) conv2d, NCHW / OIHW: per output element Cin/groups*kh*kw MACs
    assert call_flops("nn.conv2d", A(kernel_layout="OIHW", groups=8),
                      [(1, 8, 10, 10), (8, 1, 3, 3)], (1, 8, 8, 8)) == 2 * 8 * 8 * 8 * 9
    # NHWC / HWIO
    assert call_flops("nn.conv2d", A(kernel_layout="HWIO"), [(1, 10, 10, 3), (3, 3, 3, 16)],
                      (1, 8, 8, 16)) == 2 * 8 * 8 * 16 * 27
    # transposed: each input element feeds Cout/groups*kh*kw outputs
    assert call_flops("nn.conv2d_transpose", A(kernel_layout="IOHW"),
                      [(1, 4, 5, 5), (4, 6, 3, 3)], (1, 6, 7, 7)) == 2 * 4 * 25 * 54
    assert call_flops("nn.relu", A(), [(4,)], (4,)) == 0
    assert call_flops("nn.dense", A(), [(4, 64), (128, 64)], None) == 0


def test_function_flops_sums_the_heavy_calls() -> None:
    typed = rl.transform.InferType()(rl.parse(MLP))
    assert function_flops(typed["main"]) == sum(MLP_FLOPS.values())


# ---------------------------------------------------------------- interpreter

def test_interpreter_mlp_rows_and_counts(tmp_path: Path, capsys: Any) -> None:
    args = _inputs(MLP_SHAPES)
    trace = tmp_path / "mlp.json"
    prof = rl.profile(rl.parse(MLP), *args, trace=str(trace))
    printed = capsys.readouterr().out
    assert prof.table() in printed and "op kind" in printed       # printed, with summary
    np.testing.assert_allclose(prof.result, rl.evaluate(rl.parse(MLP), *args), rtol=1e-5)
    header, rows, totals = _table(prof)
    assert header == ["op", "calls", "total ms", "mean ms", "share %", "shapes", "GFLOPS"]
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["op"]] = counts.get(r["op"], 0) + int(r["calls"])
    assert counts == {"nn.dense": 3, "nn.relu": 2}
    assert int(totals[1]) == 5 and prof.calls == 5
    # one row per op and shapes; the three dense layers differ in shapes
    assert sorted(r["shapes"] for r in rows if r["op"] == "nn.dense") == sorted(
        ["4x64, 128x64 -> 4x128", "4x128, 32x128 -> 4x32", "4x32, 10x32 -> 4x10"])
    for r in rows:
        if r["op"] == "nn.dense":
            assert float(r["GFLOPS"]) > 0
        else:
            assert r["GFLOPS"] == "-"
    for row in prof.rows:
        if row.name == "nn.dense":
            out = tuple(int(d) for d in row.shapes.split("-> ")[1].split("x"))
            assert row.flops == MLP_FLOPS[out]
            assert row.gflops == pytest.approx(row.flops / row.seconds / 1e9)
    # sorted by time, longest first
    assert [r.seconds for r in prof.rows] == sorted((r.seconds for r in prof.rows),
                                                    reverse=True)
    _check_totals(prof)
    calls = _check_trace(trace, prof)
    assert sorted(e["name"] for e in calls) == ["nn.dense"] * 3 + ["nn.relu"] * 2
    # the summary per op kind
    _, kinds, _ = read_timing_table(prof.summary())
    assert {k[0]: int(k[1]) for k in kinds} == {"nn.dense": 3, "nn.relu": 2}


def test_interpreter_conv_net() -> None:
    prof = profile(rl.parse(CONV), *_inputs(CONV_SHAPES), show=False)
    _, rows, _ = _table(prof)
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["op"]] = counts.get(r["op"], 0) + int(r["calls"])
    assert counts == {"nn.conv2d": 2, "nn.relu": 2, "nn.max_pool2d": 1, "reshape": 1,
                      "nn.dense": 1}
    flops = {r.shapes: r.flops for r in prof.rows if r.name == "nn.conv2d"}
    assert flops == {"1x3x16x16, 8x3x3x3 -> 1x8x16x16": 2 * 8 * 16 * 16 * 27,
                     "1x8x16x16, 8x8x3x3 -> 1x8x14x14": 2 * 8 * 14 * 14 * 72}
    assert all(float(r["GFLOPS"]) > 0 for r in rows if r["op"] in ("nn.conv2d", "nn.dense"))
    _check_totals(prof)


def test_repeat_adds_calls_up() -> None:
    prof = profile(rl.parse(MLP), *_inputs(MLP_SHAPES), show=False, repeat=3)
    assert prof.calls == 15 and prof.repeat == 3
    assert {r.name: r.calls for r in prof.rows if r.name == "nn.relu"} == {"nn.relu": 3}
    _check_totals(prof)
    with pytest.raises(ValueError):
        profile(rl.parse(MLP), *_inputs(MLP_SHAPES), show=False, repeat=0)


def test_dynamic_shapes_are_taken_per_call() -> None:
    mod = rl.parse(HEADER + "def @main(%x: Tensor[(?, 8), float32], %w: Tensor[(4, 8), "
                            "float32]) { nn.dense(nn.relu(%x), %w) }")
    x, w = _inputs([(5, 8), (4, 8)])
    prof = profile(mod, x, w, show=False)
    shapes = {r.name: r.shapes for r in prof.rows}
    assert shapes == {"nn.relu": "5x8 -> 5x8", "nn.dense": "5x8, 4x8 -> 5x4"}
    dense = next(r for r in prof.rows if r.name == "nn.dense")
    assert dense.flops == 2 * 5 * 4 * 8


def test_calls_inside_functions_and_loops_are_counted() -> None:
    mod = rl.parse(HEADER + """
def @step(%x: Tensor[(3), float32]) { add(%x, 1f) }
def @loop(%i: int32, %x: Tensor[(3), float32]) -> Tensor[(3), float32] {
  if (less(%i, 4)) { @loop(add(%i, 1), @step(%x)) } else { %x }
}
def @main(%x: Tensor[(3), float32]) { @loop(0, %x) }
""")
    # without a trace only sums are kept (no memory per call); with one, every call
    for keep in (False, True):
        prof = profile(mod, np.zeros(3, "float32"), show=False, keep_events=keep)
        counts = {}
        for r in prof.rows:
            counts[(r.name, r.shapes)] = r.calls
        assert counts[("add", "3, () -> 3")] == 4            # the tensor add, four times
        assert counts[("less", "(), () -> ()")] == 5
        assert counts[("add", "(), () -> ()")] == 4
        np.testing.assert_allclose(prof.result, np.full(3, 4.0))
        calls = [e for e in prof.events if e["ph"] == "X" and e["cat"] != "run"]
        assert len(calls) == (prof.calls if keep else 0)
        _check_totals(prof)


# ---------------------------------------------------------------- LLVM

def test_llvm_graph_kernels(tmp_path: Path) -> None:
    args = _inputs(MLP_SHAPES)
    lib = rl.build(rl.parse(MLP), target="llvm")
    assert lib.mode == "graph"
    trace = tmp_path / "mlp_llvm.json"
    prof = profile(lib, *args, trace=str(trace), show=False)
    np.testing.assert_allclose(prof.result, rl.evaluate(rl.parse(MLP), *args), rtol=1e-4,
                               atol=1e-4)
    header, rows, _ = _table(prof)
    assert header == ["kernel", "calls", "total ms", "mean ms", "share %", "ops", "shapes",
                      "GFLOPS"]
    # one row per plan step: three kernels, each holding one dense
    assert len(rows) == len(lib.graph.plan.steps) == 3
    assert all(int(r["calls"]) == 1 for r in rows)
    assert sorted(r["ops"] for r in rows) == ["nn.dense", "nn.dense, nn.relu",
                                              "nn.dense, nn.relu"]
    assert {r["kernel"] for r in rows} == set(lib.kernel_names)
    assert all(float(r["GFLOPS"]) > 0 for r in rows)
    assert sorted(r.flops for r in prof.rows) == sorted(MLP_FLOPS.values())
    _check_totals(prof)
    _check_trace(trace, prof)
    _, kinds, _ = read_timing_table(prof.summary())
    assert {k[0]: int(k[1]) for k in kinds} == {"nn.dense": 3}


def test_llvm_conv_net_by_module(tmp_path: Path) -> None:
    trace = tmp_path / "conv.json"
    prof = profile(rl.parse(CONV), *_inputs(CONV_SHAPES), target="llvm", show=False,
                   trace=str(trace))
    assert prof.backend == "llvm (graph mode)"
    ops = [row.ops for row in prof.rows]
    assert sum("nn.conv2d" in o for o in ops) == 2
    assert sum("nn.dense" in o for o in ops) == 1
    for row in prof.rows:
        heavy = "nn.conv2d" in row.ops or "nn.dense" in row.ops
        assert (row.gflops is not None and row.gflops > 0) == heavy
    # counted at build from the fused functions (before any weight packing)
    assert sorted(row.flops for row in prof.rows if row.flops) == sorted(
        [2 * 8 * 16 * 16 * 27, 2 * 8 * 14 * 14 * 72, 2 * 10 * 392])
    _check_totals(prof)
    _check_trace(trace, prof)


def test_llvm_flops_survive_export(tmp_path: Path) -> None:
    lib = rl.build(rl.parse(MLP), target="llvm")
    path = tmp_path / "mlp.rlib"
    lib.export_library(str(path))
    loaded = rl.runtime.load_module(str(path))
    prof = profile(loaded, *_inputs(MLP_SHAPES), show=False)
    assert sorted(r.flops for r in prof.rows) == sorted(MLP_FLOPS.values())


def test_llvm_mixed_mode(tmp_path: Path) -> None:
    x, w = _inputs([(4, 64), (16, 64)])
    lib = rl.build(rl.parse(CONTROL), target="llvm", max_depth=1000)
    assert lib.mode == "mixed"
    trace = tmp_path / "mixed.json"
    prof = profile(lib, x, w, np.array(True), show=False, trace=str(trace))
    expected = np.maximum(x @ w.T, 0) + 1
    np.testing.assert_allclose(prof.result, expected, rtol=1e-4, atol=1e-4)
    assert prof.backend == "llvm (mixed mode)"
    assert sorted(row.ops for row in prof.rows) == [("add",), ("nn.dense", "nn.relu")]
    assert all(row.calls == 1 for row in prof.rows)
    dense = next(row for row in prof.rows if "nn.dense" in row.ops)
    assert dense.flops == 2 * 4 * 16 * 64 and dense.gflops > 0
    assert dense.name in lib.kernel_names
    _check_totals(prof)
    _check_trace(trace, prof)


def test_llvm_program_mode_profiles_its_kernels() -> None:
    x, w = _inputs([(4, 64), (16, 64)])
    lib = rl.build(rl.parse(CONTROL), target="llvm")
    assert lib.mode == "program"
    prof = profile(lib, x, w, np.array(False), show=False)
    np.testing.assert_allclose(prof.result, np.maximum(x @ w.T, 0) * 2, rtol=1e-4,
                               atol=1e-4)
    assert sorted(row.ops for row in prof.rows) == [("multiply",), ("nn.dense", "nn.relu")]
    assert "program mode" in prof.table()
    _check_totals(prof)


# ---------------------------------------------------------------- API and errors

def test_public_name_and_errors(tmp_path: Path) -> None:
    assert rl.profile is profile
    with pytest.raises(TypeError, match="rl.profile expects"):
        profile("not a module", show=False)
    with pytest.raises(ValueError, match="runs natively"):
        profile(rl.build(rl.parse(MLP), target="llvm"), *_inputs(MLP_SHAPES),
                target="interp", show=False)
    with pytest.raises(ValueError, match="unknown target"):
        profile(rl.parse(MLP), *_inputs(MLP_SHAPES), target="cuda", show=False)
    prof = profile(rl.parse(MLP), *_inputs(MLP_SHAPES), show=False)
    with pytest.raises(ProfileError, match="kept only sums"):
        prof.write_trace(str(tmp_path / "t.json"))             # no events were kept
    prof = profile(rl.parse(MLP), *_inputs(MLP_SHAPES), show=False, keep_events=True)
    prof.to_chrome_trace(str(tmp_path / "t.json"))
    _check_trace(tmp_path / "t.json", prof)
    with pytest.raises(ProfileError, match="cannot write the trace"):
        prof.write_trace(str(tmp_path / "no" / "such" / "folder" / "t.json"))
    with pytest.raises(ProfileError, match="cannot write the trace"):
        prof.write_trace(str(tmp_path))
    from relaylang.backend.interpreter.executor import InputError
    with pytest.raises(InputError):
        profile(rl.parse(MLP), np.zeros((3, 3), "float32"), show=False)


def test_params_are_bound() -> None:
    x, w1, w2, w3 = _inputs(MLP_SHAPES)
    prof = profile(rl.parse(MLP), x, params={"w1": w1, "w2": w2, "w3": w3}, show=False)
    assert prof.calls == 5
    np.testing.assert_allclose(prof.result, rl.evaluate(rl.parse(MLP), x, w1, w2, w3),
                               rtol=1e-5)


def test_profiling_off_costs_nothing() -> None:
    """Unprofiled runs have no profiling branch: the interpreter's code calls the
    registry's kernels themselves, and neither run loop mentions the profiler."""
    from relaylang.backend.interpreter import machine
    from relaylang.backend.interpreter.compiler import OP1, OP2, OP2C, OPN
    from relaylang.backend.native import graph_runtime
    from relaylang.op.registry import get_op_def
    for source in (inspect.getsource(machine.Interpreter._loop),
                   inspect.getsource(graph_runtime.GraphRuntime._run)):
        assert "profil" not in source and "clock" not in source and "record" not in source
    ex = rl.create_executor(rl.parse(MLP))
    ex(*_inputs(MLP_SHAPES))
    unit = ex.interpreter._units[ex.mod["main"]]
    kernels = [ins[1] for ins in unit.code if ins[0] in (OP1, OP2, OP2C, OPN)]
    assert kernels and all(k is get_op_def(ins[3].op.name).kernel
                           for k, ins in zip(kernels, [i for i in unit.code
                                                       if i[0] in (OP1, OP2, OP2C, OPN)]))
