"""ONNX sequence and optional values: SequenceConstruct, SequenceEmpty, SequenceInsert,
SequenceErase, SequenceAt, SequenceLength, ConcatFromSequence, SplitToSequence,
SequenceMap; Optional, OptionalHasElement, OptionalGetElement.

Representation:

- An ONNX sequence is a Relay tuple of tensors: its length is known at import, and its
  elements may differ in shape (`(Tensor[(2, 3), float32], Tensor[(1, 3), float32])`).
  SequenceConstruct makes the tuple; SequenceInsert and SequenceErase make a new one
  (the position must be known at import); SequenceLength is a constant; SequenceAt is a
  tuple projection (a run-time position is allowed when every element has the same
  type: `take` on their `stack`, a negative position counted from the end);
  ConcatFromSequence is `concatenate` (or `stack` with `new_axis=1`); SplitToSequence
  is `split` / `strided_slice` on sizes known at import; SequenceMap converts its body
  once per element. A Loop carrying a sequence (or an optional) is unrolled at import
  (`unrolled_loop`, which control.py's Loop calls first; the trip count and condition
  must be known at import, or bound: NeedsInputValues); an If whose branches make
  sequences or optionals is typed by unification (`is_structured`). A sequence whose
  length is known only at run time (Relay's `List`) is not supported: such a node is
  refused with an error naming the value.
- A graph input of sequence type becomes a tuple-typed parameter: its elements' shapes
  (so its length) are given at import, `from_onnx(model, shape={"seq": [(4,), (3,)]})`;
  the conformance backend (`onnx_backend.py`) imports such a model per run, specialised
  to the structure of the sequences it is given.
- An ONNX optional is a value of the prelude's `Option[T]` (`Some(x)` / `None`; the
  imported module then holds `type Option`: `with_option_type`). Optional(x) is
  `Some(x)`, Optional() a `None` typed by its `type` attribute. OptionalHasElement and
  OptionalGetElement look through `Some(...)` / `None` made at import (constants:
  `true` / `false`, the element), and `match` on an `Option` known only at run time. From opset 18 both also take a plain
  tensor or sequence (present by definition).
- A graph input of optional type is present or absent at import: `shape={"opt": None}`
  says absent (its parameter is then the empty tuple `()`, the caller passes `()`), a
  shape (or a list of shapes for an optional sequence) says present; its name stands for
  `Some(%param)` or `None`.
"""
from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from ....ir.expr import (
    Call,
    Clause,
    Constructor,
    Match,
    PatternConstructor,
    PatternVar,
    PatternWildcard,
    Tuple,
    TupleGetItem,
)
from ....ir.node import ANY
from ....ir.text import type_text
from ....ir.types import TensorType, TupleType, Type, TypeCall
from ....op import make as op
from ..registry import converter

_INT64_MAX = 2**63 - 1


# ---------------------------------------------------------------- the prelude's Option

def _option() -> tuple[Any, Constructor, Constructor]:
    """The prelude's `Option` type and its constructors `Some`, `None`."""
    from ....std import prelude
    mod = prelude()
    for gtv, data in mod.type_definitions.items():
        if gtv.name_hint == "Option":
            ctors = {c.name: c for c in data.constructors}
            return gtv, ctors["Some"], ctors["None"]
    raise AssertionError("the prelude defines no Option")


def with_option_type(mod: Any) -> Any:
    """`mod` with the prelude's `type Option[A]` added (the importer calls it for a
    module that uses optionals: only the type, not the prelude's functions)."""
    from ....ir.module import IRModule
    gtv, _, _ = _option()
    if gtv in mod.type_definitions:
        return mod
    from ....std import prelude
    data = prelude().type_definitions[gtv]
    return IRModule(dict(mod.functions), {gtv: data, **mod.type_definitions},
                    mod.source_name, dict(mod.sources))


def _use_prelude(importer: Any) -> tuple[Any, Constructor, Constructor]:
    importer.uses_prelude = True
    return _option()


