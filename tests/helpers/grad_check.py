"""Check an op's gradient rule against central finite differences, directly (without the
gradient pass).

    check_rule("nn.dense", [x, w], units=None)           # values: numpy float64 arrays

builds the forward call on typed Vars with the op's builder, types it, calls the rule
(`registry.implementation(op, "gradient")`) with a random adjoint (one Var per output
tensor; a tuple output gets a Tuple of them), evaluates the rule's expressions with the
interpreter (and, with `llvm=True`, natively with rl.evaluate(..., target="llvm")), and
compares each input's gradient with central differences in float64 of
sum(adjoint * op(inputs)), computed with the op's NumPy kernel.

An input is a numpy array or a tuple of them (a tuple-typed input, e.g. concatenate's).
`nondiff`: indices of inputs that are not differentiable (integer indices): their
gradient must be zeros. `tuple_var`: pass a tuple input as one tuple-typed Var (as the
gradient pass does after ANF) instead of a Tuple of Vars.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import relaylang as rl
from relaylang.ir.expr import Tuple as TupleNode
from relaylang.ir.module import IRModule
from relaylang.ir.types import TensorType, TupleType
from relaylang.op import make, registry
from relaylang.typing import infer_types


def _tensor_type(a: np.ndarray) -> TensorType:
    return TensorType(tuple(int(d) for d in a.shape), str(a.dtype))


def _leaves(t: Any) -> list[TensorType]:
    if isinstance(t, TupleType):
        out: list[TensorType] = []
        for f in t.fields:
            out.extend(_leaves(f))
        return out
    return [t]


def _flatten(v: Any) -> list[np.ndarray]:
    if isinstance(v, (tuple, list)):
        out: list[np.ndarray] = []
        for x in v:
            out.extend(_flatten(x))
        return out
    return [np.asarray(v)]


def build_forward(op: str, inputs: list[Any], attrs: dict[str, Any], tuple_var: bool = False
                  ) -> tuple[list[Any], Any, list[np.ndarray]]:
    """(the function's parameters, the typed forward call, the flat parameter values)."""
    params, args, values = [], [], []
    for i, value in enumerate(inputs):
        if isinstance(value, tuple):
            if tuple_var:
                v = rl.var(f"x{i}", type_annotation=TupleType(
                    tuple(_tensor_type(np.asarray(f)) for f in value)))
                params.append(v)
                args.append(v)
                values.append(tuple(np.asarray(f) for f in value))
            else:
                fields = [rl.var(f"x{i}_{j}", type_annotation=_tensor_type(np.asarray(f)))
                          for j, f in enumerate(value)]
                params.extend(fields)
                args.append(TupleNode(tuple(fields)))
                values.extend(np.asarray(f) for f in value)
        else:
            v = rl.var(f"x{i}", type_annotation=_tensor_type(np.asarray(value)))
            params.append(v)
            args.append(v)
            values.append(np.asarray(value))
    call = make.get_builder(op)(*args, **attrs)
    infer_types(IRModule.from_expr(rl.Function(params, call)))
    return params, call, values


def rule_outputs(op: str, inputs: list[Any], attrs: dict[str, Any], adjoints: list[np.ndarray],
                 target: str = "interp", tuple_var: bool = False) -> list[Any]:
    """The rule's gradients (one per input: an array, or a tuple of arrays)."""
    params, call, values = build_forward(op, inputs, attrs, tuple_var)
    leaves = _leaves(call.checked_type)
    adj_vars = [rl.var(f"adj{i}", type_annotation=t) for i, t in enumerate(leaves)]
    grad = adj_vars[0] if not isinstance(call.checked_type, TupleType) else \
        _rebuild(call.checked_type, iter(adj_vars))
    rule = registry.implementation(op, "gradient")
    assert rule is not None, f"{op} has no gradient rule"
    grads = rule(call, grad)
    assert len(grads) == len(call.args), (op, len(grads), len(call.args))
    fn = rl.Function(params + adj_vars, rl.Tuple(list(grads)))
    mod = IRModule.from_expr(fn)
    out = rl.evaluate(mod, *values, *adjoints, target=target)
    return list(out)


def _rebuild(t: Any, it: Any) -> Any:
    if isinstance(t, TupleType):
        return rl.Tuple([_rebuild(f, it) for f in t.fields])
    return next(it)


def numeric_gradients(op: str, inputs: list[Any], attrs: dict[str, Any],
                      adjoints: list[np.ndarray], nondiff: tuple[int, ...] = (),
                      eps: float = 1e-6) -> list[Any]:
    """Central differences of sum(adjoint * op(inputs)) with the op's NumPy kernel."""
    opdef = registry.get_op_def(op)
    _, call, _ = build_forward(op, inputs, attrs)
    kattrs = call.attrs

    def objective(vals: list[Any]) -> float:
        out = _flatten(opdef.kernel([v if not isinstance(v, tuple) else tuple(v) for v in vals],
                                    kattrs))
        return float(sum(np.sum(a.astype(np.float64) * o.astype(np.float64))
                         for a, o in zip(adjoints, out)))

    def moved(i: int, j: int, idx: tuple, delta: float) -> list[Any]:
        """The inputs with element idx of input i (field j of a tuple input) moved."""
        vals = list(inputs)
        value = inputs[i]
        fields = list(value) if isinstance(value, tuple) else [value]
        f = np.array(fields[j], dtype=np.float64)
        f[idx] += delta
        fields[j] = f
        vals[i] = tuple(fields) if isinstance(value, tuple) else f
        return vals

    result: list[Any] = []
    for i, value in enumerate(inputs):
        if i in nondiff:
            result.append(None)
            continue
        fields = list(value) if isinstance(value, tuple) else [value]
        grads = []
        for j, f in enumerate(fields):
            g = np.zeros(np.shape(f), dtype=np.float64)
            for idx in np.ndindex(g.shape):
                g[idx] = (objective(moved(i, j, idx, eps))
                          - objective(moved(i, j, idx, -eps))) / (2 * eps)
            grads.append(g)
        result.append(tuple(grads) if isinstance(value, tuple) else grads[0])
    return result


def random_adjoints(op: str, inputs: list[Any], attrs: dict[str, Any],
                    rng: np.random.Generator) -> list[np.ndarray]:
    _, call, _ = build_forward(op, inputs, attrs)
    return [rng.standard_normal(tuple(int(d) for d in t.shape)).astype(t.dtype)
            for t in _leaves(call.checked_type)]


def check_rule(op: str, inputs: list[Any], *, nondiff: tuple[int, ...] = (),
               llvm: bool = True, rtol: float = 1e-5, atol: float = 1e-6, seed: int = 0,
               tuple_var: bool = False, fd_eps: float = 1e-6, **attrs: Any) -> None:
    """The rule of `op` agrees with finite differences (interpreter, and LLVM if asked);
    `fd_eps` the step (larger for a kernel that computes in float32)."""
    rng = np.random.default_rng(seed)
    adjoints = random_adjoints(op, inputs, attrs, rng)
    want = numeric_gradients(op, inputs, attrs, adjoints, nondiff, fd_eps)
    targets = ["interp"] + (["llvm"] if llvm else [])
    for target in targets:
        got = rule_outputs(op, inputs, attrs, adjoints, target=target, tuple_var=tuple_var)
        for i, (g, w) in enumerate(zip(got, want)):
            if w is None:           # not differentiable: the rule gives zeros
                for leaf in _flatten(g):
                    assert not np.any(leaf), (op, target, i)
                continue
            for gl, wl in zip(_flatten(g), _flatten(w)):
                assert gl.shape == wl.shape, (op, target, i, gl.shape, wl.shape)
                np.testing.assert_allclose(gl, wl, rtol=rtol, atol=atol,
                                           err_msg=f"{op} input {i} on {target}")
