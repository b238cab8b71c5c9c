"""The native worker pool and step runner (relaylang/backend/native/native_pool.py):
split runs equal serial ones, statuses are OR'ed and blamed on the right step, threads
share a library, RELAY_NUM_THREADS sizes the pool, and the Python pool still serves
when there is no native one."""
from __future__ import annotations

import ctypes
import os
import threading

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.backend.llvm.jit import (
    STATUS_INT_DIV_BY_ZERO,
    STATUS_INT_MOD_BY_ZERO,
    aligned_empty,
    pointer_array,
)
from relaylang.backend.native import kernels, native_pool, threads
from relaylang.backend.native.kernels import NativeCall
from relaylang.backend.native.native_pool import StepTable

HEAD = '#[version = "0.0.5"]\n'
RNG = np.random.default_rng(7)

pytestmark = pytest.mark.skipif(not native_pool.supported(),
                                reason="the native pool is Linux x86-64 only")

ROWS, COLS = 512, 1024          # 2 MiB in, 2 MiB out: split over the pool


@pytest.fixture(scope="module")
def big_lib():
    return rl.build(rl.parse(HEAD + f"def @main(%x: Tensor[({ROWS}, {COLS}), float32]) "
                             "{ add(multiply(%x, 2f), 1f) }\n"), target="llvm")


@pytest.fixture(scope="module")
def div_lib():
    """An integer division (status on a zero divisor) between two native kernels."""
    n = 4096
    text = HEAD + f"""def @main(%x: Tensor[({n}), int32], %y: Tensor[({n}), int32]) {{
  %0 = add(%x, 1);
  %1 = cast(einsum((greater(%0, 0),), equation="i->i"), dtype="int32");
  %2 = nn.softmax(cast(%x, dtype="float32"));
  %3 = divide(%0, %y);
  %4 = add(%3, 3);
  %5 = multiply(%4, %4);
  (%5, %1, %2)
}}
"""
    return rl.build(rl.parse(text), target="llvm")


def _native_calls(lib):
    return [r for r in lib.graph.runners if isinstance(r, NativeCall)]


def _elementwise_call(lib) -> NativeCall:
    (call,) = _native_calls(lib)
    assert call.parallel and call.extent >= 2
    return call


def _run_call(call: NativeCall, x: np.ndarray, how) -> np.ndarray:
    out = aligned_empty(x.shape, x.dtype)
    out[...] = np.nan
    ptrs = pointer_array([x, out])
    assert how(call, ptrs) == 0
    return out


def test_split_runs_equal_a_serial_run(big_lib, monkeypatch):
    call = _elementwise_call(big_lib)
    x = np.ascontiguousarray(RNG.standard_normal((ROWS, COLS), dtype=np.float32))
    serial = _run_call(call, x, lambda c, p: c.kernel.run_range_status(p, 0, c.extent))
    np.testing.assert_array_equal(serial, x * 2 + 1)
    per, rest = divmod(x.size, call.extent)
    assert rest == 0
    for n in ("2", "3"):
        monkeypatch.setenv("RELAY_NUM_THREADS", n)
        pool = native_pool.get_native_pool()
        assert pool is not None and pool.size == int(n)
        split = _run_call(call, x, lambda c, p: c.status(p))
        np.testing.assert_array_equal(split, serial)
        for extent in (1, 2, 3, 5, 7, 64, ROWS - 1):   # every range once, nothing more
            out = aligned_empty(x.shape, x.dtype)
            out[...] = np.nan
            assert pool.run(call.kernel.address, pointer_array([x, out]), extent) == 0
            done = min(extent, call.extent) * per
            np.testing.assert_array_equal(out.ravel()[:done], serial.ravel()[:done])
            assert np.isnan(out.ravel()[done:]).all()
        assert native_pool.get_native_pool() is pool
        assert big_lib(x).tolist() == serial.tolist()


@pytest.mark.parametrize("n", ["1", "3"])
def test_relay_num_threads(big_lib, monkeypatch, n):
    monkeypatch.setenv("RELAY_NUM_THREADS", n)
    x = RNG.standard_normal((ROWS, COLS), dtype=np.float32)
    np.testing.assert_array_equal(big_lib(x), x * 2 + 1)
    pool = native_pool.get_native_pool()
    assert pool.size == int(n) and pool.status()["busy"] == 0


