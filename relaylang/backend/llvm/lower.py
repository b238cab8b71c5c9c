"""A typed `Primitive=1` Function with static shapes -> `PrimFunc`.

The body is walked in dependency order (iteratively): parameters become input
buffers (a tuple-typed parameter becomes one buffer per field, in order), each op call
calls the op's `implementation(name, "llvm")` with the lowering context, tuples and
`TupleGetItem` move handles around, and constants are baked in: a one-element constant
becomes a scalar constant expression, a larger one global constant data in the module
(a Buffer of scope "constant"; `PrimFunc.constants` holds the arrays). The result
(a tensor, or a tuple of them, flattened) is written to the output parameters.
"""
from __future__ import annotations

from typing import Any

from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, Var
from ...ir.types import TensorType, TupleType, Type
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
    out: list[TensorType] = []
    stack = [t]
    while stack:
        x = stack.pop()
        if isinstance(x, TupleType):
            stack.extend(reversed(x.fields))
        elif isinstance(x, TensorType):
            out.append(x)
        else:
            raise NoLowering(what, span, f"type {x} is not a tensor or tuple of tensors")
    return out


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


def lower_primitive(fn: Function, name: str) -> L.PrimFunc:
    """The PrimFunc of the primitive function `fn` (typed, static shapes), called `name`."""
    from ...op.registry import implementation

    b = LowerContext()
    params: list[L.Buffer] = []
    values: dict[int, Any] = {}

    for p in fn.params:
        t = _type_of(p)
        if t is None:
            raise NoLowering("parameter", p.span, f"parameter %{p.name_hint} is untyped")

        def make(tt: TensorType, p: Var = p) -> Tensor:
            shape = _static_shape(tt, "parameter", p.span)
            h = b.placeholder(shape, tt.dtype, p.name_hint)
            assert h.buffer is not None
            params.append(h.buffer)
            return h
        values[id(p)] = _handles_for(t, make)
    num_inputs = len(params)

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
    body, parallel = schedule(b, outs, out_bufs)
    return L.PrimFunc(name, tuple(params + out_bufs), body, num_inputs, parallel,
                      tuple(b.constants))
