"""Gradient rules of the reduce family (relaylang/op/reduce/gradients.py), through the
gradient pass, against central finite differences in float64 on random shapes and axes
(hypothesis), on the interpreter and on the LLVM backend."""
from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from gradient_pass_check import check_op_gradient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

SETTINGS = settings(max_examples=5, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@st.composite
def reductions(draw: Any) -> tuple[tuple, dict[str, Any]]:
    """A shape (rank 1-3) and reduce attributes over it."""
    shape = tuple(draw(st.lists(st.integers(1, 3), min_size=1, max_size=3)))
    rank = len(shape)
    kind = draw(st.sampled_from(["all", "some", "negative"]))
    if kind == "all":
        axis = None
    else:
        picked = draw(st.lists(st.integers(0, rank - 1), min_size=1, max_size=rank, unique=True))
        axis = tuple(a - rank if kind == "negative" else a for a in picked)
    attrs: dict[str, Any] = {"axis": axis, "keepdims": draw(st.booleans())}
    if axis is not None and draw(st.integers(0, 3)) == 0:
        attrs["exclude"] = True
    return shape, attrs


def _values(name: str, shape: tuple, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if name == "prod":      # away from zero
        return rng.uniform(0.5, 1.5, size=shape) * rng.choice([-1.0, 1.0], shape)
    return rng.uniform(-2, 2, size=shape)   # distinct values: no ties for max/min


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reduction_rule(name: str) -> None:
    @SETTINGS
    @given(reductions(), st.integers(0, 2**32 - 1))
    def run(case: tuple[tuple, dict[str, Any]], seed: int) -> None:
        shape, attrs = case
        check_op_gradient(name, [_values(name, shape, seed)],
                          modes=("first_order", "higher_order"), **attrs)

    run()


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reduction_rule_on_llvm(name: str) -> None:
    @settings(SETTINGS, max_examples=2)
    @given(reductions(), st.integers(0, 2**32 - 1))
    def run(case: tuple[tuple, dict[str, Any]], seed: int) -> None:
        shape, attrs = case
        check_op_gradient(name, [_values(name, shape, seed)], targets=("llvm",), **attrs)

    run()


@pytest.mark.parametrize("unbiased", [False, True])
def test_variance_rule(unbiased: bool) -> None:
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, size=(3, 4))
    m = rng.uniform(-1, 1, size=(3, 1))
    check_op_gradient("variance", [x, m], axis=(1,), keepdims=True, unbiased=unbiased,
                      modes=("first_order", "higher_order"), targets=("interp", "llvm"))


def test_max_shares_the_gradient_between_ties() -> None:
    import relaylang as rl
    from relaylang.transform.gradient import gradient
    x = rl.var("x", shape=(4,), dtype="float64")
    g = gradient(rl.Function([x], rl.max(x)), mode="first_order")
    _, (dx,) = rl.evaluate(rl.IRModule.from_expr(g), np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_allclose(dx, [0.0, 0.5, 0.5, 0.0])


def test_arg_reductions_and_boolean_reductions_have_zero_gradients() -> None:
    rng = np.random.default_rng(4)
    x = rng.uniform(-2, 2, size=(2, 3))
    for name in ("argmax", "argmin"):
        check_op_gradient(name, [x], axis=(1,), modes=("first_order", "higher_order"))
    check_op_gradient("any", [x > 0], axis=(0,), modes=("first_order", "higher_order"))
