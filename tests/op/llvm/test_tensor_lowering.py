"""Every LLVM lowering of the tensor family against the interpreter (the NumPy
kernels), per dtype, over odd shapes with broadcasting both ways, size-1 and size-0
dimensions. The ops of one dtype and arity run as one program (a tuple of results), so
each case compiles one module."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

import relaylang as rl
from relaylang.op.registry import all_ops, implementation

HEAD = '#[version = "0.0.5"]\n'
DTYPES = ["float32", "float16", "float64", "int8", "int32", "int64", "uint8", "bool"]
SKIP = {"reinterpret", "cast", "cast_like", "clip", "where"}   # own tests below


def _tensor_ops(arity: int) -> list[str]:
    names = []
    for op in all_ops():
        if op.package.endswith("op.tensor") and op.num_inputs == arity and \
                op.name not in SKIP and implementation(op.name, "llvm") is not None:
            names.append(op.name)
    return sorted(names)


def _types_ok(text: str) -> bool:
    try:
        rl.transform.InferType()(rl.parse(text))
        return True
    except rl.DiagnosticError:
        return False


def _values(shape: tuple, dtype: str, rng: np.random.Generator, divisor: bool = False
            ) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(1 if divisor else 0, 7 if divisor else 200, shape).astype(dtype)
    if dtype.startswith("int"):
        if divisor:
            v = rng.integers(1, 7, shape) * rng.choice([-1, 1], shape)
            return v.astype(dtype)
        return rng.integers(-100, 100, shape).astype(dtype)
    v = rng.standard_normal(shape) * 3
    if divisor:
        v = np.where(np.abs(v) < 0.1, 0.5, v)
    return v.astype(dtype)


def _program(ops: list[str], params: list[tuple[tuple, str]], fmt: str) -> str:
    decl = ", ".join(f"%{chr(120 + k)}: Tensor[{s if s else '()'}, {d}]"
                     for k, (s, d) in enumerate(params))
    calls = [fmt.format(op) for op in ops]
    body = f"({', '.join(calls)},)" if len(calls) == 1 else f"({', '.join(calls)})"
    return HEAD + f"def @main({decl}) {{ {body} }}\n"


@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_ops(dtype: str) -> None:
    shape = (3, 17)
    ops = [op for op in _tensor_ops(1)
           if _types_ok(_program([op], [(shape, dtype)], "{}(%x)"))]
    if not dtype.startswith("float"):
        # integer tanh truncates tanh(-19.0): NumPy's own tanh gives -1.0 exactly, libm's
        # -0.9999999999999999 (a float64 ulp, truncated to an integer)
        ops = [op for op in ops if not op.endswith("tanh")]
    assert ops
    rng = np.random.default_rng(1)
    text = _program(ops, [(shape, dtype)], "{}(%x)")
    x = _values(shape, dtype, rng)
    if dtype.startswith("float"):
        x[0, :5] = np.array([np.nan, np.inf, -np.inf, -0.0, 0.5])
    assert_matches_interpreter(text, x)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("xs,ys", [((4, 9), (9,)), ((1, 5), (3, 1)), ((2, 0, 3), (1, 3)),
                                   ((1,), (1, 1))])
def test_binary_ops(dtype: str, xs: tuple, ys: tuple) -> None:
    ops = [op for op in _tensor_ops(2)
           if _types_ok(_program([op], [(xs, dtype), (ys, dtype)], "{}(%x, %y)"))]
    assert ops
    rng = np.random.default_rng(2)
    x, y = _values(xs, dtype, rng), _values(ys, dtype, rng, divisor=True)
    if dtype.startswith(("int", "uint")):
        shifts = [op for op in ops if op.endswith("_shift")]
        others = [op for op in ops if op not in shifts and op != "power"]
        assert_matches_interpreter(_program(others, [(xs, dtype), (ys, dtype)], "{}(%x, %y)"),
                                   x, y)
        small = np.abs(y) % 5
        assert_matches_interpreter(
            _program(shifts + ["power"], [(xs, dtype), (ys, dtype)], "{}(%x, %y)"), x, small)
        return
    assert_matches_interpreter(_program(ops, [(xs, dtype), (ys, dtype)], "{}(%x, %y)"), x, y)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int32", "uint8"])
def test_clip_cast_where(dtype: str) -> None:
    rng = np.random.default_rng(3)
    x = _values((5, 7), dtype, rng)
    c = rng.random((7,)) > 0.5
    casts = ", ".join(f'cast(%x, dtype="{d}")' for d in DTYPES)
    text = HEAD + (f"def @main(%x: Tensor[(5, 7), {dtype}], %c: Tensor[(7), bool]) {{"
                   f" (clip(%x, a_min=-2.5f, a_max=40.7f), where(%c, %x, clip(%x, a_min=0f,"
                   f" a_max=1f)), {casts}, cast_like(%x, %c)) }}\n")
    assert_matches_interpreter(text, x, c)


def test_power_with_constant_exponents() -> None:
    rng = np.random.default_rng(4)
    x = _values((33,), "float32", rng)
    x[:4] = [-np.inf, -0.0, np.nan, 0.0]
    exps = ["0f", "1f", "2f", "3f", "4f", "-1f", "-2f", "0.5f", "-0.5f", "1.5f"]
    body = ", ".join(f"power(%x, {e})" for e in exps)
    assert_matches_interpreter(HEAD + f"def @main(%x: Tensor[(33), float32]) {{ ({body}) }}\n",
                               x)
