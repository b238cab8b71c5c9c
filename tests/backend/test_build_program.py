"""Program mode: `rl.build` compiles first-order programs with control flow (if, let,
tuples, recursion through globals) whole with `llvm.control.compile_program`; what it
cannot compile falls back to mixed mode with a reason. Compared with the interpreter."""
from __future__ import annotations

import json
import zipfile
from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.interpreter.machine import InterpreterError, RecursionTooDeep
from relaylang.backend.native.library_file import LibraryLoadError

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'

LOOP = HEADER + """
def @loop(%i: int64, %acc: int64) -> int64 {
  if (equal(%i, 0i64)) { %acc } else { @loop(subtract(%i, 1i64), add(%acc, %i)) }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
"""

TENSOR_LOOP = HEADER + """
def @count(%i: int32, %acc: Tensor[(3, 5), float32]) -> Tensor[(3, 5), float32] {
  if (less_equal(%i, 0)) { %acc } else { @count(subtract(%i, 1), add(%acc, 1f)) }
}
def @main(%n: int32, %x: Tensor[(3, 5), float32]) -> (Tensor[(3, 5), float32], int32) {
  let %y = @count(%n, %x);
  (%y, %n)
}
"""

MUTUAL = HEADER + """
def @even(%n: int32, %x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  if (equal(%n, 0)) { %x } else { @odd(subtract(%n, 1), add(%x, 1f)) }
}
def @odd(%n: int32, %x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  if (equal(%n, 0)) { negative(%x) } else { @even(subtract(%n, 1), multiply(%x, 0.5f)) }
}
def @main(%n: int32, %x: Tensor[(4), float32]) -> Tensor[(4), float32] {
  @even(%n, exp(%x))
}
"""

ENDLESS = HEADER + (
    "def @loop(%n: int64) -> int64 {\n"
    "  add(%n, @loop(add(%n, 1i64)))\n"
    "}\n"
    "def @main() -> int64 { @loop(0i64) }\n")


@pytest.fixture(scope="module")
def loop_lib():
    return rl.build(rl.parse(LOOP), target="llvm")


def test_tail_recursive_loop_to_a_million(loop_lib):
    assert loop_lib.mode == "program" and loop_lib.mixed_reason == ""
    n = 1_000_000
    assert int(loop_lib(np.int64(n))) == n * (n + 1) // 2
    assert int(loop_lib(n)) == n * (n + 1) // 2                  # a Python int converts
    assert int(loop_lib["loop"](np.int64(10), np.int64(5))) == 60
    mod = rl.parse(LOOP)
    assert int(rl.evaluate(mod, np.int64(n), target="llvm")) == n * (n + 1) // 2
    assert int(rl.evaluate(mod, np.int64(50), target="llvm")) == \
        int(rl.evaluate(mod, np.int64(50)))


def test_tensor_loop_a_million_iterations_in_constant_stack():
    mod = rl.parse(TENSOR_LOOP)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program"
    x = np.arange(15, dtype="float32").reshape(3, 5)
    y, n = lib(np.int32(1_000_000), x)
    np.testing.assert_array_equal(y, x + 1_000_000)
    assert int(n) == 1_000_000
    expected = rl.evaluate(mod, np.int32(7), x)
    got = lib(np.int32(7), x)
    np.testing.assert_array_equal(got[0], expected[0])
    assert int(got[1]) == int(expected[1])


def test_mutual_recursion():
    mod = rl.parse(MUTUAL)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program"
    x = np.random.default_rng(0).standard_normal(4).astype("float32")
    for n in (0, 1, 6, 11):
        np.testing.assert_allclose(lib(np.int32(n), x), rl.evaluate(mod, np.int32(n), x),
                                   rtol=1e-5)
    np.testing.assert_allclose(lib["odd"](np.int32(3), x),
                               rl.evaluate(mod, np.int32(3), x, entry="odd"), rtol=1e-5)
    # 100,001 calls pending natively (mutual calls are calls, not loops)
    assert lib(np.int32(100_001), x).shape == (4,)


