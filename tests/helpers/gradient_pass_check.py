"""Gradients through the gradient pass (`rl.transform.gradient`), against central finite
differences in float64.

    check_gradient(mod, [x, y])                      # @main's gradient, both modes
    check_op_gradient("multiply", [x, y])            # sum(w * multiply(x, y)), w random

`check_gradient` differentiates `@main` of `mod` with the pass `Gradient` in each mode,
runs the result on each target (the interpreter, and natively with target="llvm":
a higher-order result runs in the backend's mixed mode), and compares its value with
`@main`'s and its gradients with central differences of the sum of `@main`'s float
results (the quantity the pass differentiates), computed with the interpreter.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.op import make
from relaylang.transform import get_pass

MODES = ("first_order", "higher_order")


def _flatten(v: Any) -> list[np.ndarray]:
    if isinstance(v, (tuple, list)):
        out: list[np.ndarray] = []
        for x in v:
            out.extend(_flatten(x))
        return out
    return [np.asarray(v)]


def objective(value: Any) -> float:
    return float(sum(np.sum(a, dtype=np.float64) for a in _flatten(value)
                     if a.dtype.kind == "f"))


def _moved(args: Sequence[Any], i: int, j: int | None, moved: np.ndarray) -> list[Any]:
    """`args` with field `j` of argument `i` (the argument itself: j None) replaced."""
    vals = list(args)
    if j is None:
        vals[i] = moved
    else:
        fields = list(vals[i])
        fields[j] = moved
        vals[i] = tuple(fields)
    return vals


def numeric_gradients(mod: IRModule, args: Sequence[Any], eps: float = 1e-6) -> list[Any]:
    """Central differences of the sum of @main's float results, per parameter."""
    ex = rl.create_executor(mod)
    out: list[Any] = []
    for i, value in enumerate(args):
        fields = list(value) if isinstance(value, tuple) else [value]
        grads = []
        for j, f in enumerate(fields):
            f = np.asarray(f)
            g = np.zeros(f.shape, dtype=np.float64)
            if f.dtype.kind == "f":
                where = j if isinstance(value, tuple) else None
                for idx in np.ndindex(f.shape):
                    up, down = f.copy(), f.copy()
                    up[idx] += eps
                    down[idx] -= eps
                    g[idx] = (objective(ex(*_moved(args, i, where, up)))
                              - objective(ex(*_moved(args, i, where, down)))) / (2 * eps)
            grads.append(g)
        out.append(tuple(grads) if isinstance(value, tuple) else grads[0])
    return out


def gradient_module(mod: IRModule, mode: str) -> IRModule:
    return get_pass(f"Gradient{{mode={mode}}}")(mod)


def check_gradient(mod: IRModule, args: Sequence[Any], *, modes: Sequence[str] = MODES,
                   targets: Sequence[str] = ("interp",), rtol: float = 1e-5,
                   atol: float = 1e-6, eps: float = 1e-6) -> None:
    want_value = rl.create_executor(mod)(*args)
    want = numeric_gradients(mod, args, eps)
    for mode in modes:
        gmod = gradient_module(mod, mode)
        for target in targets:
            value, grads = rl.create_executor(gmod, target=target)(*args)
            where = f"{mode} on {target}"
            for got, exp in zip(_flatten(value), _flatten(want_value)):
                np.testing.assert_allclose(got, exp, rtol=1e-9, atol=1e-12,
                                           err_msg=f"value, {where}")
            assert len(grads) == len(want), where
            for i, (g, w) in enumerate(zip(grads, want)):
                for gl, wl in zip(_flatten(g), _flatten(w)):
                    assert gl.shape == wl.shape, (where, i, gl.shape, wl.shape)
                    np.testing.assert_allclose(gl, wl, rtol=rtol, atol=atol,
                                               err_msg=f"gradient of parameter {i}, {where}")


def op_module(op: str, args: Sequence[np.ndarray], seed: int = 0, **attrs: Any) -> IRModule:
    """`@main(x0, x1, ...) = sum over outputs of w * op(x0, x1, ...)` with random constant
    weights `w` (so each output element has its own adjoint)."""
    params = [rl.var(f"x{i}", shape=a.shape, dtype=str(a.dtype)) for i, a in enumerate(args)]
    call = make.get_builder(op)(*params, **attrs)
    fn = rl.Function(params, call)
    from relaylang.typing import infer_types
    typed = infer_types(IRModule.from_expr(fn))
    out_t = typed["main"].checked_type.ret_type
    rng = np.random.default_rng(seed)
    from relaylang.ir.types import TupleType
    if isinstance(out_t, TupleType):
        fields = [rl.TupleGetItem(call, i) for i in range(len(out_t.fields))]
        types = list(out_t.fields)
    else:
        fields, types = [call], [out_t]
    weighted = []
    for f, t in zip(fields, types):
        if t.dtype.startswith("float"):
            w = rng.uniform(0.5, 1.5, size=tuple(int(d) for d in t.shape)).astype(t.dtype)
            weighted.append(make.multiply(f, rl.const(w, t.dtype)))
        else:
            weighted.append(f)
    body = weighted[0] if len(weighted) == 1 else rl.Tuple(weighted)
    return IRModule.from_expr(rl.Function(params, body))


def check_op_gradient(op: str, args: Sequence[np.ndarray], *, targets: Sequence[str] = ("interp",),
                      modes: Sequence[str] = ("first_order",), rtol: float = 1e-5,
                      atol: float = 1e-6, eps: float = 1e-6, **attrs: Any) -> None:
    check_gradient(op_module(op, args, **attrs), list(args), modes=modes, targets=targets,
                   rtol=rtol, atol=atol, eps=eps)
