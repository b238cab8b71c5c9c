"""Native control flow (relaylang/backend/llvm/control.py): `if`, `let`, recursion through
globals (self tail calls as loops, mutual and non-tail recursion as native calls), tuples,
the stack bound, argument validation and NoLowering for what is not first-order."""
from __future__ import annotations

import math

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.machine import RecursionTooDeep
from relaylang.backend.llvm.control import NativeProgram, ProgramCallError, compile_program, runtime
from relaylang.backend.llvm.lower import NoLowering

HEAD = '#[version = "0.0.5"]\n'

LOOP = HEAD + """
def @loop(%i: int64, %acc: int64) -> int64 {
  if (%i == 0i64) { %acc } else { @loop(%i - 1i64, %acc + %i) }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
"""

RECURSION = HEAD + """
def @even(%n: int64) -> bool { if (%n == 0i64) { True } else { @odd(%n - 1i64) } }
def @odd(%n: int64) -> bool { if (%n == 0i64) { False } else { @even(%n - 1i64) } }
def @sum(%n: int64) -> int64 { if (%n == 0i64) { 0i64 } else { %n + @sum(%n - 1i64) } }
def @fact(%n: float64) -> float64 { if (%n <= 1f64) { 1f64 } else { %n * @fact(%n - 1f64) } }
def @fib(%n: int64, %x: Tensor[(2, 3), float32]) -> Tensor[(2, 3), float32] {
  if (%n < 2i64) { %x } else { @fib(%n - 1i64, %x) + @fib(%n - 2i64, %x * 0.5f) }
}
"""

TENSORS = HEAD + """
def @tloop(%i: int64, %x: Tensor[(1, 16), float32]) -> Tensor[(1, 16), float32] {
  if (%i == 0i64) { %x } else { @tloop(%i - 1i64, multiply(add(%x, 1f), 0.5f)) }
}
def @swap(%i: int64, %a: Tensor[(64, 64), float32], %b: Tensor[(64, 64), float32])
    -> (Tensor[(64, 64), float32], Tensor[(64, 64), float32]) {
  if (%i == 0i64) { (%a, %b) } else { @swap(%i - 1i64, %b, %a + 1f) }
}
def @mid(%i: int64, %a: Tensor[(8, 16), float32], %b: Tensor[(8, 16), float32])
    -> (Tensor[(8, 16), float32], Tensor[(8, 16), float32]) {
  if (%i <= 0i64) { (%a, %b) } else { @mid(%i - 1i64, %b, %a * 2f) }
}
def @pick(%c: bool, %x: Tensor[(3,), float32]) -> (Tensor[(3,), float32], int32) {
  if (%c) { (%x + 1f, 1) } else { (%x * 2f, 2) }
}
def @main(%c: bool, %x: Tensor[(3,), float32]) -> (Tensor[(3,), float32], int32) {
  let %t = if (%c) { (%x + 1f, 1) } else { (%x * 2f, 2) };
  let %u = @pick(%c, %t.0);
  (%t.0 * 3f + %u.0, %t.1 + %u.1)
}
def @tup(%p: (Tensor[(2,), float32], int64)) -> (int64, Tensor[(2,), float32]) {
  (%p.1 + 1i64, %p.0 - 1f)
}
"""


def fused(text: str) -> object:
    mod = rl.transform.InferType()(rl.parse(text))
    return rl.transform.FuseOps(fuse_opt_level=2)(mod)


_PROGRAMS: dict[str, tuple[object, NativeProgram]] = {}


def program(text: str) -> tuple[object, NativeProgram]:
    if text not in _PROGRAMS:
        mod = fused(text)
        _PROGRAMS[text] = (mod, compile_program(mod, cache=False))
    return _PROGRAMS[text]


def same(native: object, expected: object) -> None:
    if isinstance(expected, tuple):
        assert isinstance(native, tuple) and len(native) == len(expected)
        for n, e in zip(native, expected):
            same(n, e)
        return
    e = np.asarray(expected)
    n = np.asarray(native)
    assert n.shape == e.shape and n.dtype == e.dtype, (n.shape, n.dtype, e.shape, e.dtype)
    if e.dtype.kind == "f":
        np.testing.assert_allclose(n, e, rtol=1e-5)
    else:
        np.testing.assert_array_equal(n, e)


# ---------------------------------------------------------------- tail calls


def test_tail_recursive_loop_to_a_million_is_a_loop() -> None:
    mod, prog = program(LOOP)
    n = 1_000_000
    assert int(prog(n)) == n * (n + 1) // 2
    assert int(prog.call("loop", np.int64(n), np.int64(5))) == n * (n + 1) // 2 + 5
    # constant stack: it runs within the small first-attempt budget
    assert not prog["loop"].needs_big_stack and not prog["main"].needs_big_stack
    for k in (0, 1, 7, 1000):
        same(prog(k), rl.evaluate(mod, k))


