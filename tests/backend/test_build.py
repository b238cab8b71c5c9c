"""`rl.build`: graph plans, storage planning, params, tuples, inputs, threads, sources.

Every result is compared with the reference interpreter. Programs are small and each
test compiles few kernels (the kernel cache is shared by the session, tests/conftest.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.native.memory import plan_storage
from relaylang.backend.native.threads import ThreadPool, split

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
ELEMENTWISE = HEADER + """
def @main(%x: Tensor[(4, 5), float32], %y: Tensor[(4, 5), float32]) {
  %0 = add(%x, %y);
  %1 = exp(%0);
  multiply(%1, %x)
}
"""


def _close(a, b, rtol=1e-5):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol)
        return
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=rtol, atol=1e-6)


def _rand(*shape, dtype="float32", seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def test_elementwise_graph_matches_interpreter():
    mod = rl.parse(ELEMENTWISE)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "graph"
    x, y = _rand(4, 5), _rand(4, 5, seed=1)
    _close(lib(x, y), rl.evaluate(mod, x, y))
    _close(lib["main"](x, y), rl.evaluate(mod, x, y))
    assert lib.kernel_names, "add/exp/multiply lower natively"
    assert lib.fallback_ops == []


def test_long_chain_uses_few_slots():
    # softmax does not fuse with a softmax after it: one step per softmax
    body = "%x"
    for _ in range(12):
        body = f"nn.softmax({body})"
    mod = rl.parse(HEADER + f"def @main(%x: Tensor[(3, 7), float32]) {{ {body} }}")
    lib = rl.build(mod, target="llvm")
    plan = lib.graph.plan
    assert len(plan.steps) == 12
    assert len(plan.slots) <= 2           # ping-pong; the output is fresh for each call
    x = _rand(3, 7)
    _close(lib(x), rl.evaluate(mod, x))
    _close(lib(x), rl.evaluate(mod, x))   # the arena is reused between calls


INPLACE = HEADER + """
def @main(%x: Tensor[(4, 6), float32]) {
  %0 = cumsum(%x, axis=1);
  %1 = exp(%0);
  %2 = cumsum(%1, axis=0);
  negative(%2)
}"""


def test_native_kernels_never_run_in_place():
    # the core declares kernel arguments noalias: an output never shares an input's slot
    lib = rl.build(rl.parse(INPLACE), target="llvm")
    plan = lib.graph.plan
    for step in plan.steps:
        if step.native:
            ins = {plan.values[v].ref for v in step.inputs if plan.values[v].kind == "temp"}
            outs = {plan.values[v].ref for v in step.outputs if plan.values[v].kind == "temp"}
            assert not ins & outs
    x = _rand(4, 6)
    _close(lib(x), rl.evaluate(rl.parse(INPLACE), x))


def test_fallback_step_reuses_a_dying_input_in_place(monkeypatch):
    from relaylang.backend.llvm.lower import NoLowering
    from relaylang.backend.native import kernels
    monkeypatch.setattr(kernels, "lower", lambda fn, name, *consts: NoLowering("any"))
    mod = rl.parse(INPLACE)
    lib = rl.build(mod, target="llvm")
    plan = lib.graph.plan
    assert not any(s.native for s in plan.steps) and len(plan.steps) == 4
    exp_step = plan.steps[1]
    (src,), (dst,) = exp_step.inputs, exp_step.outputs
    assert plan.values[src].ref == plan.values[dst].ref
    assert len(plan.slots) == 1          # every step took its dying input's slot
    x = _rand(4, 6)
    _close(lib(x), rl.evaluate(mod, x))


def test_plan_storage_reuses_after_last_use():
    sizes = {0: 100, 1: 100, 2: 50, 3: 200}
    defined = {0: 0, 1: 1, 2: 2, 3: 3}
    last = {0: 1, 1: 2, 2: 3}
    slot_of, slot_bytes = plan_storage(sizes, defined, last)
    assert slot_of[0] != slot_of[1]
    assert slot_of[2] == slot_of[0]       # 0 died at step 1: its slot is free at step 2
    assert slot_bytes[slot_of[3]] >= 200
    assert len(slot_bytes) == 2


def test_tuple_outputs_and_projections():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4, 6), float32]) {
  %0 = split(%x, indices_or_sections=2, axis=1);
  %1 = nn.softmax(%0.0);
  %2 = exp(%1);
  (%2, %0.1, (%x, %0.0))
}""")
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "graph"
    x = _rand(4, 6)
    got = lib(x)
    _close(got, rl.evaluate(mod, x))
    assert isinstance(got[2], tuple)