def _some(ctx: Any, value: Any) -> Any:
    _, some, _ = _use_prelude(ctx._importer)
    return Call(some, (value,))


def _none(importer: Any, elem: Type | None) -> Any:
    """An empty optional; `elem` types it when known."""
    _, _, none = _use_prelude(importer)
    return Call(none, (), None, (elem,) if elem is not None else ())


def _ctor(expr: Any) -> str | None:
    """"Some" / "None" when `expr` is a call of the prelude's Option constructor."""
    if isinstance(expr, Call) and isinstance(expr.op, Constructor):
        gtv, _, _ = _option()
        if expr.op.belong_to is gtv or expr.op.belong_to.name_hint == gtv.name_hint:
            return expr.op.name
    return None


def _is_option_type(t: Type) -> bool:
    return isinstance(t, TypeCall) and getattr(t.func, "name_hint", None) == "Option"


# ---------------------------------------------------------------- graph inputs

def _tensor_type_of(importer: Any, name: str, tp: Any, override: Any) -> TensorType:
    from ..importer import OnnxImportError, elem_dtype, tensor_dims
    if not tp.HasField("tensor_type"):
        raise OnnxImportError(f"graph input {name!r}: only sequences and optionals of "
                              "tensors are supported")
    tt = tp.tensor_type
    dtype = elem_dtype(tt.elem_type, f"graph input {name!r}") if tt.elem_type else "float32"
    if override is not None and (isinstance(override, (str, bytes)) or not all(
            d is None or isinstance(d, (int, np.integer)) for d in override)):
        raise OnnxImportError(f"shape= for graph input {name!r}: {override!r} is not "
                              "the shape of a tensor")
    dims = tensor_dims(override, tt)
    if dims is None:
        raise OnnxImportError(f"graph input {name!r} has an element of unknown shape: give "
                              f"it with shape={{{name!r}: ...}}")
    return TensorType(dims, dtype)


def _sequence_type_of(importer: Any, name: str, tp: Any, override: Any) -> TupleType:
    from ..importer import OnnxImportError
    if override is None or isinstance(override, (str, bytes)) or not all(
            isinstance(s, (list, tuple)) for s in override):
        raise OnnxImportError(
            f"graph input {name!r} is a sequence, not a tensor: its length is fixed at "
            f"import; give its elements' shapes with shape={{{name!r}: [(...), ...]}}")
    elem = tp.sequence_type.elem_type
    return TupleType(tuple(_tensor_type_of(importer, name, elem, list(s)) for s in override))


def structured_input_type(importer: Any, vi: Any) -> Type:
    """The Relay type of a graph input of sequence or optional type (see the module
    docstring): the elements' shapes come from `shape=`."""
    from ..importer import OnnxImportError
    name = vi.name
    overrides = importer.shape_overrides
    if vi.type.HasField("sequence_type"):
        return _sequence_type_of(importer, name, vi.type, overrides.get(name))
    if name not in overrides:
        raise OnnxImportError(
            f"graph input {name!r} is an optional, not a tensor: its presence is fixed at "
            f"import; give shape={{{name!r}: None}} (absent) or its shape (present)")
    given = overrides[name]
    if given is None:
        return TupleType(())
    elem = vi.type.optional_type.elem_type
    if elem.HasField("sequence_type"):
        return _sequence_type_of(importer, name, elem, given)
    return _tensor_type_of(importer, name, elem, given)


def optional_input_value(importer: Any, vi: Any, param: Any) -> Any:
    """What an optional graph input's name stands for: `Some(param)`, or `None` when the
    input is absent (`shape={name: None}`)."""
    if importer.shape_overrides.get(vi.name, ()) is None:
        elem = vi.type.optional_type.elem_type
        t = None
        if elem.HasField("tensor_type") and elem.tensor_type.HasField("shape"):
            t = _tensor_type_of(importer, vi.name, elem, None)
        return _none(importer, t)
    _, some, _ = _use_prelude(importer)
    return Call(some, (param,))


# ---------------------------------------------------------------- sequences

