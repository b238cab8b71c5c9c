"""Ranges per thread and the backoff of the native pool (native_pool.py): a split asks
for `threads * ranges_per_thread` ranges (a kernel whose every call repeats a prologue
asks for one per thread through its knob, schedule.PROLOGUE_RANGES_KNOB; step tables
carry the count per step); a late dispatch backs off for BACKOFF_FACTOR times its
excess wait, at most BACKOFF_US. No timing assertions beyond bounds that hold on any
machine: the ranges that ran, the pool's counters and words are checked."""
from __future__ import annotations

import ctypes
import threading
import time

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.llvm import knobs
from relaylang.backend.llvm.schedule import PROLOGUE_RANGES, PROLOGUE_RANGES_KNOB
from relaylang.backend.native import native_pool, threads
from relaylang.backend.native.kernels import NativeCall
from relaylang.backend.native.native_pool import StepTable

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(5)

pytestmark = pytest.mark.skipif(not native_pool.supported(),
                                reason="the native pool is Linux x86-64 only")


class Recorder:
    """A kernel entry in Python: records (begin, end, thread) of every range; a range
    sleeps `pause` seconds (with `only_workers`, only one a worker runs; one the calling
    thread runs sleeps `caller_pause` then)."""

    def __init__(self, pause: float = 0.0, only_workers: bool = False,
                 caller_pause: float = 0.0):
        self.pause = pause
        self.only_workers = only_workers
        self.caller_pause = caller_pause
        self.main = threading.get_ident()
        self.lock = threading.Lock()
        self.ranges: list[tuple[int, int, int]] = []
        self.entry = native_pool.ENTRY(self._run)
        self.address = ctypes.cast(self.entry, ctypes.c_void_p).value

    def _run(self, args, begin: int, end: int) -> int:
        me = threading.get_ident()
        if self.pause and (not self.only_workers or me != self.main):
            time.sleep(self.pause)
        elif self.caller_pause and me == self.main:
            time.sleep(self.caller_pause)
        with self.lock:
            self.ranges.append((begin, end, me))
        return 0

    def take(self) -> list[tuple[int, int, int]]:
        with self.lock:
            ranges, self.ranges = self.ranges, []
        return ranges


def _pool(monkeypatch, n: int) -> native_pool.NativePool:
    monkeypatch.setenv("RELAY_NUM_THREADS", str(n))
    pool = native_pool.get_native_pool()
    assert pool is not None and pool.size == n
    pool._words[native_pool.W_BACKOFF_UNTIL] = 0
    return pool


def _covered(ranges: list[tuple[int, int]], extent: int) -> bool:
    ranges = sorted(ranges)
    return (ranges[0][0] == 0 and ranges[-1][1] == extent and all(b < e for b, e in ranges)
            and all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1)))


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("per", [1, 2, 3])
def test_ranges_per_thread_split(monkeypatch, n, per):
    pool = _pool(monkeypatch, n)
    rec = Recorder()
    ptrs = (ctypes.c_void_p * 1)()
    for extent in [1, 2, 3, n * per - 1, n * per, n * per + 1, 56, 97]:
        if extent < 1:
            continue
        before = pool.status()["dispatches"]
        assert pool.run(rec.address, ptrs, extent, per) == 0
        ranges = [(b, e) for b, e, _ in rec.take()]
        assert _covered(ranges, extent)
        if pool.status()["dispatches"] - before:        # split, not inline
            assert sorted(ranges) == threads.split(extent, min(extent, n * per))
        else:
            assert ranges == [(0, extent)]


def test_huge_ranges_per_thread_are_clamped(monkeypatch):
    """More ranges per thread than the extent (or than fit in 64 bits with the thread
    count): one range per index, every index once."""
    pool = _pool(monkeypatch, 2)
    rec = Recorder()
    ptrs = (ctypes.c_void_p * 1)()
    for per in (5, 2**62, 2**63 - 1):
        for extent in (1, 2, 7):
            before = pool.status()["dispatches"]
            assert pool.run(rec.address, ptrs, extent, per) == 0
            ranges = sorted((b, e) for b, e, _ in rec.take())
            assert _covered(ranges, extent)
            if pool.status()["dispatches"] - before:
                assert ranges == [(i, i + 1) for i in range(extent)]