def test_tensor_loop_applies_ops_n_times() -> None:
    mod, prog = program(TENSORS)
    x = np.linspace(-3, 3, 16, dtype="float32").reshape(1, 16)
    for n in (0, 1, 25):
        same(prog.call("tloop", n, x), rl.evaluate(mod, n, x, entry="tloop"))
    ref = x.copy()
    for _ in range(1000):
        ref = (ref + np.float32(1)) * np.float32(0.5)
    np.testing.assert_allclose(prog.call("tloop", 1000, x), ref, rtol=1e-6)
    # a million iterations over a tensor (constant stack, no allocation per iteration)
    out = prog.call("tloop", 1_000_000, x)
    np.testing.assert_allclose(out, np.ones((1, 16), "float32"), rtol=1e-6)
    assert not prog["tloop"].needs_big_stack      # a loop: constant stack


@pytest.mark.parametrize("fn,shape", [("swap", (64, 64)), ("mid", (8, 16))])
def test_tail_call_arguments_that_swap_parameters(fn: str, shape: tuple) -> None:
    # heap (64x64) and stack (8x16) parameter buffers; the new %a is the old %b
    mod, prog = program(TENSORS)
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape).astype("float32")
    b = rng.standard_normal(shape).astype("float32")
    for n in (0, 1, 2, 5):
        same(prog.call(fn, n, a, b), rl.evaluate(mod, n, a, b, entry=fn))


# ---------------------------------------------------------------- recursion


def test_mutual_recursion_even_odd() -> None:
    mod, prog = program(RECURSION)
    for n in (0, 1, 2, 17, 1000):
        same(prog.call("even", n), rl.evaluate(mod, n, entry="even"))
        same(prog.call("odd", n), rl.evaluate(mod, n, entry="odd"))
    assert bool(prog.call("even", 100_000)) and not bool(prog.call("odd", 100_000))


def test_non_tail_recursion_factorial_and_fibonacci_over_tensors() -> None:
    mod, prog = program(RECURSION)
    for n in (0, 1, 5, 20):
        assert float(prog.call("fact", float(n))) == float(math.factorial(max(n, 1)))
        same(prog.call("fact", float(n)), rl.evaluate(mod, float(n), entry="fact"))
    x = np.arange(6, dtype="float32").reshape(2, 3) - 2.5
    for n in (0, 1, 2, 9):
        same(prog.call("fib", n, x), rl.evaluate(mod, n, x, entry="fib"))


def test_non_tail_recursion_100000_deep() -> None:
    _, prog = program(RECURSION)
    n = 100_000
    assert int(prog.call("sum", n)) == n * (n + 1) // 2
    assert float(prog.call("fact", 100_000.0)) == math.inf


def test_endless_recursion_is_recursion_too_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    _, prog = program(RECURSION)
    monkeypatch.setattr(runtime, "BIG_STACK", 32 << 20)     # keep the test's memory small
    monkeypatch.setattr(runtime, "BIG_STACK_MARGIN", 2 << 20)
    with pytest.raises(RecursionTooDeep, match="recursion too deep"):
        prog.call("sum", 10**9)
    # the program still works afterwards
    assert int(prog.call("sum", 10)) == 55


# ---------------------------------------------------------------- if, let, tuples


def test_if_else_returning_tuples() -> None:
    mod, prog = program(TENSORS)
    x = np.array([1.0, -2.0, 3.5], "float32")
    for c in (True, False):
        same(prog.call("pick", c, x), rl.evaluate(mod, c, x, entry="pick"))
        same(prog(c, x), rl.evaluate(mod, c, x))
    p = (np.array([1.5, 2.5], "float32"), np.int64(4))
    same(prog.call("tup", p), rl.evaluate(mod, p, entry="tup"))


def test_arguments_are_validated_before_native_code() -> None:
    _, prog = program(TENSORS)
    x = np.zeros(3, "float32")
    with pytest.raises(ProgramCallError, match="float32"):
        prog(True, np.zeros(3, "float64"))
    with pytest.raises(ProgramCallError, match=r"\[3\]"):
        prog(True, np.zeros(4, "float32"))
    with pytest.raises(ProgramCallError, match="takes 2 arguments"):
        prog(True)
    with pytest.raises(ProgramCallError, match="tuple"):
        prog.call("tup", x)
    # non-contiguous and unaligned inputs are staged
    big = np.arange(7, dtype="float32")
    same(prog.call("pick", True, big[1:4]), (big[1:4] + 1, np.int32(1)))
    same(prog.call("pick", False, big[::2][:3]), (big[::2][:3] * 2, np.int32(2)))


