"""External functions (relaylang/op/extern/): rl.register_func / get_global_func,
call_dps_packed and rl.register_extern_op, on the interpreter and the LLVM backend."""
from __future__ import annotations

import numpy as np
import pytest

import relaylang as rl
from relaylang.op.extern import remove_extern_op, remove_global_func
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.op.extern.numpy_kernels import ExternalCallError

HEADER = '#[version = "0.0.5"]\n'
NAMES = ["call_dps_packed"]     # run against its relation below (test_op_registry_complete)


@pytest.fixture
def linear():
    """`env.linear` as in the MLC course: out = x @ w.T + b, written into `out`."""
    def fn(x, w, b, out):
        np.matmul(x, w.T, out=out)
        out += b
    rl.register_func("test.env.linear", fn)
    yield fn
    remove_global_func("test.env.linear")


LINEAR = HEADER + """def @main(%x: Tensor[(2, 4), float32], %w: Tensor[(3, 4), float32],
          %b: Tensor[(3), float32]) {
  %0 = call_dps_packed(%x, %w, %b, func="test.env.linear", out_shape=[2, 3], out_dtype="float32");
  nn.relu(%0)
}
"""


def _linear_args():
    rng = np.random.default_rng(0)
    return (rng.standard_normal((2, 4)).astype("float32"),
            rng.standard_normal((3, 4)).astype("float32"),
            rng.standard_normal(3).astype("float32"))


def test_register_func_forms():
    def f(out):
        return None
    try:
        assert rl.register_func("test.a", f) is f
        assert rl.get_global_func("test.a") is f

        @rl.register_func("test.b")
        def g(out):
            return None
        assert rl.get_global_func("test.b") is g
        with pytest.raises(ValueError, match="already registered"):
            rl.register_func("test.a", g)
        rl.register_func("test.a", g, override=True)
        assert rl.get_global_func("test.a") is g
        with pytest.raises(KeyError, match="did you mean test.a"):
            rl.get_global_func("test.aa")
        assert rl.get_global_func("test.zzz", allow_missing=True) is None
        with pytest.raises(TypeError, match="not callable"):
            rl.register_func("test.c", 3)
    finally:
        remove_global_func("test.a")
        remove_global_func("test.b")


def test_call_dps_packed_types_prints_and_runs(linear):
    mod = rl.parse(LINEAR)
    typed = rl.transform.InferType()(mod)
    ret = typed["main"].checked_type.ret_type
    assert tuple(ret.shape) == (2, 3) and ret.dtype == "float32"
    again = rl.parse(rl.astext(mod))
    assert rl.structural_equal(again, mod)
    x, w, b = _linear_args()
    want = np.maximum(x @ w.T + b, 0)
    np.testing.assert_allclose(rl.evaluate(mod, x, w, b), want, rtol=1e-5)
    lib = rl.build(mod, target="llvm")
    np.testing.assert_allclose(lib(x, w, b), want, rtol=1e-5)
    # called through a ctypes callback from the native step runner, not a NumPy fallback
    assert lib.fallback_ops == []
    assert [kind for _, kind in lib.external_steps] == ["dps"]


def test_the_function_sees_the_inputs_without_copies_and_read_only(linear):
    seen = []

    def spy(x, out):
        seen.append(x)
        out[...] = x * 2
    rl.register_func("test.spy", spy)
    try:
        mod = rl.parse(HEADER + 'def @main(%x: Tensor[(3), float32]) { call_dps_packed(%x, '
                       'func="test.spy", out_shape=[3]) }')
        x = np.arange(3, dtype="float32")
        np.testing.assert_array_equal(rl.evaluate(mod, x), x * 2)
        assert np.shares_memory(seen[0], x) and not seen[0].flags.writeable
    finally:
        remove_global_func("test.spy")


