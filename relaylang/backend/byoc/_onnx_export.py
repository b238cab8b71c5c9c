"""A partitioned function as an ONNX model (the `onnxruntime` target's exporter).

    model, inputs, outputs = export(func, symbol)      # onnx.ModelProto, names, layout

The function's dataflow graph is walked once (`post_order`, an explicit stack); every
call becomes ONNX nodes through the converter of its operator (`CONVERTERS`, one per
operator the target claims in `relaylang/transform/byoc/targets/onnxruntime.py`), each
constant an initializer, each parameter a graph input (a tuple parameter one input per
field), and the result one graph output per tensor (through `Identity`, so an output may
be an input or a constant). Attributes are translated to ONNX's (padding pairs to
`pads`, `transpose_b` to a `Transpose`, ...); shapes come from the checked types, so
`reshape` gets its output shape, never `newshape`'s special values. Opset 17.

onnx is imported by the caller and passed in (`export` imports it lazily), so importing
this module needs neither onnx nor onnxruntime.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem
from ...ir.traverse import post_order
from ...ir.types import TensorType, TupleType, tuple_leaves

OPSET = 17


class ExportError(ValueError):
    """The function holds something the exporter cannot write."""


class Graph:
    """The ONNX graph being written: nodes, initializers, fresh names."""

    def __init__(self, helper: Any, numpy_helper: Any) -> None:
        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def fresh(self, hint: str) -> str:
        self._count += 1
        return f"{hint}_{self._count}"

    def const(self, array: Any, hint: str = "c") -> str:
        name = self.fresh(hint)
        self.initializers.append(self.numpy_helper.from_array(np.ascontiguousarray(array), name))
        return name

    def node(self, op_type: str, inputs: list[str], n_out: int = 1, **attrs: Any) -> Any:
        outs = [self.fresh(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(self.helper.make_node(op_type, inputs, outs, **attrs))
        return outs[0] if n_out == 1 else outs


Converter = Callable[[Graph, Call, list[Any]], Any]
CONVERTERS: dict[str, Converter] = {}


def converter(*names: str) -> Callable[[Converter], Converter]:
    def decorate(fn: Converter) -> Converter:
        for n in names:
            CONVERTERS[n] = fn
        return fn
    return decorate


def _shape(expr: Expr) -> tuple[int, ...]:
    ty = expr.checked_type
    if not isinstance(ty, TensorType):
        raise ExportError(f"expected a tensor, got {ty}")
    return tuple(int(d) for d in ty.shape)


def _pairs(padding: Any) -> list[int]:
    from ...op.shape_rules import padding_pairs
    (pt, pb), (pl, pr) = padding_pairs(padding, 2)
    return [int(pt), int(pl), int(pb), int(pr)]


def _two(value: Any, what: str) -> list[int]:
    from ...op.shape_rules import spatial
    return [int(v) for v in spatial(value, 2, what)]


# ------------------------------------------------------------------ converters

_ELEMENTWISE = {"add": "Add", "subtract": "Sub", "multiply": "Mul", "divide": "Div",
                "maximum": "Max", "minimum": "Min", "nn.relu": "Relu", "sigmoid": "Sigmoid",
                "tanh": "Tanh", "exp": "Exp", "sqrt": "Sqrt", "negative": "Neg", "abs": "Abs",
                "log": "Log", "erf": "Erf", "floor": "Floor", "ceil": "Ceil", "power": "Pow"}


@converter(*_ELEMENTWISE)
def _elementwise(g: Graph, call: Call, ins: list[Any]) -> str:
    return g.node(_ELEMENTWISE[call.op.name], ins)


@converter("rsqrt")
def _rsqrt(g: Graph, call: Call, ins: list[Any]) -> str:
    return g.node("Reciprocal", [g.node("Sqrt", ins)])


_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin"}


def _axes(call: Call) -> list[int]:
    from ...op.reduce.relations import reduce_axes
    return list(reduce_axes(len(_shape(call.args[0])), call.attrs))


def _reduce_node(g: Graph, op: str, x: str, axes: list[int], keep: int) -> str:
    if op == "ReduceSum":         # opset 13+: the axes are an input
        return g.node(op, [x, g.const(np.array(axes, np.int64), "axes")], keepdims=keep)
    return g.node(op, [x], axes=axes, keepdims=keep)


@converter(*_REDUCE)
def _reduce(g: Graph, call: Call, ins: list[Any]) -> str:
    axes = _axes(call)
    if not axes:                  # exclude of every axis: nothing reduced
        return g.node("Identity", ins)
    return _reduce_node(g, _REDUCE[call.op.name], ins[0], axes, int(bool(call.attrs.keepdims)))


@converter("variance")
def _variance(g: Graph, call: Call, ins: list[Any]) -> str:
    axes = _axes(call)
    shape = _shape(call.args[0])
    count = int(np.prod([shape[a] for a in axes])) - (1 if call.attrs.unbiased else 0)
    diff = g.node("Sub", ins)
    total = _reduce_node(g, "ReduceSum", g.node("Mul", [diff, diff]), axes,
                         int(bool(call.attrs.keepdims)))
    return g.node("Div", [total, g.const(np.array(count, np.float32), "count")])


@converter("nn.layer_norm")
def _layer_norm(g: Graph, call: Call, ins: list[Any]) -> str:
    x, gamma, beta = ins
    c = _shape(call.args[0])[-1]
    if not call.attrs.scale:
        gamma = g.const(np.ones(c, np.float32), "ones")
    if not call.attrs.center:
        beta = g.const(np.zeros(c, np.float32), "zeros")
    return g.node("LayerNormalization", [x, gamma, beta], axis=-1,
                  epsilon=float(call.attrs.epsilon))


@converter("nn.pad")
def _pad(g: Graph, call: Call, ins: list[Any]) -> str:
    widths = [(int(b), int(a)) for b, a in call.attrs.pad_width]
    pads = g.const(np.array([b for b, _ in widths] + [a for _, a in widths], np.int64), "pads")
    return g.node("Pad", [ins[0], pads, ins[1]], mode="constant")


@converter("nn.leaky_relu")
def _leaky_relu(g: Graph, call: Call, ins: list[Any]) -> str:
    return g.node("LeakyRelu", ins, alpha=float(call.attrs.alpha))


@converter("clip")
def _clip(g: Graph, call: Call, ins: list[Any]) -> str:
    lo = g.const(np.array(call.attrs.a_min, np.float32), "min")
    hi = g.const(np.array(call.attrs.a_max, np.float32), "max")
    return g.node("Clip", [ins[0], lo, hi])


@converter("nn.softmax", "nn.log_softmax")
def _softmax(g: Graph, call: Call, ins: list[Any]) -> str:
    op = "Softmax" if call.op.name == "nn.softmax" else "LogSoftmax"
    return g.node(op, ins, axis=int(call.attrs.axis))


@converter("nn.conv2d")
def _conv2d(g: Graph, call: Call, ins: list[Any]) -> str:
    a = call.attrs
    kh, kw = _shape(call.args[1])[2:]
    return g.node("Conv", ins, strides=_two(a.strides, "strides"),
                  dilations=_two(a.dilation, "dilation"), pads=_pairs(a.padding),
                  group=int(a.groups), kernel_shape=[kh, kw])


def _transposed_weight(g: Graph, expr: Expr, name: str) -> str:
    """`name` (a 2-d weight) transposed: a transposed initializer for a constant."""
    if isinstance(expr, Constant):
        return g.const(np.ascontiguousarray(expr.data.T), "wT")
    return g.node("Transpose", [name], perm=[1, 0])


@converter("nn.dense")
def _dense(g: Graph, call: Call, ins: list[Any]) -> str:
    if len(_shape(call.args[0])) == 2:
        return g.node("Gemm", ins, transB=1)
    return g.node("MatMul", [ins[0], _transposed_weight(g, call.args[1], ins[1])])


@converter("nn.matmul")
def _matmul(g: Graph, call: Call, ins: list[Any]) -> str:
    a, b = ins
    if call.attrs.transpose_a:
        rank = len(_shape(call.args[0]))
        perm = list(range(rank - 2)) + [rank - 1, rank - 2]
        a = g.node("Transpose", [a], perm=perm)
    if call.attrs.transpose_b:
        b = _transposed_weight(g, call.args[1], b)
    return g.node("MatMul", [a, b])


@converter("nn.batch_matmul")
def _batch_matmul(g: Graph, call: Call, ins: list[Any]) -> str:
    a, b = ins
    if call.attrs.transpose_a:
        a = g.node("Transpose", [a], perm=[0, 2, 1])
    if call.attrs.transpose_b:
        b = g.node("Transpose", [b], perm=[0, 2, 1])
    return g.node("MatMul", [a, b])


@converter("nn.max_pool2d", "nn.avg_pool2d")
def _pool(g: Graph, call: Call, ins: list[Any]) -> str:
    a = call.attrs
    common = {"kernel_shape": _two(a.pool_size, "pool_size"),
              "strides": _two(a.strides, "strides"), "pads": _pairs(a.padding), "ceil_mode": 0}
    if call.op.name == "nn.max_pool2d":
        return g.node("MaxPool", ins, dilations=_two(a.dilation, "dilation"), **common)
    return g.node("AveragePool", ins, count_include_pad=int(bool(a.count_include_pad)),
                  **common)


@converter("nn.global_max_pool2d", "nn.global_avg_pool2d")
def _global_pool(g: Graph, call: Call, ins: list[Any]) -> str:
    op = "GlobalMaxPool" if call.op.name == "nn.global_max_pool2d" else "GlobalAveragePool"
    return g.node(op, ins)


@converter("nn.batch_norm")
def _batch_norm(g: Graph, call: Call, ins: list[Any]) -> list[str]:
    x, gamma, beta, mean, var = ins
    c = _shape(call.args[1])[0]
    if not call.attrs.scale:
        gamma = g.const(np.ones(c, np.float32), "ones")
    if not call.attrs.center:
        beta = g.const(np.zeros(c, np.float32), "zeros")
    y = g.node("BatchNormalization", [x, gamma, beta, mean, var],
               epsilon=float(call.attrs.epsilon))
    # (normalised, moving mean, moving variance): inference returns the latter unchanged
    return [y, mean, var]


@converter("nn.bias_add")
def _bias_add(g: Graph, call: Call, ins: list[Any]) -> str:
    rank = len(_shape(call.args[0]))
    axis = call.attrs.axis + rank if call.attrs.axis < 0 else call.attrs.axis
    view = [-1] + [1] * (rank - axis - 1)
    bias = call.args[1]
    if isinstance(bias, Constant):
        b = g.const(bias.data.reshape(view), "bias")
    else:
        b = g.node("Reshape", [ins[1], g.const(np.array(view, np.int64), "shape")])
    return g.node("Add", [ins[0], b])


@converter("reshape", "nn.batch_flatten", "expand_dims", "squeeze")
def _reshape(g: Graph, call: Call, ins: list[Any]) -> str:
    shape = g.const(np.array(_shape(call), np.int64), "shape")
    return g.node("Reshape", [ins[0], shape])


@converter("transpose")
def _transpose(g: Graph, call: Call, ins: list[Any]) -> str:
    rank = len(_shape(call.args[0]))
    axes = call.attrs.axes
    perm = list(reversed(range(rank))) if not axes else [int(a) % rank for a in axes]
    return g.node("Transpose", ins, perm=perm)


@converter("concatenate")
def _concatenate(g: Graph, call: Call, ins: list[Any]) -> str:
    fields = ins[0]
    if not isinstance(fields, list):
        raise ExportError("concatenate of something that is not a tuple")
    return g.node("Concat", fields, axis=int(call.attrs.axis))


# ------------------------------------------------------------------ the walk

def _children(node: Expr) -> Any:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, (Tuple, TupleGetItem)):
        return node.children()
    return ()


def _describe(node: Expr) -> str:
    if isinstance(node, Call):
        if isinstance(node.op, Op):
            return f"operator `{node.op.name}`"
        if isinstance(node.op, Function) and node.op.attrs is not None \
                and node.op.attrs.get("Composite"):
            return f"composite `{node.op.attrs.get('Composite')}`"
        return "a call of a function"
    return f"a `{type(node).__name__}` expression"


def _value_info(helper: Any, name: str, ty: TensorType) -> Any:
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(str(ty.dtype)))
    return helper.make_tensor_value_info(name, elem, [int(d) for d in ty.shape])


def _flat_types(ty: Any) -> list[TensorType]:
    """The tensor types of a (possibly nested) tuple type, in order."""
    out = tuple_leaves(ty)
    for t in out:
        if not isinstance(t, TensorType):
            raise ExportError(f"a value of type {t} cannot cross into ONNX")
    return out


def export(func: Function, symbol: str, onnx: Any | None = None) -> tuple[Any, list[str], Any]:
    """The ONNX model of `func`, the names of its graph inputs (one per tensor of the
    flattened parameters) and the structure of its result: an int (the output's index)
    for a tensor, a list of those for a tuple (nested as the type is)."""
    if onnx is None:
        import onnx
    helper, numpy_helper = onnx.helper, onnx.numpy_helper
    from ...transform.byoc.registry import op_supported
    g = Graph(helper, numpy_helper)
    names: dict[int, Any] = {}
    graph_inputs = []
    input_names: list[str] = []
    for i, p in enumerate(func.params):
        ty = p.checked_type if p.checked_type is not None else p.type_annotation
        flat = _flat_types(ty)
        pnames = [f"in{i}" if len(flat) == 1 and isinstance(ty, TensorType) else f"in{i}_{k}"
                  for k in range(len(flat))]
        for n, t in zip(pnames, flat):
            graph_inputs.append(_value_info(helper, n, t))
        input_names.extend(pnames)
        names[id(p)] = pnames[0] if isinstance(ty, TensorType) else nest_like(pnames, ty)
    for node in post_order(func.body, _children):
        if id(node) in names:
            continue
        if isinstance(node, Constant):
            names[id(node)] = g.const(node.data, "const")
        elif isinstance(node, Tuple):
            names[id(node)] = [names[id(f)] for f in node.fields]
        elif isinstance(node, TupleGetItem):
            names[id(node)] = names[id(node.tuple_value)][node.index]
        elif isinstance(node, Call) and isinstance(node.op, Op) \
                and node.op.name in CONVERTERS and op_supported("onnxruntime", node):
            names[id(node)] = CONVERTERS[node.op.name](g, node, [names[id(a)] for a in node.args])
        else:
            what = _describe(node)
            if isinstance(node, Call) and isinstance(node.op, Op) \
                    and node.op.name in CONVERTERS:
                what += " with these attributes or types"
            raise ExportError(f"onnxruntime codegen: `@{symbol}` holds {what}, which the "
                              "onnxruntime target does not run")
    result = names[id(func.body)]
    out_types = _flat_types(func.body.checked_type)
    flat_out: list[str] = []
    stack = [result]
    while stack:
        r = stack.pop()
        if isinstance(r, list):
            stack.extend(reversed(r))
        else:
            flat_out.append(r)
    outputs = []
    for k, (name, ty) in enumerate(zip(flat_out, out_types)):
        out_name = f"out{k}"
        g.nodes.append(helper.make_node("Identity", [name], [out_name]))
        outputs.append(_value_info(helper, out_name, ty))
    graph = helper.make_graph(g.nodes, symbol, graph_inputs, outputs, g.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="relaylang")
    model.ir_version = min(model.ir_version, 9)      # what onnxruntime releases read
    onnx.checker.check_model(model)
    layout = nest_like(list(range(len(flat_out))), func.body.checked_type)
    return model, input_names, layout


def nest_like(flat: list[Any], ty: Any) -> Any:
    """`flat` (one item per tensor of `ty`, in order) nested as `ty` is: lists for tuples
    (the blas codegen regroups flattened tuple arguments with it too)."""
    if isinstance(ty, TensorType):
        return flat[0]
    it = iter(flat)
    # nested tuples without recursion: build bottom-up over a stack of (type, list)
    root: list[Any] = []
    stack: list[tuple[Any, list[Any], int]] = [(ty, root, 0)]
    while stack:
        t, into, i = stack.pop()
        if i < len(t.fields):
            stack.append((t, into, i + 1))
            f = t.fields[i]
            if isinstance(f, TupleType):
                sub: list[Any] = []
                into.append(sub)
                stack.append((f, sub, 0))
            else:
                into.append(next(it))
    return root
