"""Run a Relay program natively (phase 1 of the LLVM backend) and compare it with the
interpreter.

    run_native(text_or_mod, *args)            # the value of @main, natively
    assert_matches_interpreter(text, *args)   # natively == interpreter (allclose)

The program is parsed, typed and fused (`FuseOps`, or the -O3 pipeline with
`optimize=True`); each primitive function of @main is lowered and compiled (through
the kernel cache), and @main's body - a graph of calls of primitive functions, tuples,
projections and constants over its parameters - is evaluated in Python order.
"""
from __future__ import annotations

from typing import Any

import numpy as np

import relaylang as rl
from relaylang.backend.llvm.jit import aligned_empty, compile_kernels
from relaylang.backend.llvm.lower import lower_primitive
from relaylang.ir.expr import Call, Constant, Function, Tuple, TupleGetItem, Var
from relaylang.ir.types import TensorType, TupleType

RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-7}


def fused_module(text_or_mod: Any, optimize: bool = False) -> Any:
    mod = rl.parse(text_or_mod) if isinstance(text_or_mod, str) else text_or_mod
    mod = rl.transform.InferType()(mod)
    if optimize:
        from relaylang.transform.tvm_pipeline import optimize as opt
        return opt(mod)
    return rl.transform.FuseOps(fuse_opt_level=2)(mod)


def _is_primitive(fn: Any) -> bool:
    return isinstance(fn, Function) and fn.attrs is not None and any(
        k == "Primitive" and int(v) == 1 for k, v in fn.attrs.entries)


def _leaves(t: Any) -> list[TensorType]:
    if isinstance(t, TupleType):
        out: list[TensorType] = []
        for f in t.fields:
            out.extend(_leaves(f))
        return out
    return [t]


def _flatten(v: Any) -> list[np.ndarray]:
    if isinstance(v, tuple):
        out: list[np.ndarray] = []
        for x in v:
            out.extend(_flatten(x))
        return out
    return [v]


def _children(e: Any) -> tuple:
    if isinstance(e, Call):
        return tuple(e.args)
    if isinstance(e, Tuple):
        return tuple(e.fields)
    if isinstance(e, TupleGetItem):
        return (e.tuple_value,)
    return ()


def primitive_kernels(mod: Any, cache: bool = True) -> dict[int, Any]:
    """id(primitive Function) -> Kernel for every primitive function called by @main."""
    main = mod["main"]
    prims, order = [], []
    seen: set[int] = set()
    stack = [main.body]
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, Call) and _is_primitive(e.op) and id(e.op) not in {id(f) for f in order}:
            order.append(e.op)
        stack.extend(_children(e))
    for k, fn in enumerate(order):
        prims.append(lower_primitive(fn, f"fused_{k}"))
    kernels = compile_kernels(prims, cache=cache) if prims else {}
    return {id(fn): kernels[p.name] for fn, p in zip(order, prims)}


def run_native(text_or_mod: Any, *args: Any, optimize: bool = False, cache: bool = True) -> Any:
    mod = fused_module(text_or_mod, optimize)
    main = mod["main"]
    kernels = primitive_kernels(mod, cache)
    values: dict[int, Any] = {}
    for p, a in zip(main.params, args):
        t = p.checked_type or p.type_annotation
        values[id(p)] = np.array(a, dtype=t.dtype, order="C")
    stack: list[tuple[Any, bool]] = [(main.body, False)]
    while stack:
        e, ready = stack.pop()
        if id(e) in values:
            continue
        if not ready:
            stack.append((e, True))
            stack.extend((c, False) for c in reversed(_children(e)) if id(c) not in values)
            continue
        if isinstance(e, Constant):
            values[id(e)] = np.asarray(e.data)
        elif isinstance(e, Tuple):
            values[id(e)] = tuple(values[id(f)] for f in e.fields)
        elif isinstance(e, TupleGetItem):
            values[id(e)] = values[id(e.tuple_value)][e.index]
        elif isinstance(e, Call) and _is_primitive(e.op):
            k = kernels[id(e.op)]
            ins = []
            for a in e.args:
                ins.extend(_flatten(values[id(a)]))
            outs = [aligned_empty(s, d) for s, d in k.params[k.num_inputs:]]
            k(ins + outs)
            t = e.checked_type
            values[id(e)] = tuple(outs) if isinstance(t, TupleType) else outs[0]
        elif isinstance(e, Var):
            raise KeyError(f"unbound variable %{e.name_hint}")
        else:
            raise NotImplementedError(f"run_native: {type(e).__name__} in @main")
    return values[id(main.body)]


def _compare(native: Any, expected: Any, rtol: float | None, atol: float) -> None:
    if isinstance(expected, tuple):
        assert isinstance(native, tuple) and len(native) == len(expected)
        for n, x in zip(native, expected):
            _compare(n, x, rtol, atol)
        return
    expected = np.asarray(expected)
    native = np.asarray(native)
    assert native.shape == expected.shape, (native.shape, expected.shape)
    assert native.dtype == expected.dtype, (native.dtype, expected.dtype)
    if expected.dtype.kind == "f":
        tol = rtol if rtol is not None else RTOL.get(str(expected.dtype), 1e-5)
        np.testing.assert_allclose(native.astype(np.float64), expected.astype(np.float64),
                                   rtol=tol, atol=atol, equal_nan=True)
    else:
        np.testing.assert_array_equal(native, expected)


def assert_matches_interpreter(text: Any, *args: Any, rtol: float | None = None,
                               atol: float = 0.0, optimize: bool = False) -> Any:
    """Run `text` natively and with the interpreter; assert they agree. Returns the
    native value."""
    mod = rl.parse(text) if isinstance(text, str) else text
    expected = rl.evaluate(mod, *args)
    native = run_native(mod, *args, optimize=optimize)
    _compare(native, expected, rtol, atol)
    return native


def set_schedule_default(monkeypatch: Any, name: str, value: int) -> None:
    """Make `value` the default (and a choice) of the scheduler's knob `name`
    ("schedule.k_chunk_bytes") for this test: values no host would choose (a 1 KiB K
    chunk, a parallel minimum of 0) exercise the code paths on small shapes."""
    from relaylang.backend.llvm import knobs
    base = knobs.schedule_defaults

    def patched(host: Any) -> dict[str, tuple[int, tuple[int, ...]]]:
        table = dict(base(host))
        _, choices = table[name]
        table[name] = (value, (value,) + tuple(c for c in choices if c != value))
        return table
    monkeypatch.setattr(knobs, "schedule_defaults", patched)
