"""ForwardFoldScaleAxis: fold a per-channel scale of a conv/dense *input* into its weight
(TVM's src/relay/transforms/fold_scale_axis.cc, forward direction).

    %0 = multiply(%x, %s);                         %0 = expand_dims(%s, axis=1, num_newaxis=2);
    %1 = nn.relu(%0);                      ==>     %1 = nn.relu(%x);
    nn.conv2d(%1, %w, padding=[1, 1, 1, 1])        nn.conv2d(%1, multiply(%w, %0), padding=...)

    (%x: Tensor[(1, 4, 8, 8)], %s: the constant Tensor[(4, 1, 1)] of positive scales)

conv(x * s) scales channel c of the input by s[c], which is the same as scaling the
weight's input-channel slice c (its output-channel slice for a depthwise conv); dense
likewise scales column k of the weight. Two phases, as TVM:

  1. preparation, consumers first: each conv/dense asks its data for a scale along its
     channel axis (a message); `nn.relu`/`nn.leaky_relu` pass the demand on, now for a
     positive constant scale; `add`/`subtract` pass it to the operand that has the full
     shape when the other only varies along the channel axis. Every other use of a value
     asks for no scale, and a value's demands intersect over all its uses, so a scale is
     taken out only where every user can take it in.
  2. rewrite, producers first: a `multiply` whose node was asked for and whose other
     operand varies only along those axes becomes its input plus a pending scale; relu
     and add carry the scale through (the add's other operand is divided by it); the
     conv/dense multiplies its weight by it.

FoldConstant (which FoldScaleAxis runs next) then computes the new weight when the
weight and scale are constants. Values bound by `let` are not folded (TVM: dataflow
form only). Results agree with the original up to float rounding: the rescaled weight
is rounded once more, so a result may move by a few ulps of the largest term summed into
it (the tests allow rtol=1e-5 and atol=1e-5 on values up to about 20).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Call, Expr, Function
from ...ir.module import IRModule
from ...ir.normal_forms import map_unfused_functions, opaque_children
from ...ir.traverse import post_order
from ...op import call
from ..pass_infra import ModulePass, PassContext, register_pass
from .common import (
    Message,
    conv_axes,
    expand_bias_to_match_axis,
    foldable_consumer,
    intersect,
    is_all_positive_constant,
    match_broadcast_to_left_axes,
    scale_role,
    tensor_type,
)


@register_pass
@dataclass(frozen=True)
class ForwardFoldScaleAxis(ModulePass):
    """Fold input-channel scales into the weights of conv2d, conv3d and dense."""

    name: ClassVar[str] = "ForwardFoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return map_unfused_functions(mod, forward_fold_scale_axis)


@dataclass(frozen=True)
class Scaled:
    """A value still to be multiplied by `scale` along `axes` (TVM's ScaledExpr)."""
    value: Expr
    axes: tuple[int, ...]
    scale: Expr


def forward_fold_scale_axis(fn: Function) -> Function:
    order = post_order(fn, opaque_children)
    messages = _prepare(order)
    if all(m is None for m in messages.values()):
        return fn
    scaled: dict[int, Scaled] = {}
    done: dict[int, Expr] = {}
    for node in order:
        kids = opaque_children(node)
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        rule = _REWRITE.get(scale_role(node) or "")
        result = None
        if rule is not None:
            assert isinstance(node, Call) and isinstance(rebuilt, Call)
            result = rule(node, rebuilt, [scaled.get(id(a)) for a in node.args],
                          messages.get(id(node)))
        if isinstance(result, Scaled):
            scaled[id(node)] = result
            done[id(node)] = result.value
        else:
            # The preparation only lets a value be scaled when all its users take the scale.
            assert result is not None or not any(id(c) in scaled for c in kids), \
                "outstanding scale"
            done[id(node)] = rebuilt if result is None else result
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


# ------------------------------------------------------------------ preparation


def _prepare(order: list[Expr]) -> dict[int, Message | None]:
    """The scale each value may carry, from its users' demands (users before values)."""
    messages: dict[int, Message | None] = {}

    def demand(node: Expr, message: Message | None) -> None:
        key = id(node)
        messages[key] = intersect(messages[key], message) if key in messages else message

    for node in reversed(order):
        rule = _PREPARE.get(scale_role(node) or "")
        if rule is not None:
            assert isinstance(node, Call)
            for arg, message in zip(node.args, rule(node, messages.get(id(node)))):
                demand(arg, message)
        else:
            for child in opaque_children(node):
                demand(child, None)
    return messages


def _relu_prep(node: Call, out: Message | None) -> list[Message | None]:
    return [Message(out.axes, True) if out is not None else None]


def _add_sub_prep(node: Call, out: Message | None) -> list[Message | None]:
    lhs, rhs = tensor_type(node.args[0]), tensor_type(node.args[1])
    if out is not None and lhs is not None and rhs is not None:
        if match_broadcast_to_left_axes(lhs, rhs, out.axes)[0]:
            return [out, None]
        if match_broadcast_to_left_axes(rhs, lhs, out.axes)[0]:
            return [None, out]
    return [None, None]


def _conv_prep(node: Call, out: Message | None) -> list[Message | None]:
    axes = conv_axes(node)
    if axes is None or not foldable_consumer(node):
        return [None, None]
    return [Message((axes.data_c,), False), None]


def _dense_prep(node: Call, out: Message | None) -> list[Message | None]:
    data = tensor_type(node.args[0])
    if data is None or not foldable_consumer(node):
        return [None, None]
    # TVM asks for axis 1, right for 2-d data only; the reduced axis is the last one.
    return [Message((len(data.shape) - 1,), False), None]


Prep = Callable[[Call, "Message | None"], "list[Message | None]"]
# scale_axis role (OpDef.scale_axis) -> the scales an op of that role asks of its inputs
_PREPARE: dict[str, Prep] = {
    "relu": _relu_prep,
    "add_sub": _add_sub_prep,
    "conv": _conv_prep,
    "dense": _dense_prep,
}


# ------------------------------------------------------------------ rewrite

Args = list["Scaled | None"]


def _relu(node: Call, new: Call, args: Args, message: Message | None) -> Expr | Scaled | None:
    if args[0] is None:
        return None
    value = Call(new.op, (args[0].value,), new.attrs, new.type_args, span=node.span)
    return Scaled(value, args[0].axes, args[0].scale)


def _add_sub(node: Call, new: Call, args: Args, message: Message | None
             ) -> Expr | Scaled | None:
    lhs, rhs = args
    if lhs is None and rhs is None:
        return None
    # s * x + b = s * (x + b / s): the other operand is divided by the scale.
    side = 0 if lhs is not None else 1
    pending = lhs if lhs is not None else rhs
    assert pending is not None
    ty = tensor_type(node.args[side])
    assert ty is not None
    scale = expand_bias_to_match_axis(pending.scale, len(ty.shape), pending.axes)
    operands = list(new.args)
    operands[1 - side] = call("divide", operands[1 - side], scale)
    operands[side] = pending.value
    value = Call(new.op, tuple(operands), new.attrs, new.type_args, span=node.span)
    return Scaled(value, pending.axes, pending.scale)


def _multiply(node: Call, new: Call, args: Args, message: Message | None
              ) -> Expr | Scaled | None:
    """The producer: `x * s` becomes `x` with `s` pending, when a user asked for it."""
    lhs, rhs = tensor_type(node.args[0]), tensor_type(node.args[1])
    if message is None or lhs is None or rhs is None:
        return None
    for value, ty, other, other_ty in ((new.args[0], lhs, new.args[1], rhs),
                                       (new.args[1], rhs, new.args[0], lhs)):
        ok, scale = match_broadcast_to_left_axes(ty, other_ty, message.axes, other)
        if ok and scale is not None and (not message.require_positive
                                         or is_all_positive_constant(scale)):
            return Scaled(value, message.axes, scale)
    return None


def _conv(node: Call, new: Call, args: Args, message: Message | None) -> Expr | Scaled | None:
    data, weight = args
    axes = conv_axes(node)
    if data is None or weight is not None or axes is None:
        return None
    # A depthwise conv's input channel c only meets the weight's output channel c.
    axis = axes.kernel_o if axes.depthwise else axes.kernel_i
    scale = expand_bias_to_match_axis(data.scale, axes.kernel_ndim, (axis,))
    return Call(new.op, (data.value, call("multiply", new.args[1], scale)), new.attrs,
                new.type_args, span=node.span)


def _dense(node: Call, new: Call, args: Args, message: Message | None) -> Expr | Scaled | None:
    data, weight = args
    if data is None or weight is not None:
        return None
    # weight is (units, k): the scale over k broadcasts along its last axis as it is.
    return Call(new.op, (data.value, call("multiply", new.args[1], data.scale)), new.attrs,
                new.type_args, span=node.span)


Rewrite = Callable[[Call, Call, Args, "Message | None"], "Expr | Scaled | None"]
# scale_axis role (OpDef.scale_axis) -> how an op of that role is rewritten
_REWRITE: dict[str, Rewrite] = {
    "relu": _relu,
    "add_sub": _add_sub,
    "conv": _conv,
    "dense": _dense,
    "multiply": _multiply,
}
