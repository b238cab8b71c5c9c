"""A worker pool and a step runner in native code (LLVM IR written with llvmlite).

The Python pool of `threads.py` wakes its workers through a lock handoff: 7 µs on an
idle machine, 50-150 µs on a busy one, which costs more than most kernels gain from a
split. Here the whole dispatch is native:

* `N - 1` daemon Python threads each call `worker_loop(pool, index)` through ctypes
  (which releases the GIL), so they live in native code. A worker waits for the next
  task by spinning on the pool's generation counter (with `pause`) for `SPIN_US`
  microseconds (measured on the time stamp counter; after the first tenth it calls
  `sched_yield` between checks, which returns at once on an idle CPU but lets other
  processes' threads run on a loaded one: MNIST with 2 threads at a load of 15 went
  from 1.7x slower than 1 thread to even), then sleeps on it with a Linux futex; the
  dispatcher makes the futex call only when a worker sleeps (`sleepers`).
* `pool_run(pool, fn, args, extent)` takes the pool with a try-lock (another thread
  dispatching: the caller runs the whole range alone), publishes the task (the ranges
  of `threads.split(extent, min(extent, N * CHUNKS_PER_THREAD))`: several small
  contiguous ranges per thread, and a claim word `generation << 32 | ranges left`),
  bumps the generation, and claims ranges itself like the workers do (compare-and-swap
  on the claim word, one range at a time): a worker that is slow to wake, or is
  descheduled (another process's threads spin on its CPU: OpenBLAS's, for 0.1 s after
  each of its calls), just runs fewer ranges, and the caller never waits for a worker
  that has not started (it runs every range nobody claimed) nor for more than the
  ranges the workers already run. It then spins until every range ran (yielding the
  CPU between checks after `SPIN_US / YIELD_AFTER`, for a descheduled worker) and
  returns the OR of the statuses. When that wait was long (`LATE_US`), the machine is
  loaded: the pool runs kernels inline for a while (`BACKOFF_FACTOR` times the excess
  wait, at most `BACKOFF_US`), then tries again. A claim
  names its generation, so a worker that wakes late can never take a range of a later
  task; the task's fields are read only after a successful claim, and the next task is
  published only when all ranges ran. Ranges write disjoint parts of the outputs (a
  reduction is never split), so any split gives the serial run's bits.
* A worker woken from its futex sleep can land on the dispatcher's CPU (Linux 6.18 in
  a 2-vCPU VM did it after every idle spell): it then runs only when the dispatcher
  yields, and while it spins the scheduler never moves it (it counts as cache-hot), so
  a 2-thread pool ran every kernel on one CPU for good (a 0.15 ms dense: 0.08 ms before
  a 0.3 s sleep, 0.155 ms after). The dispatcher records its CPU (`sched_getcpu`) in
  the task and yields once after a futex wake; a worker that finds itself on that CPU
  takes it out of its affinity mask and restores the mask at once (the kernel moves it
  to another allowed CPU). Only when the pool has no more threads than the process has
  CPUs (`W_NUDGE`). `NativePool.status()` counts dispatches, ranges run by workers,
  those moves, late dispatches and inline runs.
* `pool_run_ranges(pool, fn, args, extent, per_thread)` is `pool_run` with
  `threads * per_thread` ranges instead of the pool's `CHUNKS_PER_THREAD` per thread:
  a kernel whose every call first computes a prologue whole (a padded input: see
  `schedule._with_prologue`) runs one range per thread, else the small ranges repeat
  the prologue (conv3x3/s2 64->128 on 56x56, 2 threads: 8 ranges 445 us, its 36 us
  prologue run 8 times; 2 ranges 0.33 ms; 1 thread 0.61 ms).
* `run_steps(steps, n, pool, failed)` runs a table of kernel calls in order (parallel
  ones through `pool_run_ranges`, with the step's ranges per thread), stops at the
  first nonzero status and writes its index.
* `run_graph(desc)`: a whole graph call in one ctypes call of one argument (3x cheaper
  to call than four): it writes the arguments' and outputs' data addresses into the
  pointer-array slots of a patch list, then runs the table (`D_*` below; filled by
  `graph_runtime`'s one-call path). The io words hold NumPy array objects whose data
  pointer it reads at `array_data_offset()` (checked at start-up on real arrays), or
  the data addresses when that check failed.

Kernel entries have the ABI `i32 entry(i8** args, i64 begin, i64 end)`. Python checks
everything native code reads (addresses, array lengths, extents) before calling it.
Only Linux on x86-64 has the native pool (futex numbers, `pause`); elsewhere, or when
compiling it fails, `get_native_pool()` is None and callers use `threads.get_pool()`.
A pool is remade when `RELAY_NUM_THREADS` changes (the old one's workers exit) and in a
child process after `os.fork` (its workers did not survive the fork).
"""
from __future__ import annotations

import atexit
import ctypes
import os
import platform
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from .threads import CHUNKS_PER_THREAD, num_threads

# How long an idle worker spins before it sleeps on the futex: long enough to stay awake
# between the kernels of one graph run and between calls of a loop calling a library.
SPIN_US = 100
YIELD_AFTER = 10     # after SPIN_US / YIELD_AFTER the spinning worker yields between checks

# A dispatch whose caller waited for the workers LATE_US longer than its own ranges took
# (a worker was descheduled in the middle of its range: other processes keep the CPUs
# busy) makes the dispatches of the next while run inline: on a loaded machine the
# pool steps aside instead of making every split kernel wait for the scheduler. That
# while is BACKOFF_FACTOR times the wait beyond the caller's own ranges, at most
# BACKOFF_US: a worker preempted for a time slice by another busy thread (a few ms)
# backs off for the longest, so the waits cost at most about 1/BACKOFF_FACTOR of the
# time; a worker that merely woke late (tens of us) costs a fraction of a millisecond.
# (A flat 10 ms after every late dispatch: MLP b64 on 2 threads, one late wake-up at
# the start of a loop ran its next 170 calls on one thread, 57 us each against 34.)
LATE_US = 20
BACKOFF_FACTOR = 8
BACKOFF_US = 10_000

