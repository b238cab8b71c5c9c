"""The one-native-call path of a graph library (`GraphRuntime.call`): the same values
as the interpreter, fresh (unaliased) outputs, the checked path for anything else, and
the same behaviour after an export/load round trip."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.native import graph_runtime, native_pool
from relaylang.testing.models import example_inputs, get_workload

HEADER = '#[version = "0.0.5"]\n'

needs_native = pytest.mark.skipif(native_pool.functions() is None,
                                  reason="no native step runner on this host")


def _rand(*shape, seed=0, dtype="float32"):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _model(name, **kw):
    mod, params = get_workload(name, small=True, **kw)
    lib = rl.build(mod, target="llvm", params=params)
    interp = rl.create_executor(rl.transform.BindParams(params)(mod))
    return mod, params, lib, interp


def _close(a, b, rtol=1e-4, atol=1e-5):
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            _close(x, y, rtol, atol)
        return
    assert a.shape == b.shape and a.dtype == b.dtype
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@needs_native
@pytest.mark.parametrize("name,batch", [("mlp", 1), ("mlp", 3), ("mnist", 1), ("mnist", 2)])
def test_models_run_in_one_call_with_the_interpreters_values(name, batch):
    mod, params, lib, interp = _model(name, batch_size=batch)
    assert lib.fallback_ops == []
    results = []
    for seed in range(4):                   # repeated calls with different inputs
        (x,) = example_inputs(mod, params, seed=seed)
        got = lib(x)
        assert lib.graph._fast is not None, "every step is native: one call"
        _close(got, interp(x))
        results.append((x, got))
    # results kept by the caller are never written again by later calls
    for x, got in results:
        _close(got, interp(x))
    assert len({id(g) for _, g in results}) == len(results)
    assert len({g.ctypes.data for _, g in results}) == len(results)


@needs_native
def test_dropped_output_is_reused_held_one_and_its_views_are_not():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(3, 5), float32]) { exp(%x) }""")
    lib = rl.build(mod, target="llvm")
    x = _rand(3, 5)
    first = lib(x)
    address = first.ctypes.data
    del first
    again = lib(x)                          # the dropped output is written again
    assert again.ctypes.data == address
    row = again[1]                          # a view keeps the buffer
    del again
    third = lib(2 * x)
    assert third.ctypes.data != address
    np.testing.assert_allclose(row, np.exp(x[1]), rtol=1e-6)
    np.testing.assert_allclose(third, np.exp(2 * x), rtol=1e-6)


@needs_native
def test_an_output_passed_back_as_the_input_is_not_overwritten():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4, 5), float32]) { multiply(%x, 2f) }""")
    lib = rl.build(mod, target="llvm")
    y = lib(np.ones((4, 5), "float32"))
    z = lib(y)
    assert z is not y
    np.testing.assert_array_equal(y, 2)
    np.testing.assert_array_equal(z, 4)
    w = lib(lib(y))
    np.testing.assert_array_equal(w, 8)


@needs_native
def test_tuple_results_and_an_output_read_by_a_later_step():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(7, 3), float32], %y: Tensor[(7, 3), float32]) {
  %0 = nn.softmax(%x);
  %1 = add(%0, %y);
  (%1, %0, nn.softmax(%1))
}""")
    lib = rl.build(mod, target="llvm")
    for seed in range(3):
        x, y = _rand(7, 3, seed=seed), _rand(7, 3, seed=seed + 10)
        got = lib(x, y)
        assert lib.graph._fast is not None
        _close(got, rl.evaluate(mod, x, y))


@needs_native
def test_checked_path_and_fast_path_interleave():
    """Strided, read-only, list or wrong-dtype arguments take the checked path (which
    writes the shared pointer arrays); the fast path after it writes them again."""
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4, 6), float32]) { nn.relu(add(%x, 1f)) }""")
    lib = rl.build(mod, target="llvm")
    ref = rl.create_executor(mod)
    x = _rand(4, 6)
    strided = _rand(4, 12)[:, ::2]
    readonly = _rand(4, 6, seed=3)
    readonly.flags.writeable = False
    kept = []
    for arg in (x, strided, x, readonly, x, strided.tolist(), x):
        got = lib(arg)
        _close(got, ref(np.asarray(arg, "float32")))
        kept.append((np.array(arg, "float32"), got))
    for arg, got in kept:
        _close(got, ref(arg))
    assert len({g.ctypes.data for _, g in kept}) == len(kept)
    with pytest.raises(InputError):
        lib(x.astype("float64"))
    with pytest.raises(InputError):
        lib(x, x)
    with pytest.raises(InputError):
        lib(x[:3])
    _close(lib["main"](x), ref(x))


@needs_native
def test_kernel_status_is_raised_on_the_fast_path():
    from relaylang.backend.interpreter.machine import InterpreterError
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(4), int32], %y: Tensor[(4), int32]) { floor_divide(%x, %y) }""")
    lib = rl.build(mod, target="llvm")
    x, y = np.arange(4, dtype="int32"), np.array([1, 0, 2, 1], "int32")
    with pytest.raises(InterpreterError) as interp:
        rl.evaluate(mod, x, y)
    with pytest.raises(InterpreterError) as native:
        lib(x, y)
    assert lib.graph._fast is not None
    assert str(native.value) == str(interp.value)
    np.testing.assert_array_equal(lib(x, np.ones(4, "int32")), x)


