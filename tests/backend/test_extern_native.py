"""External functions in native code: `call_dps_packed` and extern ops called from the
native step runner through a ctypes callback (relaylang/backend/native/extern.py),
writing the executor's own output buffer in place, without copies."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.backend.native import native_pool
from relaylang.op.extern import remove_extern_op, remove_global_func

HEADER = '#[version = "0.0.5"]\n'

GRAPH = HEADER + """
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(3, 8), float32]) {
  %0 = add(%x, 1f);
  %1 = call_dps_packed(%0, %w, func="h21test.dense", out_shape=[4, 3], out_dtype="float32");
  %2 = multiply(%1, 2f);
  %3 = call_dps_packed(%2, func="h21test.relu", out_shape=[4, 3], out_dtype="float32");
  subtract(%3, 1f)
}
"""


class Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, list[int], int, bool]] = []
        self.fail = False

    def dense(self, x, w, out):
        self.seen.append(("dense", [x.ctypes.data, w.ctypes.data], out.ctypes.data,
                          x.flags.writeable))
        np.matmul(x, w.T, out=out)

    def relu(self, x, out):
        if self.fail:
            raise ArithmeticError("relu went wrong")
        self.seen.append(("relu", [x.ctypes.data], out.ctypes.data, x.flags.writeable))
        np.maximum(x, 0, out=out)


@pytest.fixture()
def funcs():
    rec = Recorder()
    rl.register_func("h21test.dense", rec.dense, override=True)
    rl.register_func("h21test.relu", rec.relu, override=True)
    yield rec
    remove_global_func("h21test.dense")
    remove_global_func("h21test.relu")


def _want(x, w):
    return np.maximum((x + 1) @ w.T * 2, 0) - 1


def _args(seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((4, 8)).astype("float32"),
            rng.standard_normal((3, 8)).astype("float32"))


def test_extern_calls_run_in_the_native_step_table_in_place(funcs):
    mod = rl.parse(GRAPH)
    lib = rl.build(mod)
    assert lib.mode == "graph"
    assert lib.fallback_ops == []                 # no NumPy fallback step
    assert [kind for _, kind in lib.external_steps] == ["dps", "dps"]
    x, w = _args()
    interpreted = rl.evaluate(mod, x, w)
    funcs.seen.clear()
    got = lib(x, w)
    np.testing.assert_allclose(got, _want(x, w), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, interpreted, rtol=1e-5, atol=1e-6)
    # every step is in one table: the call took the one-native-call path
    assert lib.graph._fast is not None
    # the callee saw the executor's own buffers: its input is the temporary the add
    # wrote, its output the temporary the multiply reads; the user's %w itself
    state = lib.graph._state
    plan = lib.graph.plan
    buffers = {state.values[i].ctypes.data for i, v in enumerate(plan.values)
               if v.kind == "temp"}
    (dense, relu) = funcs.seen
    assert dense[1][0] in buffers and dense[2] in buffers
    assert dense[1][1] == w.ctypes.data            # an entry input: passed in place
    assert relu[1][0] in buffers and relu[2] in buffers
    assert not dense[3] and not relu[3]           # inputs are read-only views
    # a second call sees the same buffers (views made once per address)
    lib(x, w)
    assert funcs.seen[2][1:] == dense[1:] and funcs.seen[3][1:] == relu[1:]


def test_without_the_native_step_runner_the_callback_runs_from_python(funcs, monkeypatch):
    mod = rl.parse(GRAPH)
    lib = rl.build(mod)
    monkeypatch.setattr(native_pool, "functions", lambda: None)
    x, w = _args(1)
    np.testing.assert_allclose(lib(x, w), _want(x, w), rtol=1e-5, atol=1e-6)
    assert len(funcs.seen) == 2


def test_an_extern_op_runs_in_place_too():
    seen = []

    def cube(x, out):
        seen.append(out.ctypes.data)
        np.power(x, 3, out=out)
    rl.register_extern_op("h21test.cube", relation=lambda t: t, func=cube)
    try:
        mod = rl.parse(HEADER + """
def @main(%x: Tensor[(5), float32]) {
  %0 = h21test.cube(%x);
  exp(%0)
}
""")
        lib = rl.build(mod)
        assert lib.fallback_ops == [] and lib.external_steps[0][1] == "dps"
        x = np.linspace(-1, 1, 5).astype("float32")
        np.testing.assert_allclose(lib(x), np.exp(x ** 3), rtol=1e-5)
        assert seen
    finally:
        remove_extern_op("h21test.cube")


def test_a_function_returning_its_result_is_accepted():
    rl.register_func("h21test.neg", lambda x, out: -x, override=True)
    try:
        mod = rl.parse(HEADER + """