def test_pool_remade_when_size_changes(monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "3")
    old = native_pool.get_native_pool()
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    new = native_pool.get_native_pool()
    assert new is not old and new.size == 2 and old.closed
    for t in old._threads:               # the old workers returned from native code
        t.join(5)
        assert not t.is_alive()
    ptrs = (ctypes.c_void_p * 1)()
    funcs = native_pool.functions()
    assert old.run(funcs.nothing, ptrs, 10) == 0       # a closed pool runs inline
    assert new.run(funcs.nothing, ptrs, 10) == 0


def test_statuses_are_ored_and_blamed_on_the_failing_step(div_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "3")
    n = 4096
    x = np.arange(n, dtype="int32")
    y = np.ones(n, "int32")
    out, _, _ = div_lib(x, y)
    np.testing.assert_array_equal(out, (x + 1 + 3) ** 2)
    calls = _native_calls(div_lib)
    div = next(c for c in calls if "divide" in c.ops)
    for c in calls:
        c.parallel = c.extent >= 2           # split every kernel, however small
    div_lib.graph._state = None              # step tables made anew, with these flags
    try:
        table = next(t for t, _, _ in _segments(div_lib, n)
                     if t is not None and div in t.calls)
        # a split step's row holds its ranges per thread (the pool's default here)
        assert table.calls.index(div) == 1 and \
            table.steps[1].parallel == threads.CHUNKS_PER_THREAD
        for where in (0, n // 2, n - 1):     # the caller's range, a middle one, the last
            y = np.ones(n, "int32")
            y[where] = 0
            with pytest.raises(InterpreterError, match="integer division by zero") as info:
                div_lib(x, y)
            assert "add, divide, multiply failed" in str(info.value)      # step 1, not 0
            assert info.value.span is not None and info.value.span.line == 8  # the division
    finally:
        for c in calls:
            c.parallel = False
        div_lib.graph._state = None


def _segments(lib, n):
    if lib.graph._state is None:
        lib(np.zeros(n, "int32"), np.ones(n, "int32"))
    return lib.graph._state.segments


def test_statuses_of_ranges_are_ored(monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    n = 4096
    lib = rl.build(rl.parse(HEAD + f"""def @main(%x: Tensor[({n}), int32], %y: Tensor[({n}), int32],
          %z: Tensor[({n}), int32]) {{ add(divide(%x, %y), mod(%x, %z)) }}
"""), target="llvm")
    (call,) = _native_calls(lib)
    x, y, z = (np.ones(n, "int32") for _ in range(3))
    y[0] = 0                     # the first range
    z[n - 1] = 0                 # the last range
    out = aligned_empty((n,), "int32")
    pool = native_pool.get_native_pool()
    status = pool.run(call.kernel.address, pointer_array([x, y, z, out]), call.extent)
    assert status == STATUS_INT_DIV_BY_ZERO | STATUS_INT_MOD_BY_ZERO
    with pytest.raises(InterpreterError, match="integer division by zero"):
        lib(x, y, z)


def test_step_table_reports_the_failing_step(div_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    n = 4096
    calls = _native_calls(div_lib)
    div = next(c for c in calls if "divide" in c.ops and len(c.params) == 3)
    keep = []

    def arrays_for(call, divisor_zero_at=None):
        ins = []
        for k, (shape, dtype) in enumerate(call.params):
            a = aligned_empty(shape, dtype)
            a[...] = 1
            if divisor_zero_at is not None and k == 1:
                a[divisor_zero_at] = 0
            ins.append(a)
        keep.append(ins)
        return pointer_array(ins)

    for parallel in (False, True):
        div.parallel = parallel
        try:
            good = arrays_for(div)
            bad = arrays_for(div, divisor_zero_at=n - 1)     # the last range only
            table = StepTable([div, div, div], [good, good, bad])
            assert table.run() == (STATUS_INT_DIV_BY_ZERO, 2)
            assert StepTable([div, div], [good, good]).run() == (0, -1)
            assert StepTable([div, div], [bad, good]).run() == (STATUS_INT_DIV_BY_ZERO, 0)
        finally:
            div.parallel = False


def test_two_threads_call_one_library(big_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    inputs = [RNG.standard_normal((ROWS, COLS), dtype=np.float32) for _ in range(2)]
    errors: list[BaseException] = []

    def work(x: np.ndarray) -> None:
        try:
            want = x * 2 + 1
            for _ in range(10):
                np.testing.assert_array_equal(big_lib(x), want)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    ts = [threading.Thread(target=work, args=(x,)) for x in inputs]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors
    assert native_pool.get_native_pool().status()["busy"] == 0


def test_fallback_steps_break_runs(div_lib):
    segments = _segments(div_lib, 4096)
    native = [t is not None for t, _, _ in segments]
    assert div_lib.fallback_ops == ["einsum"]
    assert False in native
    runs = sum(1 for k, is_native in enumerate(native)
               if is_native and (k == 0 or not native[k - 1]))
    assert runs == sum(native)           # no two tables side by side
    calls = [c for t, _, _ in segments if t is not None for c in t.calls]
    assert calls == _native_calls(div_lib)


def test_python_pool_fallback(big_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    monkeypatch.setattr(native_pool, "functions", lambda: None)
    monkeypatch.setattr(native_pool, "get_native_pool", lambda: None)
    used = []
    original = threads.ThreadPool.run

    def counting(self, fn, extent):
        used.append(extent)
        return original(self, fn, extent)

    monkeypatch.setattr(threads.ThreadPool, "run", counting)
    x = RNG.standard_normal((ROWS, COLS), dtype=np.float32)
    np.testing.assert_array_equal(big_lib(x), x * 2 + 1)
    call = _elementwise_call(big_lib)
    assert call.python_parallel and used == [call.extent]


def test_python_pool_fallback_reports_status(div_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "3")
    monkeypatch.setattr(native_pool, "functions", lambda: None)
    monkeypatch.setattr(native_pool, "get_native_pool", lambda: None)
    calls = _native_calls(div_lib)
    for c in calls:
        c.python_parallel = c.parallel = c.extent >= 2
    div_lib.graph._state = None
    try:
        x = np.arange(4096, dtype="int32")
        y = np.ones(4096, "int32")
        y[-1] = 0
        with pytest.raises(InterpreterError, match="divide.* failed: integer division by zero"):
            div_lib(x, y)
    finally:
        for c in calls:
            c.python_parallel = c.parallel = False
        div_lib.graph._state = None


def test_arguments_are_checked_before_native_code(big_lib):
    pool = native_pool.get_native_pool()
    call = _elementwise_call(big_lib)
    ptrs = (ctypes.c_void_p * 2)()
    with pytest.raises(ValueError, match="kernel address"):
        pool.run(0, ptrs, 4)
    with pytest.raises(ValueError, match="extent"):
        pool.run(call.kernel.address, ptrs, -1)
    with pytest.raises(TypeError):
        pool.run(call.kernel.address, [0, 0], 4)
    with pytest.raises(ValueError, match="pointers"):
        StepTable([call], [(ctypes.c_void_p * 1)()])
    with pytest.raises(TypeError):
        StepTable([call], [(ctypes.c_int64 * 2)()])
    with pytest.raises(ValueError, match="2 calls but 1"):
        StepTable([call, call], [ptrs])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_pool_is_remade_after_fork(big_lib, monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    x = RNG.standard_normal((ROWS, COLS), dtype=np.float32)
    parent = native_pool.get_native_pool()
    big_lib(x)
    pid = os.fork()
    if pid == 0:                                            # the child
        code = 1
        try:
            pool = native_pool.get_native_pool()
            ok = pool is not parent and pool.pid == os.getpid()
            ok = ok and bool((big_lib(x) == x * 2 + 1).all())
            code = 0 if ok else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    assert native_pool.get_native_pool() is parent


def test_thresholds_are_importable():
    assert threads.PARALLEL_MIN_BYTES > 0 and threads.PARALLEL_MIN_WORK > 0
    assert kernels.PARALLEL_MIN_BYTES == threads.PARALLEL_MIN_BYTES
    assert threads.split(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert threads.get_pool().size == threads.num_threads()


def test_backoff_runs_dispatches_inline(monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "2")
    pool = native_pool.get_native_pool()
    funcs = native_pool.functions()
    ptrs = (ctypes.c_void_p * 1)()
    words = pool._words
    before = pool.status()["generation"]
    words[native_pool.W_BACKOFF_UNTIL] = 2**63 - 1     # as after a late dispatch
    try:
        assert pool.run(funcs.nothing, ptrs, 8) == 0
        assert pool.status()["generation"] == before    # ran inline, no task published
    finally:
        words[native_pool.W_BACKOFF_UNTIL] = 0
    assert pool.run(funcs.nothing, ptrs, 8) == 0
    assert pool.status()["generation"] == before + 1