# The pool's memory: 64-bit words; fields written by different threads sit on separate
# 64-byte cache lines.
W_FN, W_ARGS, W_EXTENT, W_PARTS = 0, 1, 2, 3    # the task
W_THREADS, W_SPIN, W_STOP = 4, 5, 6             # constants, the stop flag
W_BACKOFF_UNTIL = 7  # time stamp before which dispatches run inline (see BACKOFF_US)
W_GEN = 8          # generation (its low 32 bits: the futex word)
W_SLEEPERS = 16    # workers asleep on the futex (or about to be)
W_CLAIM = 24       # generation << 32 | ranges of the task not yet claimed
W_FINISHED = 32    # ranges of the task that ran
W_STATUS = 33      # OR of the ranges' statuses
W_BUSY = 40        # the dispatch lock
W_CALLER_CPU = 41  # the CPU the dispatcher last ran on (at the dispatch, at each range)
W_LATE, W_BACKOFF = 48, 49   # LATE_US and BACKOFF_US in time stamp ticks
W_CHUNKS = 50      # ranges a task is split into per thread (threads.CHUNKS_PER_THREAD)
W_NUDGE = 51       # nonzero: a worker stacked on the dispatcher's CPU moves off it
W_BACKOFF_FACTOR = 52   # BACKOFF_FACTOR
# counters (for tests and debugging): written by the dispatcher ...
W_DISPATCHES = 56  # dispatches split over the pool
W_LATE_COUNT = 57  # of those, the ones whose caller waited long enough to back off
W_INLINE = 58      # dispatches run inline because the pool was backing off
# ... and by the workers
W_WORKER_RANGES = 64   # ranges run by workers (not by a dispatching caller)
W_NUDGES = 65          # times a worker found itself on the dispatcher's CPU and moved
POOL_WORDS = 72

# `run_graph`'s descriptor: 64-bit words (graph_runtime._Fast fills it)
D_STEPS, D_N, D_POOL, D_FAILED, D_OFFSET, D_PATCHES, D_NPATCH = 0, 1, 2, 3, 4, 5, 6
D_IO = 8             # the io values (arguments, then outputs) from here on

SYS_FUTEX, SYS_SCHED_YIELD = 202, 24          # x86-64 Linux
SYS_SCHED_SETAFFINITY, SYS_SCHED_GETAFFINITY = 203, 204
MASK_WORDS = 16                               # CPU masks of up to 1024 CPUs
GETCPU_SYMBOL = "relaylang_pool_getcpu"       # libc's sched_getcpu()
FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE = 128, 129
SYSCALL_SYMBOL = "relaylang_pool_syscall"     # libc's syscall(), registered with LLVM
ENV = "RELAY_NUM_THREADS"

ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
                         ctypes.c_int64)


class Step(ctypes.Structure):
    """One row of a step table, as `run_steps` reads it: `parallel` is 0 for a serial
    call, else the ranges per thread of its split over the pool."""
    _fields_ = [("fn", ctypes.c_void_p), ("args", ctypes.c_void_p),
                ("extent", ctypes.c_int64), ("parallel", ctypes.c_int64)]


def supported() -> bool:
    """Whether this host can run the native pool (Linux, x86-64, 64-bit pointers)."""
    return (sys.platform.startswith("linux") and platform.machine().lower() in ("x86_64", "amd64")
            and ctypes.sizeof(ctypes.c_void_p) == 8)


# ---------------------------------------------------------------- the LLVM IR

