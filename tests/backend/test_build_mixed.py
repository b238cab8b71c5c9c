"""Mixed mode: programs with control flow run on the interpreter's machine, which calls
native kernels for their primitive functions. Compared with the interpreter."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.values import NativeClosure

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'


def _same(a, b):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
        return
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name, arg, mode", [("recursion", 6, "program"),
                                             ("closures", 5, "mixed"),
                                             ("list_adt", 4, "mixed"),
                                             ("references", 3, "mixed")])
def test_examples_with_control_flow(name, arg, mode):
    mod = rl.parse((ROOT / "examples" / f"{name}.relay").read_text())
    lib = rl.build(mod, target="llvm")
    assert lib.mode == mode
    assert bool(lib.mixed_reason) == (mode == "mixed")
    value = np.int32(arg)
    _same(lib(value), rl.evaluate(mod, value))
    _same(lib(value), rl.evaluate(mod, value))   # kernels cached across calls


@pytest.mark.parametrize("max_depth", [None, 10_000])      # program mode, mixed mode
def test_tensor_if_and_mutual_recursion(max_depth):
    mod = rl.parse(HEADER + """
def @even(%n: int32, %x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32] {
  if (equal(%n, 0)) { %x } else { @odd(subtract(%n, 1), add(%x, 1f)) }
}
def @odd(%n: int32, %x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32] {
  if (equal(%n, 0)) { negative(%x) } else { @even(subtract(%n, 1), multiply(%x, 0.5f)) }
}
def @main(%n: int32, %x: Tensor[(3, 4), float32]) -> Tensor[(3, 4), float32] {
  let %y = exp(%x);
  @even(%n, %y)
}""")
    lib = rl.build(mod, target="llvm", max_depth=max_depth)
    assert lib.mode == ("program" if max_depth is None else "mixed")
    x = np.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    for n in (0, 1, 7):
        _same(lib(np.int32(n), x), rl.evaluate(mod, np.int32(n), x))
    assert lib["even"](np.int32(2), x).shape == (3, 4)


def test_dynamic_dimension_specialised_per_shape():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(?, 4), float32]) -> Tensor[(?, 4), float32] {
  %0 = exp(%x);
  add(%0, %x)
}""")
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "mixed"
    rng = np.random.default_rng(1)
    for rows in (1, 5, 5, 9):
        x = rng.standard_normal((rows, 4)).astype("float32")
        _same(lib(x), rl.evaluate(mod, x))
    if not lib.fallback_ops:
        assert len(lib.kernel_names) == 3      # one kernel per concrete shape met


def test_primitive_closures_are_native_in_mixed_mode():
    mod = rl.parse((ROOT / "examples" / "closures.relay").read_text())
    lib = rl.build(mod, target="llvm")
    interp = lib.mixed.interpreter
    lib(np.int32(3))
    natives = [v for v in interp._natives.values() if v is not None]
    assert natives, "the machine met primitive functions and asked the hook"
    assert issubclass(NativeClosure, rl.backend.interpreter.values.Closure)


def test_interpreter_without_hook_is_unchanged():
    mod = rl.parse((ROOT / "examples" / "recursion.relay").read_text())
    ex = rl.create_executor(rl.transform.optimize(mod), target="interp")
    assert ex.interpreter.primitive is None
    _same(ex(np.int32(5)), rl.evaluate(mod, np.int32(5)))


def test_a_growing_tensor_compiles_a_bounded_number_of_kernels():
    """A loop-carried tensor that grows every iteration: its kernels are compiled for at
    most SPECIALISE_MAX shapes, later shapes run the NumPy kernels (not a fallback op)."""
    from relaylang.backend.native.mixed import SPECIALISE_MAX
    mod = rl.parse(HEADER + """
def @grow(%i: int32, %acc: Tensor[(?), float32]) -> Tensor[(?), float32] {
  if (equal(%i, 0)) {
    %acc
  } else {
    @grow(subtract(%i, 1), concatenate((%acc, expand_dims(cast(%i, dtype="float32"), axis=0))))
  }
}
def @main(%n: int32) -> Tensor[(?), float32] {
  @grow(%n, zeros(shape=[1], dtype="float32"))
}
""")
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "mixed"
    n = np.int32(3 * SPECIALISE_MAX)
    _same(lib(n), rl.evaluate(mod, n))
    grow_kernels = [k for k in lib.kernel_names if "concatenate" in k]
    assert len(grow_kernels) == SPECIALISE_MAX
    assert lib.fallback_ops == []