@pytest.mark.parametrize("per", [0, -3])
def test_native_ranges_per_thread_below_one_mean_the_pools_own(monkeypatch, per):
    """`relay_pool_run_ranges` with 0 (or a negative count) splits like `relay_pool_run`:
    the pool's CHUNKS_PER_THREAD ranges per thread (native programs pass 0 for a kernel
    without a prologue)."""
    pool = _pool(monkeypatch, 2)
    rec = Recorder()
    ptrs = (ctypes.c_void_p * 1)()
    for extent in (1, 5, 56):
        before = pool.status()["dispatches"]
        assert pool._run_ranges(pool.address, rec.address, ptrs, extent, per) == 0
        ranges = sorted((b, e) for b, e, _ in rec.take())
        assert _covered(ranges, extent)
        if pool.status()["dispatches"] - before:
            assert ranges == threads.split(extent, min(extent, 2 * threads.CHUNKS_PER_THREAD))


def test_ranges_per_thread_checked(monkeypatch):
    pool = _pool(monkeypatch, 2)
    rec = Recorder()
    ptrs = (ctypes.c_void_p * 1)()
    for bad in (-1, 1.5, None):
        with pytest.raises(ValueError, match="ranges per thread"):
            pool.run(rec.address, ptrs, 8, bad)
    assert rec.take() == []


class FakeCall:
    """What StepTable reads of a NativeCall, over a Recorder."""

    def __init__(self, rec: Recorder, extent: int, parallel: bool, per: int | None):
        self.kernel = rec            # `.address`
        self.params = [((1,), "float32")]
        self.extent = extent
        self.parallel = parallel
        if per is not None:
            self.ranges_per_thread = per

    def status(self, ptrs) -> int:
        return 0


def test_step_tables_carry_each_steps_ranges(monkeypatch):
    pool = _pool(monkeypatch, 2)
    recs = [Recorder() for _ in range(4)]
    calls = [FakeCall(recs[0], 40, True, 1), FakeCall(recs[1], 40, True, None),
             FakeCall(recs[2], 40, False, 1), FakeCall(recs[3], 40, True, 0)]
    arrays = [(ctypes.c_void_p * 1)() for _ in calls]
    table = StepTable(calls, arrays)
    default = threads.CHUNKS_PER_THREAD
    assert [table.steps[k].parallel for k in range(4)] == [1, default, 0, default]
    for _ in range(3):
        before = pool.status()
        assert table.run() == (0, -1)
        after = pool.status()
        got = [sorted((b, e) for b, e, _ in r.take()) for r in recs]
        for ranges in got:
            assert _covered(ranges, 40)
        assert got[2] == [(0, 40)]                       # serial
        if after["dispatches"] - before["dispatches"] == 3 and after["inline"] == before["inline"]:
            assert got[0] == threads.split(40, 2)
            assert got[1] == got[3] == threads.split(40, 2 * default)


def _shifted(cols: int = 64):
    """A kernel with a prologue: t = exp(x) (read shifted by one row, so it cannot share
    the parallel loop: every call computes it whole), then out[i, c] = sum_k t[(i + 1)
    % 80, k] * y[k, c] in parallel over rows. Scheduled under the knob settings in force,
    its knobs recorded as lower_primitive records them; -> (NativeCall, x, y, want)."""
    import dataclasses

    from relaylang.backend.llvm import loop_ir as L
    from relaylang.backend.llvm.jit import compile_kernels
    from relaylang.backend.llvm.schedule import schedule
    from relaylang.backend.llvm.te import LowerContext
    with knobs.lowering(f"test-shifted-{cols}") as chooser:
        b = LowerContext()
        x = b.placeholder((80, 90), "float32", "in0")
        y = b.placeholder((90, cols), "float32", "in1")
        t = b.materialize(b.compute(x.shape, lambda i, j: b.call("exp", x[i, j]), name="t"))
        k = b.reduce_axis(90, "k")
        out = b.compute((80, cols), lambda i, c: b.reduce_sum(
            t[(i + 1) % 80, k] * y[k, c], [k]), name="shifted")
        buf = L.Buffer("out0", out.shape, out.dtype)
        body, par = schedule(b, [out], [buf])
    prim = L.PrimFunc(f"shifted_{cols}", (x.buffer, y.buffer, buf), body, 2, par,
                      tuple(b.constants))
    prim = dataclasses.replace(prim, knobs=tuple(sorted(chooser.chosen.items())))
    kernel = compile_kernels([prim])[prim.name]
    xs = RNG.standard_normal((80, 90)).astype("float32") * 0.1
    ys = RNG.standard_normal((90, cols)).astype("float32")
    want = np.roll(np.exp(xs), -1, axis=0) @ ys
    return NativeCall(prim.name, kernel), xs, ys, want