def module_ir() -> str:
    """The native pool's LLVM IR module (text)."""
    from llvmlite import ir

    i32, i64 = ir.IntType(32), ir.IntType(64)
    i8p = ir.IntType(8).as_pointer()
    i8pp = i8p.as_pointer()
    i64p = i64.as_pointer()
    entry_t = ir.FunctionType(i32, [i8pp, i64, i64])
    mod = ir.Module(name="relaylang_native_pool")
    syscall = ir.Function(mod, ir.FunctionType(i64, [i64], var_arg=True), SYSCALL_SYMBOL)
    getcpu = ir.Function(mod, ir.FunctionType(i32, []), GETCPU_SYMBOL)
    tsc_intrinsic = ir.Function(mod, ir.FunctionType(i64, []), "llvm.readcyclecounter")
    pause_intrinsic = ir.Function(mod, ir.FunctionType(ir.VoidType(), []),
                                  "llvm.x86.sse2.pause")

    def const(v: int, t: Any = i64) -> Any:
        return ir.Constant(t, v)

    def word(b: Any, pool: Any, k: int) -> Any:
        return b.gep(pool, [const(k)], inbounds=True)

    def load(b: Any, pool: Any, k: int, order: str = "monotonic") -> Any:
        return b.load_atomic(word(b, pool, k), order, 8)

    def store(b: Any, pool: Any, k: int, value: Any, order: str = "monotonic") -> None:
        b.store_atomic(value, word(b, pool, k), order, 8)

    def gen_ptr(b: Any, pool: Any) -> Any:
        return b.bitcast(word(b, pool, W_GEN), i32.as_pointer())

    def pause(b: Any) -> None:
        b.call(pause_intrinsic, [])

    def futex_wake(b: Any, pool: Any) -> None:
        b.call(syscall, [const(SYS_FUTEX), b.bitcast(gen_ptr(b, pool), i8p),
                         const(FUTEX_WAKE_PRIVATE), const(0x7FFFFFFF)])

    def part(b: Any, extent: Any, parts: Any, r: Any) -> tuple[Any, Any]:
        """[begin, end) of range r < parts of threads.split(extent, parts)."""
        base = b.udiv(extent, parts)
        extra = b.urem(extent, parts)
        below = b.icmp_unsigned("<", r, extra)
        begin = b.add(b.mul(r, base), b.select(below, r, extra))
        return begin, b.add(begin, b.add(base, b.zext(below, i64)))

    def call_entry(b: Any, fn_word: Any, args_word: Any, begin: Any, end: Any) -> Any:
        fn = b.inttoptr(fn_word, entry_t.as_pointer())
        return b.call(fn, [b.inttoptr(args_word, i8pp), begin, end])

    # i64 tsc(): the time stamp counter (to calibrate the spin budget)
    tsc = ir.Function(mod, ir.FunctionType(i64, []), "relay_pool_tsc")
    b = ir.IRBuilder(tsc.append_basic_block("entry"))
    b.ret(b.call(tsc_intrinsic, []))

    # i32 nothing(i8**, i64, i64): an empty kernel (to measure the dispatch)
    nothing = ir.Function(mod, entry_t, "relay_pool_nothing")
    b = ir.IRBuilder(nothing.append_basic_block("entry"))
    b.ret(const(0, i32))

    # void unstack(i64* pool): called by a worker before it runs ranges. A worker woken onto the CPU the dispatcher runs on cannot run beside it, and while
    # it spins (yielding to the dispatcher) the scheduler does not move it (a task that
    # ran in the last half millisecond counts as cache-hot): after an idle spell a
    # 2-thread pool then ran every kernel on one CPU. Such a worker moves itself: it
    # leaves the dispatcher's CPU out of its affinity mask, then restores the mask.
    unstack = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64p]), "relay_pool_unstack")
    unstack.linkage = "internal"
    (pool,) = unstack.args
    blocks = {n: unstack.append_basic_block(n) for n in ("entry", "nudge", "move", "done")}
    b = ir.IRBuilder(blocks["entry"])
    mask_t = ir.ArrayType(i64, MASK_WORDS)
    allowed = b.bitcast(b.alloca(mask_t, name="allowed"), i64p)
    others = b.bitcast(b.alloca(mask_t, name="others"), i64p)
    here = b.call(getcpu, [])
    caller_cpu = b.trunc(load(b, pool, W_CALLER_CPU), i32)
    stacked = b.and_(b.icmp_unsigned("!=", load(b, pool, W_NUDGE), const(0)),
                     b.icmp_signed("==", here, caller_cpu))
    stacked = b.and_(stacked, b.icmp_unsigned("<", here, const(MASK_WORDS * 64, i32)))
    b.cbranch(stacked, blocks["nudge"], blocks["done"])
    b.position_at_end(blocks["nudge"])
    got_mask = b.call(syscall, [const(SYS_SCHED_GETAFFINITY), const(0),
                                const(MASK_WORDS * 8), b.bitcast(allowed, i8p)])
    cpu64 = b.zext(here, i64)
    which = b.lshr(cpu64, const(6))
    bit = b.shl(const(1), b.and_(cpu64, const(63)))
    rest = const(0)
    for k in range(MASK_WORDS):
        value = b.load(b.gep(allowed, [const(k)], inbounds=True))
        # words the kernel did not write (beyond its mask size) count as zero
        value = b.select(b.icmp_signed(">", got_mask, const(k * 8)), value, const(0))
        value = b.select(b.icmp_unsigned("==", which, const(k)),
                         b.and_(value, b.not_(bit)), value)
        b.store(value, b.gep(others, [const(k)], inbounds=True))
        rest = b.or_(rest, value)
    movable = b.and_(b.icmp_signed(">", got_mask, const(0)),
                     b.icmp_unsigned("!=", rest, const(0)))
    b.cbranch(movable, blocks["move"], blocks["done"])
    b.position_at_end(blocks["move"])
    b.call(syscall, [const(SYS_SCHED_SETAFFINITY), const(0), got_mask, b.bitcast(others, i8p)])
    b.call(syscall, [const(SYS_SCHED_SETAFFINITY), const(0), got_mask, b.bitcast(allowed, i8p)])
    b.atomic_rmw("add", word(b, pool, W_NUDGES), const(1), "monotonic")
    b.branch(blocks["done"])
    b.position_at_end(blocks["done"])
    b.ret_void()

    # i64 claim(i64* pool, i32 gen, i64 worker): claims ranges of generation `gen` until
    # none is left (the claim word: gen << 32 | ranges not yet claimed), runs each, ORs its
    # status in and counts it finished. The task's fields are read only after a claim
    # succeeded: the dispatcher cannot publish the next task before this range finished.
    # Before each range a worker moves off the dispatcher's CPU if it is on it, and the
    # dispatcher records its CPU. Returns the number of ranges it ran.
    claim = ir.Function(mod, ir.FunctionType(i64, [i64p, i32, i64]), "relay_pool_claim")
    claim.linkage = "internal"
    pool, gen, is_worker = claim.args
    blocks = {n: claim.append_basic_block(n) for n in
              ("entry", "loop", "try", "claimed", "as_worker", "as_caller", "run", "record",
               "finish", "exit")}
    b = ir.IRBuilder(blocks["entry"])
    ran = b.alloca(i64, name="ran")
    b.store(const(0), ran)
    mine = b.shl(b.zext(gen, i64), const(32))
    b.branch(blocks["loop"])
    b.position_at_end(blocks["loop"])
    word_now = load(b, pool, W_CLAIM, "acquire")
    left = b.and_(word_now, const(0xFFFFFFFF))
    current = b.icmp_unsigned("==", b.and_(word_now, const(-1 << 32)), mine)
    open_ = b.and_(current, b.icmp_unsigned("!=", left, const(0)))
    b.cbranch(open_, blocks["try"], blocks["exit"])
    b.position_at_end(blocks["try"])
    pair = b.cmpxchg(word(b, pool, W_CLAIM), word_now, b.sub(word_now, const(1)),
                     "acq_rel", "acquire")
    b.cbranch(b.extract_value(pair, 1), blocks["claimed"], blocks["loop"])
    b.position_at_end(blocks["claimed"])
    b.cbranch(b.icmp_unsigned("!=", is_worker, const(0)), blocks["as_worker"],
              blocks["as_caller"])
    b.position_at_end(blocks["as_worker"])
    b.call(unstack, [pool])
    b.branch(blocks["run"])
    b.position_at_end(blocks["as_caller"])
    store(b, pool, W_CALLER_CPU, b.sext(b.call(getcpu, []), i64))
    b.branch(blocks["run"])
    b.position_at_end(blocks["run"])
    parts = load(b, pool, W_PARTS)
    begin, end = part(b, load(b, pool, W_EXTENT), parts, b.sub(parts, left))
    status = call_entry(b, load(b, pool, W_FN), load(b, pool, W_ARGS), begin, end)
    b.cbranch(b.icmp_unsigned("!=", status, const(0, i32)), blocks["record"], blocks["finish"])
    b.position_at_end(blocks["record"])
    b.atomic_rmw("or", word(b, pool, W_STATUS), b.zext(status, i64), "monotonic")
    b.branch(blocks["finish"])
    b.position_at_end(blocks["finish"])
    b.atomic_rmw("add", word(b, pool, W_FINISHED), const(1), "release")
    b.store(b.add(b.load(ran), const(1)), ran)
    b.branch(blocks["loop"])
    b.position_at_end(blocks["exit"])
    b.ret(b.load(ran))

    # void worker_loop(i64* pool, i64 index)
    worker = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64p, i64]), "relay_pool_worker")
    pool, _index = worker.args
    blocks = {n: worker.append_basic_block(n) for n in
              ("entry", "wait", "spin", "spin_more", "spin_yield", "yield", "sleep", "futex",
               "awake", "got", "work", "count", "exit")}
    b = ir.IRBuilder(blocks["entry"])
    seen = b.alloca(i32, name="seen")
    start = b.alloca(i64, name="start")
    b.store(const(0, i32), seen)                  # a new pool's generation is 0
    b.branch(blocks["wait"])
    b.position_at_end(blocks["wait"])
    b.store(b.call(tsc_intrinsic, []), start)
    b.branch(blocks["spin"])
    b.position_at_end(blocks["spin"])
    gen = b.load_atomic(gen_ptr(b, pool), "acquire", 4)
    b.cbranch(b.icmp_unsigned("!=", gen, b.load(seen)), blocks["got"], blocks["spin_more"])
    b.position_at_end(blocks["spin_more"])
    pause(b)
    spent = b.sub(b.call(tsc_intrinsic, []), b.load(start))
    limit = load(b, pool, W_SPIN)
    b.cbranch(b.icmp_unsigned("<", spent, limit), blocks["spin_yield"], blocks["sleep"])
    b.position_at_end(blocks["spin_yield"])
    # past the first tenth of the budget, each check gives the CPU to any thread that
    # waits for it (on an idle CPU sched_yield returns at once)
    late = b.icmp_unsigned(">", spent, b.udiv(limit, const(YIELD_AFTER)))
    b.cbranch(late, blocks["yield"], blocks["spin"])
    b.position_at_end(blocks["yield"])
    b.call(syscall, [const(SYS_SCHED_YIELD)])
    b.branch(blocks["spin"])
    b.position_at_end(blocks["sleep"])
    b.atomic_rmw("add", word(b, pool, W_SLEEPERS), const(1), "seq_cst")
    again = b.load_atomic(gen_ptr(b, pool), "seq_cst", 4)
    b.cbranch(b.icmp_unsigned("!=", again, b.load(seen)), blocks["awake"], blocks["futex"])
    b.position_at_end(blocks["futex"])
    # sleeps only while the generation still is `seen` (the kernel checks it atomically)
    b.call(syscall, [const(SYS_FUTEX), b.bitcast(gen_ptr(b, pool), i8p),
                     const(FUTEX_WAIT_PRIVATE), b.zext(b.load(seen), i64),
                     ir.Constant(i8p, None), ir.Constant(i8p, None), const(0)])
    b.branch(blocks["awake"])
    b.position_at_end(blocks["awake"])
    b.atomic_rmw("sub", word(b, pool, W_SLEEPERS), const(1), "seq_cst")
    b.branch(blocks["wait"])                      # the spin sees a new generation at once
    b.position_at_end(blocks["got"])
    b.store(gen, seen)
    stop = load(b, pool, W_STOP, "acquire")
    b.cbranch(b.icmp_unsigned("!=", stop, const(0)), blocks["exit"], blocks["work"])
    b.position_at_end(blocks["work"])
    b.call(unstack, [pool])
    took = b.call(claim, [pool, gen, const(1)])
    b.cbranch(b.icmp_unsigned("!=", took, const(0)), blocks["count"], blocks["wait"])
    b.position_at_end(blocks["count"])
    b.atomic_rmw("add", word(b, pool, W_WORKER_RANGES), took, "monotonic")
    b.branch(blocks["wait"])
    b.position_at_end(blocks["exit"])
    b.ret_void()

    # i32 pool_run_ranges(i64* pool, i8* fn, i8** args, i64 extent, i64 per_thread):
    # split into threads * per_thread ranges (at most `extent`; per_thread <= 0: the
    # pool's own W_CHUNKS, as pool_run)
    run = ir.Function(mod, ir.FunctionType(i32, [i64p, i8p, i8pp, i64, i64]),
                      "relay_pool_run_ranges")
    pool, fn, args, extent, per_thread = run.args
    blocks = {n: run.append_basic_block(n) for n in
              ("entry", "check", "backoff", "alone", "try", "dispatch", "wake", "mine", "wait",
               "wait_more", "yield", "done")}
    b = ir.IRBuilder(blocks["entry"])
    fn_word, args_word = b.ptrtoint(fn, i64), b.ptrtoint(args, i64)
    threads = load(b, pool, W_THREADS)
    split = b.and_(b.icmp_signed(">", threads, const(1)), b.icmp_signed(">", extent, const(1)))
    b.cbranch(split, blocks["check"], blocks["alone"])
    b.position_at_end(blocks["check"])
    backing_off = b.icmp_unsigned("<", b.call(tsc_intrinsic, []), load(b, pool, W_BACKOFF_UNTIL))
    b.cbranch(backing_off, blocks["backoff"], blocks["try"])
    b.position_at_end(blocks["backoff"])
    b.atomic_rmw("add", word(b, pool, W_INLINE), const(1), "monotonic")
    b.branch(blocks["alone"])
    b.position_at_end(blocks["alone"])
    b.ret(call_entry(b, fn_word, args_word, const(0), extent))
    b.position_at_end(blocks["try"])
    pair = b.cmpxchg(word(b, pool, W_BUSY), const(0), const(1), "acquire", "monotonic")
    b.cbranch(b.extract_value(pair, 1), blocks["dispatch"], blocks["alone"])
    b.position_at_end(blocks["dispatch"])
    # threads * CHUNKS_PER_THREAD ranges (at most `extent`), claimed one at a time: a
    # worker that comes late or is descheduled takes fewer of them, and the caller waits
    # at most for the ranges a worker already runs
    # per_thread (W_CHUNKS when not positive) clamped to [1, extent] (so threads * per
    # cannot overflow)
    per = b.select(b.icmp_signed(">", per_thread, const(0)), per_thread,
                   load(b, pool, W_CHUNKS))
    per = b.select(b.icmp_signed(">", per, const(0)), per, const(1))
    per = b.select(b.icmp_unsigned(">", per, extent), extent, per)
    chunks = b.mul(threads, per)
    parts = b.select(b.icmp_unsigned("<", extent, chunks), extent, chunks)
    store(b, pool, W_DISPATCHES, b.add(load(b, pool, W_DISPATCHES), const(1)))
    store(b, pool, W_CALLER_CPU, b.sext(b.call(getcpu, []), i64))
    store(b, pool, W_FN, fn_word)
    store(b, pool, W_ARGS, args_word)
    store(b, pool, W_EXTENT, extent)
    store(b, pool, W_PARTS, parts)
    store(b, pool, W_STATUS, const(0))
    store(b, pool, W_FINISHED, const(0))
    # only a dispatcher (holding the lock) changes the generation
    new_gen = b.add(b.load_atomic(gen_ptr(b, pool), "monotonic", 4), const(1, i32))
    store(b, pool, W_CLAIM, b.or_(b.shl(b.zext(new_gen, i64), const(32)), parts), "release")
    b.store_atomic(new_gen, gen_ptr(b, pool), "seq_cst", 4)          # publishes the task
    sleepers = load(b, pool, W_SLEEPERS, "seq_cst")
    b.cbranch(b.icmp_unsigned("!=", sleepers, const(0)), blocks["wake"], blocks["mine"])
    b.position_at_end(blocks["wake"])
    futex_wake(b, pool)
    # the scheduler may have put a woken worker on this CPU: give it the CPU now so that
    # it moves itself off (see the worker's "stacked"); on an idle CPU this returns at once
    b.call(syscall, [const(SYS_SCHED_YIELD)])
    b.branch(blocks["mine"])
    b.position_at_end(blocks["mine"])
    began = b.call(tsc_intrinsic, [])
    b.call(claim, [pool, new_gen, const(0)])     # the first range, and any a worker has not taken
    start = b.call(tsc_intrinsic, [])
    b.branch(blocks["wait"])
    b.position_at_end(blocks["wait"])
    finished = load(b, pool, W_FINISHED, "acquire")
    b.cbranch(b.icmp_unsigned("==", finished, parts), blocks["done"], blocks["wait_more"])
    b.position_at_end(blocks["wait_more"])
    pause(b)
    spent = b.sub(b.call(tsc_intrinsic, []), start)
    patience = b.udiv(load(b, pool, W_SPIN), const(YIELD_AFTER))
    b.cbranch(b.icmp_unsigned("<", spent, patience), blocks["wait"], blocks["yield"])
    b.position_at_end(blocks["yield"])             # a worker was descheduled: let it run
    b.call(syscall, [const(SYS_SCHED_YIELD)])
    b.branch(blocks["wait"])
    b.position_at_end(blocks["done"])
    ended = b.call(tsc_intrinsic, [])
    own = b.sub(start, began)
    late = b.icmp_unsigned(">", b.sub(ended, start), b.add(own, load(b, pool, W_LATE)))
    # the backoff: BACKOFF_FACTOR times the wait beyond the caller's own time, at most
    # W_BACKOFF (only used when late: then the excess is positive)
    excess = b.sub(b.sub(ended, start), own)
    wait = b.mul(excess, load(b, pool, W_BACKOFF_FACTOR))
    longest = load(b, pool, W_BACKOFF)
    wait = b.select(b.icmp_unsigned(">", wait, longest), longest, wait)
    until = b.select(late, b.add(ended, wait), load(b, pool, W_BACKOFF_UNTIL))
    store(b, pool, W_BACKOFF_UNTIL, until)
    store(b, pool, W_LATE_COUNT, b.add(load(b, pool, W_LATE_COUNT), b.zext(late, i64)))
    status = b.trunc(load(b, pool, W_STATUS), i32)
    store(b, pool, W_BUSY, const(0), "release")
    b.ret(status)

    run_ranges = run
    # i32 pool_run(i64* pool, i8* fn, i8** args, i64 extent): the pool's own ranges per
    # thread (W_CHUNKS)
    run = ir.Function(mod, ir.FunctionType(i32, [i64p, i8p, i8pp, i64]), "relay_pool_run")
    pool, fn, args, extent = run.args
    b = ir.IRBuilder(run.append_basic_block("entry"))
    b.ret(b.call(run_ranges, [pool, fn, args, extent, load(b, pool, W_CHUNKS)]))

    # void pool_stop(i64* pool): takes the lock for good, then makes the workers return
    stop_fn = ir.Function(mod, ir.FunctionType(ir.VoidType(), [i64p]), "relay_pool_stop")
    (pool,) = stop_fn.args
    blocks = {n: stop_fn.append_basic_block(n) for n in ("entry", "lock", "held", "stop")}
    b = ir.IRBuilder(blocks["entry"])
    b.branch(blocks["lock"])
    b.position_at_end(blocks["lock"])
    pair = b.cmpxchg(word(b, pool, W_BUSY), const(0), const(1), "acquire", "monotonic")
    b.cbranch(b.extract_value(pair, 1), blocks["stop"], blocks["held"])
    b.position_at_end(blocks["held"])
    pause(b)
    b.branch(blocks["lock"])
    b.position_at_end(blocks["stop"])
    store(b, pool, W_STOP, const(1), "release")
    b.atomic_rmw("add", gen_ptr(b, pool), const(1, i32), "seq_cst")
    futex_wake(b, pool)
    b.ret_void()

    # i32 run_steps(i64* steps, i64 n, i64* pool, i64* failed)
    steps_fn = ir.Function(mod, ir.FunctionType(i32, [i64p, i64, i64p, i64p]),
                           "relay_run_steps")
    steps, n, pool, failed = steps_fn.args
    blocks = {name: steps_fn.append_basic_block(name) for name in
              ("entry", "loop", "body", "parallel", "serial", "check", "fail", "next", "ok")}
    b = ir.IRBuilder(blocks["entry"])
    counter = b.alloca(i64, name="i")
    b.store(const(0), counter)
    has_pool = b.icmp_unsigned("!=", b.ptrtoint(pool, i64), const(0))
    b.branch(blocks["loop"])
    b.position_at_end(blocks["loop"])
    i = b.load(counter)
    b.cbranch(b.icmp_signed("<", i, n), blocks["body"], blocks["ok"])
    b.position_at_end(blocks["body"])
    row = b.gep(steps, [b.mul(i, const(4))], inbounds=True)
    fields = [b.load(b.gep(row, [const(k)], inbounds=True)) for k in range(4)]
    fn_word, args_word, extent, parallel = fields
    use_pool = b.and_(has_pool, b.icmp_unsigned("!=", parallel, const(0)))
    b.cbranch(use_pool, blocks["parallel"], blocks["serial"])
    b.position_at_end(blocks["parallel"])
    # `parallel`: the step's ranges per thread
    pooled = b.call(run_ranges, [pool, b.inttoptr(fn_word, i8p), b.inttoptr(args_word, i8pp),
                                 extent, parallel])
    b.branch(blocks["check"])
    b.position_at_end(blocks["serial"])
    alone = call_entry(b, fn_word, args_word, const(0), extent)
    b.branch(blocks["check"])
    b.position_at_end(blocks["check"])
    status = b.phi(i32)
    status.add_incoming(pooled, blocks["parallel"])
    status.add_incoming(alone, blocks["serial"])
    b.cbranch(b.icmp_unsigned("!=", status, const(0, i32)), blocks["fail"], blocks["next"])
    b.position_at_end(blocks["fail"])
    b.store(i, failed)
    b.ret(status)
    b.position_at_end(blocks["next"])
    b.store(b.add(i, const(1)), counter)
    b.branch(blocks["loop"])
    b.position_at_end(blocks["ok"])
    b.ret(const(0, i32))

    # i32 run_graph(i64* desc): a whole graph call (graph_runtime's one-call path). It
    # writes each argument's and output's data address into the pointer-array slots
    # that take it (the patch list: pairs of io index, slot address), then runs the
    # step table. `desc[D_IO + k]` is io value k: a NumPy array object (its data pointer
    # read at byte offset desc[D_OFFSET]) or, when that offset is -1, the data address.
    graph_fn = ir.Function(mod, ir.FunctionType(i32, [i64p]), "relay_run_graph")
    (desc,) = graph_fn.args
    blocks = {name: graph_fn.append_basic_block(name) for name in
              ("entry", "loop", "body", "object", "store", "run")}
    b = ir.IRBuilder(blocks["entry"])
    counter = b.alloca(i64, name="p")
    b.store(const(0), counter)
    offset = load_plain(b, desc, D_OFFSET)
    patches = b.inttoptr(load_plain(b, desc, D_PATCHES), i64p)
    npatch = load_plain(b, desc, D_NPATCH)
    b.branch(blocks["loop"])
    b.position_at_end(blocks["loop"])
    p = b.load(counter)
    b.cbranch(b.icmp_signed("<", p, npatch), blocks["body"], blocks["run"])
    b.position_at_end(blocks["body"])
    index = b.load(b.gep(patches, [b.mul(p, const(2))], inbounds=True))
    slot = b.inttoptr(b.load(b.gep(patches, [b.add(b.mul(p, const(2)), const(1))],
                                   inbounds=True)), i64p)
    value = b.load(b.gep(desc, [b.add(index, const(D_IO))], inbounds=True))
    b.cbranch(b.icmp_signed("<", offset, const(0)), blocks["store"], blocks["object"])
    b.position_at_end(blocks["object"])
    data = b.load(b.inttoptr(b.add(value, offset), i64p))
    b.branch(blocks["store"])
    b.position_at_end(blocks["store"])
    address = b.phi(i64)
    address.add_incoming(value, blocks["body"])
    address.add_incoming(data, blocks["object"])
    b.store(address, slot)
    b.store(b.add(p, const(1)), counter)
    b.branch(blocks["loop"])
    b.position_at_end(blocks["run"])
    pool_word = load_plain(b, desc, D_POOL)
    b.ret(b.call(steps_fn, [b.inttoptr(load_plain(b, desc, D_STEPS), i64p),
                            load_plain(b, desc, D_N), b.inttoptr(pool_word, i64p),
                            b.inttoptr(load_plain(b, desc, D_FAILED), i64p)]))
    return str(mod)