def test_params_are_bound_as_constants():
    mod = rl.parse((ROOT / "examples" / "mlp.relay").read_text())
    rng = np.random.default_rng(0)
    params = {"fc1_weight": rng.standard_normal((128, 784)).astype("float32") * 0.05,
              "fc1_bias": rng.standard_normal(128).astype("float32"),
              "fc2_weight": rng.standard_normal((10, 128)).astype("float32") * 0.05,
              "fc2_bias": rng.standard_normal(10).astype("float32")}
    lib = rl.build(mod, target="llvm", params=params)
    assert [n for n, _ in lib.entry_params()] == ["data"]
    data = rng.standard_normal((1, 1, 28, 28)).astype("float32")
    expected = rl.evaluate(mod, data, *params.values())
    _close(lib(data), expected, rtol=1e-4)


def test_constant_result_is_a_copy():
    one = np.ones(2, "float32")
    mod = rl.parse(HEADER + "def @main(%x: Tensor[(2), float32]) { (%x, meta[relay.Constant][0]) }",
                   metadata={"relay.Constant": [one]})
    lib = rl.build(mod, target="llvm")
    a = lib(np.zeros(2, "float32"))[1]
    a[0] = 5
    assert lib(np.zeros(2, "float32"))[1][0] == 1


def test_results_kept_by_the_caller_are_not_overwritten():
    mod = rl.parse(ELEMENTWISE)
    lib = rl.build(mod, target="llvm")
    x, y = _rand(4, 5), _rand(4, 5, seed=1)
    first = lib(x, y)
    kept = first.copy()
    view = lib(y, x)[1:]                      # a view keeps its base alive too
    view_copy = view.copy()
    lib(x, x)
    np.testing.assert_array_equal(first, kept)
    np.testing.assert_array_equal(view, view_copy)
    lib(x, y)                                 # a dropped result's buffer may be reused
    _close(lib(x, y), rl.evaluate(mod, x, y))


def test_input_errors_are_one_line_before_running():
    lib = rl.build(rl.parse(ELEMENTWISE), target="llvm")
    x = _rand(4, 5)
    with pytest.raises(InputError, match=r"argument %y of @main: expected dtype float32"):
        lib(x, x.astype("float64"))
    with pytest.raises(InputError, match=r"expected shape \(4, 5\), got \(5, 4\)"):
        lib(x, x.T.copy())
    with pytest.raises(InputError, match=r"takes 2 argument\(s\)"):
        lib(x)
    with pytest.raises(KeyError):
        lib["nothing"]
    for call in (lambda: lib(x, x.astype("float64")), lambda: lib(x)):
        with pytest.raises(InputError) as e:
            call()
        assert "\n" not in str(e.value)


def test_unaligned_and_strided_inputs():
    mod = rl.parse(ELEMENTWISE)
    lib = rl.build(mod, target="llvm")
    big = _rand(8, 10)
    x = big[::2, ::2]                       # not contiguous
    raw = np.zeros(4 * 5 + 1, "float32")[1:].reshape(4, 5)  # not 64-byte aligned
    raw[...] = _rand(4, 5, seed=3)
    _close(lib(x, raw), rl.evaluate(mod, np.ascontiguousarray(x), raw))


