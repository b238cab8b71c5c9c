"""The lowering context `b` and tensor handles that op lowerings use.

An op's LLVM lowering (`relaylang/op/<family>/llvm_lowering.py`) receives a
`LowerContext` (`b`) and `Tensor` handles and calls only their methods (the op
layer may not import the backend). See /work/llvm_spec.md, "The lowering API".

A `Tensor` is one of:
- a placeholder (a parameter buffer or a baked constant): `t[i]` is a Load;
- a compute (injective): `t[i]` is its body with the axes replaced by `i` (it is
  inlined into every consumer; float16 results are rounded there);
- a stage (a compute whose root is a reduction, or a materialised one): it gets a
  buffer of its own (the scheduler writes it), and `t[i]` is a Load of it.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from . import knobs
from . import loop_ir as L
from .loop_ir import Expr, Var

FLOAT_INTRINSICS_1 = (
    "exp", "log", "log2", "log10", "sqrt", "rsqrt", "tanh", "erf", "fabs", "floor", "ceil",
    "round", "trunc", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh",
    "acosh", "atanh")
FLOAT_INTRINSICS_2 = ("pow", "atan2")
CLASSIFY = ("isnan", "isinf", "isfinite")
BITWISE = {"bitwise_and": "and", "bitwise_or": "or", "bitwise_xor": "xor",
           "left_shift": "shl", "right_shift": "shr"}
INTRINSICS = FLOAT_INTRINSICS_1 + FLOAT_INTRINSICS_2 + CLASSIFY + tuple(BITWISE) + (
    "bitwise_not",)


class LoweringError(Exception):
    """A lowering used the API wrongly (wrong number of indices, a reduction not at the
    root of a compute, an unknown intrinsic...)."""


def _norm_index(idx: Any) -> tuple[Expr, ...]:
    if not isinstance(idx, tuple):
        idx = (idx,)
    if len(idx) == 1 and isinstance(idx[0], (tuple, list)):
        idx = tuple(idx[0])
    return tuple(L.index(i) for i in idx)


class Tensor:
    """A tensor handle: `.shape` (tuple of ints), `.dtype`, `.ndim`, `t[idx]`."""

    __slots__ = ("axes", "body", "buffer", "dtype", "kind", "name", "shape")

    def __init__(self, shape: Sequence[int], dtype: str, name: str, kind: str,
                 buffer: L.Buffer | None = None, axes: tuple[Var, ...] = (),
                 body: Expr | None = None):
        self.shape = tuple(int(d) for d in shape)
        self.dtype = dtype
        self.name = name
        self.kind = kind            # "placeholder" | "compute" | "stage"
        self.buffer = buffer
        self.axes = axes
        self.body = body

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __getitem__(self, idx: Any) -> Expr:
        ind = _norm_index(idx)
        if len(ind) != len(self.shape):
            raise LoweringError(f"tensor {self.name} of rank {len(self.shape)} indexed with "
                                f"{len(ind)} indices")
        if self.kind == "compute":
            assert self.body is not None
            return L.substitute(self.body, {id(a): i for a, i in zip(self.axes, ind)})
        assert self.buffer is not None
        load: Expr = L.Load(self.buffer, ind)
        if self.buffer.dtype != self.dtype:        # float16 reductions accumulate in float32
            load = L.Cast(load, self.dtype)
        return load

    def __repr__(self) -> str:
        return f"Tensor({self.name}, {self.shape}, {self.dtype}, {self.kind})"


class LowerContext:
    """`b`: builds computes and scalar expressions for one primitive function."""

    def __init__(self) -> None:
        self.stages: list[Tensor] = []
        self._names: dict[str, int] = {}
        self.constants: list[tuple[L.Buffer, Any]] = []    # baked data (scope "constant")
        # parameter buffers the caller binds to build-time constants (lower.py's
        # `constant_params`: stages computed from them alone are packed once, at build)
        self.constant_buffers: set[int] = set()

    # ------------------------------------------------------------ naming
    def fresh(self, name: str) -> str:
        n = self._names.get(name, 0)
        self._names[name] = n + 1
        return name if n == 0 else f"{name}_{n}"

    def placeholder(self, shape: Sequence[int], dtype: str, name: str,
                    scope: str = "global", data: Any = None) -> Tensor:
        buf = L.Buffer(self.fresh(name), tuple(int(d) for d in shape), dtype, scope)
        if data is not None:
            self.constants.append((buf, data))
        return Tensor(shape, dtype, buf.name, "placeholder", buffer=buf)

    def is_build_constant(self, t: Tensor) -> bool:
        """Whether `t` is known at build time (a baked constant, or a parameter bound to
        one): a re-layout of it is then packed once, not repeated by every call."""
        return t.kind == "placeholder" and t.buffer is not None and (
            t.buffer.scope == "constant" or id(t.buffer) in self.constant_buffers)

    # ------------------------------------------------------------ scheduling knobs
    @staticmethod
    def knob(name: str, default: int, choices: Sequence[int] = ()) -> int:
        """The value of the scheduling knob `name` (`family.what`: "conv.flat_width")
        for this kernel: `default` unless the settings in force (a tuning database,
        `relay build --knob`) choose another of `choices`. List every valid value in
        `choices` (computed for the shapes at hand): the tuner searches exactly those
        (backend/llvm/knobs.py)."""
        return knobs.ask(name, default, choices)

    # ------------------------------------------------------------ tensors
    def compute(self, shape: Sequence[int], fcompute: Callable[..., Any],
                dtype: str | None = None, name: str = "T") -> Tensor:
        shape = tuple(int(d) for d in shape)
        name = self.fresh(name)
        axes = tuple(Var(f"{name}_i{k}" if len(shape) > 1 else f"{name}_i", extent=d)
                     for k, d in enumerate(shape))
        body = fcompute(*axes)
        if isinstance(body, Tensor):
            raise LoweringError("fcompute must return a scalar expression, not a Tensor")
        if not isinstance(body, Expr):
            if dtype is None:
                raise LoweringError("fcompute returned a Python number: give dtype=")
            body = L.as_expr(body, dtype)
        if isinstance(body, L.Reduce):
            out_dtype = dtype or body.dtype
            if out_dtype != body.dtype:
                body = L.Reduce(body.op, body.source, body.axes, out_dtype)
            self._check_reduce_nesting(body)
            return self._stage(shape, out_dtype, name, axes, body)
        self._check_no_reduce(body)
        if dtype is not None and body.dtype != dtype:
            body = L.Cast(body, dtype)
        if body.dtype == "float16" and not isinstance(body, (L.Load, L.Const, L.BitCast)) \
                and not (isinstance(body, L.Call) and body.name == "fp16_round"):
            body = L.Call("fp16_round", (body,), "float16")
        return Tensor(shape, body.dtype, name, "compute", axes=axes, body=body)

    def _stage(self, shape: tuple[int, ...], dtype: str, name: str, axes: tuple[Var, ...],
               body: Expr) -> Tensor:
        acc = "float32" if dtype == "float16" and isinstance(body, L.Reduce) else dtype
        buf = L.Buffer(name, shape, acc, "local")
        t = Tensor(shape, dtype, name, "stage", buffer=buf, axes=axes, body=body)
        self.stages.append(t)
        return t

    def materialize(self, t: Tensor) -> Tensor:
        """`t` in a buffer of its own (a stage boundary)."""
        if t.kind != "compute":
            return t
        name = self.fresh(t.name + "_m")
        axes = tuple(Var(f"{name}_i{k}", extent=d) for k, d in enumerate(t.shape))
        return self._stage(t.shape, t.dtype, name, axes, t[axes] if axes else t[()])

    @staticmethod
    def _check_no_reduce(e: Expr) -> None:
        for n in L.walk(e):
            if isinstance(n, L.Reduce):
                raise LoweringError("a reduction is allowed only as the root of fcompute")

    def _check_reduce_nesting(self, r: L.Reduce) -> None:
        self._check_no_reduce(r.source)

    def reduce_axis(self, extent: int, name: str = "k") -> Var:
        return Var(self.fresh(name), extent=int(extent))

    def _reduce(self, op: str, expr: Any, axes: Any, dtype: str | None = None) -> L.Reduce:
        if isinstance(axes, Var):
            axes = [axes]
        axes = tuple(axes)
        for a in axes:
            if not isinstance(a, Var) or a.extent is None:
                raise LoweringError("reduction axes must come from b.reduce_axis")
        if not isinstance(expr, Expr):
            raise LoweringError("a reduction needs an expression")
        return L.Reduce(op, expr, axes, dtype or expr.dtype)

    def reduce_sum(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("sum", expr, axes)

    def reduce_prod(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("prod", expr, axes)

    def reduce_max(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("max", expr, axes)

    def reduce_min(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("min", expr, axes)

    def reduce_argmax(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("argmax", expr, axes, "int64")

    def reduce_argmin(self, expr: Expr, axes: Any) -> L.Reduce:
        return self._reduce("argmin", expr, axes, "int64")

    # ------------------------------------------------------------ scalars
    @staticmethod
    def const(value: Any, dtype: str) -> Expr:
        return L.const(value, dtype)

    @staticmethod
    def const_value(e: Any) -> Any:
        """The Python value of `e` when it is a constant expression, else None (a
        one-element constant tensor of the program indexes to a constant)."""
        if isinstance(e, L.Const):
            return e.value
        if isinstance(e, (int, float, bool)):
            return e
        return None

    @staticmethod
    def min_value(dtype: str) -> Expr:
        if L.is_float(dtype):
            return L.const(-math.inf, dtype)
        if dtype == "bool":
            return L.const(False, dtype)
        n = L.bits(dtype)
        return L.const(0 if L.is_unsigned(dtype) else -(1 << (n - 1)), dtype)

    @staticmethod
    def max_value(dtype: str) -> Expr:
        if L.is_float(dtype):
            return L.const(math.inf, dtype)
        if dtype == "bool":
            return L.const(True, dtype)
        n = L.bits(dtype)
        return L.const((1 << n) - 1 if L.is_unsigned(dtype) else (1 << (n - 1)) - 1, dtype)

    @staticmethod
    def _pair(a: Any, c: Any) -> tuple[Expr, Expr]:
        if not isinstance(a, Expr) and isinstance(c, Expr):
            return L.as_expr(a, c.dtype), c
        if isinstance(a, Expr):
            return a, L.as_expr(c, a.dtype)
        raise LoweringError("at least one operand must be an expression")

    def max(self, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        return L.binary("max", a, c)

    def min(self, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        return L.binary("min", a, c)

    def floordiv(self, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        return L.binary("floordiv", a, c)

    def floormod(self, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        return L.binary("floormod", a, c)

    def _cmp(self, op: str, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        return L.cmp(op, a, c)

    def lt(self, a: Any, c: Any) -> Expr: return self._cmp("lt", a, c)
    def le(self, a: Any, c: Any) -> Expr: return self._cmp("le", a, c)
    def gt(self, a: Any, c: Any) -> Expr: return self._cmp("gt", a, c)
    def ge(self, a: Any, c: Any) -> Expr: return self._cmp("ge", a, c)
    def eq(self, a: Any, c: Any) -> Expr: return self._cmp("eq", a, c)
    def ne(self, a: Any, c: Any) -> Expr: return self._cmp("ne", a, c)

    def _bool(self, e: Any) -> Expr:
        e = L.as_expr(e, "bool")
        return e if e.dtype == "bool" else self.cast(e, "bool")

    def logical_and(self, a: Any, c: Any) -> Expr:
        return L.binary("and", self._bool(a), self._bool(c))

    def logical_or(self, a: Any, c: Any) -> Expr:
        return L.binary("or", self._bool(a), self._bool(c))

    def logical_xor(self, a: Any, c: Any) -> Expr:
        return L.binary("xor", self._bool(a), self._bool(c))

    def logical_not(self, a: Any) -> Expr:
        return L.Unary("not", self._bool(a), "bool")

    def select(self, cond: Any, a: Any, c: Any) -> Expr:
        a, c = self._pair(a, c)
        if a.dtype != c.dtype:
            raise LoweringError(f"select: branch dtypes differ ({a.dtype} vs {c.dtype})")
        return L.Select(self._bool(cond), a, c, a.dtype)

    @staticmethod
    def cast(e: Any, dtype: str) -> Expr:
        if not isinstance(e, Expr):
            return L.const(e, dtype)
        if e.dtype == dtype:
            return e
        if isinstance(e, L.Const):
            return _fold_cast(e, dtype)
        return L.Cast(e, dtype)

    @staticmethod
    def bitcast(e: Any, dtype: str) -> Expr:
        """The bits of `e` read as `dtype`, a dtype of the same width (NumPy's `view`;
        not bool): a loop-IR BitCast, LLVM's `bitcast`."""
        if not isinstance(e, Expr):
            raise LoweringError("bitcast needs a loop IR expression (not a Python number)")
        if e.dtype == dtype:
            return e
        try:
            return L.BitCast(e, dtype)
        except TypeError as err:
            raise LoweringError(str(err)) from None

    def call(self, name: str, *args: Any) -> Expr:
        if name not in INTRINSICS:
            raise LoweringError(f"unknown intrinsic {name!r}; known: {', '.join(INTRINSICS)}")
        if not args:
            raise LoweringError(f"{name} needs arguments")
        if len(args) == 2:
            a, c = self._pair(args[0], args[1])
            exprs: tuple[Expr, ...] = (a, c)
        else:
            exprs = tuple(L.as_expr(x, "float32") for x in args)
        dt = exprs[0].dtype
        if name in BITWISE:
            if len(exprs) != 2 or not (L.is_int(dt) or dt == "bool"):
                raise LoweringError(f"{name} takes two integer expressions")
            return L.binary(BITWISE[name], exprs[0], exprs[1])
        if name == "bitwise_not":
            return L.Unary("not", exprs[0], dt)
        if name in CLASSIFY:
            if not L.is_float(dt):
                return L.const(name == "isfinite", "bool")
            return L.Call(name, exprs[:1], "bool")
        if not L.is_float(dt):
            raise LoweringError(f"intrinsic {name} needs a float argument (got {dt}); cast first")
        arity = 2 if name in FLOAT_INTRINSICS_2 else 1
        if len(exprs) != arity:
            raise LoweringError(f"{name} takes {arity} argument(s)")
        return L.Call(name, exprs, dt)


def _fold_cast(c: L.Const, dtype: str) -> Expr:
    v = c.value
    if dtype == "bool":
        return L.const(bool(v), dtype)
    if L.is_float(dtype):
        if dtype == "float16":
            import numpy as np
            return L.const(float(np.float16(v)), dtype)
        return L.const(float(v), dtype)
    if isinstance(v, float):
        if not math.isfinite(v):
            return L.Cast(c, dtype)
        v = math.trunc(v)
    n = L.bits(dtype)
    v = int(v) & ((1 << n) - 1)
    if not L.is_unsigned(dtype) and v >= 1 << (n - 1):
        v -= 1 << n
    return L.const(v, dtype)

