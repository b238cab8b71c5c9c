"""The native pool's dynamic chunks and its idle-spell behaviour
(relaylang/backend/native/native_pool.py): a parallel range is split into up to
`threads * CHUNKS_PER_THREAD` contiguous ranges claimed one at a time; every index runs
once, results equal serial runs; workers keep taking part after an idle spell (a
worker woken onto the dispatcher's CPU moves itself off it); several Python threads
may dispatch at once. No timing assertions: the pool's counters and the threads that
ran each range are checked."""
from __future__ import annotations

import ctypes
import os
import threading
import time

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.llvm.jit import aligned_empty, pointer_array
from relaylang.backend.native import native_pool, threads
from relaylang.backend.native.kernels import NativeCall

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(11)

pytestmark = pytest.mark.skipif(not native_pool.supported(),
                                reason="the native pool is Linux x86-64 only")

ROWS, COLS = 512, 1024


@pytest.fixture(scope="module")
def big_lib():
    return rl.build(rl.parse(HEAD + f"def @main(%x: Tensor[({ROWS}, {COLS}), float32]) "
                             "{ add(multiply(%x, 2f), 1f) }\n"), target="llvm")


@pytest.fixture(scope="module")
def dense_lib():
    """A constant-weight dense (its parallel loop: a few row blocks)."""
    w = RNG.standard_normal((64, 512), dtype=np.float32)
    lib = rl.build(rl.parse(HEAD + "def @main(%x: Tensor[(512, 512), float32], "
                            "%w: Tensor[(64, 512), float32]) { nn.dense(%x, %w) }\n"),
                   target="llvm", params={"w": w})
    return lib, w


class Recorder:
    """A kernel entry in Python (called through ctypes by the caller and the workers):
    records (begin, end, thread) of every range; each range may sleep (releasing the
    GIL and the CPU, so a worker always has time to take part)."""

    def __init__(self, pause: float = 0.0):
        self.pause = pause
        self.lock = threading.Lock()
        self.ranges: list[tuple[int, int, int]] = []
        self.entry = native_pool.ENTRY(self._run)
        self.address = ctypes.cast(self.entry, ctypes.c_void_p).value

    def _run(self, args, begin: int, end: int) -> int:
        if self.pause:
            time.sleep(self.pause)
        with self.lock:
            self.ranges.append((begin, end, threading.get_ident()))
        return 0

    def take(self) -> list[tuple[int, int, int]]:
        with self.lock:
            ranges, self.ranges = self.ranges, []
        return ranges


def _pool(monkeypatch, n: int) -> native_pool.NativePool:
    monkeypatch.setenv("RELAY_NUM_THREADS", str(n))
    pool = native_pool.get_native_pool()
    assert pool is not None and pool.size == n
    return pool


@pytest.fixture
def no_backoff():
    """Dispatches never back off (a loaded machine would make them run inline)."""
    pools = []

    def disable(pool):
        pools.append((pool, pool._words[native_pool.W_LATE]))
        pool._words[native_pool.W_LATE] = 2**62
        pool._words[native_pool.W_BACKOFF_UNTIL] = 0
    yield disable
    for pool, late in pools:
        pool._words[native_pool.W_LATE] = late


@pytest.mark.parametrize("n", [1, 2, 3])
def test_chunks_cover_every_index_once(monkeypatch, n):
    pool = _pool(monkeypatch, n)
    rec = Recorder()
    ptrs = (ctypes.c_void_p * 1)()
    chunks = n * threads.CHUNKS_PER_THREAD
    for extent in [0, 1, 2, 3, 5, 7, chunks - 1, chunks, chunks + 1, 2 * chunks + 3, 97, 1000]:
        before = pool.status()["dispatches"]
        assert pool.run(rec.address, ptrs, extent) == 0
        ranges = sorted((b, e) for b, e, _ in rec.take())
        if extent == 0:
            assert ranges in ([], [(0, 0)])
            continue
        # contiguous, disjoint, in order, all of [0, extent), none empty
        assert ranges[0][0] == 0 and ranges[-1][1] == extent
        assert all(b < e for b, e in ranges)
        assert all(ranges[i][1] == ranges[i + 1][0] for i in range(len(ranges) - 1))
        split = pool.status()["dispatches"] - before
        if n == 1 or extent < 2:
            assert ranges == [(0, extent)] and split == 0
        elif split:         # not run inline (the pool was not backing off)
            assert ranges == threads.split(extent, min(extent, chunks))


@pytest.mark.parametrize("n", ["1", "2", "3"])
def test_chunked_kernels_equal_serial_runs(big_lib, dense_lib, monkeypatch, n):
    monkeypatch.setenv("RELAY_NUM_THREADS", n)
    (call,) = [r for r in big_lib.graph.runners if isinstance(r, NativeCall)]
    x = np.ascontiguousarray(RNG.standard_normal((ROWS, COLS), dtype=np.float32))
    serial = aligned_empty(x.shape, x.dtype)
    assert call.kernel.run_range_status(pointer_array([x, serial]), 0, call.extent) == 0
    pool = native_pool.get_native_pool()
    per = x.size // call.extent
    for extent in (1, 2, 3, 5, 7, 9, 17, 63, ROWS - 1, call.extent):
        out = aligned_empty(x.shape, x.dtype)
        out[...] = np.nan
        assert pool.run(call.kernel.address, pointer_array([x, out]), extent) == 0
        done = min(extent, call.extent) * per
        np.testing.assert_array_equal(out.ravel()[:done], serial.ravel()[:done])
        assert np.isnan(out.ravel()[done:]).all()
    lib, w = dense_lib
    xd = RNG.standard_normal((512, 512), dtype=np.float32)
    monkeypatch.setenv("RELAY_NUM_THREADS", "1")
    alone = lib(xd)
    monkeypatch.setenv("RELAY_NUM_THREADS", n)
    for _ in range(3):
        assert lib(xd).tobytes() == alone.tobytes()         # bit-identical
    np.testing.assert_allclose(alone, xd @ w.T, rtol=1e-4, atol=1e-3)