def load_plain(b: Any, words: Any, k: int) -> Any:
    from llvmlite import ir
    return b.load(b.gep(words, [ir.Constant(ir.IntType(64), k)], inbounds=True))


# ---------------------------------------------------------------- compiled functions

class Functions:
    """The compiled pool's entry points (ctypes), and the calibrated spin budget."""

    def __init__(self, addresses: dict[str, int]):
        vp, i64 = ctypes.c_void_p, ctypes.c_int64
        self.addresses = addresses
        self.tsc = ctypes.CFUNCTYPE(ctypes.c_uint64)(addresses["relay_pool_tsc"])
        self.nothing = addresses["relay_pool_nothing"]      # an empty kernel entry
        self.worker = ctypes.CFUNCTYPE(None, vp, i64)(addresses["relay_pool_worker"])
        self.run = ctypes.CFUNCTYPE(ctypes.c_int32, vp, vp, ctypes.POINTER(vp), i64)(
            addresses["relay_pool_run"])
        self.run_ranges = ctypes.CFUNCTYPE(ctypes.c_int32, vp, vp, ctypes.POINTER(vp), i64,
                                           i64)(addresses["relay_pool_run_ranges"])
        self.stop = ctypes.CFUNCTYPE(None, vp)(addresses["relay_pool_stop"])
        self.run_steps = ctypes.CFUNCTYPE(ctypes.c_int32, vp, i64, vp, vp)(
            addresses["relay_run_steps"])
        self.run_graph = ctypes.CFUNCTYPE(ctypes.c_int32, vp)(addresses["relay_run_graph"])
        self.data_offset = array_data_offset()
        self.ticks_per_us = self._ticks_per_us()
        self.spin_ticks = int(SPIN_US * self.ticks_per_us)

    def _ticks_per_us(self) -> float:
        """Time stamp counter ticks per microsecond (over a 2 ms sleep); 3000 when the
        counter does not advance sensibly."""
        t0, c0 = time.perf_counter(), self.tsc()
        time.sleep(0.002)
        t1, c1 = time.perf_counter(), self.tsc()
        rate = (c1 - c0) / max((t1 - t0) * 1e6, 1e-9)
        return rate if 100.0 <= rate <= 20000.0 else 3000.0