def _elements(ctx: Any, node: Any, seq: Any, what: str = "input 0") -> list[Any]:
    """The elements of a sequence value (a tuple), as expressions."""
    if isinstance(seq, Tuple):
        return list(seq.fields)
    if _ctor(seq) is not None:
        raise node.error(f"{what} is an optional, not a sequence")
    t = ctx.type_of(seq)
    if isinstance(t, TupleType):
        return [TupleGetItem(seq, k) for k in range(len(t.fields))]
    if _is_option_type(t):
        raise node.error(f"{what} is an optional, not a sequence")
    if isinstance(t, TensorType):
        raise node.error(f"{what} is a tensor, not a sequence")
    raise node.error(f"{what} must be a sequence whose length is known at import, got a "
                     f"value of type {type_text(t)}")


def _tensor_type(ctx: Any, node: Any, expr: Any, what: str) -> TensorType:
    t = ctx.type_of(expr)
    if not isinstance(t, TensorType):
        raise node.error(f"{what} must be a tensor, got {type_text(t)}")
    return t


def _position(ctx: Any, node: Any, i: int, what: str) -> int | None:
    """Input `i` (a scalar or one-element integer tensor) known at import, or None when
    the node omits it."""
    expr = node.input(i)
    if expr is None:
        return None
    t = _tensor_type(ctx, node, expr, what)
    if t.dtype not in ("int32", "int64"):
        raise node.error(f"{what} must be int32 or int64, got {t.dtype}")
    value = np.asarray(ctx.constant(expr, node, what))
    if value.size != 1:
        raise node.error(f"{what} must hold one element, got shape {value.shape}")
    return int(value.reshape(()))


def _check_position(node: Any, pos: int, lo: int, hi: int, what: str) -> int:
    if not lo <= pos <= hi:
        raise node.error(f"{what} {pos} is out of range [{lo}, {hi}]")
    return pos


@converter("SequenceEmpty", since=11)
def sequence_empty(ctx: Any, node: Any) -> Any:
    from ..importer import elem_dtype
    elem_dtype(int(node.attr("dtype", 1)), node.describe())   # a dtype relaylang has
    return Tuple(())


@converter("SequenceConstruct", since=11)
def sequence_construct(ctx: Any, node: Any) -> Any:
    inputs = list(node.inputs)
    if not inputs or any(e is None for e in inputs):
        raise node.error("needs at least one input, none omitted")
    dtypes = {_tensor_type(ctx, node, e, f"input {k}").dtype for k, e in enumerate(inputs)}
    if len(dtypes) > 1:
        raise node.error(f"the inputs have different element types {sorted(dtypes)}")
    return Tuple(inputs)


@converter("SequenceInsert", since=11)
def sequence_insert(ctx: Any, node: Any) -> Any:
    elems = _elements(ctx, node, node.inputs[0])
    tensor = node.input(1)
    if tensor is None:
        raise node.error("the tensor to insert (input 1) is required")
    t = _tensor_type(ctx, node, tensor, "input 1")
    if elems:
        first = _tensor_type(ctx, node, elems[0], "the sequence's elements")
        if first.dtype != t.dtype:
            raise node.error(f"inserting a {t.dtype} tensor into a sequence of {first.dtype}")
    n = len(elems)
    pos = _position(ctx, node, 2, "position")
    pos = n if pos is None else _check_position(node, pos, -n, n, "position")
    if pos < 0:
        pos += n
    return Tuple(elems[:pos] + [tensor] + elems[pos:])


@converter("SequenceErase", since=11)
def sequence_erase(ctx: Any, node: Any) -> Any:
    elems = _elements(ctx, node, node.inputs[0])
    n = len(elems)
    if n == 0:
        raise node.error("erasing from an empty sequence")
    pos = _position(ctx, node, 1, "position")
    pos = n - 1 if pos is None else _check_position(node, pos, -n, n - 1, "position")
    if pos < 0:
        pos += n
    return Tuple(elems[:pos] + elems[pos + 1:])


