"""Tensors -> loop nests.

Injective computes were already inlined by `te` (indexing a compute substitutes its
body). What is left are *stages* (reductions and materialised computes, in creation
order, which is dependency order) and the outputs. Each gets one loop nest:

- a plain stage / output: `for i0 .. for in: buf[i] = body`;
- a reduction whose last spatial axis indexes the innermost dimension of a load
  (e.g. a sum over rows): `for i..: [init row]; for k..: for j: buf[i, j] += src` so the
  innermost loop is spatial and contiguous;
- otherwise (e.g. a sum over the last axis, argmax): a scalar accumulator,
  `for i..: acc = init; for k..: acc = combine(acc, src); buf[i] = acc`.

Loop kinds: the innermost loop is `vectorized` (`unrolled` when its extent is at most
4), and when the function is a single nest whose outermost loop is spatial, that loop
is `parallel` (the entry's [begin, end) range).
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from . import loop_ir as L
from .loop_ir import Buffer, Expr, Stmt, Var
from .te import LowerContext, Tensor

UNROLL_MAX = 4


def _loops(axes: Sequence[Var], body: Stmt, inner_kind: str | None = None) -> Stmt:
    """for a0: for a1: ... body; the innermost marked vectorized/unrolled."""
    stmt = body
    for pos, a in enumerate(reversed(axes)):
        extent = int(a.extent or 0)
        kind = "serial"
        if pos == 0:
            kind = inner_kind or ("unrolled" if extent <= UNROLL_MAX else "vectorized")
        stmt = L.For(a, extent, stmt, kind)
    return stmt


def _fresh_axes(shape: Sequence[int], prefix: str) -> tuple[Var, ...]:
    return tuple(Var(f"{prefix}{k}", extent=d) for k, d in enumerate(shape))


def _init_value(op: str, dtype: str) -> Expr:
    if op == "sum":
        return L.const(0, dtype)
    if op == "prod":
        return L.const(1, dtype)
    if op in ("max", "argmax"):
        return LowerContext.min_value(dtype)
    return LowerContext.max_value(dtype)


def _isnan(e: Expr) -> Expr:
    return L.Call("isnan", (e,), "bool")


def _combine(op: str, acc: Expr, v: Expr) -> Expr:
    if op == "sum":
        return L.Binary("add", acc, v, acc.dtype, True)
    if op == "prod":
        return L.Binary("mul", acc, v, acc.dtype, True)
    if op == "max":
        if acc.dtype == "bool":
            return L.Binary("or", acc, v, "bool", True)
        return L.Binary("max", acc, v, acc.dtype, True)
    if op == "min":
        if acc.dtype == "bool":
            return L.Binary("and", acc, v, "bool", True)
        return L.Binary("min", acc, v, acc.dtype, True)
    raise ValueError(op)


def _last_index_vars(e: Expr) -> set[int]:
    """ids of the Vars that appear in the last index of some Load of `e`."""
    out: set[int] = set()
    for n in L.walk(e):
        if isinstance(n, L.Load) and n.indices:
            for m in L.walk(n.indices[-1]):
                if isinstance(m, Var):
                    out.add(id(m))
    return out


def _acc_dtype(dtype: str) -> str:
    return "float32" if dtype == "float16" else dtype


def _reduce_stage(t: Tensor, buf: Buffer) -> Stmt:
    r = t.body
    assert isinstance(r, L.Reduce)
    axes, raxes = t.axes, r.axes
    idx = tuple(axes)
    src = r.source
    acc_dt = _acc_dtype(src.dtype)
    if r.op in ("argmax", "argmin"):
        return _arg_reduce(t, buf, r)
    v = src if src.dtype == acc_dt else L.Cast(src, acc_dt)
    if src.dtype == "bool" and r.op in ("sum", "prod"):
        v = L.Cast(src, acc_dt)
    rsize = math.prod(int(a.extent or 0) for a in raxes)
    inner_spatial = (axes and int(axes[-1].extent or 0) > 1 and rsize > 0
                     and id(axes[-1]) in _last_index_vars(src)
                     and buf.dtype == acc_dt == r.dtype)
    if inner_spatial:
        outer, j = axes[:-1], axes[-1]
        init = L.For(j, int(j.extent or 0),
                     L.Store(buf, idx, _init_value(r.op, acc_dt)), "vectorized")
        jj = j
        upd = L.Store(buf, idx, _combine(r.op, L.Load(buf, idx), v))
        inner = L.For(jj, int(j.extent or 0), upd,
                      "unrolled" if int(j.extent or 0) <= UNROLL_MAX else "vectorized")
        red: Stmt = inner
        for a in reversed(raxes):
            red = L.For(a, int(a.extent or 0), red, "serial")
        body = L.seq(init, red)
        for a in reversed(outer):
            body = L.For(a, int(a.extent or 0), body, "serial")
        return body
    acc = Buffer(f"{buf.name}_acc", (), acc_dt, "local")
    upd = L.Store(acc, (), _combine(r.op, L.Load(acc, ()), v))
    red = _loops(raxes, upd, "vectorized") if raxes else upd
    result: Expr = L.Load(acc, ())
    if buf.dtype != acc_dt:
        result = L.Cast(result, buf.dtype)
    inner_body = L.Allocate(acc, L.seq(L.Store(acc, (), _init_value(r.op, acc_dt)), red,
                                       L.Store(buf, idx, result)))
    stmt: Stmt = inner_body
    for a in reversed(axes):
        stmt = L.For(a, int(a.extent or 0), stmt, "serial")
    return stmt


def _arg_reduce(t: Tensor, buf: Buffer, r: L.Reduce) -> Stmt:
    src = r.source
    vdt = _acc_dtype(src.dtype)
    v = src if src.dtype == vdt else L.Cast(src, vdt)
    best = Buffer(f"{buf.name}_best", (), vdt, "local")
    where = Buffer(f"{buf.name}_idx", (), "int64", "local")
    flat: Expr = L.const(0, "int64")
    for a in r.axes:
        flat = L.binary("add", L.binary("mul", flat, L.const(int(a.extent or 0), "int64")), a)
    bv = L.Load(best, ())
    better: Expr = L.Cmp("gt" if r.op == "argmax" else "lt", v, bv)
    if L.is_float(vdt):
        better = L.binary("or", better,
                          L.binary("and", _isnan(v), L.Unary("not", _isnan(bv), "bool")))
    elif vdt == "bool":
        better = (L.binary("and", v, L.Unary("not", bv, "bool")) if r.op == "argmax"
                  else L.binary("and", bv, L.Unary("not", v, "bool")))
    upd = L.seq(L.Store(where, (), L.Select(better, flat, L.Load(where, ()), "int64")),
                L.Store(best, (), L.Select(better, v, bv, vdt)))
    red = upd
    for a in reversed(r.axes):
        red = L.For(a, int(a.extent or 0), red, "serial")
    result: Expr = L.Load(where, ())
    if buf.dtype != "int64":
        result = L.Cast(result, buf.dtype)
    init_best = _init_value(r.op, vdt)
    # the first element decides when every value equals the initial one (or is -inf)
    body = L.Allocate(best, L.Allocate(where, L.seq(
        L.Store(best, (), init_best), L.Store(where, (), L.const(0, "int64")), red,
        L.Store(buf, tuple(t.axes), result))))
    stmt: Stmt = body
    for a in reversed(t.axes):
        stmt = L.For(a, int(a.extent or 0), stmt, "serial")
    return stmt


def _plain_stage(axes: Sequence[Var], body: Expr, buf: Buffer) -> Stmt:
    value = body if body.dtype == buf.dtype else L.Cast(body, buf.dtype)
    return _loops(axes, L.Store(buf, tuple(axes), value))


def _stage_stmt(t: Tensor, buf: Buffer) -> Stmt:
    assert t.body is not None
    if isinstance(t.body, L.Reduce):
        return _reduce_stage(t, buf)
    return _plain_stage(t.axes, t.body, buf)


def schedule(b: LowerContext, outputs: Sequence[Tensor], out_buffers: Sequence[Buffer]
             ) -> tuple[Stmt, int]:
    """The body of the PrimFunc writing `outputs` into `out_buffers`, and the extent of
    its parallel loop (1 when there is none)."""
    direct: dict[int, Buffer] = {}          # id(stage Tensor) -> output buffer it writes
    for t, ob in zip(outputs, out_buffers):
        if (t.kind == "stage" and id(t) not in direct and t.buffer is not None
                and t.buffer.dtype == ob.dtype):
            direct[id(t)] = ob
    bmap = {id(t.buffer): direct[id(t)] for t in b.stages if id(t) in direct}
    stmts: list[Stmt] = []
    locals_: list[Buffer] = []
    for t in b.stages:
        assert t.buffer is not None
        target = direct.get(id(t), t.buffer)
        if target is t.buffer:
            locals_.append(t.buffer)
        if bmap:
            body = L.substitute(t.body, {}, bmap) if t.body is not None else None
            t = Tensor(t.shape, t.dtype, t.name, t.kind, t.buffer, t.axes, body)
        stmts.append(_stage_stmt(t, target))
    for t, ob in zip(outputs, out_buffers):
        if id(t) in direct and direct[id(t)] is ob:
            continue
        axes = _fresh_axes(t.shape, f"{ob.name}_i")
        value = t[axes] if axes else t[()]
        if bmap:
            value = L.substitute(value, {}, bmap)
        stmts.append(_plain_stage(axes, value, ob))
    parallel = 1
    if len(stmts) == 1 and not locals_:
        s = stmts[0]
        if isinstance(s, L.For) and _is_spatial_outer(s) and s.extent > 1:
            body_is_loop = isinstance(s.body, (L.For, L.Seq, L.Allocate))
            if body_is_loop or s.extent >= 64:
                stmts[0] = L.For(s.var, s.extent, s.body, "parallel")
                parallel = s.extent
    body = L.seq(*stmts) if stmts else L.Seq(())
    for buf in reversed(locals_):
        body = L.Allocate(buf, body)
    return body, parallel


def _is_spatial_outer(s: L.For) -> bool:
    # the outermost loop writes distinct elements per iteration iff its var indexes
    # every store in it (true of our spatial loops; false of a reduction loop)
    stack: list[Stmt] = [s.body]
    while stack:
        n = stack.pop()
        if isinstance(n, L.Store):
            if n.buffer.scope == "local":
                continue
            if not any(any(m is s.var for m in L.walk(i)) for i in n.indices):
                return False
        elif isinstance(n, L.For):
            stack.append(n.body)
        elif isinstance(n, L.Seq):
            stack.extend(n.stmts)
        elif isinstance(n, L.Allocate):
            stack.append(n.body)
        elif isinstance(n, L.IfThenElse):
            stack.append(n.then)
            if n.otherwise is not None:
                stack.append(n.otherwise)
    return True