_FUNCTIONS: Functions | None = None
_FAILURE: str | None = None             # why the native pool is not available
_COMPILE_LOCK = threading.Lock()
NAMES = ["relay_pool_tsc", "relay_pool_nothing", "relay_pool_worker", "relay_pool_run",
         "relay_pool_run_ranges", "relay_pool_stop", "relay_run_steps", "relay_run_graph"]


def array_data_offset() -> int:
    """The byte offset of a NumPy array object's data pointer (`PyArrayObject.data`,
    right after the object header) when it is where that is checked to be, on arrays
    of several kinds (owning, views, empty, read-only); else -1 (then `run_graph` gets
    data addresses, not array objects)."""
    import numpy as np
    offset = object.__basicsize__
    try:
        base = np.arange(24, dtype=np.float32)
        ro = np.zeros(3)
        ro.flags.writeable = False
        probes = [base, base[5:], base.reshape(4, 6)[1:], np.empty(0, np.int8),
                  np.zeros((2, 3), np.float64), ro, np.ones(1, np.int64)]
        for a in probes:
            if type(a) is not np.ndarray:
                return -1
            if ctypes.c_void_p.from_address(id(a) + offset).value != a.ctypes.data:
                return -1
    except Exception:  # noqa: BLE001 -- then data addresses
        return -1
    return offset