def test_non_tail_recursion_is_deep_enough():
    mod = rl.parse((ROOT / "examples" / "recursion.relay").read_text())
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program" and sorted(lib.kernel_names) == ["factorial", "main", "sum_to"]
    for n in (0, 1, 10, 12):
        got, want = lib(np.int32(n)), rl.evaluate(mod, np.int32(n))
        assert [int(v) for v in got] == [int(v) for v in want]
    assert int(lib["sum_to"](np.int32(65535), np.int32(0))) == 2147450880


def test_program_library_properties(loop_lib):
    assert loop_lib.fallback_ops == [] and loop_lib.fallback_reasons == {}
    assert "define" in loop_lib.get_source("ll")
    assert loop_lib.get_source("asm").strip()
    assert "program mode" in repr(loop_lib)
    with pytest.raises(KeyError, match="no function @other"):
        loop_lib["other"]
    params = loop_lib.entry_params("loop")
    assert [n for n, _ in params] == ["i", "acc"]


def test_closures_go_to_mixed_mode_with_a_reason():
    mod = rl.parse((ROOT / "examples" / "closures.relay").read_text())
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "mixed"
    assert "first-order" in lib.mixed_reason or "function" in lib.mixed_reason
    assert [int(v) for v in lib(np.int32(3))] == [12, 42]


def test_max_depth_goes_to_mixed_mode():
    lib = rl.build(rl.parse(ENDLESS), target="llvm", max_depth=500)
    assert lib.mode == "mixed" and "max_depth" in lib.mixed_reason
    with pytest.raises(RecursionTooDeep, match="more than 500 calls pending in @loop"):
        lib()


def test_dataflow_program_is_still_a_graph():
    lib = rl.build(rl.parse(HEADER + "def @main(%x: Tensor[(4), float32]) { exp(%x) }"),
                   target="llvm")
    assert lib.mode == "graph" and lib.mixed_reason == ""


def test_endless_recursion_is_the_interpreters_error():
    lib = rl.build(rl.parse(ENDLESS, source_name="endless.relay"), target="llvm")
    assert lib.mode == "program"
    with pytest.raises(RecursionTooDeep) as info:
        lib()
    e = info.value
    assert isinstance(e, InterpreterError)
    assert "recursion too deep" in e.message and "@loop" in e.message
    assert e.span is not None and (e.span.source_name, e.span.line, e.span.column) == \
        ("endless.relay", 3, 11)


def test_kernel_failure_is_located_like_the_interpreter():
    mod = rl.parse(HEADER + """
def @loop(%i: int32, %acc: int32) -> int32 {
  if (equal(%i, 0)) { %acc } else {
    @loop(subtract(%i, 1), add(%acc, divide(100, subtract(%i, 3))))
  }
}
def @main(%n: int32) -> int32 { @loop(%n, 0) }
""", source_name="div.relay")
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "program"
    assert int(lib(np.int32(2))) == int(rl.evaluate(mod, np.int32(2)))
    with pytest.raises(InterpreterError, match="integer division by zero") as info:
        lib(np.int32(5))
    assert info.value.span is not None and info.value.span.line == 5     # the division


def test_input_errors_before_native_code(loop_lib, monkeypatch):
    def fail(*args, **kwargs):
        raise AssertionError("native code ran")
    monkeypatch.setattr(loop_lib.program.program, "call", fail)
    with pytest.raises(InputError, match="takes 1 argument"):
        loop_lib()
    with pytest.raises(InputError, match="dtype int64"):
        loop_lib(np.zeros((), "float32"))
    with pytest.raises(InputError):
        loop_lib(np.zeros((3,), "int64"))
    with pytest.raises(InputError, match="does not fit"):
        loop_lib(1.5)
    with pytest.raises(InputError, match="takes 2 argument"):
        loop_lib["loop"](np.int64(1))


