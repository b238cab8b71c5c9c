"""The thread pools that run a kernel's parallel loop on all cores, and when to use them.

A native kernel's entry takes a sub-range `[begin, end)` of its outermost parallel loop
(`Kernel.run_range`). `RELAY_NUM_THREADS` sets the number of threads (default: the CPUs
this process may run on); the calling thread runs a range itself. One dispatch at a
time: a second Python thread that dispatches while the pool is busy runs its kernel on
the whole range by itself instead of waiting.

Kernels go through the native pool (`native_pool.py`: workers living in native code,
spinning then sleeping on a futex, the dispatch and the waiting without Python). This
module's Python pool (persistent threads woken by a lock handoff, each calling the
entry through ctypes, which releases the GIL) is the fallback where there is no native
pool (off Linux x86-64, or when compiling it failed).

Overhead (`python -m relaylang.backend.native.threads`, median of 9 batches of 500
dispatches over `[0, size)` of a function doing nothing, 2-CPU KVM development machine,
CPython 3.11): a plain ctypes call costs 0.26-0.5 µs. The Python pool's dispatch over 2
threads cost about 7 µs when the other CPU was idle (a lock release wakes the worker,
it takes the GIL only to start and end its slice), 55-70 µs on the same machine on
another day, and 60-150 µs when other processes keep the CPUs busy (the worker's
wake-up waits for the OS scheduler); a `queue.SimpleQueue` handoff measured about 90 µs
even on an idle CPU. The native pool's dispatch costs 0.45-0.65 µs more than a direct
call of its empty kernel (0.96-1.17 against 0.51 µs): no wake-up when a worker spins,
and a range no worker has claimed yet is run by the caller, so a worker that is asleep
or descheduled when the task comes costs no waiting (one descheduled in the middle of
its range still does: hence `CHUNKS_PER_THREAD` small ranges per thread, claimed one at
a time, so that such a wait is for one small range, not for half of the work). MNIST per `lib(x)` on the idle machine, 2 threads: 255-280 µs
with the Python pool, 63-80 µs with the native one (1 thread: 110-123 µs).

Thresholds (the native pool, 2 threads, idle machine, serial vs split kernel time):
an elementwise `2x+1` over 32K float32 (256 KiB of operands) 3.4 -> 2.9 µs, over 16K
2.1 -> 2.3 µs; `exp` over 16K 6.8 -> 4.6 µs; MNIST's 2x2 max pool (17K stores)
7.1 -> 4.5 µs, its second 2x2 max pool (4.8K stores) 1.7 -> 1.9 µs; the MLP's 784x128
dense (100K) 5.6 -> 3.8 µs; MNIST's first convolution 28 -> 19 µs. A split pays from
about 3 µs of serial work: at least `PARALLEL_MIN_BYTES` of operands or
`PARALLEL_MIN_WORK` stores. When other processes keep every CPU busy a split gains
nothing (at a load of 15 on the 2 CPUs, MNIST took 240-380 µs a call with 2 threads and
with 1 alike; a worker descheduled in the middle of its range makes the caller wait),
and more threads than CPUs gain nothing either (MNIST on the 2 CPUs: 4 threads 82-110
µs, 8 threads 69-84 µs). The Python pool splits only above its own, much higher,
thresholds (`PYTHON_POOL_MIN_*`: at 256 KiB the MLP's dense paid a 7-150 µs dispatch).
"""
from __future__ import annotations

import os
import threading
from collections.abc import Callable

# A kernel is split over the native pool only when its parallel loop has at least two
# iterations and its operands (inputs and outputs) hold at least this many bytes
# (streaming 256 KiB takes a core about 3 µs) ...
PARALLEL_MIN_BYTES = 256 * 1024
# ... or when it executes at least this many stores (its `work`): 2-7 µs of work.
PARALLEL_MIN_WORK = 16 * 1024
# The Python pool's thresholds (where there is no native pool: its dispatch costs
# 7-150 µs): about 0.1-0.5 ms of work.
PYTHON_POOL_MIN_BYTES = 1024 * 1024
PYTHON_POOL_MIN_WORK = 1_000_000
# The native pool splits a parallel loop into up to this many ranges per thread, which
# the caller and the workers claim one at a time: a worker that wakes late, or is
# descheduled by another process's spinning threads (OpenBLAS's, for 0.1 s after each
# of its calls), then runs fewer ranges instead of leaving the caller waiting for half
# of the work.
CHUNKS_PER_THREAD = 4


def worth_splitting(extent: int, nbytes: int, work: int,
                    min_bytes: int = PARALLEL_MIN_BYTES, min_work: int = PARALLEL_MIN_WORK
                    ) -> bool:
    """Whether a kernel is split over a pool: a parallel loop of two or more iterations
    and operands of at least `min_bytes` or `min_work` stores (the native pool's
    thresholds unless the Python pool's are given)."""
    return extent >= 2 and (nbytes >= min_bytes or work >= min_work)


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
    of a C function doing nothing, a dispatch of that call over `[0, size)` by this
    Python pool, and by the native pool (`native_pool.py`: an empty native kernel,
    called directly and through `pool_run`; the figures in this module's docstring)."""
    import ctypes
    import statistics
    import time

    from . import native_pool
    libc = ctypes.CDLL(None)
    nothing = libc.labs        # a C function that returns at once; ctypes releases the GIL
    nothing.argtypes, nothing.restype = [ctypes.c_long], ctypes.c_long
    pool = get_pool()

    def body(begin: int, end: int) -> None:
        nothing(begin)

    def per_call(run: Callable[[], object]) -> float:
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
    figures: dict[str, float] = {"threads": pool.size, "direct_us": round(direct, 2),
                                 "pool_us": round(pooled, 2),
                                 "overhead_us": round(pooled - direct, 2)}
    native = native_pool.get_native_pool()
    funcs = native_pool.functions()
    if native is None or funcs is None:
        figures["native_pool"] = native_pool.failure() or "unavailable"   # type: ignore[assignment]
        return figures
    ptrs = (ctypes.c_void_p * 1)()
    entry = native_pool.ENTRY(funcs.nothing)
    for _ in range(200):
        native.run(funcs.nothing, ptrs, native.size)
    native_direct = per_call(lambda: entry(ptrs, 0, native.size))
    native_pooled = per_call(lambda: native.run(funcs.nothing, ptrs, native.size))
    figures.update({"native_direct_us": round(native_direct, 2),
                    "native_pool_us": round(native_pooled, 2),
                    "native_overhead_us": round(native_pooled - native_direct, 2)})
    return figures


if __name__ == "__main__":
    print(measure_overhead())