def test_workers_take_part_after_an_idle_spell(monkeypatch, no_backoff):
    pool = _pool(monkeypatch, 2)
    no_backoff(pool)
    rec = Recorder(pause=0.002)
    ptrs = (ctypes.c_void_p * 1)()
    me = threading.get_ident()
    for _ in range(3):
        time.sleep(0.3)                     # the worker has gone to sleep on the futex
        before = pool.status()["worker_ranges"]
        for _ in range(3):
            assert pool.run(rec.address, ptrs, 64) == 0
        ranges = rec.take()
        assert sorted((b, e) for b, e, _ in ranges) == sorted(
            threads.split(64, 2 * threads.CHUNKS_PER_THREAD) * 3)
        by_workers = sum(1 for _, _, t in ranges if t != me)
        assert by_workers >= 1
        assert pool.status()["worker_ranges"] - before == by_workers


def test_native_kernels_use_the_worker_after_an_idle_spell(dense_lib, monkeypatch, no_backoff):
    pool = _pool(monkeypatch, 2)
    no_backoff(pool)
    lib, _ = dense_lib
    x = RNG.standard_normal((512, 512), dtype=np.float32)
    expected = lib(x)
    time.sleep(0.3)
    before = pool.status()
    for _ in range(20):
        np.testing.assert_array_equal(lib(x), expected)
    after = pool.status()
    assert after["dispatches"] - before["dispatches"] == 20
    assert after["worker_ranges"] > before["worker_ranges"]


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
                    reason="needs two CPUs")
def test_a_worker_on_the_dispatchers_cpu_moves_off(big_lib, monkeypatch, no_backoff):
    """The worker is made to spin on the dispatcher's CPU (both pinned there, then the
    worker may leave): a spinning worker is seldom moved by the scheduler, so it moves
    itself the next time it gets that CPU and sees a task (or the scheduler did move
    it, and it takes part from the other CPU)."""
    allowed = os.sched_getaffinity(0)
    cpu = min(allowed)
    pool = _pool(monkeypatch, 2)
    no_backoff(pool)
    assert pool._words[native_pool.W_NUDGE] == 1
    (worker,) = pool._threads
    (call,) = [r for r in big_lib.graph.runners if isinstance(r, NativeCall)]
    x = np.ascontiguousarray(RNG.standard_normal((ROWS, COLS), dtype=np.float32))
    out = aligned_empty(x.shape, x.dtype)
    ptrs = pointer_array([x, out])
    before = pool.status()["nudges"]
    try:
        os.sched_setaffinity(0, {cpu})                     # the dispatcher stays on `cpu`
        os.sched_setaffinity(worker.native_id, {cpu})      # the worker is put there too
        assert pool.run(call.kernel.address, ptrs, call.extent) == 0    # and kept awake
        os.sched_setaffinity(worker.native_id, allowed)    # it may leave now
        ranges = pool.status()["worker_ranges"]

        def off_the_cpu() -> bool:
            """It moved itself, or the scheduler moved it and it runs ranges there."""
            if pool.status()["nudges"] > before:
                return True
            with open(f"/proc/self/task/{worker.native_id}/stat") as f:
                where = int(f.read().rsplit(")", 1)[1].split()[36])
            return where != cpu and pool.status()["worker_ranges"] > ranges + 8

        deadline = time.monotonic() + 5
        while not off_the_cpu() and time.monotonic() < deadline:
            assert pool.run(call.kernel.address, ptrs, call.extent) == 0
        assert off_the_cpu()
        assert os.sched_getaffinity(worker.native_id) == allowed   # its mask restored
    finally:
        os.sched_setaffinity(0, allowed)
        os.sched_setaffinity(worker.native_id, allowed)
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_no_moving_with_more_threads_than_cpus(monkeypatch):
    pool = _pool(monkeypatch, len(os.sched_getaffinity(0)) + 1)
    assert pool._words[native_pool.W_NUDGE] == 0


def test_several_python_threads_dispatch_at_once(big_lib, dense_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    pool = native_pool.get_native_pool()
    lib, _ = dense_lib
    xs = [RNG.standard_normal((ROWS, COLS), dtype=np.float32) for _ in range(4)]
    ds = [RNG.standard_normal((512, 512), dtype=np.float32) for _ in range(4)]
    monkeypatch.setenv("RELAY_NUM_THREADS", "1")
    dense_expected = [lib(d) for d in ds]
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    pool = native_pool.get_native_pool()
    errors: list[BaseException] = []
    recorders = [Recorder() for _ in range(4)]

    def work(k: int) -> None:
        try:
            ptrs = (ctypes.c_void_p * 1)()
            for i in range(15):
                np.testing.assert_array_equal(big_lib(xs[k]), xs[k] * 2 + 1)
                assert lib(ds[k]).tobytes() == dense_expected[k].tobytes()
                assert pool.run(recorders[k].address, ptrs, 37 + i) == 0
                got = sorted((b, e) for b, e, _ in recorders[k].take())
                assert got[0][0] == 0 and got[-1][1] == 37 + i
                assert all(got[j][1] == got[j + 1][0] for j in range(len(got) - 1))
        except BaseException as e:  # noqa: BLE001 -- reported by the main thread
            errors.append(e)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join(60)
    assert not errors, errors[0]
    assert pool.status()["busy"] == 0