def test_cache_round_trip(tmp_path: object, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RELAY_CACHE_DIR", str(tmp_path))
    mod = fused(LOOP)
    first = compile_program(mod)
    second = compile_program(mod)            # from the cache
    assert int(first(100)) == int(second(100)) == 5050
    assert "rl_f" in second.get_source("ll-raw")


# ---------------------------------------------------------------- not first-order


@pytest.mark.parametrize("text,what", [
    ("def @main(%x: float32) -> float32 { let %f = fn (%y: float32) { %y + %x }; %f(1f) }",
     "closure"),
    ("def @main(%x: float32) -> float32 { let %r = ref(%x); ref_read(%r) }", "reference"),
    ("def @main(%x: Tensor[(?, 3), float32]) -> Tensor[(?, 3), float32] { %x + 1f }",
     "not static"),
    (("def @f(%x: float32) -> float32 { %x }\n"
      "def @main(%x: float32) -> fn (float32) -> float32 { @f }"), "value"),
    ("def @main(%g: fn (float32) -> float32, %x: float32) -> float32 { %g(%x) }",
     "first-order"),
])
def test_not_first_order_is_no_lowering(text: str, what: str) -> None:
    mod = fused(HEAD + text)
    with pytest.raises(NoLowering, match=what) as info:
        compile_program(mod, entry="main", cache=False)
    assert info.value.reason


def test_adt_match_is_no_lowering() -> None:
    text = HEAD + """
type Box { B(float32), }
def @main(%x: float32) -> float32 { match (B(%x)) { B(%y) => %y } }
"""
    mod = fused(text)
    with pytest.raises(NoLowering) as info:
        compile_program(mod, cache=False)
    assert info.value.span is not None


MIXED = HEAD + """
def @m91(%n: int64) -> int64 { if (%n > 100i64) { %n - 10i64 } else { @m91(@m91(%n + 11i64)) } }
def @shared(%c: bool, %x: Tensor[(4,), float32]) -> Tensor[(4,), float32] {
  %0 = exp(%x);
  %1 = if (%c) { %0 } else { %0 * 2f };
  %1 + %0
}
""" + LOOP.removeprefix(HEAD)


@pytest.mark.parametrize("anf", [False, True], ids=["graph", "anf"])
def test_tail_and_non_tail_self_calls_shared_nodes_and_let_bound_kernels(anf: bool) -> None:
    mod = fused(MIXED)
    if anf:      # primitive functions bound by `let`, every value named
        mod = rl.transform.InferType()(rl.transform.ToANormalForm()(mod))
    prog = compile_program(mod, cache=False)
    for n in (1, 50, 100, 101, 200):     # McCarthy 91: a self tail call around a non-tail one
        assert int(prog.call("m91", n)) == (n - 10 if n > 100 else 91)
    same(prog.call("m91", 7), rl.evaluate(mod, 7, entry="m91"))
    x = np.arange(4, dtype="float32") - 1
    for c in (True, False):
        same(prog.call("shared", c, x), rl.evaluate(mod, c, x, entry="shared"))
    assert int(prog.call("loop", 1000, 1)) == 500501


def test_export_and_load_without_llvm() -> None:
    import json

    from relaylang.backend.llvm.control import load_program
    _, prog = program(TENSORS)
    obj, meta = prog.export()
    loaded = load_program(obj, json.loads(json.dumps(meta)))
    x = np.array([1.0, 2.0, 3.0], "float32")
    same(loaded(False, x), prog(False, x))
    p = (np.array([1.5, 2.5], "float32"), np.int64(4))
    same(loaded.call("tup", p), prog.call("tup", p))
    with pytest.raises(ValueError, match="built for"):
        load_program(obj, dict(meta, target="elsewhere"))


def test_after_the_o3_pipeline() -> None:
    # what rl.build hands over: -O3 (FuseOps included), typed
    from relaylang.transform.tvm_pipeline import optimize
    mod = optimize(rl.transform.InferType()(rl.parse(TENSORS)), opt_level=3)
    prog = compile_program(mod, entry="main", cache=False)
    x = np.array([0.5, -1.0, 2.0], "float32")
    for c in (True, False):
        same(prog(c, x), rl.evaluate(rl.parse(TENSORS), c, x))


def test_float16_bool_int16_and_empty_tensors() -> None:
    text = HEAD + """
def @h(%i: int32, %x: Tensor[(5,), float16], %z: Tensor[(0, 3), float32])
    -> (Tensor[(5,), float16], Tensor[(0, 3), float32], int16) {
  if (%i <= 0) { (%x, %z, 3i16) } else { @h(%i - 1, %x * 1.5f16, %z + 1f) }
}
def @main(%b: Tensor[(4,), bool]) -> Tensor[(4,), bool] {
  if (take(%b, 0)) { logical_not(%b) } else { %b }
}
"""
    mod, prog = program(text)
    x = np.arange(5, dtype="float16")
    z = np.zeros((0, 3), "float32")
    same(prog.call("h", np.int32(4), x, z), rl.evaluate(mod, np.int32(4), x, z, entry="h"))
    b = np.array([True, False, True, True])
    for v in (b, ~b):
        same(prog(v), rl.evaluate(mod, v))
