"""The thread pool that runs a kernel's parallel loop on all cores.

A native kernel's entry takes a sub-range `[begin, end)` of its outermost parallel loop
(`Kernel.run_range`); a ctypes call releases the GIL for its whole duration, so N Python
threads each calling the entry on a slice of the range run the slices truly in parallel
with no Python in the hot loop. The pool is persistent (threads are started once, on
first use, and wait on their own queue), the calling thread runs the first slice itself,
and `RELAY_NUM_THREADS` sets the number of threads (default: the CPUs this process may
run on). One dispatch at a time: a second Python thread that dispatches while the pool
is busy runs its kernel on the whole range by itself instead of waiting.

Overhead (`python -m relaylang.backend.native.threads`, median of 9 batches of 500
dispatches of an empty C function over `[0, size)`, 2-CPU development machine, CPython
3.11): a plain ctypes call costs 0.26 µs; a dispatch over 2 threads costs about 7 µs
when the other CPU is idle (a lock release wakes the worker, it takes the GIL only to
start and end its slice), and 60-150 µs when other processes keep the CPUs busy (the
worker's wake-up waits for the scheduler). A `queue.SimpleQueue` handoff measured about
90 µs even on an idle CPU, so the workers wait on plain locks. A kernel is split only
when its operands hold at least `PARALLEL_MIN_BYTES` (1 MiB): a single core needs
about 50 µs just to stream that much memory, so the split cannot cost more than it
gains (at 256 KiB the MLP's 784x128 dense, ~2 µs of work, paid a 7-150 µs dispatch).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable

# A kernel is split over the pool only when its operands (inputs and outputs) hold at
# least this many bytes and its parallel loop has at least two iterations.
PARALLEL_MIN_BYTES = 1024 * 1024
# ... or when it executes at least this many stores (its `work`): about 0.1-0.5 ms of
# compute-bound work, such as MNIST's second convolution, whatever its operand bytes.
PARALLEL_MIN_WORK = 1_000_000


def num_threads() -> int:
    """`RELAY_NUM_THREADS` if set to a positive integer, else the CPUs available."""
    text = os.environ.get("RELAY_NUM_THREADS", "").strip()
    if text:
        try:
            value = int(text)
        except ValueError:
            value = 0
        if value >= 1:
            return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def split(extent: int, parts: int) -> list[tuple[int, int]]:
    """`[0, extent)` as at most `parts` contiguous non-empty ranges of near-equal size."""
    parts = max(1, min(parts, extent))
    base, extra = divmod(extent, parts)
    ranges, begin = [], 0
    for i in range(parts):
        end = begin + base + (1 if i < extra else 0)
        ranges.append((begin, end))
        begin = end
    return ranges


class _Worker:
    """A persistent thread woken by releasing `go`; it releases `done` when its slice ran."""

    __slots__ = ("done", "error", "go", "task")

    def __init__(self, name: str):
        self.go = threading.Lock()
        self.done = threading.Lock()
        self.go.acquire()
        self.done.acquire()
        self.task: tuple = ()
        self.error: BaseException | None = None
        threading.Thread(target=self._loop, daemon=True, name=name).start()

    def _loop(self) -> None:
        while True:
            self.go.acquire()
            fn, begin, end = self.task
            self.task = ()
            try:
                fn(begin, end)
            except BaseException as e:  # noqa: BLE001 -- handed to the dispatcher
                self.error = e
            self.done.release()


class ThreadPool:
    """`size` threads in all: the caller plus `size - 1` persistent daemon workers, each
    woken by a lock handoff (a lock release wakes a waiting thread in a few microseconds;
    a `queue.SimpleQueue` round trip measured ~90 µs here)."""

    def __init__(self, size: int):
        self.size = max(1, size)
        self._lock = threading.Lock()
        self._workers = [_Worker(f"relay-pool-{i + 1}") for i in range(self.size - 1)]

    def run(self, fn: Callable[[int, int], object], extent: int) -> None:
        """Call `fn(begin, end)` over a split of `[0, extent)`, in parallel, to completion;
        an exception of any slice is raised here (after every slice has finished)."""
        if self.size == 1 or extent < 2 or not self._lock.acquire(blocking=False):
            fn(0, extent)
            return
        try:
            ranges = split(extent, self.size)
            busy = self._workers[:len(ranges) - 1]
            for worker, (begin, end) in zip(busy, ranges[1:]):
                worker.task = (fn, begin, end)
                worker.go.release()
            error: BaseException | None = None
            try:
                fn(*ranges[0])
            except BaseException as e:  # noqa: BLE001 -- raised once the others finish
                error = e
            for worker in busy:
                worker.done.acquire()
                if worker.error is not None:
                    error, worker.error = error or worker.error, None
            if error is not None:
                raise error
        finally:
            self._lock.release()


_POOL: ThreadPool | None = None
_POOL_LOCK = threading.Lock()


def get_pool() -> ThreadPool:
    """The process's pool, sized by `num_threads()` (remade when RELAY_NUM_THREADS changes)."""
    global _POOL
    size = num_threads()
    pool = _POOL
    if pool is None or pool.size != size:
        with _POOL_LOCK:
            if _POOL is None or _POOL.size != size:
                _POOL = ThreadPool(size)     # an old pool's idle threads just stay asleep
            pool = _POOL
    return pool


def measure_overhead(calls: int = 500, batches: int = 9) -> dict[str, float]:
    """Microseconds per call (median of `batches` batches after a warm-up): a ctypes call
    of a C function doing nothing, and a pool dispatch of that call over `[0, size)`
    (the figures in this module's docstring)."""
    import ctypes
    import statistics
    import time
    libc = ctypes.CDLL(None)
    nothing = libc.labs        # a C function that returns at once; ctypes releases the GIL
    nothing.argtypes, nothing.restype = [ctypes.c_long], ctypes.c_long
    pool = get_pool()

    def body(begin: int, end: int) -> None:
        nothing(begin)

    def per_call(run: Callable[[], None]) -> float:
        times = []
        for _ in range(batches):
            start = time.perf_counter()
            for _ in range(calls):
                run()
            times.append((time.perf_counter() - start) / calls * 1e6)
        return statistics.median(times)

    for _ in range(200):                      # wake the threads, settle the scheduler
        pool.run(body, pool.size)
    direct = per_call(lambda: body(0, 1))
    pooled = per_call(lambda: pool.run(body, pool.size))
    return {"threads": pool.size, "direct_us": round(direct, 2), "pool_us": round(pooled, 2),
            "overhead_us": round(pooled - direct, 2)}


if __name__ == "__main__":
    print(measure_overhead())