def test_plans_with_a_fallback_step_or_a_constant_result_take_the_checked_path():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(1, 4, 3, 3), float32]) {
  %0 = einsum((greater(%x, 0f),), equation="abcd->abcd");
  add(%x, cast(%0, dtype="float32"))
}""")
    lib = rl.build(mod, target="llvm")
    assert lib.fallback_ops == ["einsum"]
    for seed in range(2):
        x = _rand(1, 4, 3, 3, seed=seed)
        _close(lib(x), rl.evaluate(mod, x))
    assert lib.graph._fast is None
    const = rl.parse(HEADER + """
def @main(%x: Tensor[(2), float32]) { (exp(%x), ones(shape=[2], dtype="float32")) }""")
    lib = rl.build(const, target="llvm")
    x = _rand(2)
    a = lib(x)
    a[1][...] = 5                   # the caller's copy of the constant
    _close(lib(x), rl.evaluate(const, x))
    assert lib.graph._fast is None


@needs_native
def test_exported_library_round_trip_keeps_the_one_call_path(tmp_path):
    mod, params, lib, interp = _model("mnist", batch_size=2)
    path = tmp_path / "mnist.rlib"
    lib.export_library(str(path))
    loaded = rl.runtime.load_module(str(path))
    outs = []
    for seed in range(3):
        (x,) = example_inputs(mod, params, seed=seed)
        got = loaded(x)
        assert loaded.graph._fast is not None
        _close(got, interp(x))
        _close(got, lib(x), rtol=1e-6, atol=1e-7)
        outs.append((x, got))
    for x, got in outs:
        _close(got, interp(x))


@needs_native
def test_small_outputs_are_element_aligned_large_ones_64_byte_aligned():
    mod = rl.parse(HEADER + """
def @main(%x: Tensor[(3), float64], %y: Tensor[(64, 32), float32]) { (exp(%x), exp(%y)) }""")
    lib = rl.build(mod, target="llvm")
    keep = [lib(np.ones(3), _rand(64, 32, seed=k)) for k in range(3)]
    for small, large in keep:
        assert small.flags.aligned and small.flags.c_contiguous
        assert large.ctypes.data % 64 == 0 and large.nbytes >= graph_runtime.ALIGNED_OUTPUT_BYTES


@needs_native
@pytest.mark.parametrize("threads", ["1", "2"])
def test_calls_from_several_threads(monkeypatch, threads):
    import threading
    monkeypatch.setenv("RELAY_NUM_THREADS", threads)
    mod, params, lib, interp = _model("mlp", batch_size=4)
    inputs = [example_inputs(mod, params, seed=s)[0] for s in range(4)]
    expected = [interp(x) for x in inputs]
    errors = []

    def work(k):
        try:
            for i in range(30):
                j = (k + i) % 4
                _close(lib(inputs[j]), expected[j])
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    workers = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    assert not errors, errors


@needs_native
def test_array_objects_and_data_addresses_give_the_same_values(monkeypatch):
    """`run_graph` reads the arrays' data pointers at the offset checked at start-up;
    without one (-1) the call passes data addresses: both give the interpreter's values."""
    assert native_pool.array_data_offset() in (-1, object.__basicsize__)
    funcs = native_pool.functions()
    mod, params, by_object, interp = _model("mlp", batch_size=2)
    monkeypatch.setattr(funcs, "data_offset", -1)
    _, _, by_address, _ = _model("mlp", batch_size=2)
    inputs = [example_inputs(mod, params, seed=s)[0] for s in range(3)]
    by_address(inputs[0])
    assert by_address.graph._fast is not None and not by_address.graph._fast.objects
    monkeypatch.undo()
    for x in inputs:
        want = interp(x)
        _close(by_object(x), want)
        _close(by_address(x), want)
    assert by_object.graph._fast.objects == (funcs.data_offset >= 0)