def test_calls_are_not_folded_or_dropped(linear):
    """The callee may have effects: FoldConstant leaves a call on constants alone, and
    DeadCodeElimination keeps an unused one."""
    text = HEADER + """def @main() {
  let %unused = call_dps_packed(meta[relay.Constant][0], func="test.env.linear",
                                out_shape=[1], out_dtype="float32");
  call_dps_packed(1f, func="test.env.linear", out_shape=[1], out_dtype="float32")
}
"""
    mod = rl.parse(text.replace("meta[relay.Constant][0]", "2f"))
    out = rl.transform.Sequential([rl.transform.FoldConstant(),
                                   rl.transform.DeadCodeElimination()])(mod)
    assert rl.astext(out).count("call_dps_packed") == 2


def test_failures_name_the_function(linear):
    def broken(x, out):
        raise ZeroDivisionError("boom")

    def wrong(x, out):
        return np.zeros((5,), "float32")
    rl.register_func("test.broken", broken)
    rl.register_func("test.wrong", wrong)
    try:
        for name, match in (("test.broken", "test.broken failed: ZeroDivisionError: boom"),
                            ("test.wrong", "returned shape \\[5\\], expected \\[3\\]"),
                            ("test.nothing", "no global function test.nothing")):
            mod = rl.parse(HEADER + f'def @main(%x: Tensor[(3), float32]) {{ call_dps_packed(%x, '
                           f'func="{name}", out_shape=[3]) }}')
            with pytest.raises((ExternalCallError, KeyError, InterpreterError),
                               match=match):
                rl.evaluate(mod, np.zeros(3, "float32"))
    finally:
        remove_global_func("test.broken")
        remove_global_func("test.wrong")


def test_out_shape_must_be_a_shape():
    mod = rl.parse(HEADER + 'def @main(%x: Tensor[(3), float32]) { call_dps_packed(%x, '
                   'func="f", out_shape=[-1]) }')
    with pytest.raises(rl.DiagnosticError, match="out_shape must be non-negative"):
        rl.transform.InferType()(mod)


@pytest.fixture
def env_relu():
    def relu(x, out):
        np.maximum(x, 0, out=out)

    def relation(x):
        if x.dtype not in ("float32", "float64"):
            raise ValueError(f"expects a float tensor, got {x.dtype}")
        return x
    yield rl.register_extern_op("test_env.relu", relation=relation, func=relu)
    remove_extern_op("test_env.relu")


def test_extern_op_parses_types_prints_and_runs(env_relu):
    text = HEADER + "def @main(%x: Tensor[(2, 3), float32]) { test_env.relu(%x) }\n"
    mod = rl.parse(text)
    assert "test_env.relu(%x)" in rl.astext(mod)
    x = np.array([[-1, 2, -3], [4, -5, 6]], "float32")
    np.testing.assert_array_equal(rl.evaluate(mod, x), np.maximum(x, 0))
    np.testing.assert_array_equal(rl.build(mod, target="llvm")(x), np.maximum(x, 0))
    bad = rl.parse(HEADER + "def @main(%x: Tensor[(2), int32]) { test_env.relu(%x) }\n")
    with pytest.raises(rl.DiagnosticError, match="expects a float tensor, got int32"):
        rl.transform.InferType()(bad)


def test_extern_ops_are_registered_once_and_removed(env_relu):
    with pytest.raises(ValueError, match="already registered"):
        rl.register_extern_op("test_env.relu", relation=lambda x: x, func=lambda x, o: None)
    with pytest.raises(ValueError, match="already registered"):
        rl.register_extern_op("nn.relu", relation=lambda x: x, func=lambda x, o: None)
    remove_extern_op("test_env.relu")
    with pytest.raises(rl.DiagnosticError):
        rl.parse(HEADER + "def @main(%x: Tensor[(2), float32]) { test_env.relu(%x) }\n")
    remove_extern_op("nn.relu")                   # only extern ops can be removed
    assert rl.op.registry.get_op_def("nn.relu") is not None


def test_a_missing_function_is_named_without_quotes():
    """The lookup's KeyError prints its message as written (KeyError quotes its
    argument), so diagnostics built from str() read cleanly."""
    with pytest.raises(KeyError) as caught:
        rl.get_global_func("test.absent")
    assert str(caught.value).startswith("no global function test.absent is registered")
