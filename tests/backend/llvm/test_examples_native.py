"""Every program of examples/*.relay and every golden-test program that runs (tests/golden/:
the cases that type-check and whose `@main` takes tensors and runs in the interpreter) run
natively and agree with the interpreter on random inputs (drawn as the fuzz tests draw
them: tests/helpers/pass_helpers.py `main_args`, bools random).

Native is `rl.build(mod, target="llvm")`: a graph of native kernels, native functions for
first-order control flow ("program" mode), or mixed mode (the interpreter's machine calling
native kernels) for closures, ADTs and references. A program whose inputs cannot be
generated or that the interpreter refuses is skipped, with the reason. Tolerances: float32
rtol 1e-5 atol 1e-6, float16 rtol 1e-2, float64 rtol 1e-7 - but a result is compared at the
tolerance of the least precise float input when that is looser (a float64 cast of float32
work is as precise as float32) - integers and bools exactly, NaN equal to NaN.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pass_helpers import main_args

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.backend.interpreter.values import ConstructorValue, RefValue
from relaylang.testing.checks import value_difference
from relaylang.transform import InferType

ROOT = Path(__file__).resolve().parents[3]
RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-7}
ATOL = {"float16": 1e-3, "float32": 1e-6, "float64": 1e-12}
EVALUATION_ERRORS = (rl.DiagnosticError, InterpreterError, InputError, NotImplementedError)


def programs() -> list[Any]:
    """(id, path, case index or None) of every example and golden case."""
    from relaylang.testing import read_cases
    found = [pytest.param(p, None, id=f"examples/{p.name}")
             for p in sorted((ROOT / "examples").glob("*.relay"))]
    golden = ROOT / "tests" / "golden"
    for path in sorted(golden.rglob("*.relay")):
        for case in read_cases(path):
            found.append(pytest.param(path, case.index,
                                      id=f"{path.relative_to(golden)}#{case.index}"))
    return found


def text_of(path: Path, index: int | None) -> str:
    if index is None:
        return path.read_text()
    from relaylang.testing import read_cases
    return read_cases(path)[index].text


def least_precise(args: list[np.ndarray]) -> str:
    """The least precise float dtype of the inputs: a float64 result computed from float32
    inputs (a cast at the end) is compared with float32's tolerance."""
    floats = [str(a.dtype) for a in args if str(a.dtype) in RTOL]
    return max(floats, key=lambda d: RTOL[d], default="float64")


def difference(native: Any, expected: Any, floor: str = "float64") -> str | None:
    """None when the values agree: tensors within the tolerance of their dtype or of
    `floor`, the looser (NaN equal); tuples, ADT values and references field by field,
    closures by being callable."""
    stack = [("result", native, expected)]
    while stack:
        path, x, y = stack.pop()
        if isinstance(y, (np.ndarray, np.generic)):
            x, y = np.asarray(x), np.asarray(y)
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"{path}: native {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
            d = str(y.dtype)
            rtol, atol = max(RTOL[floor], RTOL.get(d, 0)), max(ATOL[floor], ATOL.get(d, 0))
            same = (np.allclose(x.astype("float64"), y.astype("float64"), rtol=rtol,
                                atol=atol, equal_nan=True) if d in RTOL
                    else np.array_equal(x, y))
            if not same:
                return f"{path}: native {x!r} vs interpreter {y!r}"
        elif isinstance(y, tuple):
            if not isinstance(x, tuple) or len(x) != len(y):
                return f"{path}: native {x!r} vs interpreter {y!r}"
            stack += [(f"{path}[{i}]", u, v) for i, (u, v) in enumerate(zip(x, y))]
        elif isinstance(y, ConstructorValue):
            if not isinstance(x, ConstructorValue) or x.name != y.name:
                return f"{path}: native {x!r} vs interpreter {y!r}"
            stack += [(f"{path}.{i}", u, v) for i, (u, v) in enumerate(zip(x.fields, y.fields))]
        elif isinstance(y, RefValue):
            if not isinstance(x, RefValue):
                return f"{path}: native {x!r} vs interpreter {y!r}"
            stack.append((f"{path}.value", x.value, y.value))
        else:
            why = value_difference(y, x)
            if why is not None:
                return f"{path}: {why}"
    return None


@pytest.mark.parametrize("path, index", programs())
def test_program_runs_natively_like_the_interpreter(path: Path, index: int | None) -> None:
    name = path.name if index is None else f"{path.parent.name}/{path.name}#{index}"
    try:
        mod = InferType()(rl.parse(text_of(path, index), source_name=name))
    except rl.DiagnosticError:
        pytest.skip("a case about a diagnostic: it does not type-check")
    if "main" not in {gv.name_hint for gv in mod.functions}:
        pytest.skip("no @main")
    args = main_args(mod, seed=0, bools="random")
    if args is None:
        pytest.skip("@main takes a parameter that is not a tensor: no inputs to generate")
    try:
        expected = rl.evaluate(mod, *args)
    except EVALUATION_ERRORS as e:
        pytest.skip(f"the interpreter does not run it: {type(e).__name__}: {e}"[:300])
    floor = least_precise(args)
    lib = rl.build(mod, target="llvm")
    assert lib.mode in ("graph", "program", "mixed")
    why = difference(lib(*args), expected, floor)
    assert why is None, f"{name} ({lib.mode} mode, fallback ops " \
                        f"{sorted(lib.fallback_ops)}): {why}"
