"""Gradient rules of the tensor family (relaylang/op/tensor/gradients.py), through the
gradient pass, against central finite differences in float64 on random shapes
(hypothesis, broadcasting included), on the interpreter and on the LLVM backend."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from gradient_pass_check import check_gradient, check_op_gradient, op_module
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from relaylang.op import registry

SETTINGS = settings(max_examples=4, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))
ONE = settings(SETTINGS, max_examples=1)

Sampler = Callable[[np.random.Generator, tuple], np.ndarray]


def uniform(lo: float, hi: float) -> Sampler:
    return lambda rng, shape: rng.uniform(lo, hi, size=shape)


def away_from_zero(lo: float, hi: float) -> Sampler:
    return lambda rng, shape: rng.uniform(lo, hi, size=shape) * rng.choice([-1.0, 1.0], shape)


def off_integers(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    # piecewise-constant ops: stay away from their jumps
    return rng.integers(-3, 3, size=shape) + rng.uniform(0.1, 0.4, size=shape)


ANY = uniform(-1.5, 1.5)
POSITIVE = uniform(0.5, 2.0)
UNIT = uniform(-0.8, 0.8)

UNARY: dict[str, tuple[Sampler, dict[str, Any]]] = {
    "negative": (ANY, {}), "copy": (ANY, {}), "exp": (ANY, {}), "tanh": (ANY, {}),
    "sigmoid": (ANY, {}), "sin": (ANY, {}), "cos": (ANY, {}), "tan": (uniform(-1, 1), {}),
    "sinh": (ANY, {}), "cosh": (ANY, {}), "atan": (ANY, {}), "asinh": (ANY, {}),
    "erf": (ANY, {}), "log": (POSITIVE, {}), "log2": (POSITIVE, {}), "log10": (POSITIVE, {}),
    "sqrt": (POSITIVE, {}), "rsqrt": (POSITIVE, {}), "abs": (away_from_zero(0.2, 1.5), {}),
    "asin": (UNIT, {}), "acos": (UNIT, {}), "atanh": (UNIT, {}),
    "acosh": (uniform(1.2, 3.0), {}),
    "clip": (ANY, {"a_min": -0.5, "a_max": 0.7}),
    # piecewise constant: zero gradients
    "sign": (away_from_zero(0.2, 1.5), {}), "floor": (off_integers, {}),
    "ceil": (off_integers, {}), "round": (off_integers, {}), "trunc": (off_integers, {}),
    "zeros_like": (ANY, {}), "ones_like": (ANY, {}),
}

BINARY: dict[str, tuple[Sampler, Sampler]] = {
    "add": (ANY, ANY), "subtract": (ANY, ANY), "multiply": (ANY, ANY),
    "divide": (ANY, away_from_zero(0.5, 1.5)), "power": (POSITIVE, ANY),
    "maximum": (ANY, ANY), "minimum": (ANY, ANY),
    "mod": (ANY, uniform(0.7, 1.3)), "floor_mod": (ANY, uniform(0.7, 1.3)),
    "trunc_mod": (ANY, uniform(0.7, 1.3)),
    "floor_divide": (off_integers, uniform(0.9, 1.1)),
    "trunc_divide": (off_integers, uniform(0.9, 1.1)),
    "less": (ANY, ANY), "greater_equal": (ANY, ANY), "equal": (ANY, ANY),
}

shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@st.composite
def broadcast_shapes(draw: Any) -> tuple[tuple, tuple]:
    """Two shapes that broadcast: the second drops leading axes and has some 1s."""
    big = draw(shapes)
    drop = draw(st.integers(0, len(big)))
    small = tuple(1 if draw(st.booleans()) else d for d in big[drop:])
    return (small, big) if draw(st.booleans()) else (big, small)


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_rule(name: str) -> None:
    sampler, attrs = UNARY[name]

    @SETTINGS
    @given(shapes, st.integers(0, 2**32 - 1))
    def run(shape: tuple, seed: int) -> None:
        x = sampler(np.random.default_rng(seed), shape)
        check_op_gradient(name, [x], modes=("first_order", "higher_order"), **attrs)

    run()


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rule_with_broadcasting(name: str) -> None:
    sx, sy = BINARY[name]

    @SETTINGS
    @given(broadcast_shapes(), st.integers(0, 2**32 - 1))
    def run(pair: tuple[tuple, tuple], seed: int) -> None:
        rng = np.random.default_rng(seed)
        x, y = sx(rng, pair[0]), sy(rng, pair[1])
        check_op_gradient(name, [x, y], modes=("first_order", "higher_order"))

    run()


@SETTINGS
@given(broadcast_shapes(), st.integers(0, 2**32 - 1))
def test_where_rule(pair: tuple[tuple, tuple], seed: int) -> None:
    rng = np.random.default_rng(seed)
    cond = rng.uniform(size=pair[1]) > 0.5
    check_op_gradient("where", [cond, ANY(rng, pair[0]), ANY(rng, pair[1])],
                      modes=("first_order", "higher_order"))


def test_cast_rules() -> None:
    rng = np.random.default_rng(0)
    x = rng.uniform(-2, 2, size=(2, 3))
    # to float32 and back: the gradient is one; float32 rounding needs a wide step
    for dtype in ("float32", "float64"):
        check_op_gradient("cast", [x], dtype=dtype, modes=("first_order", "higher_order"),
                          eps=1e-2, rtol=1e-4, atol=1e-4, targets=("interp", "llvm"))
    check_op_gradient("cast_like", [x, rng.uniform(size=(3,)).astype("float32")],
                      eps=1e-2, rtol=1e-4, atol=1e-4, modes=("first_order", "higher_order"))


def test_integer_and_boolean_inputs_get_zero_gradients() -> None:
    rng = np.random.default_rng(1)
    i = rng.integers(0, 7, size=(2, 3)).astype("int32")
    b = rng.uniform(size=(2, 3)) > 0.5
    for name, args in [("bitwise_and", [i, i]), ("right_shift", [i, np.ones(3, "int32")]),
                       ("logical_xor", [b, b]), ("logical_not", [b]), ("isnan", [ANY(rng, (3,))]),
                       ("add", [i, i])]:
        check_op_gradient(name, args, modes=("first_order", "higher_order"))


# ---------------------------------------------------------------- on the LLVM backend

LLVM_UNARY = sorted(n for n in UNARY if n not in ("zeros_like", "ones_like"))


@pytest.mark.parametrize("name", LLVM_UNARY)
def test_unary_rule_on_llvm(name: str) -> None:
    sampler, attrs = UNARY[name]

    @ONE
    @given(shapes.filter(bool), st.integers(0, 2**32 - 1))
    def run(shape: tuple, seed: int) -> None:
        x = sampler(np.random.default_rng(seed), shape)
        check_op_gradient(name, [x], targets=("llvm",), **attrs)

    run()


@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_rule_on_llvm(name: str) -> None:
    sx, sy = BINARY[name]

    @ONE
    @given(broadcast_shapes(), st.integers(0, 2**32 - 1))
    def run(pair: tuple[tuple, tuple], seed: int) -> None:
        rng = np.random.default_rng(seed)
        check_op_gradient(name, [sx(rng, pair[0]), sy(rng, pair[1])], targets=("llvm",))

    run()


def test_where_and_higher_order_on_llvm() -> None:
    rng = np.random.default_rng(2)
    cond = rng.uniform(size=(3, 1)) > 0.5
    x, y = ANY(rng, (3, 4)), ANY(rng, (4,))
    check_op_gradient("where", [cond, x, y], targets=("llvm",),
                      modes=("first_order", "higher_order"))
    mod = op_module("divide", [x, away_from_zero(0.5, 1.5)(rng, (1, 4))])
    check_gradient(mod, [x, away_from_zero(0.5, 1.5)(rng, (1, 4))], targets=("llvm",),
                   modes=("higher_order",))


def test_every_rule_here_is_registered_for_its_op() -> None:
    for name in [*UNARY, *BINARY, "where", "cast", "cast_like", "fast_exp", "fast_tanh",
                 "fast_erf", "isinf", "isfinite", "reinterpret"]:
        assert registry.implementation(name, "gradient") is not None, name