@converter("SequenceAt", since=11)
def sequence_at(ctx: Any, node: Any) -> Any:
    seq = node.inputs[0]
    elems = _elements(ctx, node, seq)
    n = len(elems)
    position = node.input(1)
    if position is None:
        raise node.error("the position (input 1) is required")
    t = _tensor_type(ctx, node, position, "position")
    if ctx.value(position) is not None or n == 0:
        pos = _check_position(node, _position(ctx, node, 1, "position"), -n, n - 1,
                              "position")
        return elems[pos + n if pos < 0 else pos]
    # a run-time position: elements of one type are rows of a stack
    types = {ctx.type_of(e) for e in elems}
    shapes = {tuple(_tensor_type(ctx, node, e, "an element").shape) for e in elems}
    if len(shapes) != 1 or len(types) != 1 or any(not isinstance(d, int)
                                                 for d in next(iter(shapes))):
        # elements of different shapes: the position must be known at import (a graph
        # input's value can be bound: NeedsInputValues)
        ctx.constant(position, node, "position (the elements differ in shape)")
        raise node.error("a run-time position needs elements of one static shape")
    index = op.reshape(position if t.dtype == "int64" else op.cast(position, dtype="int64"),
                       newshape=())
    index = op.where(op.less(index, ctx.const(np.int64(0))),
                     op.add(index, ctx.const(np.int64(n))), index)
    return op.take(op.stack(Tuple(elems), axis=0), index, axis=0)


@converter("SequenceLength", since=11)
def sequence_length(ctx: Any, node: Any) -> Any:
    return ctx.const(np.int64(len(_elements(ctx, node, node.inputs[0]))))


@converter("ConcatFromSequence", since=11)
def concat_from_sequence(ctx: Any, node: Any) -> Any:
    elems = _elements(ctx, node, node.inputs[0])
    if not elems:
        raise node.error("concatenating an empty sequence")
    types = [_tensor_type(ctx, node, e, f"element {k}") for k, e in enumerate(elems)]
    rank = len(types[0].shape)
    if any(len(t.shape) != rank for t in types):
        raise node.error(f"the elements have different ranks {[len(t.shape) for t in types]}")
    axis = int(node.attr("axis"))
    new_axis = int(node.attr("new_axis", 0))
    if new_axis not in (0, 1):
        raise node.error(f"new_axis must be 0 or 1, got {new_axis}")
    if new_axis:
        axis = _check_position(node, axis, -rank - 1, rank, "axis")
        return op.stack(Tuple(elems), axis=axis + rank + 1 if axis < 0 else axis)
    if rank == 0:
        raise node.error("concatenating scalars needs new_axis=1")
    axis = _check_position(node, axis, -rank, rank - 1, "axis")
    axis = axis + rank if axis < 0 else axis
    if len(elems) == 1:
        return elems[0]
    return op.concatenate(Tuple(elems), axis=axis)


