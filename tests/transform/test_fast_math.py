"""FastMath and the fast_exp / fast_tanh / fast_erf ops: the stated error bounds over a wide
range, exact fallbacks for other dtypes, the rewrite, its opt level, deep programs."""
from __future__ import annotations

import math

import numpy as np
import pytest
from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.ir.expr import Call, Function, GlobalVar, Op, Var
from relaylang.ir.module import IRModule
from relaylang.ir.traverse import post_order
from relaylang.ir.types import TensorType
from relaylang.op import get as get_op
from relaylang.op import get_op_def
from relaylang.op.numpy_support import erf
from relaylang.op.registry import OpPattern
from relaylang.transform import PassContext, get_pass

FAST = get_pass("FastMath")
HEADER = '#[version = "0.0.5"]\n'

# float32 points: 2e6 evenly in [-100, 100], and tiny magnitudes of both signs.
TINY = np.geomspace(1e-30, 1e-3, 1000)
X32 = np.concatenate([np.linspace(-100, 100, 2_000_001), TINY, -TINY]).astype(np.float32)
X64 = X32.astype(np.float64)


def run(name: str, x: np.ndarray) -> np.ndarray:
    opdef = get_op_def(name)
    assert opdef is not None and opdef.kernel is not None
    out = opdef.kernel([x], None)
    assert out.dtype == x.dtype and out.shape == x.shape
    return out


def relative(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got.astype(np.float64) - want) / np.abs(want)


def test_fast_exp_error_bounds() -> None:
    got = run("fast_exp", X32)
    want = np.exp(X64)
    near = np.abs(X64) <= 20
    assert relative(got[near], want[near]).max() < 1.5e-6
    normal = (X64 >= -87) & (X64 < 88.376)
    assert relative(got[normal], want[normal]).max() < 5e-6
    tiny = X64 < -87                        # exp is denormal there; the result flushes to 0
    assert np.abs(got[tiny] - want[tiny]).max() < 1.2e-38
    assert np.all(np.isinf(got[X64 >= 88.377]))
    assert run("fast_exp", np.array([0.0], np.float32))[0] == 1.0


def test_fast_tanh_error_bounds() -> None:
    got = run("fast_tanh", X32)
    want = np.tanh(X64)
    assert np.abs(got - want).max() < 5e-7
    big, small = np.abs(X64) >= 1e-3, (np.abs(X64) < 1e-3) & (X64 != 0)
    assert relative(got[big], want[big]).max() < 5e-7
    assert relative(got[small], want[small]).max() < 3e-7
    assert np.all(got[X64 > 9] == 1) and np.all(got[X64 < -9] == -1) and got[X64 == 0] == 0


def test_fast_erf_error_bounds() -> None:
    got = run("fast_erf", X32)
    want = erf(X64)
    assert np.abs(got - want).max() < 5e-7
    big, small = np.abs(X64) >= 1e-3, (np.abs(X64) < 1e-3) & (X64 != 0)
    assert relative(got[big], want[big]).max() < 5e-7
    assert relative(got[small], want[small]).max() < 3e-7
    assert got[X64 > 4].min() == 1 and got[X64 < -4].max() == -1 and got[X64 == 0] == 0
    # The reference itself: math.erf at a few points.
    pts = np.array([-3.3, -0.7, 0.2, 1.5], np.float32)
    exact = [math.erf(float(v)) for v in pts]
    np.testing.assert_allclose(run("fast_erf", pts), exact, atol=5e-7)


def test_fast_erf_float16_uses_tvms_float16_steps() -> None:
    x = np.linspace(-10, 10, 20001).astype(np.float16)
    got = run("fast_erf", x)
    assert np.abs(got.astype(np.float64) - erf(x.astype(np.float64))).max() < 0.05


@pytest.mark.parametrize("name, exact", [("fast_exp", "exp"), ("fast_tanh", "tanh"),
                                         ("fast_erf", "erf")])