def functions() -> Functions | None:
    """The compiled native pool (compiled once per process), or None when this host has
    none or compiling it failed (`failure()` says why)."""
    global _FUNCTIONS, _FAILURE
    if _FUNCTIONS is not None or _FAILURE is not None:
        return _FUNCTIONS
    with _COMPILE_LOCK:
        if _FUNCTIONS is None and _FAILURE is None:
            if not supported():
                _FAILURE = f"no native pool on {sys.platform}/{platform.machine()}"
            else:
                try:
                    _FUNCTIONS = _compile()
                except Exception as e:  # noqa: BLE001 -- the Python pool takes over
                    _FAILURE = f"compiling the native pool failed: {e}"
    return _FUNCTIONS


def failure() -> str | None:
    functions()
    return _FAILURE


def _compile() -> Functions:
    import llvmlite.binding as llvm

    from ..llvm import jit
    libc = ctypes.CDLL(None)
    address = ctypes.cast(libc.syscall, ctypes.c_void_p).value
    if not address:
        raise RuntimeError("libc's syscall() not found")
    llvm.add_symbol(SYSCALL_SYMBOL, address)
    getcpu_address = ctypes.cast(getattr(libc, "sched_getcpu", None) or 0, ctypes.c_void_p).value
    if not getcpu_address:
        raise RuntimeError("libc's sched_getcpu() not found")
    llvm.add_symbol(GETCPU_SYMBOL, getcpu_address)
    addresses = jit.jit_functions(module_ir(), NAMES)
    missing = [n for n in NAMES if not addresses.get(n)]
    if missing:
        raise RuntimeError(f"not in the compiled module: {', '.join(missing)}")
    return Functions(addresses)


