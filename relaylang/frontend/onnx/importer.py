"""ONNX graph -> Relay module: the walk over the nodes, names, params, types and folding.

`from_onnx(model_or_path, shape=None, dtype="float32", opset=None, freeze_params=False)`
returns `(mod, params)` with TVM's meaning of each argument:

- `shape`: {input name: shape} fixing (symbolic or not) input dimensions; dims the model
  leaves symbolic and `shape` does not fix become `?` (`ANY`). For a sequence input, a
  list of its elements' shapes (which fixes its length: sequences are tuples); for an
  optional input, None (absent) or what a tensor / sequence input takes (present); see
  `ops/sequence.py`.
- `dtype`: a dtype string, or {input name: dtype}; a dict entry overrides the model's
  declared element type of that input, a string is used only for inputs whose element
  type the model leaves undefined (the model's types are otherwise authoritative).
- `opset`: the opset to convert as (default: the model's `ai.onnx` opset).
- `freeze_params`: initializers become constants in the program instead of `@main`
  parameters (then `params` is empty).
- `bind`: {input name: value} graph inputs that become constants of those values
  (relaylang's addition). ONNX lets axes, shapes, sizes and scales be run-time inputs; a
  static program needs them at compile time. A conversion that needs such a value raises
  `NeedsInputValues` naming the graph inputs it is computed from; binding them
  specialises the program to their values (the conformance backend does this per run).

Graph inputs become `@main` parameters with their names (sanitised only where the
grammar needs it: `input.1` -> `input_1`, `0` -> `_0`); initializers (not frozen) follow
them as parameters, with their arrays in `params` under those names. The nodes are
converted in the graph's (topological) order by the converters of `registry.py`; a node
whose inputs are all constants is folded to a constant at once (so shape computations
of static shapes become constants), using the ops' NumPy kernels (`fold_constant`).
Types of named values come from ONNX's own shape inference (run once, with `shape`
applied); an expression without one is typed by relaylang's inference.

Every op without a converter is reported at once (`UnsupportedOps`, listing each
with its node name and opset); a converter's refusal is an `OnnxImportError` naming the
node. Nothing here recurses over the graph: nested subgraphs (If, Loop, Scan bodies)
are converted by a nested `GraphConverter` whose environment falls back to the outer one.
"""
from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ...ir import builder
from ...ir.expr import Call, Constant, Expr, Function, GlobalVar, Op, Tuple, TupleGetItem, Var
from ...ir.module import IRModule
from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from . import registry

# ONNX TensorProto element types -> relaylang dtypes
_ELEM_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32",
                7: "int64", 9: "bool", 10: "float16", 11: "float64", 12: "uint32",
                13: "uint64", 16: "bfloat16",
                17: "float8_e4m3fn", 18: "float8_e4m3fnuz", 19: "float8_e5m2",
                20: "float8_e5m2fnuz", 21: "uint4", 22: "int4", 23: "float4_e2m1fn",
                24: "float8_e8m0fnu", 25: "uint2", 26: "int2"}


class OnnxImportError(Exception):
    """A model that cannot be imported: a corrupt file, a refused node, a bad argument.
    The message is one line; `node` names the node when one is to blame."""

    def __init__(self, message: str, node: str | None = None):
        super().__init__(message)
        self.node = node


class NeedsInputValues(OnnxImportError):
    """A conversion needs at import the value of something computed from graph inputs
    (an axes, shape, sizes or scales input fed at run time): `inputs` names those graph
    inputs; importing again with `bind={name: value}` makes them constants."""

    def __init__(self, message: str, node: str | None, inputs: Sequence[str]):
        super().__init__(message, node)
        self.inputs = list(inputs)


class UnsupportedOps(OnnxImportError):
    """Ops without a converter: `missing` lists (op_type, node name, opset) of each node."""

    def __init__(self, missing: list[tuple[str, str, int]]):
        ops = sorted({op for op, _, _ in missing})
        detail = "; ".join(f"{op} (node {name or '<unnamed>'}, opset {opset})"
                           for op, name, opset in missing[:20])
        more = f"; and {len(missing) - 20} more" if len(missing) > 20 else ""
        super().__init__(f"unsupported ONNX operator(s) {', '.join(ops)}: {detail}{more}")
        self.missing = missing


def elem_dtype(elem_type: int, what: str = "tensor") -> str:
    dtype = _ELEM_DTYPES.get(int(elem_type))
    if dtype is None:
        raise OnnxImportError(f"{what}: ONNX element type {elem_type} is not supported")
    return dtype


def tensor_array(tensor: Any) -> np.ndarray:
    """A TensorProto as an array: `numpy_helper.to_array`'s, with ml_dtypes' float8,
    float4, int4/uint4 and int2/uint2 arrays converted by bit pattern to relaylang's
    carriers (ir/lowp.py); bfloat16 stays ml_dtypes' (builder.const converts it)."""
    from onnx import numpy_helper
    return relay_array(numpy_helper.to_array(tensor))