def @main(%x: Tensor[(2, 3), float32]) {
  %0 = call_dps_packed(%x, func="h21test.neg", out_shape=[2, 3], out_dtype="float32");
  add(%0, 1f)
}
""")
        x = np.arange(6, dtype="float32").reshape(2, 3)
        np.testing.assert_allclose(rl.build(mod)(x), 1 - x)
    finally:
        remove_global_func("h21test.neg")


def test_a_failing_function_is_an_error_naming_it_not_a_crash(funcs):
    lib = rl.build(rl.parse(GRAPH))
    funcs.fail = True
    x, w = _args(2)
    with pytest.raises(InterpreterError, match="h21test.relu failed: ArithmeticError: "
                                               "relu went wrong"):
        lib(x, w)
    funcs.fail = False
    np.testing.assert_allclose(lib(x, w), _want(x, w), rtol=1e-5, atol=1e-6)


def test_a_missing_function_is_reported_when_called():
    remove_global_func("h21test.gone")
    lib = rl.build(rl.parse(HEADER + """
def @main(%x: Tensor[(2), float32]) {
  call_dps_packed(%x, func="h21test.gone", out_shape=[2], out_dtype="float32")
}
"""))
    with pytest.raises(InterpreterError, match="no global function h21test.gone"):
        lib(np.ones(2, "float32"))


def test_mixed_mode_calls_the_function_through_the_callback(funcs):
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(3, 8), float32], %c: bool) {
  if (%c) {
    call_dps_packed(%x, %w, func="h21test.dense", out_shape=[4, 3], out_dtype="float32")
  } else {
    zeros(shape=[4, 3], dtype="float32")
  }
}
""")
    lib = rl.build(mod, max_depth=100)      # only the interpreter's machine counts
    assert lib.mode == "mixed"
    x, w = _args(3)
    np.testing.assert_allclose(lib(x, w, np.array(True)), x @ w.T, rtol=1e-5, atol=1e-6)
    assert lib.fallback_ops == [] and funcs.seen


def test_an_exported_library_keeps_its_extern_steps(funcs, tmp_path):
    lib = rl.build(rl.parse(GRAPH))
    path = str(tmp_path / "extern.rlib")
    lib.export_library(path)
    loaded = rl.runtime.load_module(path)
    x, w = _args(4)
    np.testing.assert_allclose(loaded(x, w), _want(x, w), rtol=1e-5, atol=1e-6)
    assert [kind for _, kind in loaded.external_steps] == ["dps", "dps"]


# ---------------------------------------------------------------- native programs

LOOP = HEADER + """
def @main(%x: Tensor[(4, 8), float32], %w: Tensor[(8, 8), float32], %n: int64) {
  if (less(%n, 1i64)) {
    %x
  } else {
    %0 = call_dps_packed(%x, %w, func="h21test.square", out_shape=[4, 8], out_dtype="float32");
    @main(tanh(%0), %w, subtract(%n, 1i64))
  }
}
"""


@pytest.fixture()
def square():
    seen = []

    def fn(x, w, out):
        seen.append(out.ctypes.data)
        np.matmul(x, w.T, out=out)
    rl.register_func("h21test.square", fn, override=True)
    yield seen
    remove_global_func("h21test.square")


def test_a_native_program_calls_the_function_through_a_module_global(square, tmp_path):
    mod = rl.parse(LOOP)
    lib = rl.build(mod)
    assert lib.mode == "program" and lib.fallback_ops == []
    assert [kind for _, kind in lib.external_steps] == ["dps"]
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 8)).astype("float32")
    w = (rng.standard_normal((8, 8)) * 0.3).astype("float32")
    want = rl.evaluate(mod, x, w, np.int64(3))
    square.clear()
    np.testing.assert_allclose(lib(x, w, np.int64(3)), want, rtol=1e-5, atol=1e-6)
    assert len(square) == 3
    path = str(tmp_path / "loop.rlib")
    lib.export_library(path)
    loaded = rl.runtime.load_module(path)
    np.testing.assert_allclose(loaded(x, w, np.int64(2)), rl.evaluate(mod, x, w, np.int64(2)),
                               rtol=1e-5, atol=1e-6)


def test_a_failing_function_in_a_native_program_is_reported():
    def fn(x, w, out):
        raise ZeroDivisionError("boom")
    rl.register_func("h21test.square", fn, override=True)
    try:
        lib = rl.build(rl.parse(LOOP))
        assert lib.mode == "program"
        x, w = np.ones((4, 8), "float32"), np.ones((8, 8), "float32")
        with pytest.raises(InterpreterError, match="h21test.square failed: "
                                                   "ZeroDivisionError: boom"):
            lib(x, w, np.int64(2))
        np.testing.assert_array_equal(lib(x, w, np.int64(0)), x)      # still usable
    finally:
        remove_global_func("h21test.square")