# ---------------------------------------------------------------- the pool

class NativePool:
    """`size` threads in all: the caller and `size - 1` workers living in native code."""

    def __init__(self, size: int, funcs: Functions):
        self.size = max(1, int(size))
        self.pid = os.getpid()
        self.closed = False
        self.env: Any = None                  # RELAY_NUM_THREADS (raw) when it was sized
        self._funcs = funcs
        self._run = funcs.run
        self._run_ranges = funcs.run_ranges
        # `relay_pool_run_ranges`'s address: native programs call it directly, with
        # each kernel's ranges per thread
        self.run_ranges_address = int(funcs.addresses["relay_pool_run_ranges"])
        self._memory = ctypes.create_string_buffer(POOL_WORDS * 8 + 64)     # zeroed
        base = ctypes.addressof(self._memory)
        self.address = base + (-base % 64)
        words = (ctypes.c_int64 * POOL_WORDS).from_address(self.address)
        words[W_THREADS] = self.size
        words[W_SPIN] = funcs.spin_ticks
        words[W_LATE] = int(LATE_US * funcs.ticks_per_us)
        words[W_BACKOFF] = int(BACKOFF_US * funcs.ticks_per_us)
        words[W_BACKOFF_FACTOR] = max(1, int(BACKOFF_FACTOR))
        words[W_CHUNKS] = max(1, int(CHUNKS_PER_THREAD))
        words[W_CALLER_CPU] = -1
        # moving off the dispatcher's CPU helps only when every thread can have a CPU
        words[W_NUDGE] = 1 if 1 < self.size <= _cpus() else 0
        self._words = words
        self._threads = [threading.Thread(target=self._work, args=(i,), daemon=True,
                                          name=f"relay-native-pool-{i}")
                         for i in range(1, self.size)]
        try:
            for t in self._threads:
                t.start()
        except BaseException:
            self.close()        # the workers started so far return
            raise

    def _work(self, index: int) -> None:
        # the thread's reference to self keeps the pool's memory alive until it returns
        self._funcs.worker(self.address, index)

    def run(self, entry: int, ptrs: Any, extent: int, ranges_per_thread: int = 0) -> int:
        """Run the kernel at address `entry` over `[0, extent)` split over the pool
        (inline when the pool is busy or has one thread); the OR of the statuses.
        `ptrs`: a ctypes `c_void_p` array of the kernel's arguments. The range is split
        into `size * ranges_per_thread` parts (0: the pool's `CHUNKS_PER_THREAD`)."""
        if type(entry) is not int or entry <= 0:
            raise ValueError(f"bad kernel address {entry!r}")
        if type(extent) is not int or extent < 0:
            raise ValueError(f"bad extent {extent!r}")
        if not isinstance(ptrs, ctypes.Array) or ptrs._type_ is not ctypes.c_void_p:
            raise TypeError("ptrs must be a ctypes c_void_p array")
        if type(ranges_per_thread) is not int or ranges_per_thread < 0:
            raise ValueError(f"bad ranges per thread {ranges_per_thread!r}")
        if ranges_per_thread:
            return self._run_ranges(self.address, entry, ptrs, extent, ranges_per_thread)
        return self._run(self.address, entry, ptrs, extent)

    def close(self, timeout: float | None = None) -> None:
        """Make the workers return (waits for a dispatch under way); dispatches that
        follow run inline. With a `timeout`, wait that long for the threads to end."""
        if self.closed or self.pid != os.getpid():   # a forked copy has no workers
            return
        self.closed = True
        self._funcs.stop(self.address)
        if timeout is not None:
            for t in self._threads:
                t.join(timeout)

    def status(self) -> dict[str, int]:
        """The pool's counters (for tests and debugging)."""
        w = self._words
        return {"generation": w[W_GEN] & 0xFFFFFFFF, "sleepers": w[W_SLEEPERS],
                "claim": w[W_CLAIM], "finished": w[W_FINISHED], "busy": w[W_BUSY],
                "stop": w[W_STOP], "backoff_until": w[W_BACKOFF_UNTIL],
                "dispatches": w[W_DISPATCHES], "late": w[W_LATE_COUNT],
                "inline": w[W_INLINE], "worker_ranges": w[W_WORKER_RANGES],
                "nudges": w[W_NUDGES]}