def test_evaluate_and_create_executor_with_target():
    mod = rl.parse(ELEMENTWISE)
    x, y = _rand(4, 5), _rand(4, 5, seed=2)
    _close(rl.evaluate(mod, x, y, target="llvm"), rl.evaluate(mod, x, y))
    ex = rl.create_executor(mod, target="llvm")
    _close(ex(x, y), rl.evaluate(mod, x, y, target="interp"))
    with pytest.raises(ValueError, match="unknown target"):
        rl.build(mod, target="cuda")


def test_get_source():
    lib = rl.build(rl.parse(ELEMENTWISE), target="llvm")
    ll = lib.get_source("ll")
    assert "define" in ll and lib.kernel_names[0] in ll
    asm = lib.get_source("asm")
    assert lib.kernel_names[0] in asm
    with pytest.raises(ValueError):
        lib.get_source("ptx")


def test_fallback_ops_are_listed_sorted():
    # einsum of bool tensors has no native lowering; whatever does not lower is
    # listed, and the values still match
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(1, 4, 3, 3), float32]) {
  %0 = einsum((greater(%x, 0f),), equation="abcd->abcd");
  add(%x, cast(%0, dtype="float32"))
}""")
    lib = rl.build(mod, target="llvm")
    assert lib.fallback_ops == ["einsum"]
    for step in lib.graph.plan.steps:
        if not step.native:                 # a fused function blamed on its einsum
            assert set(step.ops) & set(lib.fallback_ops)
    x = _rand(1, 4, 3, 3)
    _close(lib(x), rl.evaluate(mod, x))


def test_parallel_kernel_matches(monkeypatch):
    monkeypatch.setenv("RELAY_NUM_THREADS", "3")
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(256, 512), float32]) {
  %0 = exp(%x);
  add(%0, %x)
}""")
    lib = rl.build(mod, target="llvm")
    runner = lib.graph.runners[0]
    x = _rand(256, 512)
    _close(lib(x), rl.evaluate(mod, x))
    if lib.graph.plan.steps[0].native and runner.extent >= 2:
        assert runner.parallel


def test_thread_pool_splits_and_raises():
    assert split(10, 3) == [(0, 4), (4, 7), (7, 10)]
    assert split(2, 8) == [(0, 1), (1, 2)]
    pool = ThreadPool(3)
    seen = np.zeros(100, dtype=np.int64)

    def mark(begin, end):
        seen[begin:end] += 1
    pool.run(mark, 100)
    assert (seen == 1).all()

    def fail(begin, end):
        if begin > 0:
            raise ValueError("slice failed")
    with pytest.raises(ValueError, match="slice failed"):
        pool.run(fail, 10)
    pool.run(mark, 100)                       # still usable after a failure
    assert (seen == 2).all()


@pytest.mark.parametrize("path", sorted((ROOT / "examples").glob("*.relay")),
                         ids=lambda p: p.stem)
def test_every_example_matches_the_interpreter(path, tmp_path):
    from relaylang.backend.params import random_input
    from relaylang.transform.bind_params import param_type
    mod = rl.parse(path.read_text())
    main = rl.transform.InferType()(mod)["main"]
    rng = np.random.default_rng(0)
    args = [random_input(p.name_hint, param_type(p), rng, positive="var" in p.name_hint)
            for p in main.params]
    lib = rl.build(mod, target="llvm")
    expected = rl.evaluate(mod, *args)
    _close(lib(*args), expected, rtol=1e-4)
    lib.export_library(str(tmp_path / "lib.rlib"))
    _close(rl.runtime.load_module(str(tmp_path / "lib.rlib"))(*args), expected, rtol=1e-4)


def test_num_threads_from_the_environment(monkeypatch):
    from relaylang.backend.native.threads import get_pool, num_threads
    monkeypatch.setenv("RELAY_NUM_THREADS", "3")
    assert num_threads() == 3 and get_pool().size == 3
    monkeypatch.setenv("RELAY_NUM_THREADS", "zero")
    assert num_threads() >= 1
    monkeypatch.delenv("RELAY_NUM_THREADS")
    assert num_threads() >= 1


