"""benchmarks/peak.py: the measured fp32 FMA peak behind llvm.py's "%peak" column. The
loop compiles for the host and runs from one and two threads; no timing is asserted
beyond a positive rate."""
from __future__ import annotations

import pytest
from bench_helpers import load_benchmark

peak = load_benchmark("peak")


def test_peak_is_measured_from_one_and_two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(peak, "ITERATIONS", 20_000)
    one = peak.peak_gflops(1, repeat=1)
    two = peak.peak_gflops(2, repeat=1)
    assert one > 0 and two > 0


def test_the_loop_has_independent_accumulators() -> None:
    ir = peak._ir(16)
    assert ir.count("@llvm.fma.v16f32(<16 x float> %a") == peak.ACCUMULATORS
