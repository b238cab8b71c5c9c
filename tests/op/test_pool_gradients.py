"""Gradient rules of the pool family (relaylang/op/pool/gradients.py) against central
finite differences in float64 on random shapes (hypothesis), interpreter and LLVM
(grad_check.check_rule): window sizes, strides, dilation, padding, ceil_mode,
count_include_pad, layouts (NHWC, NCHW4c), 1-d/2-d/3-d, global and adaptive pools.
Max pools are checked on inputs without ties (a tie's gradient is a choice)."""
from __future__ import annotations

import numpy as np
import pytest
from grad_check import check_rule
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from relaylang.op import registry

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


def distinct(seed: int, *shape: int) -> np.ndarray:
    """Values with no ties, far apart (finite differences never swap a maximum)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    return (rng.permutation(n).astype(np.float64) * 0.1 + 0.01 * rng.random(n)).reshape(shape)


@st.composite
def pool_case(draw, nd):
    k = [draw(st.integers(1, 3)) for _ in range(nd)]
    s = [draw(st.integers(1, 3)) for _ in range(nd)]
    d = [draw(st.integers(1, 2)) for _ in range(nd)]
    before = [draw(st.integers(0, 1)) for _ in range(nd)]
    after = [draw(st.integers(0, 1)) for _ in range(nd)]
    sizes = []
    for j in range(nd):
        span = d[j] * (k[j] - 1) + 1
        low = max(1, span - before[j] - after[j])
        sizes.append(draw(st.integers(low, low + 4)))
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 3)), *sizes)
    attrs = {"pool_size": tuple(k), "strides": tuple(s), "dilation": tuple(d),
             "padding": tuple(before) + tuple(after), "ceil_mode": draw(st.booleans())}
    # TVM's geometry: under ceil_mode the last window must still start inside the
    # padded input (or it would pool padding only)
    for j in range(nd):
        span = d[j] * (k[j] - 1) + 1
        total = sizes[j] + before[j] + after[j]
        out = (total - span + (s[j] - 1 if attrs["ceil_mode"] else 0)) // s[j] + 1
        assume((out - 1) * s[j] < sizes[j] + before[j])
    return shape, attrs


@SETTINGS
@given(case=pool_case(2), include=st.booleans(), seed=st.integers(0, 99))
def test_avg_pool2d(case, include, seed):
    shape, attrs = case
    check_rule("nn.avg_pool2d", [distinct(seed, *shape)], count_include_pad=include, **attrs)


@SETTINGS
@given(case=pool_case(2), seed=st.integers(0, 99))
def test_max_pool2d(case, seed):
    shape, attrs = case
    check_rule("nn.max_pool2d", [distinct(seed, *shape)], **attrs)


@settings(max_examples=5, deadline=None, derandomize=True)
@given(case=pool_case(1), include=st.booleans(), seed=st.integers(0, 99))
def test_pool1d(case, include, seed):
    shape, attrs = case
    x = distinct(seed, *shape)
    check_rule("nn.max_pool1d", [x], **attrs)
    check_rule("nn.avg_pool1d", [x], count_include_pad=include, **attrs)


@settings(max_examples=4, deadline=None, derandomize=True)
@given(case=pool_case(3), include=st.booleans(), seed=st.integers(0, 99))
def test_pool3d(case, include, seed):
    shape, attrs = case
    x = distinct(seed, *shape)
    check_rule("nn.max_pool3d", [x], **attrs)
    check_rule("nn.avg_pool3d", [x], count_include_pad=include, **attrs)


@pytest.mark.parametrize("layout, shape", [("NHWC", (1, 6, 7, 2)), ("NCHW4c", (1, 2, 6, 5, 4))])
@pytest.mark.parametrize("op", ["nn.max_pool2d", "nn.avg_pool2d"])
def test_pool2d_layouts(op, layout, shape):
    check_rule(op, [distinct(0, *shape)], pool_size=(2, 2), strides=(1, 2), dilation=(2, 1),
               padding=(1, 0), layout=layout)


@pytest.mark.parametrize("layout, shape", [("NCHW", (2, 3, 4, 5)), ("NHWC", (2, 4, 5, 3))])
@pytest.mark.parametrize("op", ["nn.global_max_pool2d", "nn.global_avg_pool2d"])
def test_global_pools(op, layout, shape):
    check_rule(op, [distinct(1, *shape)], layout=layout)


@SETTINGS
@given(nd=st.integers(1, 3), data=st.data(), seed=st.integers(0, 99))
def test_adaptive_pools(nd, data, seed):
    """Windows [floor(i in / out), ceil((i + 1) in / out)) overlap when out does not
    divide in; an output size larger than the input repeats elements."""
    sizes = [data.draw(st.integers(1, 6)) for _ in range(nd)]
    outs = [data.draw(st.integers(1, 7)) for _ in range(nd)]
    layout = data.draw(st.sampled_from(["NC" + "DHW"[3 - nd:], "N" + "DHW"[3 - nd:] + "C"]))
    channels_last = layout.endswith("C")
    shape = (2, *sizes, 3) if channels_last else (2, 3, *sizes)
    x = distinct(seed, *shape)
    for kind in ("max", "avg"):
        check_rule(f"nn.adaptive_{kind}_pool{nd}d", [x], output_size=tuple(outs),
                   layout=layout)


def test_max_pool2d_gradient_runs_natively():
    """max_pool2d_with_argmax and scatter_elements have LLVM lowerings: no NumPy steps."""
    from grad_check import build_forward

    import relaylang as rl
    from relaylang.ir.module import IRModule
    for op, attrs in [("nn.max_pool2d", {}), ("nn.avg_pool2d", {"count_include_pad": True})]:
        params, call, _ = build_forward(op, [distinct(0, 2, 3, 8, 8)],
                                        {"pool_size": (3, 3), "strides": (2, 2),
                                         "padding": (1, 1), **attrs})
        adj = rl.var("adj", type_annotation=call.checked_type)
        grads = registry.implementation(op, "gradient")(call, adj)
        lib = rl.build(IRModule.from_expr(rl.Function(params + [adj], rl.Tuple(grads))),
                       target="llvm")
        assert not lib.fallback_ops, (op, lib.fallback_ops)


def test_every_pool_has_a_rule():
    pools = [d.name for d in registry.all_ops() if d.package == "relaylang.op.pool"]
    assert len(pools) == 14
    assert [n for n in pools if registry.implementation(n, "gradient") is None] == []