def relay_array(array: Any) -> Any:
    """An ml_dtypes array of a low-precision dtype as relaylang's carrier (by bit
    pattern); any other array as it is."""
    dtype = getattr(array, "dtype", None)
    if dtype is None or dtype.fields is not None or dtype.kind != "V":
        return array
    from ...ir.lowp import CARRIERS, from_lowp_bits
    name = dtype.name
    if name not in CARRIERS:
        return array
    return from_lowp_bits(np.ascontiguousarray(array).view(np.uint8), name)


def array_dtype(array: np.ndarray) -> str:
    """The relaylang dtype of an array (carriers: their field's name)."""
    dtype = array.dtype
    return dtype.names[0] if dtype.kind == "V" and dtype.names else str(dtype)


# ---------------------------------------------------------------- names

_NAME_PART = re.compile(r"[A-Za-z_][A-Za-z0-9_/]*")


def sanitize(name: str) -> str:
    """`name` as a Relay identifier (`[A-Za-z_][A-Za-z0-9_/]*`, dot-separated parts):
    other characters become `_`, a part starting with a digit gets a leading `_`."""
    parts = []
    for part in (name or "_").split("."):
        part = re.sub(r"[^A-Za-z0-9_/]", "_", part) or "_"
        if not _NAME_PART.fullmatch(part):
            part = "_" + part
        parts.append(part)
    return ".".join(parts)