@converter("SplitToSequence", since=11)
def split_to_sequence(ctx: Any, node: Any) -> Any:
    x = node.inputs[0]
    t = _tensor_type(ctx, node, x, "input 0")
    rank = len(t.shape)
    if rank == 0:
        raise node.error("cannot split a scalar")
    axis = _check_position(node, int(node.attr("axis", 0)), -rank, rank - 1, "axis")
    axis = axis + rank if axis < 0 else axis
    dim = t.shape[axis]
    keepdims = int(node.attr("keepdims", 1))
    split = node.input(1)
    if split is None:
        if not isinstance(dim, int):
            raise node.error(f"splitting axis {axis} of a size known only at run time into "
                             "ones makes a sequence of unknown length")
        parts = _slices(x, axis, [1] * dim)
        if not keepdims:
            parts = [op.squeeze(p, axis=(axis,)) for p in parts]
        return Tuple(parts)
    st = _tensor_type(ctx, node, split, "split")
    if st.dtype not in ("int32", "int64") or len(st.shape) > 1:
        raise node.error("split must be an int32 or int64 scalar or 1-D tensor, got "
                         f"{type_text(st)}")
    value = np.asarray(ctx.constant(split, node, "split")).astype(np.int64)
    if value.ndim == 0:
        size = int(value)
        if size <= 0:
            raise node.error(f"split size {size} must be positive")
        if not isinstance(dim, int):
            raise node.error(f"splitting axis {axis} of a size known only at run time into "
                             f"chunks of {size} makes a sequence of unknown length")
        sizes = [size] * (dim // size) + ([dim % size] if dim % size else [])
    else:
        sizes = [int(s) for s in value]
        if any(s < 0 for s in sizes) or (isinstance(dim, int) and sum(sizes) != dim):
            raise node.error(f"split sizes {sizes} do not add up to the size {dim} of axis "
                             f"{axis}")
    return Tuple(_slices(x, axis, sizes))


def _slices(x: Any, axis: int, sizes: list[int]) -> list[Any]:
    """`x` cut along `axis` into pieces of `sizes`."""
    if not sizes:
        return []
    if len(sizes) == 1:
        return [x]
    bounds = [int(b) for b in np.cumsum([0] + sizes)]
    if all(s > 0 for s in sizes):
        parts = op.split(x, indices_or_sections=tuple(bounds[1:-1]), axis=axis)
        return [TupleGetItem(parts, k) for k in range(len(sizes))]
    return [op.strided_slice(x, begin=(b,), end=(e,), strides=(1,), axes=(axis,))
            for b, e in itertools.pairwise(bounds)]


@converter("SequenceMap", since=17)
def sequence_map(ctx: Any, node: Any) -> Any:
    body = node.attr("body")
    inputs = list(node.inputs)
    if not inputs or any(e is None for e in inputs):
        raise node.error("needs its input sequence, and no omitted additional inputs")
    if len(body.input) != len(inputs):
        raise node.error(f"the body takes {len(body.input)} inputs, the node gives "
                         f"{len(inputs)}")
    first = _elements(ctx, node, inputs[0])
    n = len(first)
    # each additional input: a sequence (element k goes to iteration k) or a tensor (the
    # same in every iteration)
    columns: list[list[Any]] = [first]
    for k, e in enumerate(inputs[1:], start=1):
        t = ctx.type_of(e)
        if isinstance(t, TensorType):
            columns.append([e] * n)
            continue
        elems = _elements(ctx, node, e, f"input {k}")
        if len(elems) != n:
            raise node.error(f"input {k} has {len(elems)} elements, the input sequence {n}")
        columns.append(elems)
    outs: list[list[Any]] = [[] for _ in body.output]
    for i in range(n):
        results = ctx.convert_subgraph(body, [col[i] for col in columns])
        for j, r in enumerate(results):
            outs[j].append(r)
    tuples = [Tuple(o) for o in outs]
    return tuples[0] if len(tuples) == 1 else tuples


# ---------------------------------------------------------------- optionals

def _type_proto_type(ctx: Any, node: Any, tp: Any) -> Type | None:
    """The Relay type of an optional's element TypeProto where one type fits (a tensor of
    known rank), else None (typed by its use)."""
    if tp is None or not tp.HasField("tensor_type"):
        return None
    tt = tp.tensor_type
    if not tt.elem_type or not tt.HasField("shape"):
        return None
    from ..importer import elem_dtype
    dtype = elem_dtype(tt.elem_type, node.describe())
    return TensorType(tuple(int(d.dim_value) if d.HasField("dim_value") else ANY
                            for d in tt.shape.dim), dtype)


@converter("Optional", since=15)
def optional(ctx: Any, node: Any) -> Any:
    x = node.input(0)
    if x is not None:
        return _some(ctx, x)
    tp = node.attr("type", None)
    if tp is None:
        raise node.error("an empty optional needs the `type` attribute")
    return _none(ctx._importer, _type_proto_type(ctx, node, tp))


@converter("OptionalHasElement", since=15)
def optional_has_element(ctx: Any, node: Any) -> Any:
    x = node.input(0)
    if x is None:
        return ctx.const(np.bool_(False))
    kind = _ctor(x)
    if kind is not None:
        return ctx.const(np.bool_(kind == "Some"))
    t = ctx.type_of(x)
    if not _is_option_type(t):
        # a tensor or sequence (opset 18 on; also a Loop-carried optional once its
        # body made it a plain sequence): present
        return ctx.const(np.bool_(True))
    _, some, _ = _use_prelude(ctx._importer)
    return Match(x, (Clause(PatternConstructor(some, (PatternWildcard(),)),
                            ctx.const(np.bool_(True))),
                     Clause(PatternWildcard(), ctx.const(np.bool_(False)))), True)


@converter("OptionalGetElement", since=15)
def optional_get_element(ctx: Any, node: Any) -> Any:
    x = node.input(0)
    if x is None:
        raise node.error("the input is required")
    kind = _ctor(x)
    if kind == "Some":
        return x.args[0]
    if kind == "None":
        raise node.error("the optional is empty: it has no element to get")
    t = ctx.type_of(x)
    if not _is_option_type(t):
        return x                 # a tensor or sequence: the element itself
    _, some, _ = _use_prelude(ctx._importer)
    v = ctx.fresh_var("element", t.args[0] if t.args else None)
    return Match(x, (Clause(PatternConstructor(some, (PatternVar(v),)), v),), False)


# ---------------------------------------------------------------- Loop over sequences

_UNROLL_LIMIT = 4096


def is_structured(ctx: Any, expr: Any) -> bool:
    """Whether `expr` is a sequence (a tuple) or an optional (an `Option`)."""
    if isinstance(expr, Tuple) or _ctor(expr) is not None:
        return True
    t = ctx.type_of(expr)
    return isinstance(t, TupleType) or _is_option_type(t)


def unrolled_loop(ctx: Any, node: Any) -> list[Any] | None:
    """A Loop node whose carried values include a sequence or an optional, unrolled at
    import (a sequence's length changes across iterations, so it cannot be the parameter
    of one recursive function): the body is converted once per iteration with the
    iteration number and condition as constants. The trip count and the condition must
    be known at import (and the body's condition output after each iteration). Returns
    the Loop's outputs (final carried values, then scan outputs stacked on a new axis
    0), or None when no carried value is a sequence or optional (the caller makes the
    recursive function). The caller (control.loop_1) has checked the node's arity."""
    body = node.attr("body")
    inits = list(node.inputs[2:])
    if not any(is_structured(ctx, e) for e in inits):
        return None
    n = len(inits)
    n_scan = len(body.output) - 1 - n
    trips = None
    if node.input(0) is not None:
        trips = int(np.asarray(ctx.constant(node.input(0), node, "the trip count")
                               ).reshape(-1)[0])
    cond = True
    if node.input(1) is not None:
        cond = bool(np.asarray(ctx.constant(node.input(1), node, "the condition")
                               ).reshape(-1)[0])
    elif trips is None:
        raise node.error("neither a trip count nor a condition: the loop never ends")
    carried = inits
    scans: list[list[Any]] = [[] for _ in range(n_scan)]
    i = 0
    while cond and (trips is None or i < trips):
        if i >= _UNROLL_LIMIT:
            raise node.error(f"a loop over sequences runs more than {_UNROLL_LIMIT} "
                             "iterations (it is unrolled at import)")
        outs = ctx.convert_subgraph(body, [ctx.const(np.int64(i)), ctx.const(np.bool_(cond))]
                                    + carried)
        carried = list(outs[1:1 + n])
        for k in range(n_scan):
            scans[k].append(outs[1 + n + k])
        if node.input(1) is not None:
            value = ctx.value(outs[0])
            if value is None:
                raise node.error("a loop over sequences is unrolled at import: its body's "
                                 "condition must be known at import")
            cond = bool(np.asarray(value).reshape(-1)[0])
        i += 1
    if n_scan and i == 0:
        raise node.error("a loop over sequences that runs no iteration has scan outputs "
                         "of unknown shape")
    return carried + [op.stack(Tuple(vals), axis=0) for vals in scans]