def test_prologue_kernels_ask_their_ranges_per_thread(monkeypatch):
    call, x, y, want = _shifted()
    assert call.extent > 1
    assert (PROLOGUE_RANGES_KNOB, PROLOGUE_RANGES) in tuple(call.kernel.info.knobs)
    assert call.ranges_per_thread == PROLOGUE_RANGES == 1
    with knobs.using(knobs.Settings(every={PROLOGUE_RANGES_KNOB: 2})):
        two = _shifted()[0]
    assert two.ranges_per_thread == 2
    with knobs.using(knobs.Settings(every={PROLOGUE_RANGES_KNOB: 7})):     # not a choice
        assert _shifted()[0].ranges_per_thread == PROLOGUE_RANGES
    # no prologue: no such knob, the pool's default
    plain = rl.build(rl.parse(HEAD + "def @main(%x: Tensor[(300, 700), float32]) "
                              "{ exp(%x) }\n"), target="llvm")
    (other,) = [r for r in plain.graph.runners if isinstance(r, NativeCall)]
    assert PROLOGUE_RANGES_KNOB not in dict(other.kernel.info.knobs)
    assert other.ranges_per_thread == 0
    # through NativeCall.status: the pool gets the kernel's ranges per thread; every
    # split gives the serial bits
    seen = []
    real = native_pool.NativePool.run

    def spy(self, entry, ptrs, extent, ranges_per_thread=0):
        seen.append(ranges_per_thread)
        return real(self, entry, ptrs, extent, ranges_per_thread)
    monkeypatch.setattr(native_pool.NativePool, "run", spy)
    call.parallel = two.parallel = True          # split however small
    monkeypatch.setenv("RELAY_NUM_THREADS", "1")
    alone = call.call([x, y])[0]
    np.testing.assert_allclose(alone, want, rtol=1e-4, atol=1e-4)
    for n in ("2", "3"):
        monkeypatch.setenv("RELAY_NUM_THREADS", n)
        for c in (call, two):
            for _ in range(3):
                assert c.call([x, y])[0].tobytes() == alone.tobytes()
    assert set(seen) == {1, 2}