class Names:
    """Unique sanitised names for the parameters of one function."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def fresh(self, name: str) -> str:
        base = sanitize(name)
        out, k = base, 1
        while out in self.used:
            out = f"{base}_{k}"
            k += 1
        self.used.add(out)
        return out


# ---------------------------------------------------------------- attributes

def attribute_value(attr: Any) -> Any:
    """An AttributeProto's value as Python data: ints, floats, strings (decoded), lists of
    them, numpy arrays for tensors, GraphProtos for graphs."""
    from onnx import AttributeProto
    t = attr.type
    if t == AttributeProto.FLOAT:
        return float(attr.f)
    if t == AttributeProto.INT:
        return int(attr.i)
    if t == AttributeProto.STRING:
        return attr.s.decode("utf-8", "replace")
    if t == AttributeProto.TENSOR:
        return tensor_array(attr.t)
    if t == AttributeProto.GRAPH:
        return attr.g
    if t == AttributeProto.FLOATS:
        return [float(v) for v in attr.floats]
    if t == AttributeProto.INTS:
        return [int(v) for v in attr.ints]
    if t == AttributeProto.STRINGS:
        return [s.decode("utf-8", "replace") for s in attr.strings]
    if t == AttributeProto.TENSORS:
        return [tensor_array(v) for v in attr.tensors]
    if t == AttributeProto.GRAPHS:
        return list(attr.graphs)
    if t == AttributeProto.TYPE_PROTO:         # Optional's `type`: the TypeProto itself
        return attr.tp
    if t == AttributeProto.TYPE_PROTOS:
        return list(attr.type_protos)
    if t == AttributeProto.SPARSE_TENSOR:
        raise OnnxImportError(f"attribute {attr.name}: sparse tensors are not supported")
    raise OnnxImportError(f"attribute {attr.name}: unknown attribute type {t}")


_MISSING = object()


class Node:
    """One ONNX node as a converter sees it: `op_type`, `name`, `inputs` (Relay
    expressions; None for an omitted optional input), `outputs` (ONNX names), `attrs`."""

    __slots__ = ("attrs", "domain", "input_names", "inputs", "name", "op_type", "opset",
                 "outputs")

    def __init__(self, op_type: str, name: str, domain: str, inputs: list[Expr | None],
                 input_names: list[str], outputs: list[str], attrs: dict[str, Any],
                 opset: int):
        self.op_type, self.name, self.domain = op_type, name, domain
        self.inputs, self.input_names, self.outputs = inputs, input_names, outputs
        self.attrs, self.opset = attrs, opset

    def input(self, i: int) -> Expr | None:
        """Input `i`, or None when the node omits it (absent or an empty name)."""
        return self.inputs[i] if i < len(self.inputs) else None

    def attr(self, name: str, default: Any = _MISSING) -> Any:
        if name in self.attrs:
            return self.attrs[name]
        if default is _MISSING:
            raise OnnxImportError(f"{self.describe()}: attribute `{name}` is required",
                                  self.name)
        return default

    def describe(self) -> str:
        return f"{self.op_type} node {self.name!r}" if self.name else f"{self.op_type} node"

    def error(self, message: str) -> OnnxImportError:
        return OnnxImportError(f"{self.describe()}: {message}", self.name)


# ---------------------------------------------------------------- the context

class Context:
    """What converters may ask: the opset, types and constant values of expressions,
    and (for control flow) subgraph conversion and new global functions."""

    def __init__(self, importer: ModelImporter, converter: GraphConverter):
        self._importer = importer
        self._graph = converter

    @property
    def opset(self) -> int:
        return self._importer.opset

    # types
    def type_of(self, expr: Expr) -> Type:
        """The Relay type of `expr` (ONNX's inferred type for a named value, else
        relaylang's inference)."""
        return self._importer.type_of(expr)

    def shape(self, expr: Expr) -> tuple[Any, ...]:
        """The shape of tensor `expr`: ints, `ANY` for unknown dims."""
        t = self.type_of(expr)
        if not isinstance(t, TensorType):
            raise OnnxImportError(f"expected a tensor, got a value of type {t}")
        return tuple(t.shape)

    def dtype(self, expr: Expr) -> str:
        t = self.type_of(expr)
        if not isinstance(t, TensorType):
            raise OnnxImportError(f"expected a tensor, got a value of type {t}")
        return t.dtype

    def static_shape(self, expr: Expr) -> tuple[int, ...] | None:
        """The shape when every dim is known, else None."""
        shape = self.shape(expr)
        return tuple(int(d) for d in shape) if all(isinstance(d, int) for d in shape) else None

    # constant values
    def value(self, expr: Expr | None) -> np.ndarray | None:
        """The value of `expr` when known at import time: a constant, an initializer
        (even one that stays a parameter), else None."""
        if expr is None:
            return None
        if isinstance(expr, Constant):
            return np.asarray(expr.data)
        if isinstance(expr, Var):
            return self._importer.initializer_value(expr)
        return None

    def constant(self, expr: Expr, node: Node, what: str) -> np.ndarray:
        """The value of `expr`, which converting `node` needs at import (`what` it is, for
        the message). When it is computed from graph inputs, a `NeedsInputValues` names
        them (a caller may bind their values and import again); otherwise a plain
        refusal."""
        value = self.value(expr)
        if value is not None:
            return value
        inputs = self._importer.graph_inputs_under(expr)
        if inputs:
            names = ", ".join(repr(n) for n in inputs)
            raise NeedsInputValues(
                f"{node.describe()}: {what} must be known at import, but it is computed from "
                f"graph input(s) {names} (bind their values: from_onnx(bind=...), "
                "`relay import --bind NAME=...`)", node.name, inputs)
        raise node.error(f"{what} must be a constant (a run-time {what} is not supported)")

    def const(self, value: Any, dtype: str | None = None) -> Constant:
        """A constant of `value` (numpy rules; `dtype` converts)."""
        array = np.asarray(value) if dtype is None else np.asarray(value).astype(dtype)
        return builder.const(array, array_dtype(array))

    # control flow
    def convert_subgraph(self, graph: Any, inputs: Sequence[Expr]) -> list[Expr]:
        """The outputs of subgraph `graph` with its formal inputs bound to `inputs`; names
        it does not define resolve in the enclosing graphs (captured outer values)."""
        return self._importer.convert_subgraph(graph, inputs, self._graph)

    def subgraph_input_types(self, graph: Any) -> list[Type | None]:
        """The declared types of a subgraph's formal inputs (None where not declared)."""
        return [self._importer.declared_type(vi) for vi in graph.input]

    def subgraph_output_types(self, graph: Any) -> list[Type | None]:
        """The declared types of a subgraph's outputs (None where not declared)."""
        return [self._importer.declared_type(vi) for vi in graph.output]

    def closed_subgraph(self, graph: Any) -> Closure:
        """The outer values `graph` captures as parameters of a closed function (a loop
        body becomes a global function, which cannot capture): see `Closure`."""
        return Closure(self, graph)

    def remember_type(self, expr: Expr, ty: Type) -> None:
        """Record `expr`'s type (what `type_of` answers from then on)."""
        self._importer.remember_type(expr, ty)

    def functions_snapshot(self) -> dict[GlobalVar, Function]:
        """The global functions made so far (to undo a conversion attempt with
        `restore_functions`)."""
        return dict(self._importer.functions)

    def restore_functions(self, snapshot: dict[GlobalVar, Function]) -> None:
        self._importer.functions.clear()
        self._importer.functions.update(snapshot)

    def add_function(self, name: str, fn: Function) -> GlobalVar:
        """Add `fn` to the module as a global function (a fresh name based on `name`)."""
        return self._importer.add_function(name, fn)

    def global_var(self, name: str) -> GlobalVar:
        """A fresh global name (for a recursive function defined with `define`)."""
        return self._importer.fresh_global(name)

    def define(self, gv: GlobalVar, fn: Function) -> None:
        self._importer.functions[gv] = fn

    def fresh_var(self, name: str, ty: Type | None = None) -> Var:
        return Var(self._importer.local_names.fresh(name), ty)


class Closure:
    """The outer values a subgraph captures, as parameters of a closed function:
    `params` (fresh annotated vars) and `args` (the outer expressions, in the same order);
    constants are bound directly instead. `convert(graph, inputs)` converts the subgraph
    in a scope that sees only those parameters (so the result's free variables are
    `params` and the subgraph's own inputs)."""

    def __init__(self, ctx: Context, graph: Any):
        self.ctx = ctx
        importer, outer = ctx._importer, ctx._graph
        self.scope_env: dict[str, Expr] = {}
        self.params: list[Var] = []
        self.args: list[Expr] = []
        for name in captured_names(graph):
            e = outer.lookup(name)
            if e is None:
                continue                    # reported as undefined when converted
            if isinstance(e, Constant):
                self.scope_env[name] = e
                continue
            v = ctx.fresh_var(name, ctx.type_of(e))
            value = ctx.value(e)
            if value is not None:           # an initializer kept as a parameter
                importer.initializers[id(v)] = value
            self.scope_env[name] = v
            self.params.append(v)
            self.args.append(e)

    def convert(self, graph: Any, inputs: Sequence[Expr]) -> list[Expr]:
        importer = self.ctx._importer
        scope = GraphConverter(importer, None)
        scope.env.update(self.scope_env)
        return importer.convert_subgraph(graph, inputs, scope)


def captured_names(graph: Any) -> list[str]:
    """The names `graph` (nested subgraphs included) uses but does not define, in
    first-use order. ONNX forbids a subgraph name shadowing an outer one, so one set of
    the names defined anywhere inside suffices (iterative walk)."""
    used: dict[str, None] = {}
    defined: set[str] = set()
    stack = [graph]
    while stack:
        g = stack.pop()
        defined.update(vi.name for vi in g.input)
        defined.update(init.name for init in g.initializer)
        defined.update(getattr(init.values, "name", "") for init in g.sparse_initializer)
        for n in g.node:
            for name in n.input:
                if name:
                    used.setdefault(name, None)
            defined.update(name for name in n.output if name)
            for a in n.attribute:
                if a.type == 5:             # GRAPH
                    stack.append(a.g)
                elif a.type == 10:          # GRAPHS
                    stack.extend(a.graphs)
        for vi in g.output:
            used.setdefault(vi.name, None)
    return [name for name in used if name not in defined]


class GraphConverter:
    """The environment of one (sub)graph: ONNX names -> Relay expressions."""

    def __init__(self, importer: ModelImporter, parent: GraphConverter | None = None):
        self.importer = importer
        self.parent = parent
        self.env: dict[str, Expr] = {}

    def lookup(self, name: str) -> Expr | None:
        scope: GraphConverter | None = self
        while scope is not None:
            found = scope.env.get(name)
            if found is not None:
                return found
            scope = scope.parent
        return None

    def convert_nodes(self, nodes: Sequence[Any]) -> None:
        importer = self.importer
        ctx = Context(importer, self)
        for proto in nodes:
            fn = registry.lookup(proto.op_type, importer.opset, proto.domain)
            if fn is None:               # reported together before conversion starts
                raise UnsupportedOps([(proto.op_type, proto.name, importer.opset)])
            inputs: list[Expr | None] = []
            for name in proto.input:
                if not name:
                    inputs.append(None)
                    continue
                e = self.lookup(name)
                if e is None:
                    raise OnnxImportError(
                        f"{proto.op_type} node {proto.name!r}: input {name!r} is not defined "
                        "before the node (the graph is not topologically sorted?)", proto.name)
                inputs.append(e)
            attrs = {a.name: attribute_value(a) for a in proto.attribute}
            node = Node(proto.op_type, proto.name, proto.domain, inputs, list(proto.input),
                        list(proto.output), attrs, importer.opset)
            try:
                result = fn(ctx, node)
            except OnnxImportError:
                raise
            except (ValueError, TypeError, KeyError, IndexError) as e:
                raise node.error(str(e).splitlines()[0] if str(e) else type(e).__name__) \
                    from e
            outs = list(result) if isinstance(result, (list, tuple)) else [result]
            foldable, params = importer.foldable(inputs)
            for k, name in enumerate(proto.output):
                if not name:
                    continue
                if k >= len(outs) or outs[k] is None:
                    raise node.error(f"output {k} ({name!r}) is not produced by the converter")
                out = outs[k]
                if foldable and not isinstance(out, Constant):
                    out = importer.fold(out, params)
                importer.name_type(out, name)
                self.env[name] = out


class ModelImporter:
    """One model's import: the opset, the value types of ONNX's shape inference, the
    parameters and initializers, the global functions made for control flow."""

    def __init__(self, model: Any, shape: Mapping[str, Any] | None, dtype: Any,
                 opset: int | None, freeze_params: bool,
                 bind: Mapping[str, Any] | None = None):
        self.model = model
        self.shape_overrides = dict(shape or {})
        self.bind = {name: np.asarray(v) for name, v in (bind or {}).items()}
        self.graph_input_vars: dict[int, str] = {}        # id(Var) -> ONNX input name
        self.dtype = dtype
        self.freeze_params = freeze_params
        self.opset = int(opset) if opset is not None else model_opset(model)
        self.value_types: dict[str, TensorType] = {}
        self.initializers: dict[int, np.ndarray] = {}     # id(Var) -> value
        self.expr_types: dict[int, Type] = {}             # id(Expr) -> type, by ONNX name
        self.functions: dict[GlobalVar, Function] = {}
        self.global_names = Names()
        self.local_names = Names()
        self._keep: list[Expr] = []                       # the exprs typed by id
        self.uses_prelude = False     # an ADT of the prelude (Option) is used: import it
        self._static_inputs: bool | None = None

    # ------------------------------------------------------------ types
    def declared_type(self, value_info: Any) -> TensorType | None:
        """A ValueInfoProto's tensor type (unknown dims as ANY), or None."""
        tt = value_info.type
        if not tt.HasField("tensor_type"):
            return None
        t = tt.tensor_type
        if not t.elem_type:
            return None
        dtype = elem_dtype(t.elem_type, f"value {value_info.name!r}")
        if not t.HasField("shape"):
            return None
        dims: list[Any] = []
        for d in t.shape.dim:
            dims.append(int(d.dim_value) if d.HasField("dim_value") else ANY)
        return TensorType(tuple(dims), dtype)

    def static_inputs(self) -> bool:
        """Whether every graph input the program takes has a static type (bound inputs are
        constants)."""
        if self._static_inputs is None:
            inits = {i.name for i in self.model.graph.initializer}
            static = True
            for vi in self.model.graph.input:
                if vi.name in inits or vi.name in self.bind:
                    continue
                try:
                    t = self.input_type(vi)
                except OnnxImportError:
                    static = False
                    break
                tensors = t.fields if isinstance(t, TupleType) else (t,)
                if not all(isinstance(f, TensorType)
                           and all(isinstance(d, int) for d in f.shape) for f in tensors):
                    static = False
                    break
            self._static_inputs = static
        return self._static_inputs

    def name_type(self, expr: Expr, name: str) -> None:
        t = self.value_types.get(name)
        if t is not None and not isinstance(expr, Var) and any(
                not isinstance(d, int) for d in t.shape) and self.static_inputs():
            # ONNX's inference gave up on a dim of a model whose inputs are static (say
            # after an If, whose branch taken is known here): relaylang's inference, which
            # sees the constants folded at import, types it instead
            return
        if t is not None and id(expr) not in self.expr_types:
            self.expr_types[id(expr)] = t
            self._keep.append(expr)

    def type_of(self, expr: Expr) -> Type:
        t = self.expr_types.get(id(expr))
        if t is not None:
            return t
        if isinstance(expr, Constant):
            data = np.asarray(expr.data)
            return TensorType(tuple(int(d) for d in data.shape), array_dtype(data))
        if isinstance(expr, Var) and expr.type_annotation is not None:
            return expr.type_annotation
        t = infer_expr_type(expr, self.functions, self.uses_prelude)
        self.remember_type(expr, t)
        return t

    def remember_type(self, expr: Expr, ty: Type) -> None:
        if id(expr) not in self.expr_types:
            self.expr_types[id(expr)] = ty
            self._keep.append(expr)

    # ------------------------------------------------------------ values
    def initializer_value(self, var: Var) -> np.ndarray | None:
        return self.initializers.get(id(var))

    def foldable(self, inputs: Sequence[Expr | None]) -> tuple[bool, list[Var]]:
        """Whether a node over `inputs` folds: every input is known at import (constants,
        and initializers that stay parameters) and some input is a constant computed at
        import or there are no inputs (so a shape chain indexed by initializers folds,
        while a node reading only parameters, say a transposed weight, stays a call on
        them). Also the initializer parameters among the inputs."""
        params = [i for i in inputs if isinstance(i, Var) and id(i) in self.initializers]
        known = all(i is None or isinstance(i, Constant)
                    or (isinstance(i, Var) and id(i) in self.initializers) for i in inputs)
        some_constant = any(isinstance(i, Constant) for i in inputs) or not any(
            i is not None for i in inputs)
        return known and some_constant, params

    def fold(self, expr: Expr, params: Sequence[Var] = ()) -> Expr:
        """`expr` (whose free leaves are constants, or the initializer parameters
        `params`) evaluated to a constant where the ops' NumPy kernels can: no size
        limit (these are the model's own constants). Unless it becomes one constant, the
        expression stays as it was (parameters are not baked in)."""
        from ...ir.traverse import rewrite
        from ...transform.fold_constant import fold_constant
        body = expr
        if params:
            values = {id(v): builder.const(self.initializers[id(v)],
                                           str(self.initializers[id(v)].dtype))
                      for v in params}

            def swap(old: Any, rebuilt: Any) -> Any:
                return values.get(id(old)) if type(old) is Var else None
            body = rewrite(expr, swap)
        folded = fold_constant(body, max_elements=1 << 62)
        if params and not isinstance(folded, Constant):
            return expr
        return folded

    def graph_inputs_under(self, expr: Expr) -> list[str]:
        """The (top-level) graph inputs among the free variables of `expr`."""
        names = []
        for v in free_vars_of(expr):
            name = self.graph_input_vars.get(id(v))
            if name is not None and name not in names:
                names.append(name)
        return names

    def bound_input(self, vi: Any) -> Constant:
        """Graph input `vi` bound to its value in `bind`: a constant of the input's
        declared dtype, checked against its declared shape."""
        name = vi.name
        declared = self.input_type(vi)
        value = self.bind[name]
        if value.dtype.kind in "biuf" and str(value.dtype) != declared.dtype:
            value = value.astype(declared.dtype)
        if len(declared.shape) != value.ndim or any(
                isinstance(d, int) and d != n for d, n in zip(declared.shape, value.shape)):
            if value.size == 1 and all(d == 1 for d in declared.shape if isinstance(d, int)) \
                    and all(isinstance(d, int) for d in declared.shape):
                value = value.reshape(tuple(int(d) for d in declared.shape))
            else:
                shape = "(" + ", ".join("?" if not isinstance(d, int) else str(d)
                                        for d in declared.shape) + ")"
                raise OnnxImportError(f"bind= gives graph input {name!r} a value of shape "
                                      f"{tuple(value.shape)}; the input is declared {shape}")
        # (np.ascontiguousarray makes a 0-d array 1-d: keep the shape)
        return builder.const(np.ascontiguousarray(value).reshape(value.shape),
                             str(value.dtype))

    # ------------------------------------------------------------ globals
    def fresh_global(self, name: str) -> GlobalVar:
        return GlobalVar(self.global_names.fresh(name))

    def add_function(self, name: str, fn: Function) -> GlobalVar:
        gv = self.fresh_global(name)
        self.functions[gv] = fn
        return gv

    # ------------------------------------------------------------ graphs
    def convert_subgraph(self, graph: Any, inputs: Sequence[Expr],
                         parent: GraphConverter) -> list[Expr]:
        if len(inputs) != len(graph.input):
            raise OnnxImportError(f"subgraph {graph.name!r} takes {len(graph.input)} inputs, "
                                  f"got {len(inputs)}")
        self.add_value_types(graph)
        scope = GraphConverter(self, parent)
        for vi, e in zip(graph.input, inputs):
            scope.env[vi.name] = e
        self.bind_initializers(graph, scope, frozen=True)
        scope.convert_nodes(graph.node)
        outs = []
        for vi in graph.output:
            e = scope.lookup(vi.name)
            if e is None:
                raise OnnxImportError(f"subgraph {graph.name!r}: output {vi.name!r} is not "
                                      "computed")
            outs.append(e)
        return outs

    def add_value_types(self, graph: Any) -> None:
        for vi in list(graph.input) + list(graph.output) + list(graph.value_info):
            t = self.declared_type(vi)
            if t is not None:
                self.value_types.setdefault(vi.name, t)

    def bind_initializers(self, graph: Any, scope: GraphConverter, frozen: bool,
                          params: list[Var] | None = None,
                          values: dict[str, np.ndarray] | None = None) -> None:
        for init in graph.initializer:
            try:
                array = tensor_array(init)
            except Exception as e:
                raise OnnxImportError(f"initializer {init.name!r} cannot be read: {e}") from e
            if array.dtype == np.dtype("O"):
                raise OnnxImportError(f"initializer {init.name!r}: string tensors are not "
                                      "supported")
            if frozen or params is None:
                scope.env[init.name] = builder.const(array, array_dtype(array))
                continue
            v = Var(self.local_names.fresh(init.name),
                    TensorType(tuple(int(d) for d in array.shape), array_dtype(array)))
            self.initializers[id(v)] = array
            scope.env[init.name] = v
            params.append(v)
            assert values is not None
            values[v.name_hint] = array

    def input_value(self, vi: Any, v: Var) -> Expr:
        """What graph input `vi`'s name stands for, given its parameter `v`: `v` itself,
        or for an optional input its `Option` value (`ops/sequence.py`)."""
        if vi.type.HasField("optional_type"):
            from .ops.sequence import optional_input_value
            return optional_input_value(self, vi, v)
        return v

    def input_type(self, vi: Any) -> Type:
        name = vi.name
        if vi.type.HasField("sequence_type") or vi.type.HasField("optional_type"):
            from .ops.sequence import structured_input_type
            return structured_input_type(self, vi)
        declared = vi.type.tensor_type if vi.type.HasField("tensor_type") else None
        if declared is None:
            raise OnnxImportError(f"graph input {name!r} is not a tensor (sequence and map "
                                  "inputs are not supported)")
        if isinstance(self.dtype, Mapping) and name in self.dtype:
            dtype = str(self.dtype[name])
        elif declared.elem_type:
            dtype = elem_dtype(declared.elem_type, f"graph input {name!r}")
        else:
            dtype = str(self.dtype) if isinstance(self.dtype, str) else "float32"
        dims = tensor_dims(self.shape_overrides.get(name), declared)
        if dims is None:
            raise OnnxImportError(f"graph input {name!r} has no shape: give it with "
                                  f"shape={{{name!r}: (...)}}")
        return TensorType(dims, dtype)

    def run(self) -> tuple[IRModule, dict[str, np.ndarray]]:
        graph = self.model.graph
        missing = unsupported_nodes(graph, self.opset)
        if missing:
            raise UnsupportedOps(missing)
        init_names = {i.name for i in graph.initializer}
        inputs = [vi.name for vi in graph.input if vi.name not in init_names]
        unknown = sorted(set(self.bind) - set(inputs))
        if unknown:
            raise OnnxImportError(f"bind= names {', '.join(map(repr, unknown))}, which "
                                  f"is not an input of the model (inputs: "
                                  f"{', '.join(inputs) or 'none'})")
        top = GraphConverter(self)
        bound = {vi.name: self.bound_input(vi) for vi in graph.input if vi.name in self.bind}
        self.value_types = infer_value_types(self.model, self.shape_overrides, self,
                                             {n: np.asarray(c.data) for n, c in bound.items()})
        params: list[Var] = []
        for vi in graph.input:
            if vi.name in init_names:
                continue            # an initializer listed as an input (older exporters)
            if vi.name in bound:
                top.env[vi.name] = bound[vi.name]
                continue
            v = Var(self.local_names.fresh(vi.name), self.input_type(vi))
            top.env[vi.name] = self.input_value(vi, v)
            params.append(v)
            self.graph_input_vars[id(v)] = vi.name
            self.name_type(v, vi.name)
        values: dict[str, np.ndarray] = {}
        self.bind_initializers(graph, top, self.freeze_params, params, values)
        top.convert_nodes(graph.node)
        outs = []
        for vi in graph.output:
            e = top.lookup(vi.name)
            if e is None:
                raise OnnxImportError(f"graph output {vi.name!r} is not computed by any node")
            outs.append(e)
        body = outs[0] if len(outs) == 1 else Tuple(tuple(outs))
        used = free_var_ids(body, self.functions.values())
        kept = [p for p in params if id(p) in used or p.name_hint not in values]
        values = {p.name_hint: values[p.name_hint] for p in kept if p.name_hint in values}
        main = Function(tuple(kept), body, None, ())
        mod = IRModule.from_expr(main, dict(self.functions))
        if self.uses_prelude:
            from .ops.sequence import with_option_type
            mod = with_option_type(mod)
        from ...typing import infer_types
        try:
            mod = infer_types(mod)
            if uses_dynamic_ops(mod):
                # shapes computed at run time that became known after all (TVM's
                # from_onnx runs the same pass)
                from ...transform import DynamicToStatic
                mod = DynamicToStatic()(mod)
        except Exception as e:  # a converter bug, or a model ONNX accepts: one line
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise OnnxImportError(f"the imported program does not type-check: {first}") from e
        return mod, values


def tensor_dims(override: Sequence[Any] | None, declared: Any) -> tuple[Any, ...] | None:
    """The dims of a tensor graph input (or sequence element): those of `override` (the
    caller's shape=; None or a negative dim stays unknown) when given, else the declared
    TensorProto type's (unknown dims `ANY`); None when neither gives a shape."""
    if override is not None:
        return tuple(ANY if d is None or (isinstance(d, int) and d < 0) else int(d)
                     for d in override)
    if declared.HasField("shape"):
        return tuple(int(d.dim_value) if d.HasField("dim_value") else ANY
                     for d in declared.shape.dim)
    return None


def uses_dynamic_ops(mod: IRModule) -> bool:
    """Whether any function of `mod` calls a `dyn.*` op."""
    from ...ir.traverse import post_order
    for _, fn in mod:
        for n in post_order(fn):
            if isinstance(n, Call) and isinstance(n.op, Op) and n.op.name.startswith("dyn."):
                return True
    return False


def model_opset(model: Any) -> int:
    for o in model.opset_import:
        if o.domain in registry.ONNX_DOMAINS:
            return int(o.version)
    return 1


def unsupported_nodes(graph: Any, opset: int) -> list[tuple[str, str, int]]:
    """(op_type, node name, opset) of every node without a converter, subgraphs included
    (iterative walk)."""
    missing: list[tuple[str, str, int]] = []
    stack = [graph]
    while stack:
        g = stack.pop()
        for node in g.node:
            if registry.lookup(node.op_type, opset, node.domain) is None:
                missing.append((node.op_type if not node.domain or node.domain in
                                registry.ONNX_DOMAINS else f"{node.domain}.{node.op_type}",
                                node.name, opset))
            for a in node.attribute:
                if a.type == 5:             # GRAPH
                    stack.append(a.g)
                elif a.type == 10:          # GRAPHS
                    stack.extend(a.graphs)
    return missing


def infer_value_types(model: Any, overrides: Mapping[str, Any],
                      importer: ModelImporter,
                      bound: Mapping[str, np.ndarray] | None = None
                      ) -> dict[str, TensorType]:
    """name -> type of every value ONNX's shape inference can type, with the input
    shapes of `overrides` applied first and the `bound` inputs made initializers (so
    shapes computed from them are inferred; the model is copied, not changed)."""
    import onnx
    from onnx import numpy_helper
    m = onnx.ModelProto()
    m.CopyFrom(model)
    if bound:
        kept = [vi for vi in m.graph.input if vi.name not in bound]
        del m.graph.input[:]
        m.graph.input.extend(kept)
        for name, value in bound.items():
            m.graph.initializer.append(numpy_helper.from_array(value, name))
    if overrides:
        names = {vi.name for vi in m.graph.input}
        for name in overrides:
            if name not in names:
                known = ", ".join(sorted(names)) or "none"
                raise OnnxImportError(f"shape= names {name!r}, which is not an input of the "
                                      f"model (inputs: {known})")
        for vi in m.graph.input:
            if vi.name in overrides and vi.type.HasField("tensor_type"):
                shape = vi.type.tensor_type.shape
                shape.ClearField("dim")
                for d in overrides[vi.name]:
                    dim = shape.dim.add()
                    if d is not None and not (isinstance(d, int) and d < 0):
                        dim.dim_value = int(d)
    del m.graph.value_info[:]
    try:
        inferred = onnx.shape_inference.infer_shapes(m, data_prop=bool(bound))
    except Exception:  # noqa: BLE001 -- inference is an aid: relaylang's inference remains
        inferred = m
    types: dict[str, TensorType] = {}
    for vi in (list(inferred.graph.input) + list(inferred.graph.value_info)
               + list(inferred.graph.output)):
        try:
            t = importer.declared_type(vi)
        except OnnxImportError:
            t = None
        if t is not None:
            types[vi.name] = t
    return types


def infer_expr_type(expr: Expr, functions: Mapping[GlobalVar, Function] | None = None,
                    prelude: bool = False) -> Type:
    """relaylang's type of `expr`, its free variables as parameters (annotated ones),
    with the global `functions` made so far in scope (calls of loop functions), and the
    prelude's `Option` type when `prelude` (optionals are its values)."""
    from ...typing import infer_types
    free = [v for v in free_vars_of(expr)]
    fn = Function(tuple(free), expr, None, ())
    try:
        mod = IRModule.from_expr(fn, dict(functions or {}))
        if prelude:
            from .ops.sequence import with_option_type
            mod = with_option_type(mod)
        mod = infer_types(mod)
    except Exception as e:
        first = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise OnnxImportError(f"an intermediate value does not type-check: {first}") from e
    main = mod["main"]
    assert isinstance(main, Function)
    t = main.body.checked_type
    if t is None:
        raise OnnxImportError("cannot type an intermediate expression")
    return t


def free_vars_of(expr: Expr) -> list[Var]:
    """The free variables of `expr` in first-use order (an import builds no binders,
    except inside control-flow functions, which are closed)."""
    from ...ir.analysis import free_vars
    return list(free_vars(expr))


def free_var_ids(body: Expr, functions: Any) -> set[int]:
    ids = {id(v) for v in free_vars_of(body)}
    for fn in functions:
        ids |= {id(v) for v in free_vars_of(fn)}
    return ids


def load_model(model_or_path: Any) -> Any:
    """A ModelProto from a ModelProto, a path or bytes; a one-line error for a file that
    is missing, corrupt or not ONNX."""
    import onnx
    if isinstance(model_or_path, onnx.ModelProto):
        return model_or_path
    if isinstance(model_or_path, (bytes, bytearray)):
        data = bytes(model_or_path)
        where = "the model bytes"
    else:
        path = str(model_or_path)
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise OnnxImportError(f"{path}: {e.strerror or e}") from e
        where = path
    model = onnx.ModelProto()
    try:
        model.ParseFromString(data)
    except Exception as e:
        raise OnnxImportError(f"{where}: not an ONNX model ({type(e).__name__})") from e
    if not model.HasField("graph") or not model.ir_version:
        raise OnnxImportError(f"{where}: not an ONNX model (no graph)")
    return model


def from_onnx(model: Any, shape: Mapping[str, Any] | None = None, dtype: Any = "float32",
              opset: int | None = None, freeze_params: bool = False,
              bind: Mapping[str, Any] | None = None
              ) -> tuple[IRModule, dict[str, np.ndarray]]:
    """`(mod, params)` of an ONNX model (a ModelProto, a path or bytes); see the module
    docstring for the arguments."""
    try:
        import onnx  # noqa: F401
    except ImportError as e:
        raise OnnxImportError("importing ONNX models needs the `onnx` package: "
                              "pip install 'relaylang[onnx]'") from e
    proto = load_model(model)
    importer = ModelImporter(proto, shape, dtype, opset, freeze_params, bind)
    return importer.run()


__all__ = ["Closure", "Context", "NeedsInputValues", "Node", "OnnxImportError",
           "UnsupportedOps", "from_onnx", "sanitize"]

# the kinds of expression a converter returns, for isinstance checks in converters
EXPR_KINDS = (Call, Constant, Op, Tuple, TupleGetItem, Var)