def test_other_dtypes_get_the_exact_function(name: str, exact: str) -> None:
    x = np.linspace(-20, 20, 4001)
    assert run(name, x).tolist() == run(exact, x).tolist()
    ints = np.arange(-5, 6, dtype=np.int32)
    assert run(name, ints).tolist() == run(exact, ints).tolist()


@pytest.mark.parametrize("name", ["fast_exp", "fast_tanh", "fast_erf"])
def test_nan_stays_nan_and_infinities_saturate(name: str) -> None:
    got = run(name, np.array([np.nan, np.inf, -np.inf], np.float32))
    want = {"fast_exp": [np.inf, 0.0], "fast_tanh": [1.0, -1.0], "fast_erf": [1.0, -1.0]}
    assert np.isnan(got[0]) and got[1:].tolist() == want[name]


@pytest.mark.parametrize("name", ["fast_exp", "fast_tanh", "fast_erf"])
def test_registered_elementwise_with_the_identity_relation(name: str) -> None:
    opdef = get_op_def(name)
    assert opdef is not None and opdef.num_inputs == 1 and opdef.pattern is OpPattern.ELEMWISE
    out = opdef.type_rel([TensorType((2, 3), "float16")], None)
    assert isinstance(out, TensorType) and (out.shape, out.dtype) == ((2, 3), "float16")


def test_fast_softmax_uses_fast_exp_within_its_bound() -> None:
    from relaylang.op.nn import SoftmaxAttrs
    x = np.random.default_rng(0).uniform(-30, 30, (64, 50)).astype(np.float32)
    attrs = SoftmaxAttrs(axis=1)
    got = get_op_def("nn.fast_softmax").kernel([x], attrs)
    shifted = x.astype(np.float64) - x.max(axis=1, keepdims=True)
    want = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)      # fast_exp's 4e-6 bound
    exact = get_op_def("nn.softmax").kernel([x], attrs)
    assert not np.array_equal(got, exact)          # the approximation is really used


def test_rewrites_and_keeps_softmax_axis_and_spans() -> None:
    src = HEADER + """def @main(%x: Tensor[(2, 3), float32]) {
  %0 = nn.softmax(%x, axis=0);
  %1 = tanh(%0);
  erf(exp(%1))
}"""
    mod = rl.parse(src)
    with PassContext(opt_level=4):
        out = FAST(mod)
    calls = [n for n in post_order(out["main"]) if isinstance(n, Call)]
    assert [c.op.name for c in calls] == ["nn.fast_softmax", "fast_tanh", "fast_exp", "fast_erf"]
    assert calls[0].attrs.axis == 0
    assert calls[1].span is not None and calls[1].span.line == 4
    args = main_args(mod)
    # Within the golden tolerance: the fast ops' errors are below 5e-6 relative.
    assert same_value(rl.evaluate(mod, *args), rl.evaluate(out, *args))
    with PassContext(opt_level=4):
        assert rl.astext(FAST(out)) == rl.astext(out)               # idempotent


def test_opt_level_4_as_tvm() -> None:
    assert FAST.info.opt_level == 4 and FAST.name == "FastMath"
    mod = rl.parse(HEADER + "def @main(%x: Tensor[(3), float32]) { exp(%x) }")
    with PassContext(disabled_pass=["FuseOps"]):
        o3 = rl.transform.optimize(mod, opt_level=3)
        o4 = rl.transform.optimize(mod, opt_level=4)
    assert "fast_exp" not in rl.astext(o3) and "fast_exp(" in rl.astext(o4)


def test_100k_deep_chain() -> None:
    x = Var("x", TensorType((2,), "float32"))
    e = x
    for i in range(100_000):
        e = Call(get_op(("exp", "tanh")[i % 2]), (e,))
    mod = IRModule({GlobalVar("main"): Function((x,), e)})
    out = FAST(mod)
    names = {n.name for n in post_order(out["main"]) if isinstance(n, Op)}
    assert names == {"fast_exp", "fast_tanh"}