def test_dropped_results_buffers_are_reused(monkeypatch):
    import relaylang.backend.native.graph_runtime as runtime
    lib = rl.build(rl.parse(ELEMENTWISE), target="llvm")
    x = runtime.aligned_empty((4, 5), "float32")
    x[...] = 1
    made = []
    # the one-native-call path (GraphRuntime.call) allocates its outputs with _new_output
    real = runtime._new_output
    monkeypatch.setattr(runtime, "_new_output", lambda *a: made.append(a) or real(*a))
    for _ in range(5):
        lib(x, x)
    assert len(made) == 1
    kept = lib(x, x)
    again = lib(x, x)
    assert kept is not again and len(made) == 2


def test_op_calls_outside_primitive_functions_are_wrapped():
    from relaylang.backend.build import build_optimised
    mod = rl.transform.InferType()(rl.parse(HEADER + """
def @main(%x: Tensor[(4), float32]) { %0 = exp(%x); (add(%0, %x), %0) }"""))
    lib = build_optimised(mod)                  # no FuseOps: bare op calls in @main
    assert lib.mode == "graph" and len(lib.graph.plan.steps) == 2
    x = np.arange(4, dtype="float32")
    _close(lib(x), rl.evaluate(mod, x))


def test_let_form_and_tuple_parameters_stay_graphs():
    from relaylang.backend.build import build_optimised
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4), float32], %t: (Tensor[(4), float32], Tensor[(2), int32])) {
  let %a = exp(%x);
  let %b = (%a, %t.1);
  let %c = add(%b.0, %t.0);
  (%c, %b.1)
}""")
    x = np.arange(4, dtype="float32")
    t = (np.ones(4, "float32"), np.array([1, 2], "int32"))
    expected = rl.evaluate(mod, x, t)
    lib = rl.build(mod, target="llvm")
    assert lib.mode == "graph"
    _close(lib(x, t), expected)
    anf = rl.transform.InferType()(rl.transform.get_pass("ToANormalForm")(mod))
    unfused = build_optimised(anf)
    assert unfused.mode == "graph"
    _close(unfused(x, t), expected)
    m = rl.graph_executor.GraphModule(lib)
    m.run(x=x, t=t)
    assert m.get_num_outputs() == 2
    _close(m.get_output(0), expected[0])


def test_zero_size_tensors():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(0, 5), float32], %y: Tensor[(3, 0), float32]) {
  (exp(%x), add(%y, 1f), sum(%x, axis=[0]))
}""")
    lib = rl.build(mod, target="llvm")
    x, y = np.zeros((0, 5), "float32"), np.zeros((3, 0), "float32")
    _close(lib(x, y), rl.evaluate(mod, x, y))


def test_kernel_status_is_reported_like_the_interpreter():
    from relaylang.backend.interpreter.machine import InterpreterError
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4), int32], %y: Tensor[(4), int32]) { floor_divide(%x, %y) }""")
    lib = rl.build(mod, target="llvm")
    x, y = np.arange(4, dtype="int32"), np.array([1, 0, 2, 1], "int32")
    with pytest.raises(InterpreterError) as interp:
        rl.evaluate(mod, x, y)
    with pytest.raises(InterpreterError) as native:
        lib(x, y)
    assert str(native.value) == str(interp.value)
    _close(lib(x, np.ones(4, "int32")), rl.evaluate(mod, x, np.ones(4, "int32")))


def test_a_users_array_is_passed_in_place_not_copied_for_alignment() -> None:
    """Kernel arguments promise only their element's alignment: NumPy arrays (16 bytes
    past a 64-byte boundary) reach the kernel without a copy."""
    import numpy as np

    from relaylang.backend.native import memory
    x = np.arange(1, 1 << 16, dtype="float32")[4:]      # 16 bytes past its start
    assert x.ctypes.data % 64 != 0 or x.base is not None
    assert memory.as_aligned(x) is x
    misaligned = np.frombuffer(np.zeros(4 * 8 + 1, np.uint8).data, np.float32, 8, offset=1)
    assert memory.as_aligned(misaligned) is not misaligned    # not aligned for its element