def _cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


_POOL: NativePool | None = None
_POOL_LOCK = threading.Lock()


def _env_reader() -> Any:
    """A function returning RELAY_NUM_THREADS's raw value: a look-up in os.environ's
    own dict where CPython has one (15 ns; `os.environ.get` of a missing name raises and
    catches a KeyError: 0.5 µs)."""
    data, encode = getattr(os.environ, "_data", None), getattr(os.environ, "encodekey", None)
    if isinstance(data, dict) and callable(encode):
        try:
            key = encode(ENV)
        except Exception:  # noqa: BLE001 -- use the public way
            key = None
        if key is not None:
            return lambda: data.get(key)
    return lambda: os.environ.get(ENV)


_env = _env_reader()


def get_native_pool() -> NativePool | None:
    """The process's native pool sized by `num_threads()`, or None when there is no
    native pool here (use `threads.get_pool`). It is remade when `RELAY_NUM_THREADS`
    changes and in a child process after a fork. (The fast path compares the variable's
    raw value, not `num_threads()`, which asks the OS for the CPU affinity: 1 µs a call;
    a pool sized by the affinity keeps its size until the variable changes.)"""
    pool = _POOL
    if pool is not None and pool.env == _env():
        return pool
    return _renew()


def _renew() -> NativePool | None:
    global _POOL
    funcs = functions()
    if funcs is None:
        return None
    with _POOL_LOCK:
        env, size, pid = _env(), num_threads(), os.getpid()
        old = _POOL
        if old is not None and old.pid == pid and old.size == size:
            old.env = env
            return old
        try:
            pool = NativePool(size, funcs)
        except RuntimeError:    # no more threads: the Python pool's fallback, inline
            return None
        pool.env = env
        _POOL = pool
        if old is not None and old.pid == pid:
            old.close()
        return _POOL


def _forget_after_fork() -> None:
    """In a child process: the pool's workers did not survive the fork; the next
    `get_native_pool()` makes a new pool (the old one is never closed here: its lock
    may be held by a dispatch that was under way in the parent). The module's locks are
    made anew: another thread of the parent may have held one when it forked."""
    global _POOL, _POOL_LOCK, _COMPILE_LOCK
    _POOL = None
    _POOL_LOCK = threading.Lock()
    _COMPILE_LOCK = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


def _shutdown() -> None:
    """At exit: the workers leave native code before the interpreter tears down."""
    pool = _POOL
    if pool is not None:
        pool.close(timeout=1.0)


atexit.register(_shutdown)


# ---------------------------------------------------------------- step tables

def ranges_per_thread(call: Any) -> int:
    """How many ranges per thread a split of `call` (a NativeCall-like object) runs in:
    its `ranges_per_thread` when it has one (a kernel repeating a prologue in every
    range: see kernels.py), else `CHUNKS_PER_THREAD`."""
    n = getattr(call, "ranges_per_thread", 0)
    return n if type(n) is int and n > 0 else max(1, int(CHUNKS_PER_THREAD))


class StepTable:
    """Consecutive native kernel calls run by one native call (`run_steps`).

    `calls`: NativeCall-like objects (`.kernel.address`, `.params`, `.extent`,
    `.parallel`, `.status(ptrs)`); `arrays`: each call's ctypes `c_void_p` argument
    array, kept alive as long as the table. The caller fills every pointer (the graph
    runtime patches inputs' and outputs' addresses before each run) with the address
    of a live, C-contiguous array of the parameter's type, aligned to its element.
    One run at a time per table."""

    def __init__(self, calls: Sequence[Any], arrays: Sequence[Any]):
        if len(calls) != len(arrays):
            raise ValueError(f"{len(calls)} calls but {len(arrays)} pointer arrays")
        self.calls = list(calls)
        self.arrays = list(arrays)
        self.steps = (Step * max(1, len(self.calls)))()
        for k, (call, array) in enumerate(zip(self.calls, self.arrays)):
            entry = int(call.kernel.address)
            extent = int(call.extent)
            if entry <= 0:
                raise ValueError(f"step {k}: bad kernel address {entry}")
            if extent < 0:
                raise ValueError(f"step {k}: negative extent {extent}")
            if not isinstance(array, ctypes.Array) or array._type_ is not ctypes.c_void_p:
                raise TypeError(f"step {k}: the pointer array must be a ctypes c_void_p array")
            if len(array) < len(call.params):
                raise ValueError(f"step {k}: {len(array)} pointers for "
                                 f"{len(call.params)} parameters")
            row = self.steps[k]
            row.fn, row.args = entry, ctypes.addressof(array)
            row.extent, row.parallel = extent, ranges_per_thread(call) if call.parallel else 0
        self.n = len(self.calls)
        self._steps_address = ctypes.addressof(self.steps)
        self._failed = ctypes.c_int64(-1)
        self._failed_address = ctypes.addressof(self._failed)

    def run(self) -> tuple[int, int]:
        """(status, index of the failing step): (0, -1) when every step succeeded."""
        funcs = functions()
        if funcs is None:
            for k, (call, array) in enumerate(zip(self.calls, self.arrays)):
                status = call.status(array)
                if status:
                    return status, k
            return 0, -1
        pool = get_native_pool()
        status = funcs.run_steps(self._steps_address, self.n,
                                 pool.address if pool is not None else None,
                                 self._failed_address)
        return (status, int(self._failed.value)) if status else (0, -1)