def test_tuple_input_errors():
    lib = rl.build(rl.parse(HEADER + """
def @loop(%i: int32, %p: (Tensor[(2), float32], int32)) -> (Tensor[(2), float32], int32) {
  if (equal(%i, 0)) { %p } else {
    @loop(subtract(%i, 1), (add(%p.0, 1f), add(%p.1, 2)))
  }
}
def @main(%n: int32, %p: (Tensor[(2), float32], int32)) -> (Tensor[(2), float32], int32) {
  @loop(%n, %p)
}"""), target="llvm")
    assert lib.mode == "program"
    out = lib(np.int32(4), (np.zeros(2, "float32"), np.int32(1)))
    np.testing.assert_array_equal(out[0], [4, 4])
    assert int(out[1]) == 9
    with pytest.raises(InputError, match="tuple"):
        lib(np.int32(4), np.zeros(2, "float32"))


def test_export_load_round_trip(tmp_path, loop_lib, monkeypatch):
    path = tmp_path / "loop.rlib"
    loop_lib.export_library(str(path))
    names = set(zipfile.ZipFile(path).namelist())
    assert {"manifest.json", "program/program.o", "program/program.json"} <= names
    # loading runs no parser, no pass and no LLVM optimisation
    import relaylang.transform.tvm_pipeline as pipeline
    from relaylang.backend.llvm import jit
    from relaylang.syntax import parser
    monkeypatch.setattr(jit, "optimize", lambda mod: pytest.fail("LLVM optimisation at load"))
    monkeypatch.setattr(pipeline, "optimize", lambda *a, **k: pytest.fail("passes at load"))
    monkeypatch.setattr(parser, "parse", lambda *a, **k: pytest.fail("parsing at load"))
    loaded = rl.runtime.load_module(str(path))
    assert loaded.mode == "program" and loaded.fallback_ops == []
    assert sorted(loaded.kernel_names) == sorted(loop_lib.kernel_names)
    assert int(loaded(np.int64(1_000_000))) == int(loop_lib(np.int64(1_000_000)))
    assert int(loaded["loop"](np.int64(3), np.int64(1))) == 7
    with pytest.raises(InputError):
        loaded(np.zeros((), "int32"), np.zeros((), "int32"))
    loaded.export_library(str(tmp_path / "again.rlib"))
    assert int(rl.runtime.load_module(str(tmp_path / "again.rlib"))(np.int64(4))) == 10


def test_loaded_endless_recursion_keeps_its_location(tmp_path):
    lib = rl.build(rl.parse(ENDLESS, source_name="endless.relay"), target="llvm")
    path = tmp_path / "endless.rlib"
    lib.export_library(str(path))
    with pytest.raises(RecursionTooDeep) as info:
        rl.runtime.load_module(str(path))()
    assert info.value.span is not None and info.value.span.line == 3


def test_foreign_cpu_program_is_refused(tmp_path, loop_lib):
    path = tmp_path / "loop.rlib"
    loop_lib.export_library(str(path))
    other = tmp_path / "foreign.rlib"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(other, "w") as zout:
        for item in zin.namelist():
            data = zin.read(item)
            if item == "manifest.json":
                manifest = json.loads(data)
                manifest["target"]["cpu"] = "future-cpu"
                manifest["target"]["features"] += ",+avx9000"
                data = json.dumps(manifest).encode()
            zout.writestr(item, data)
    with pytest.raises(LibraryLoadError, match=r"future-cpu.*lacks: avx9000"):
        rl.runtime.load_module(str(other))


def test_a_failing_program_compiler_still_runs_in_mixed_mode(monkeypatch):
    from relaylang.backend.llvm import control

    def broken(*args, **kwargs):
        raise RuntimeError("simulated")
    monkeypatch.setattr(control, "compile_program", broken)
    mod = rl.parse(LOOP)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "mixed" and "simulated" in lib.mixed_reason
    assert int(lib(np.int64(100))) == 5050
