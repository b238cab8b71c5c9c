"""Small random ONNX graphs (hypothesis) against onnxruntime: elementwise unary and binary
ops with broadcasting, reductions, Reshape, Transpose, Concat and Gemm, chained over
random shapes; the interpreter on every example, the LLVM backend on a few.

Only ops with a converter at opset 17 are drawn (`registry.lookup(op, 17)`), so the
strategies grow with the converters."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
hypothesis = pytest.importorskip("hypothesis")

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from onnx import helper
from onnx_check import check_model, make_model

from relaylang.frontend.onnx.registry import lookup

OPSET = 17
UNARY = ["Relu", "Neg", "Abs", "Tanh", "Sigmoid", "Exp", "Sqrt", "Log", "Floor", "Ceil",
         "Reciprocal", "Softsign", "Erf", "Sin", "Cos"]
BINARY = ["Add", "Sub", "Mul", "Div", "Max", "Min"]
REDUCE = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd",
          "ReduceSumSquare", "ReduceL2"]
SHAPE_OPS = ["Reshape", "Transpose", "Concat", "Gemm"]


def supported(ops: list[str]) -> list[str]:
    return [op for op in ops if lookup(op, OPSET) is not None]


KINDS = {"unary": supported(UNARY), "binary": supported(BINARY),
         "reduce": supported(REDUCE), **{op: supported([op]) for op in SHAPE_OPS}}
KINDS = {k: v for k, v in KINDS.items() if v}


@dataclass
class Graph:
    """A graph under construction: nodes, inputs (name -> shape), initializers, and the
    values computed so far (name -> shape)."""
    nodes: list[Any] = field(default_factory=list)
    inputs: dict[str, tuple[int, ...]] = field(default_factory=dict)
    inits: dict[str, np.ndarray] = field(default_factory=dict)
    values: dict[str, tuple[int, ...]] = field(default_factory=dict)
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add_input(self, shape: tuple[int, ...]) -> str:
        name = self.fresh("in")
        self.inputs[name] = shape
        self.values[name] = shape
        return name

    def add_init(self, array: np.ndarray) -> str:
        name = self.fresh("c")
        self.inits[name] = array
        return name

    def node(self, op: str, ins: list[str], shape: tuple[int, ...], **attrs: Any) -> str:
        out = self.fresh("v")
        self.nodes.append(helper.make_node(op, ins, [out], name=f"n{self.counter}", **attrs))
        self.values[out] = shape
        return out


def _broadcast_partner(draw: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """A shape that broadcasts with `shape` to `shape`: a suffix, some dims set to 1."""
    keep = draw(st.integers(0, len(shape)))
    suffix = shape[len(shape) - keep:]
    return tuple(1 if draw(st.booleans()) else d for d in suffix)


def _factor(draw: Any, size: int) -> tuple[int, ...]:
    """A random shape of `size` elements (rank 1..4)."""
    dims = []
    rest = size
    for _ in range(draw(st.integers(0, 3))):
        divisors = [d for d in range(1, rest + 1) if rest % d == 0]
        d = draw(st.sampled_from(divisors))
        dims.append(d)
        rest //= d
    dims.append(rest)
    return tuple(dims)


def step(draw: Any, g: Graph, x: str, rng: np.random.Generator) -> str:
    """One op applied to value `x` (and maybe a new input or constant). The op is picked
    with `rng` (uniformly: hypothesis's own choices lean to the first of a list), its
    attributes and shapes by hypothesis."""
    shape = g.values[x]
    rank = len(shape)
    kinds = [k for k in KINDS if k != "Gemm" or rank == 2]
    if rank == 0:
        kinds = [k for k in kinds if k in ("unary", "binary")]
    kind = str(rng.choice(sorted(kinds)))
    if kind == "unary":
        return g.node(str(rng.choice(KINDS["unary"])), [x], shape)
    if kind == "binary":
        op = str(rng.choice(KINDS["binary"]))
        other = g.add_input(_broadcast_partner(draw, shape))
        ins = [other, x] if draw(st.booleans()) else [x, other]
        return g.node(op, ins, shape)
    if kind == "reduce":
        op = str(rng.choice(KINDS["reduce"]))
        axes = sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1, max_size=rank)))
        axes = [a - rank if draw(st.booleans()) else a for a in axes]
        keepdims = draw(st.sampled_from([0, 1]))
        norm = {a % rank for a in axes}
        out = tuple((1 if keepdims else None) if i in norm else d for i, d in enumerate(shape))
        out = tuple(d for d in out if d is not None)
        if op == "ReduceSum":          # axes are an input from opset 13
            return g.node(op, [x, g.add_init(np.array(axes, np.int64))], out,
                          keepdims=keepdims)
        return g.node(op, [x], out, axes=axes, keepdims=keepdims)
    if kind == "Reshape":
        size = int(np.prod(shape))
        new = _factor(draw, size)
        spec = list(new)
        if draw(st.booleans()):
            spec[draw(st.integers(0, len(spec) - 1))] = -1
        return g.node("Reshape", [x, g.add_init(np.array(spec, np.int64))], new)
    if kind == "Transpose":
        perm = draw(st.permutations(list(range(rank))))
        return g.node("Transpose", [x], tuple(shape[p] for p in perm), perm=list(perm))
    if kind == "Concat":
        axis = draw(st.integers(-rank, rank - 1))
        extra = draw(st.integers(1, 3))
        other_shape = tuple(extra if i == axis % rank else d for i, d in enumerate(shape))
        other = g.add_input(other_shape)
        ins = [x, other, x] if draw(st.booleans()) else [other, x]
        total = sum(g.values[i][axis % rank] for i in ins)
        out = tuple(total if i == axis % rank else d for i, d in enumerate(shape))
        return g.node("Concat", ins, out, axis=axis)
    assert kind == "Gemm"
    m, k = shape
    n = draw(st.integers(1, 5))
    trans_a, trans_b = draw(st.sampled_from([0, 1])), draw(st.sampled_from([0, 1]))
    a = x
    if trans_a:
        a = g.node("Transpose", [x], (k, m), perm=[1, 0])
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    b = rng.uniform(-1, 1, (n, k) if trans_b else (k, n)).astype(np.float32)
    ins = [a, g.add_init(b)]
    if draw(st.booleans()):
        c_shape = draw(st.sampled_from([(m, n), (1, n), (n,), (m, 1), ()]))
        ins.append(g.add_init(rng.uniform(-1, 1, c_shape).astype(np.float32)))
    alpha = draw(st.sampled_from([1.0, 0.5, -2.0]))
    beta = draw(st.sampled_from([1.0, 0.25]))
    return g.node("Gemm", ins, (m, n), transA=trans_a, transB=trans_b, alpha=alpha,
                  beta=beta)


@st.composite
def graphs(draw: Any) -> tuple[Any, dict[str, np.ndarray]]:
    """A model of 1..5 ops over a random input, and its inputs."""
    g = Graph()
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if "Gemm" in KINDS and rng.random() < 0.3:
        shape = (draw(st.integers(1, 5)), draw(st.integers(1, 5)))
    else:
        shape = tuple(draw(st.lists(st.integers(1, 5), min_size=0, max_size=4)))
    x = g.add_input(shape)
    outputs = []
    for _ in range(draw(st.integers(1, 5))):
        x = step(draw, g, x, rng)
        if draw(st.integers(0, 4)) == 0:
            outputs.append(x)
    if x not in outputs:
        outputs.append(x)
    model = make_model(g.nodes, inputs={n: (s, "float32") for n, s in g.inputs.items()},
                       outputs={o: (g.values[o], "float32") for o in outputs},
                       initializers=g.inits, opset=OPSET)
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    feeds = {n: rng.uniform(-2, 2, s).astype(np.float32) for n, s in g.inputs.items()}
    return model, feeds


SETTINGS: dict[str, Any] = {
    "deadline": None, "derandomize": True, "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large]}


@pytest.mark.skipif(not KINDS, reason="no op of these strategies has a converter yet")
@settings(max_examples=30, **SETTINGS)
@given(graphs())
def test_random_graphs_on_the_interpreter(case: tuple[Any, dict[str, np.ndarray]]) -> None:
    model, feeds = case
    with np.errstate(all="ignore"):
        check_model(model, feeds, targets=("interp",))


@pytest.mark.skipif(not KINDS, reason="no op of these strategies has a converter yet")
@settings(max_examples=4, **SETTINGS)
@given(graphs())
def test_random_graphs_on_llvm(case: tuple[Any, dict[str, np.ndarray]]) -> None:
    model, feeds = case
    with np.errstate(all="ignore"):
        check_model(model, feeds, targets=("llvm",))


def test_the_strategies_cover_the_converted_ops() -> None:
    """The strategies draw from what is converted; the core ops are there."""
    assert "Add" in KINDS.get("binary", []) and "Relu" in KINDS.get("unary", [])
