"""Control-flow ONNX operators: If, Loop, Scan.

- `If` becomes Relay's `if` on the (one-element) condition reduced to a scalar; each
  branch is its subgraph converted in place (branches take no inputs and capture outer
  values by name); several outputs are a tuple.
- `Loop` and `Scan` become a recursive global function over the iteration index, the way
  TVM's frontends turn loops into recursion:

      def @loop(%i, %max_count, %cond, %carried..., %scans..., %captured...) {
        if (%cond && %i < %max_count) { @loop(%i + 1, %max_count, body's cond,
                                              body's carried..., scans + body's scans...,
                                              %captured...) }
        else { (%carried..., %scans..., %i) }
      }

  (`%max_count` / the test on `%cond` only when the node has that input.) Global functions
  are closed: the outer values the body uses (its free ONNX names, nested subgraphs
  included) become parameters `%captured...`, bound to the outer expressions at the call
  (constants stay inline, so converters inside the body still see their values).
  A scan output accumulates along a new axis 0, which needs a static per-iteration
  shape. When the number of iterations n is known at import (Scan over a static length;
  Loop with a constant trip count and no condition) the accumulator is a fixed `(n, ...)`
  buffer shifted by one row per iteration (`concatenate` + `strided_slice`): static
  types, so the LLVM backend compiles the whole loop natively. Otherwise it is a buffer
  typed `(?, ...)` that doubles when full and gets row i by a `where` on a one-row mask,
  cut to the rows written after the loop (a buffer growing by one row per iteration
  would make the LLVM backend's mixed mode compile its kernels anew every iteration).
  Both are exact (rows are copied, never computed). A carried value whose shape changes
  across iterations gets `?` dims where it changes (the body is converted with the
  initial types, and again with the relaxed ones when they differ).
- `If` branches whose outputs differ in some dims (ONNX allows it from opset 11) pass
  through a global identity function typed with `?` there; a rank or dtype difference is
  refused.

The interpreter runs the recursion on its machine (tail calls in constant space, no
Python recursion) and the LLVM backend's program/mixed modes run it natively.

A body's captured outer values come from `ctx.closed_subgraph(graph)` (the core's
`Closure`: parameters of the closed function and the outer arguments passed to them).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....ir.builder import Call, Function, If, Tuple, TupleGetItem
from ....ir.expr import Expr, Var
from ....ir.node import ANY
from ....ir.types import TensorType, TupleType, Type
from ....op import make as op
from ..registry import converter
from .sequence import is_structured, unrolled_loop

_INT64_SCALAR = TensorType((), "int64")
_BOOL_SCALAR = TensorType((), "bool")


# ---------------------------------------------------------------- helpers

def _scalar(ctx: Any, node: Any, expr: Expr, what: str) -> Expr:
    """A one-element tensor as a 0-d tensor (Relay's `if` wants a scalar bool)."""
    t = ctx.type_of(expr)
    if not isinstance(t, TensorType):
        raise node.error(f"{what} must be a tensor, got {t}")
    shape = t.shape
    if not shape:
        return expr
    if any(isinstance(d, int) and d != 1 for d in shape):
        raise node.error(f"{what} must hold one element, got shape {tuple(shape)}")
    return op.reshape(expr, newshape=())


def _types_of(ctx: Any, exprs: list[Expr]) -> list[Type]:
    """relaylang's types of `exprs`."""
    if not exprs:
        return []
    t = ctx.type_of(Tuple(list(exprs)))
    assert isinstance(t, TupleType)
    return list(t.fields)


def _join(node: Any, what: str, a: Type, b: Type) -> TensorType:
    """The type covering `a` (a value's type on entry) and `b` (its type after an
    iteration): dims that differ become `?`."""
    if not isinstance(a, TensorType) or not isinstance(b, TensorType):
        raise node.error(f"{what}: only tensors can be loop-carried, got {a} and {b}")
    if a.dtype != b.dtype:
        raise node.error(f"{what}: the body changes its dtype from {a.dtype} to {b.dtype}")
    if len(a.shape) != len(b.shape):
        raise node.error(f"{what}: the body changes its rank from {len(a.shape)} to "
                         f"{len(b.shape)} (relaylang needs a fixed rank)")
    return TensorType(tuple(da if da == db else ANY for da, db in zip(a.shape, b.shape)),
                      a.dtype)


def _same(a: TensorType, b: TensorType) -> bool:
    return a.dtype == b.dtype and tuple(a.shape) == tuple(b.shape)


def _as_tensor_type(ctx: Any, node: Any, expr: Expr, what: str) -> TensorType:
    t = ctx.type_of(expr)
    if not isinstance(t, TensorType):
        raise node.error(f"{what} must be a tensor, got {t}")
    return t


def _convert_body(ctx: Any, node: Any, closure: Any, graph: Any,
                  fixed: list[Expr], carried_types: list[TensorType],
                  carried_names: list[str], extra: Any = None
                  ) -> tuple[list[Var], list[Expr], list[Type]]:
    """Convert a loop body whose inputs are `fixed` followed by the carried values (and
    `extra(carried_vars)`'s inputs after them). The carried values' types start at
    `carried_types` and are widened (`?` dims) until the body's outputs 1.. fit them;
    the body outputs after the carried ones are returned typed too. Returns (carried
    vars, body outputs, body output types)."""
    n = len(carried_types)
    out_start = 1 if extra is None else 0     # Loop's outputs start with the condition
    types = list(carried_types)
    for _ in range(sum(len(t.shape) for t in types) + 1):   # each retry adds a `?`
        saved = ctx.functions_snapshot()
        carried = [ctx.fresh_var(name, t) for name, t in zip(carried_names, types)]
        inputs = list(fixed) + carried + (list(extra(carried)) if extra else [])
        outs = _declared_scan_shapes(ctx, graph, closure.convert(graph, inputs),
                                     out_start + n)
        out_types = _types_of(ctx, outs)
        joined = [_join(node, f"loop-carried value {carried_names[k]!r}", types[k],
                        out_types[out_start + k]) for k in range(n)]
        if all(_same(a, b) for a, b in zip(joined, types)):
            return carried, outs, out_types
        ctx.restore_functions(saved)          # drop the functions of this attempt
        types = joined
    raise node.error("the loop-carried types do not settle")   # unreachable


def _declared_scan_shapes(ctx: Any, graph: Any, outs: list[Expr], first: int) -> list[Expr]:
    """The body outputs from `first` on (scan outputs), each whose inferred shape has `?`
    dims where the body declares a static shape of the same rank and dtype, reshaped to
    that shape (a static `reshape`: checked when it runs). ONNX's shape inference knows
    more than relaylang's here (a slice of run-time bounds that is always one long)."""
    declared = ctx.subgraph_output_types(graph)
    outs = list(outs)
    inferred = _types_of(ctx, outs)          # relaylang's (ONNX's may be by name)
    for k in range(first, len(outs)):
        want = declared[k] if k < len(declared) else None
        got = inferred[k]
        if not (isinstance(want, TensorType) and isinstance(got, TensorType)):
            continue
        if all(isinstance(d, int) for d in got.shape) or \
                not all(isinstance(d, int) for d in want.shape) or \
                len(want.shape) != len(got.shape) or want.dtype != got.dtype or \
                any(isinstance(g, int) and g != w for g, w in zip(got.shape, want.shape)):
            continue
        outs[k] = op.reshape(outs[k], newshape=tuple(int(d) for d in want.shape))
        ctx.remember_type(outs[k], want)
    return outs


_ROLLING_LIMIT = 1 << 26     # elements: a larger fixed-size accumulator grows instead
_INITIAL_CAPACITY = 8        # rows of a growing accumulator at first


def _accumulator(ctx: Any, node: Any, t: Type, what: str, length: int | None
                 ) -> tuple[Expr, TensorType]:
    """The initial accumulator of a scan output with per-iteration type `t`, and its type.

    When the number of iterations is known (`length`), a fixed `(length, ...)` buffer of
    zeros that each iteration shifts by one and fills at the end (`_append`): static
    shapes, so the LLVM backend compiles the whole loop. Otherwise a buffer of
    `_INITIAL_CAPACITY` rows typed `(?, ...)` that `_append` doubles when full."""
    if not isinstance(t, TensorType):
        raise node.error(f"{what} must be a tensor, got {t}")
    if not all(isinstance(d, int) for d in t.shape):
        raise node.error(f"{what} has shape {tuple(t.shape)} per iteration: a scan output "
                         "needs a static per-iteration shape")
    elem = tuple(int(d) for d in t.shape)
    if length is not None and length * int(np.prod(elem)) <= _ROLLING_LIMIT:
        return (op.zeros(shape=(length, *elem), dtype=t.dtype),
                TensorType((length, *elem), t.dtype))
    return (ctx.const(np.zeros((_INITIAL_CAPACITY, *elem), dtype=t.dtype)),
            TensorType((ANY, *elem), t.dtype))


def _append(ctx: Any, acc: Expr, acc_type: TensorType, value: Expr, index: Expr) -> Expr:
    """`acc` with `value` (iteration `index`'s) added along axis 0.

    A fixed-size accumulator is shifted by one row and `value` fills its last row (after
    `length` iterations it holds exactly the `length` values, in order). A growing one is
    a buffer whose rows up to `index` are filled: it doubles when full (so its shape, and
    the kernels the LLVM backend compiles for it, change log2(n) times, not n times) and
    row `index` becomes `value` (a `where` on a one-row mask: exact);
    `_filled` cuts it to the rows written after the loop."""
    row = op.expand_dims(value, axis=0)
    length = acc_type.shape[0]
    if isinstance(length, int):
        grown = op.concatenate(Tuple([acc, row]), axis=0)
        return op.strided_slice(grown, begin=[1], end=[length + 1], strides=[1], axes=[0])
    capacity = op.take(op.shape_of(acc, dtype="int64"), ctx.const(np.int64(0)))
    buffer = If(op.less(index, capacity), acc,
                op.concatenate(Tuple([acc, op.zeros_like(acc)]), axis=0))
    rows = op.arange(ctx.const(np.int64(0)),
                     op.take(op.shape_of(buffer, dtype="int64"), ctx.const(np.int64(0))),
                     ctx.const(np.int64(1)), dtype="int64")
    mask = op.reshape(op.equal(rows, index), newshape=(-1,) + (1,) * (len(acc_type.shape) - 1))
    return op.where(mask, row, buffer)


def _filled(ctx: Any, acc: Expr, acc_type: TensorType, count: Expr) -> Expr:
    """The first `count` rows of a growing accumulator (a fixed-size one as it is)."""
    if isinstance(acc_type.shape[0], int):
        return acc
    # rows 0..count (arange refuses an empty range; `clip` keeps row `count` in bounds),
    # then the last one dropped
    rows = op.arange(ctx.const(np.int64(0)), op.add(count, ctx.const(np.int64(1))),
                     ctx.const(np.int64(1)), dtype="int64")
    return op.strided_slice(op.take(acc, rows, axis=0, mode="clip"), begin=[0], end=[-1],
                            strides=[1], axes=[0])


def _unpack(call: Expr, count: int) -> list[Expr]:
    return [TupleGetItem(call, k) for k in range(count)]


# ---------------------------------------------------------------- If

@converter("If", since=1)
def if_1(ctx: Any, node: Any) -> Any:
    then_graph = node.attr("then_branch")
    else_graph = node.attr("else_branch")
    if len(then_graph.output) != len(else_graph.output):
        raise node.error(f"then_branch has {len(then_graph.output)} outputs, else_branch "
                         f"{len(else_graph.output)}")
    cond = _scalar(ctx, node, node.inputs[0], "the condition")
    known = ctx.value(node.inputs[0])
    if known is not None:                  # a constant condition: the branch taken
        outs = ctx.convert_subgraph(then_graph if bool(np.asarray(known).reshape(-1)[0])
                                    else else_graph, [])
        return outs if len(outs) != 1 else outs[0]
    then_outs = ctx.convert_subgraph(then_graph, [])
    else_outs = ctx.convert_subgraph(else_graph, [])
    types: list[Type] = []
    for k, (a, b) in enumerate(zip(then_outs, else_outs)):
        ta, tb = ctx.type_of(a), ctx.type_of(b)
        if not (isinstance(ta, TensorType) and isinstance(tb, TensorType)):
            if is_structured(ctx, a) and is_structured(ctx, b):
                types.append(None)        # sequences / optionals: typed by unification
                continue
            raise node.error(f"output {k}: only tensor outputs are supported, got {ta} "
                             f"and {tb}")
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            # a condition computed from graph inputs can be bound (NeedsInputValues)
            ctx.constant(node.inputs[0], node, "the condition (the branches differ in "
                         "dtype or rank)")
            raise node.error(f"output {k}: the branches produce {ta.dtype} of rank "
                             f"{len(ta.shape)} and {tb.dtype} of rank {len(tb.shape)}; "
                             "relaylang's `if` needs one dtype and rank")
        joined = TensorType(tuple(x if x == y else ANY for x, y in zip(ta.shape, tb.shape)),
                            ta.dtype)
        if not (_same(joined, ta) and _same(joined, tb)):
            # the shapes differ (ONNX allows it from opset 11): both branches pass through
            # a function typed with `?` where they differ, so the `if` has one type
            forget = ctx.global_var("if_shape")
            p = ctx.fresh_var("x", joined)
            ctx.define(forget, Function([p], p, joined))
            then_outs[k], else_outs[k] = Call(forget, [a]), Call(forget, [b])
        types.append(joined)
    if len(then_outs) == 1:
        out = If(cond, then_outs[0], else_outs[0])
        if types[0] is not None:
            ctx.remember_type(out, types[0])
        return out
    result = If(cond, Tuple(list(then_outs)), Tuple(list(else_outs)))
    outs = _unpack(result, len(then_outs))
    for e, t in zip(outs, types):
        if t is not None:
            ctx.remember_type(e, t)
    return outs


# ---------------------------------------------------------------- Loop

@converter("Loop", since=1)
def loop_1(ctx: Any, node: Any) -> Any:
    body = node.attr("body")
    max_count, cond = node.input(0), node.input(1)
    inits = [e for e in node.inputs[2:]]
    if any(e is None for e in inits):
        raise node.error("loop-carried initial values cannot be omitted")
    n = len(inits)
    if len(body.input) != 2 + n:
        raise node.error(f"the body takes {len(body.input)} inputs; the node gives it "
                         f"{2 + n} (iteration number, condition, {n} carried)")
    n_scan = len(body.output) - 1 - n
    if n_scan < 0:
        raise node.error(f"the body has {len(body.output)} outputs, fewer than 1 + {n} "
                         "(condition and carried values)")
    unrolled = unrolled_loop(ctx, node)      # a carried sequence / optional: unrolled
    if unrolled is not None:
        return unrolled[0] if len(unrolled) == 1 else unrolled
    if max_count is None and cond is None:
        raise node.error("neither a trip count nor a condition: the loop never ends")
    if max_count is not None:
        dtype = _as_tensor_type(ctx, node, max_count, "the trip count").dtype
        if dtype != "int64":
            raise node.error(f"the trip count must be int64, got {dtype}")
        max_count = _scalar(ctx, node, max_count, "the trip count")
    if cond is not None:
        dtype = _as_tensor_type(ctx, node, cond, "the condition").dtype
        if dtype != "bool":
            raise node.error(f"the condition must be bool, got {dtype}")
        cond = _scalar(ctx, node, cond, "the condition")

    closure = ctx.closed_subgraph(body)
    i_var = ctx.fresh_var("i", _INT64_SCALAR)
    cond_var = ctx.fresh_var("cond", _BOOL_SCALAR)
    init_types = [_as_tensor_type(ctx, node, e, f"loop-carried value {k}")
                  for k, e in enumerate(inits)]
    names = [body.input[2 + k].name for k in range(n)]
    carried, outs, out_types = _convert_body(ctx, node, closure, body, [i_var, cond_var],
                                             init_types, names)
    carried_types = [v.type_annotation for v in carried]

    # exactly max(M, 0) iterations when M is a constant and there is no condition
    trips = ctx.value(node.input(0)) if max_count is not None and cond is None else None
    length = max(int(np.asarray(trips).reshape(())), 0) if trips is not None else None
    empties, acc_types = [], []
    for k in range(n_scan):
        e, t = _accumulator(ctx, node, out_types[1 + n + k], f"scan output {k} "
                            f"({body.output[1 + n + k].name!r})", length)
        empties.append(e)
        acc_types.append(t)
    accs = [ctx.fresh_var(f"scan_{k}", t) for k, t in enumerate(acc_types)]
    m_var = ctx.fresh_var("max_count", _INT64_SCALAR) if max_count is not None else None

    if cond is not None:
        new_cond = _scalar(ctx, node, outs[0], "the body's condition output")
        if not (isinstance(out_types[0], TensorType) and out_types[0].dtype == "bool"):
            raise node.error(f"the body's condition output must be bool, got {out_types[0]}")
    else:
        new_cond = cond_var                  # ignored per ONNX: stays true

    gv = ctx.global_var("loop")
    head = [i_var] + ([m_var] if m_var is not None else []) + [cond_var]
    params = head + carried + accs + closure.params
    next_head = ([op.add(i_var, ctx.const(np.int64(1)))]
                 + ([m_var] if m_var is not None else []) + [new_cond])
    recurse = Call(gv, next_head + list(outs[1:1 + n])
                   + [_append(ctx, acc, acc_types[k], outs[1 + n + k], i_var)
                      for k, acc in enumerate(accs)]
                   + closure.params)
    if m_var is None:
        test = cond_var
    elif cond is None:
        test = op.less(i_var, m_var)
    else:
        test = op.logical_and(cond_var, op.less(i_var, m_var))
    # the results: the carried values, the accumulators and the number of iterations run
    ret_type = TupleType(tuple(carried_types + acc_types + [_INT64_SCALAR]))
    ctx.define(gv, Function(params, If(test, recurse, Tuple(list(carried) + accs + [i_var])),
                            ret_type))

    init_head = ([ctx.const(np.int64(0))] + ([max_count] if max_count is not None else [])
                 + [cond if cond is not None else ctx.const(np.bool_(True))])
    result = Call(gv, init_head + inits + empties + closure.args)
    outputs = _unpack(result, n + n_scan + 1)
    count = outputs.pop()
    for k, t in enumerate(acc_types):
        outputs[n + k] = _filled(ctx, outputs[n + k], t, count)
    for e, t in zip(outputs, carried_types + acc_types):
        ctx.remember_type(e, t)
    return outputs[0] if len(outputs) == 1 else outputs


# ---------------------------------------------------------------- Scan

def _axes(node: Any, name: str, count: int, ranks: list[int], default: int = 0) -> list[int]:
    values = list(node.attr(name, [default] * count))
    if len(values) != count:
        raise node.error(f"`{name}` has {len(values)} entries, expected {count}")
    out = []
    for v, r in zip(values, ranks):
        if not -r <= v < r:
            raise node.error(f"`{name}` entry {v} is out of range for rank {r}")
        out.append(v + r if v < 0 else v)
    return out


def _directions(node: Any, name: str, count: int) -> list[int]:
    values = list(node.attr(name, [0] * count))
    if len(values) != count or any(v not in (0, 1) for v in values):
        raise node.error(f"`{name}` must be {count} values, each 0 or 1; got {values}")
    return values


class _ScanFunction:
    """The recursive function of a Scan over one (unbatched) set of states and scan
    inputs: `call(states, xs)` runs it and returns the final states and the scan outputs
    (each accumulated along axis 0, in iteration order)."""

    def __init__(self, ctx: Any, node: Any, body: Any, state_types: list[TensorType],
                 x_types: list[TensorType], in_axes: list[int], in_dirs: list[int]):
        n, m = len(state_types), len(x_types)
        if len(body.input) != n + m:
            raise node.error(f"the body takes {len(body.input)} inputs, the node gives "
                             f"{n + m}")
        k_out = len(body.output) - n
        if k_out < 0:
            raise node.error(f"the body has {len(body.output)} outputs, fewer than its {n} "
                             "states")
        self.ctx, self.n, self.k_out, self.in_axes = ctx, n, k_out, in_axes
        lengths = [t.shape[a] for t, a in zip(x_types, in_axes)]
        static = sorted({d for d in lengths if isinstance(d, int)})
        if len(static) > 1:
            raise node.error(f"the scan inputs have different lengths {static}")
        self.length: int | None = static[0] if static else None

        closure = ctx.closed_subgraph(body)
        t_var = ctx.fresh_var("t", _INT64_SCALAR)
        n_var = ctx.fresh_var("count", _INT64_SCALAR)
        x_vars = [ctx.fresh_var(f"scan_input_{j}", t) for j, t in enumerate(x_types)]
        last = op.subtract(op.subtract(n_var, ctx.const(np.int64(1))), t_var)

        def elements(_carried: list[Var]) -> list[Expr]:
            return [op.take(x, t_var if d == 0 else last, axis=a)
                    for x, a, d in zip(x_vars, in_axes, in_dirs)]

        names = [body.input[k].name for k in range(n)]
        carried, outs, out_types = _convert_body(ctx, node, closure, body, [], state_types,
                                                 names, extra=elements)
        self.carried_types = [v.type_annotation for v in carried]
        self.empties, self.acc_types = [], []
        for k in range(k_out):
            e, t = _accumulator(ctx, node, out_types[n + k], f"scan output {k} "
                                f"({body.output[n + k].name!r})", self.length)
            self.empties.append(e)
            self.acc_types.append(t)
        accs = [ctx.fresh_var(f"scan_{k}", t) for k, t in enumerate(self.acc_types)]

        self.gv = gv = ctx.global_var("scan")
        params = [t_var, n_var] + carried + accs + x_vars + closure.params
        recurse = Call(gv, [op.add(t_var, ctx.const(np.int64(1))), n_var] + list(outs[:n])
                       + [_append(ctx, acc, self.acc_types[k], outs[n + k], t_var)
                          for k, acc in enumerate(accs)]
                       + x_vars + closure.params)
        ret_type = TupleType(tuple(self.carried_types + self.acc_types))
        ctx.define(gv, Function(params, If(op.less(t_var, n_var), recurse,
                                           Tuple(list(carried) + accs)), ret_type))
        self.closure_args = closure.args

    def call(self, states: list[Expr], xs: list[Expr]) -> list[Expr]:
        ctx = self.ctx
        if self.length is not None:
            count: Expr = ctx.const(np.int64(self.length))
        else:
            count = op.take(op.shape_of(xs[0], dtype="int64"),
                            ctx.const(np.int64(self.in_axes[0])))
        result = Call(self.gv, [ctx.const(np.int64(0)), count] + list(states)
                      + self.empties + list(xs) + self.closure_args)
        outputs = _unpack(result, self.n + self.k_out)
        for k, t in enumerate(self.acc_types):
            outputs[self.n + k] = _filled(ctx, outputs[self.n + k], t, count)
        for e, t in zip(outputs, self.carried_types + self.acc_types):
            ctx.remember_type(e, t)
        return outputs


def _scan_inputs(ctx: Any, node: Any, given: list[Expr | None], m: int
                 ) -> tuple[list[Expr], list[Expr], list[TensorType], list[TensorType]]:
    inputs = [e for e in given if e is not None]
    if len(inputs) != len(given):
        raise node.error("the states and scan inputs cannot be omitted")
    n = len(inputs) - m
    if m < 1 or n < 0:
        raise node.error(f"num_scan_inputs={m} with {len(inputs)} states and scan inputs")
    states, xs = list(inputs[:n]), list(inputs[n:])
    state_types = [_as_tensor_type(ctx, node, s, f"state {k}") for k, s in enumerate(states)]
    x_types = [_as_tensor_type(ctx, node, x, f"scan input {j}") for j, x in enumerate(xs)]
    return states, xs, state_types, x_types


@converter("Scan", since=9)
def scan_9(ctx: Any, node: Any) -> Any:
    body = node.attr("body")
    m = int(node.attr("num_scan_inputs"))
    states, xs, state_types, x_types = _scan_inputs(ctx, node, list(node.inputs), m)
    n = len(states)
    k_out = len(body.output) - n
    in_axes = _axes(node, "scan_input_axes", m, [len(t.shape) for t in x_types])
    in_dirs = _directions(node, "scan_input_directions", m)
    out_dirs = _directions(node, "scan_output_directions", max(k_out, 0))
    fn = _ScanFunction(ctx, node, body, state_types, x_types, in_axes, in_dirs)
    out_axes = _axes(node, "scan_output_axes", k_out, [len(t.shape) for t in fn.acc_types])
    outputs = fn.call(states, xs)
    for k in range(k_out):
        y = outputs[n + k]
        t = ctx.type_of(y)
        assert isinstance(t, TensorType)
        shape = list(t.shape)
        if out_dirs[k] == 1:                 # prepended each iteration
            y = op.reverse(y, axis=0)
        a = out_axes[k]
        if a != 0:
            perm = list(range(1, a + 1)) + [0] + list(range(a + 1, len(shape)))
            y = op.transpose(y, axes=tuple(perm))
            shape = [shape[p] for p in perm]
        ctx.remember_type(y, TensorType(tuple(shape), t.dtype))
        outputs[n + k] = y
    return outputs[0] if len(outputs) == 1 else outputs


@converter("Scan", since=8)
def scan_8(ctx: Any, node: Any) -> Any:
    """Opset 8: a batch axis 0 on states, scan inputs and outputs, the sequence axis 1 of
    the scan inputs; each batch entry is scanned on its own (the batch must be static)."""
    body = node.attr("body")
    m = int(node.attr("num_scan_inputs"))
    lens = node.input(0)
    states, xs, state_types, x_types = _scan_inputs(ctx, node, list(node.inputs[1:]), m)
    n = len(states)
    in_dirs = _directions(node, "directions", m)
    for k, t in enumerate(state_types + x_types):
        if len(t.shape) < (1 if k < n else 2):
            raise node.error(f"input {k + 1} has rank {len(t.shape)}: it needs a batch axis "
                             "(and scan inputs a sequence axis)")
    batches = sorted({t.shape[0] for t in state_types + x_types})
    if len(batches) != 1 or not isinstance(batches[0], int):
        raise node.error(f"the batch sizes {tuple(t.shape[0] for t in state_types + x_types)} "
                         "must be one static size")
    batch = batches[0]
    if batch == 0:
        raise node.error("a batch of size 0 is not supported")
    if lens is not None:
        value = ctx.value(lens)
        full = [t.shape[1] for t in x_types]
        if value is None or not all(isinstance(d, int) and d == full[0] for d in full) \
                or not np.all(np.asarray(value) == full[0]):
            raise node.error("sequence_lens must be omitted or a constant equal to the "
                             "sequence length of every batch entry (shorter sequences are "
                             "not supported)")
    fn = _ScanFunction(ctx, node, body, [_drop_axis0(t) for t in state_types],
                       [_drop_axis0(t) for t in x_types], [0] * m, in_dirs)
    per_batch = []
    for b in range(batch):
        index = ctx.const(np.int64(b))
        per_batch.append(fn.call([op.take(s, index, axis=0) for s in states],
                                 [op.take(x, index, axis=0) for x in xs]))
    outputs = [op.stack(Tuple([r[k] for r in per_batch]), axis=0)
               for k in range(len(per_batch[0]))]
    return outputs[0] if len(outputs) == 1 else outputs


def _drop_axis0(t: TensorType) -> TensorType:
    return TensorType(tuple(t.shape[1:]), t.dtype)
