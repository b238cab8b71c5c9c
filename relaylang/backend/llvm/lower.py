"""A typed `Primitive=1` Function with static shapes -> `PrimFunc`.

The body is walked in dependency order (iteratively): parameters become input
buffers (a tuple-typed parameter becomes one buffer per field, in order), each op call
calls the op's `implementation(name, "llvm")` with the lowering context, tuples and
`TupleGetItem` move handles around, and constants are baked in: a one-element constant
becomes a scalar constant expression, a larger one global constant data in the module
(a Buffer of scope "constant"; `PrimFunc.constants` holds the arrays). The result
(a tensor, or a tuple of them, flattened) is written to the output parameters.

Constant parameters (`lower_primitive(fn, name, constant_params=...)`): the caller may
promise that some parameters of `fn` (indices into `fn.params`) are constants bound at
build time (a weight). Every materialised non-reduction stage whose body loads only from
those parameters' buffers, from baked constants and from other such stages (and from at
least one constant parameter) is then computed once, at build, by a separate *packer*
kernel instead of by every call (a blocked convolution's or dense's re-laid weight,
`conv_weight_b`). The result is a `PackedPrimFunc` (a `PrimFunc` with two more fields):

- `leaf_inputs`: for its first `len(leaf_inputs)` inputs, the flat input index of
  `fn` each receives (parameters flattened as above: a tuple-typed parameter is one
  leaf per field). A constant parameter's leaf that nothing in the kernel reads any more
  is left out (the caller does not even pass it); every other leaf stays, in order.
- `packed`: one `PackedConstant(packer, sources)` per remaining input, in order (they
  follow the `leaf_inputs` ones): `packer` is a PrimFunc whose inputs are the flat
  inputs `sources` of `fn` (sorted) and whose one output is the tensor to pass there.

So the kernel's inputs are `[leaf[i] for i in leaf_inputs] + [run(p.packer, [leaf[s]
for s in p.sources]) for p in packed]`. Without constant parameters, or when no stage
can be packed, the result is the plain `PrimFunc` of today; also when packing would
shorten the kernel's parallel loop (below both the plain kernel's and the knob
`schedule.par_min`): the
scheduler runs the rest in parallel only behind a prologue of local stages, and the
packed stage may have been that prologue (a 1x1 convolution, whose input is not padded).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, Var
from ...ir.types import TensorType, TupleType, Type, tuple_leaves
from . import knobs
from . import loop_ir as L
from .schedule import schedule
from .te import LowerContext, LoweringError, Tensor


class NoLowering(Exception):
    """The op `op_name` (at `span`) has no LLVM lowering, or the function uses a
    construct or dtype the backend does not lower."""

    def __init__(self, op_name: str, span: Any = None, reason: str = ""):
        self.op_name = op_name
        self.span = span
        self.reason = reason
        msg = f"op {op_name} has no LLVM lowering" if not reason else f"{op_name}: {reason}"
        super().__init__(msg)


SUPPORTED_DTYPES = set(L.DTYPES)


def _static_shape(t: TensorType, what: str, span: Any) -> tuple[int, ...]:
    shape = []
    for d in t.shape:
        if not isinstance(d, int):
            raise NoLowering(what, span, f"dimension {d} is not static")
        shape.append(int(d))
    if t.dtype not in SUPPORTED_DTYPES:
        raise NoLowering(what, span, f"dtype {t.dtype} is not supported natively")
    return tuple(shape)


def _type_of(e: Expr) -> Type | None:
    t = e.checked_type
    if t is None and isinstance(e, Var):
        t = e.type_annotation
    return t


def _flatten_type(t: Type, what: str, span: Any) -> list[TensorType]:
    """The tensor types of `t` in order (`tuple_leaves`); NoLowering for any other leaf."""
    out = tuple_leaves(t)
    for x in out:
        if not isinstance(x, TensorType):
            raise NoLowering(what, span, f"type {x} is not a tensor or tuple of tensors")
    return out                                          # type: ignore[return-value]


def _handles_for(t: Type, make: Any) -> Any:
    """A handle (or nested tuple of handles) for type `t`, `make(TensorType)` per leaf."""
    if isinstance(t, TupleType):
        return tuple(_handles_for(f, make) for f in t.fields)
    return make(t)


def flatten_tuples(v: Any) -> list[Any]:
    """The leaves of a nested tuple, in order (a non-tuple is its own one leaf)."""
    out: list[Any] = []
    stack = [v]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple):
            stack.extend(reversed(x))
        else:
            out.append(x)
    return out


def _constant(b: LowerContext, c: Constant) -> Tensor:
    import numpy as np
    data = np.array(c.data, order="C")
    dtype = str(data.dtype)
    if dtype not in SUPPORTED_DTYPES:
        raise NoLowering("constant", c.span, f"constant of dtype {dtype}")
    if data.size == 1:
        value = data.reshape(()).item()
        e = L.const(value, dtype)
        return Tensor(data.shape, dtype, "const", "compute",
                      axes=tuple(L.Var(f"c{k}", extent=1) for k in range(data.ndim)), body=e)
    return b.placeholder(data.shape, dtype, "const", scope="constant", data=data)


def _children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Call):
        return tuple(e.args)
    if isinstance(e, Tuple):
        return tuple(e.fields)
    if isinstance(e, TupleGetItem):
        return (e.tuple_value,)
    return ()


@dataclass(**L.NODE)
class PackedConstant:
    """A kernel input computed once at build: `packer` (inputs: the flat inputs `sources`
    of the primitive function, in order; one output) makes it."""
    packer: L.PrimFunc
    sources: tuple[int, ...]


@dataclass(**L.NODE)
class PackedPrimFunc(L.PrimFunc):
    """A PrimFunc some of whose inputs are packed constants (see the module docstring):
    inputs are `leaf_inputs` (flat input indices of the primitive function), then one per
    `packed` entry."""
    leaf_inputs: tuple[int, ...] = ()
    packed: tuple[PackedConstant, ...] = ()


def _loads(e: L.Expr) -> list[L.Buffer]:
    return [n.buffer for n in L.walk(e) if isinstance(n, L.Load)]


def _split_constants(b: LowerContext, name: str, params: list[L.Buffer],
                     constant_leaves: set[int], outs: list[Any]
                     ) -> tuple[list[int], list[tuple[L.Buffer, PackedConstant]]] | None:
    """Split the stages computable from the constant leaves `constant_leaves` of
    `params` off into packers (see the module docstring). Returns the flat inputs the
    kernel keeps and its new inputs with their packers, having removed the packed stages
    from `b.stages` and made the rest load the new inputs; None (nothing changed) when no
    stage qualifies."""
    leaf_of = {id(params[k]): k for k in constant_leaves}
    baked = {id(buf) for buf, _ in b.constants}
    out_ids = {id(t) for t in outs}
    const_stage: dict[int, Tensor] = {}          # id(buffer) -> stage
    for t in b.stages:
        if (t.body is None or t.buffer is None or isinstance(t.body, L.Reduce)
                or id(t) in out_ids or t.size == 0):
            continue
        loads = _loads(t.body)
        if loads and all(id(x) in leaf_of or id(x) in baked or id(x) in const_stage
                         for x in loads) and any(id(x) in leaf_of or id(x) in const_stage
                                                 for x in loads):
            const_stage[id(t.buffer)] = t
    if not const_stage:
        return None
    rest = [t for t in b.stages if id(t.buffer) not in const_stage]
    readers: list[L.Expr] = [t.body for t in rest if t.body is not None]
    readers += [t.body for t in outs if t.kind == "compute" and t.body is not None]
    read: set[int] = {id(t.buffer) for t in outs if t.kind == "placeholder"
                      and t.buffer is not None}
    for e in readers:
        read.update(id(x) for x in _loads(e))
    frontier = [t for t in b.stages if id(t.buffer) in const_stage and id(t.buffer) in read]
    if not frontier:
        return None
    new_inputs: list[tuple[L.Buffer, PackedConstant]] = []
    bmap: dict[int, L.Buffer] = {}
    for j, f in enumerate(frontier):
        assert f.buffer is not None
        # the constant stages `f` needs, in creation (dependency) order
        need, stack = {id(f.buffer)}, [f]
        while stack:
            t = stack.pop()
            assert t.body is not None
            for x in _loads(t.body):
                if id(x) in const_stage and id(x) not in need:
                    need.add(id(x))
                    stack.append(const_stage[id(x)])
        closure = [t for t in b.stages if id(t.buffer) in need]
        used = {id(x) for t in closure if t.body is not None for x in _loads(t.body)}
        sources = sorted(k for k in constant_leaves if id(params[k]) in used)
        pb = LowerContext()
        pb.stages = closure
        pb.constants = [(buf, d) for buf, d in b.constants if id(buf) in used]
        out = L.Buffer(f.buffer.name, f.buffer.shape, f.buffer.dtype)
        body, parallel = schedule(pb, [f], [out])
        packer = L.PrimFunc(f"{name}__pack{j}", tuple(params[k] for k in sources) + (out,),
                            body, len(sources), parallel, tuple(pb.constants))
        buf = L.Buffer(f.buffer.name, f.buffer.shape, f.buffer.dtype)
        bmap[id(f.buffer)] = buf
        new_inputs.append((buf, PackedConstant(packer, tuple(sources))))
    done: set[int] = set()
    for t in rest + [t for t in outs if t.kind == "compute"]:
        if id(t) not in done and t.body is not None:
            done.add(id(t))
            t.body = L.substitute(t.body, {}, bmap)
    b.stages = rest
    kept = [k for k in range(len(params)) if k not in constant_leaves or id(params[k]) in read]
    return kept, new_inputs


def _packed(b: LowerContext, name: str, params: list[L.Buffer], constant_leaves: set[int],
            outs: list[Any], out_bufs: list[L.Buffer]) -> L.PrimFunc | None:
    """The kernel with its constant stages split off into packers (a `PackedPrimFunc`);
    None when no stage can be. The plain kernel instead when the packed one would run a
    shorter parallel loop (fewer than both the plain one's and `schedule.par_min` iterations): a
    packed stage was the prologue the scheduler needed to run the rest in parallel
    (`schedule._with_prologue`), and a prologue every thread repeats costs less than a
    serial kernel."""
    saved_stages = list(b.stages)
    saved_bodies = [(t, t.body) for t in saved_stages + list(outs)]
    split = _split_constants(b, name, params, constant_leaves, outs)
    if split is None:
        return None
    kept, new_inputs = split
    inputs = [params[k] for k in kept] + [buf for buf, _ in new_inputs]
    body, parallel = schedule(b, outs, out_bufs)
    readers = [t.body for t in b.stages if t.body is not None]
    readers += [t.body for t in outs if t.kind == "compute" and t.body is not None]
    used = {id(x) for e in readers for x in _loads(e)}
    used.update(id(t.buffer) for t in outs if t.kind == "placeholder")
    constants = tuple((buf, d) for buf, d in b.constants if id(buf) in used)
    if parallel < knobs.ask_schedule("schedule.par_min"):   # only then can the plain
        # kernel be the better one
        b.stages = saved_stages
        for t, e in saved_bodies:
            t.body = e
        plain_body, plain_parallel = schedule(b, outs, out_bufs)
        if parallel < plain_parallel:
            return L.PrimFunc(name, tuple(params + out_bufs), plain_body, len(params),
                              plain_parallel, tuple(b.constants))
    return PackedPrimFunc(name, tuple(inputs + out_bufs), body, len(inputs), parallel,
                          constants, leaf_inputs=tuple(kept),
                          packed=tuple(p for _, p in new_inputs))


def lower_primitive(fn: Function, name: str,
                    constant_params: frozenset[int] | set[int] = frozenset()) -> L.PrimFunc:
    """The PrimFunc of the primitive function `fn` (typed, static shapes), called `name`.

    `constant_params`: indices of `fn`'s parameters the caller binds to build-time
    constants; stages computed from them alone move to packers (a `PackedPrimFunc`, see
    the module docstring). The scheduling knobs come from the settings in force
    (`knobs.using`) for this kernel's `knobs.kernel_key`; the PrimFunc records them."""
    with knobs.lowering(knobs.kernel_key(fn, sorted(constant_params))) as chooser:
        prim = _lower(fn, name, constant_params)
    return dataclasses.replace(prim, knobs=tuple(sorted(chooser.chosen.items())),
                               knob_space=tuple(sorted(chooser.space.items())),
                               knob_key=chooser.key)


def _lower(fn: Function, name: str, constant_params: frozenset[int] | set[int]) -> L.PrimFunc:
    from ...op.registry import implementation

    b = LowerContext()
    params: list[L.Buffer] = []
    param_leaves: list[list[int]] = []     # per parameter: its flat input indices
    values: dict[int, Any] = {}

    for p in fn.params:
        param_leaves.append([])
        t = _type_of(p)
        if t is None:
            raise NoLowering("parameter", p.span, f"parameter %{p.name_hint} is untyped")

        def make(tt: TensorType, p: Var = p) -> Tensor:
            shape = _static_shape(tt, "parameter", p.span)
            h = b.placeholder(shape, tt.dtype, p.name_hint)
            assert h.buffer is not None
            param_leaves[-1].append(len(params))
            params.append(h.buffer)
            return h
        values[id(p)] = _handles_for(t, make)
    num_inputs = len(params)
    constant_leaves = {k for i in constant_params if 0 <= i < len(param_leaves)
                       for k in param_leaves[i]}
    b.constant_buffers = {id(params[k]) for k in constant_leaves}

    # post-order walk, iterative
    stack: list[tuple[Expr, bool]] = [(fn.body, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in values:
            continue
        if not ready:
            stack.append((node, True))
            for c in reversed(_children(node)):
                if id(c) not in values:
                    stack.append((c, False))
            continue
        if isinstance(node, Var):
            raise NoLowering("variable", node.span, f"free variable %{node.name_hint}")
        if isinstance(node, Constant):
            values[id(node)] = _constant(b, node)
        elif isinstance(node, Tuple):
            values[id(node)] = tuple(values[id(f)] for f in node.fields)
        elif isinstance(node, TupleGetItem):
            values[id(node)] = values[id(node.tuple_value)][node.index]
        elif isinstance(node, Call) and isinstance(node.op, Op):
            op_name = node.op.name
            impl = implementation(op_name, "llvm")
            if impl is None:
                raise NoLowering(op_name, node.span)
            out_type = node.checked_type
            if out_type is None:
                raise NoLowering(op_name, node.span, "the call is untyped (run InferType)")
            for tt in _flatten_type(out_type, op_name, node.span):
                _static_shape(tt, op_name, node.span)
            inputs = [values[id(a)] for a in node.args]
            try:
                result = impl(b, inputs, node.attrs, out_type)
            except NoLowering:
                raise
            except (LoweringError, NotImplementedError) as err:
                raise NoLowering(op_name, node.span, str(err)) from err
            values[id(node)] = result
        else:
            kind = type(node).__name__
            raise NoLowering(kind, node.span, f"{kind} inside a primitive function")

    result = values[id(fn.body)]
    outs = flatten_tuples(result)
    ret_t = fn.body.checked_type
    out_types = _flatten_type(ret_t, "result", fn.span) if ret_t is not None else []
    out_bufs: list[L.Buffer] = []
    for k, t in enumerate(outs):
        dtype = out_types[k].dtype if k < len(out_types) else t.dtype
        shape = t.shape
        if k < len(out_types):
            want = _static_shape(out_types[k], "result", fn.span)
            if tuple(want) != tuple(shape):
                raise NoLowering("result", fn.span,
                                 f"lowering produced shape {shape}, type says {want}")
        out_bufs.append(L.Buffer(b.fresh(f"out{k}" if len(outs) > 1 else "out"), shape, dtype))
    if constant_leaves:
        prim = _packed(b, name, params, constant_leaves, outs, out_bufs)
        if prim is not None:
            return prim
    body, parallel = schedule(b, outs, out_bufs)
    return L.PrimFunc(name, tuple(params + out_bufs), body, num_inputs, parallel,
                      tuple(b.constants))