def test_prologue_kernels_in_a_step_table(monkeypatch):
    """A step table runs the kernel with its ranges per thread; a padded convolution
    (a prologue in the NCHW schedule) gives the interpreter's values at 1-3 threads."""
    call, x, y, want = _shifted(40)
    call.parallel = True
    arrays = [call.pointer_type() for _ in range(1)]
    out = np.empty((80, 40), "float32")
    arrays[0][0], arrays[0][1], arrays[0][2] = x.ctypes.data, y.ctypes.data, out.ctypes.data
    table = StepTable([call], arrays)
    assert table.steps[0].parallel == 1
    for n in ("1", "2", "3"):
        monkeypatch.setenv("RELAY_NUM_THREADS", n)
        out[...] = np.nan
        assert table.run() == (0, -1)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-4)
    from llvm_check import assert_matches_interpreter
    text = HEAD + ("def @main(%x: Tensor[(1, 24, 30, 30), float32], %w: Tensor[(32, 24, 3, 3), "
                   "float32]) { nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 0, 2, 1], "
                   "channels=32, kernel_size=[3, 3])) }\n")
    xc = RNG.standard_normal((1, 24, 30, 30)).astype("float32")
    wc = RNG.standard_normal((32, 24, 3, 3)).astype("float32")
    for n in ("1", "2", "3"):
        monkeypatch.setenv("RELAY_NUM_THREADS", n)
        assert_matches_interpreter(text, xc, wc, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("factor,caller,worker", [(2, 0.0005, 0.003), (8, 0.001, 0.03)])
def test_backoff_is_bounded_by_the_wait(monkeypatch, factor, caller, worker):
    """The caller's range sleeps `caller` seconds (so that a worker wakes and takes the
    other range), a worker's range `worker`: when a worker ran one the caller waited
    for it, the dispatch was late, and the pool backs off for at least
    min(BACKOFF_US, factor * (worker - 2 * caller)) and at most min(BACKOFF_US, factor
    * the call's duration) (a flat BACKOFF_US would break the upper bound of the first
    case on an idle machine)."""
    pool = _pool(monkeypatch, 2)
    funcs = native_pool.functions()
    words = pool._words
    tick = funcs.ticks_per_us
    cap = words[native_pool.W_BACKOFF]
    assert words[native_pool.W_BACKOFF_FACTOR] == native_pool.BACKOFF_FACTOR
    words[native_pool.W_BACKOFF_FACTOR] = factor
    rec = Recorder(pause=worker, only_workers=True, caller_pause=caller)
    ptrs = (ctypes.c_void_p * 1)()
    checked = 0
    try:
        for _ in range(10):
            words[native_pool.W_BACKOFF_UNTIL] = 0
            before = pool.status()
            t0, c0 = time.perf_counter(), funcs.tsc()
            assert pool.run(rec.address, ptrs, 2, 1) == 0
            c1, t1 = funcs.tsc(), time.perf_counter()
            ranges = rec.take()
            assert _covered([(b, e) for b, e, _ in ranges], 2)
            after = pool.status()
            if not any(t != rec.main for _, _, t in ranges):
                continue                # the caller ran both: nobody waited
            if after["late"] == before["late"]:
                continue                # the caller's range took as long (the GIL)
            until = words[native_pool.W_BACKOFF_UNTIL]
            low = min(cap, int(factor * (worker - 2 * caller) * 1e6 * tick * 0.9))
            high = min(cap, int(factor * (t1 - t0) * 1e6 * tick * 1.1) + 1)
            assert c0 + low <= until <= c1 + high
            checked += 1
            if checked == 3:
                break
    finally:
        words[native_pool.W_BACKOFF_UNTIL] = 0
        words[native_pool.W_BACKOFF_FACTOR] = native_pool.BACKOFF_FACTOR
    if not checked:
        pytest.skip("no worker took a range in time (a loaded machine)")


def test_ranges_per_thread_survive_export(tmp_path, monkeypatch):
    """A library file keeps each kernel's knobs, so a loaded library splits its kernels
    as the built one did (a padded convolution: one range per thread where its schedule
    has a prologue)."""
    text = HEAD + ("def @main(%x: Tensor[(1, 16, 14, 14), float32], %w: Tensor[(32, 16, 3, 3), "
                   "float32]) { nn.relu(nn.conv2d(%x, %w, strides=[2, 2], padding=[1, 1], "
                   "channels=32, kernel_size=[3, 3])) }\n")
    w = RNG.standard_normal((32, 16, 3, 3)).astype("float32")
    lib = rl.build(rl.parse(text), target="llvm", params={"w": w})
    path = tmp_path / "conv.relaylib"
    lib.export_library(str(path))
    loaded = rl.runtime.load_module(str(path))

    def ranges(library) -> list[tuple[str, int]]:
        return [(r.name, r.ranges_per_thread) for r in library.graph.runners
                if isinstance(r, NativeCall)]
    assert ranges(loaded) == ranges(lib)
    x = RNG.standard_normal((1, 16, 14, 14)).astype("float32")
    monkeypatch.setenv("RELAY_NUM_THREADS", "1")
    want = lib(x)
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    assert loaded(x).tobytes() == want.tobytes()
