"""BackwardFoldScaleAxis: fold a per-channel scale of a conv/dense *output* into its weight
(TVM's src/relay/transforms/fold_scale_axis.cc, backward direction).

    %0 = nn.conv2d(%x, %w, padding=[1, 1, 1, 1]);        %0 = expand_dims(%s, axis=1,
    %1 = add(%0, %b);                             ==>           num_newaxis=3);
    multiply(%1, %s)                                     %1 = nn.conv2d(%x, multiply(%w, %0), ..);
                                                         add(%1, multiply(%b, %s))

    (%0: Tensor[(1, 4, 8, 8)], %b and %s: Tensor[(4, 1, 1)]; %s squeezed to (4) first)

Output channel o of a conv is scaled by s[o] when the weight's output-channel slice o
is (row o of a dense weight). Two phases, as TVM:

  1. preparation, producers first: a conv/dense used exactly once says its output may
     take a scale along its channel axis (a message); `nn.relu`/`nn.leaky_relu` used once
     pass the message of their input on, now for a positive constant scale only;
     `add`/`subtract` pass on the message of the operand with the full shape when the other
     only varies along the channel axis (or of both operands, same shape and axes);
     `nn.bias_add` along the channel axis passes on its data's.
  2. rewrite, users first: a `multiply` by a tensor varying only along the message's axes
     (positive constant if needed) is replaced by its other operand, rewritten with the
     scale pushed down: through relu, into the non-scaled operand of add/bias_add (a
     multiply), and into the weight of the conv/dense, which ends the descent.

Only single-use values carry messages, so pushing a scale into one never changes another
user. Values bound by `let` are not folded (TVM: dataflow form only). FoldConstant (which
FoldScaleAxis runs next) computes the new weights when they are constants. Results
agree with the original up to float rounding: the rescaled weight is rounded once more,
so a result may move by a few ulps of the largest term summed into it (the tests allow
rtol=1e-5 and atol=1e-5 on values up to about 20).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

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
    is_all_positive_constant,
    match_broadcast_to_left_axes,
    scale_role,
    tensor_type,
)


@register_pass
@dataclass(frozen=True)
class BackwardFoldScaleAxis(ModulePass):
    """Fold output-channel scales into the weights of conv2d, conv3d and dense."""

    name: ClassVar[str] = "BackwardFoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return map_unfused_functions(mod, backward_fold_scale_axis)


def backward_fold_scale_axis(fn: Function) -> Function:
    order = post_order(fn, opaque_children)
    messages = _prepare(order)
    if not messages:
        return fn
    pending, folded = _plan(order, messages)
    if not folded:
        return fn
    done: dict[int, Expr] = {}
    for node in order:
        kids = opaque_children(node)
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        if id(node) in folded:            # the multiply is its operand, already rescaled
            assert isinstance(rebuilt, Call)
            done[id(node)] = rebuilt.args[folded[id(node)]]
        elif id(node) in pending:
            assert isinstance(node, Call) and isinstance(rebuilt, Call)
            message, scale = pending[id(node)]
            rule = _SCALE[scale_role(node) or ""]
            done[id(node)] = rule.build(node, rebuilt, message, scale, messages)
        else:
            done[id(node)] = rebuilt
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


# ------------------------------------------------------------------ preparation


def _use_counts(order: list[Expr]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for node in order:
        for child in opaque_children(node):
            counts[id(child)] = counts.get(id(child), 0) + 1
    return counts


def _prepare(order: list[Expr]) -> dict[int, Message]:
    """The scale each single-use value could take in (producers before users)."""
    counts = _use_counts(order)
    messages: dict[int, Message] = {}
    for node in order:
        rule = _SCALE.get(scale_role(node) or "")
        if rule is None or counts.get(id(node), 0) != 1:
            continue
        assert isinstance(node, Call)
        message = rule.prep(node, [messages.get(id(a)) for a in node.args])
        if message is not None:
            messages[id(node)] = message
    return messages


def _plan(order: list[Expr], messages: dict[int, Message]
          ) -> tuple[dict[int, tuple[Message, Expr]], dict[int, int]]:
    """Which nodes take which scale (`pending`) and which multiplies disappear into their
    operand number `folded[id]`; decided users first, so a scale reaches a node from its
    one user before the node passes it on."""
    pending: dict[int, tuple[Message, Expr]] = {}
    folded: dict[int, int] = {}
    for node in reversed(order):
        if id(node) in pending:
            assert isinstance(node, Call)
            message, scale = pending[id(node)]
            for arg in _SCALE[scale_role(node) or ""].scaled_args(node, messages):
                pending[id(arg)] = (message, scale)
        elif scale_role(node) == "multiply":
            assert isinstance(node, Call)
            side = _fold_multiply(node, messages, pending)
            if side is not None:
                folded[id(node)] = side
    return pending, folded


def _fold_multiply(node: Call, messages: dict[int, Message],
                   pending: dict[int, tuple[Message, Expr]]) -> int | None:
    """The operand whose producer takes in the other operand as its scale (TVM tries the
    lhs's message, and the rhs's only when the lhs has none)."""
    lhs, rhs = tensor_type(node.args[0]), tensor_type(node.args[1])
    if lhs is None or rhs is None:
        return None
    side = 0 if id(node.args[0]) in messages else 1 if id(node.args[1]) in messages else None
    if side is None:
        return None
    message = messages[id(node.args[side])]
    types = (lhs, rhs) if side == 0 else (rhs, lhs)
    # The scale is the original expression, not rewritten (TVM: no scale within a scale).
    ok, scale = match_broadcast_to_left_axes(*types, message.axes, node.args[1 - side])
    if not ok or scale is None or (message.require_positive
                                   and not is_all_positive_constant(scale)):
        return None
    pending[id(node.args[side])] = (message, scale)
    return side


# ------------------------------------------------------------------ per-op rules


@dataclass(frozen=True)
class ScaleRule:
    """How one op takes a scale on its output: the message it offers given its arguments'
    (`prep`), which arguments receive the scale in turn (`scaled_args`) and the op rebuilt
    from its rewritten arguments with the scale applied (`build`)."""
    prep: Callable[[Call, list[Message | None]], Message | None]
    scaled_args: Callable[[Call, dict[int, Message]], list[Expr]]
    build: Callable[[Call, Call, Message, Expr, dict[int, Message]], Expr]


def _relu_prep(node: Call, ins: list[Message | None]) -> Message | None:
    return Message(ins[0].axes, True) if ins[0] is not None else None


def _first_arg(node: Call, messages: dict[int, Message]) -> list[Expr]:
    return [node.args[0]]


def _as_is(node: Call, new: Call, message: Message, scale: Expr,
           messages: dict[int, Message]) -> Expr:
    return new                           # relu(s * x) = s * relu(x): the input took the scale


def _add_sub_prep(node: Call, ins: list[Message | None]) -> Message | None:
    lhs, rhs = tensor_type(node.args[0]), tensor_type(node.args[1])
    if lhs is None or rhs is None:
        return None
    if ins[0] is not None and match_broadcast_to_left_axes(lhs, rhs, ins[0].axes)[0]:
        return ins[0]
    if ins[1] is not None and match_broadcast_to_left_axes(rhs, lhs, ins[1].axes)[0]:
        return ins[1]
    if ins[0] is not None and ins[1] is not None and ins[0].axes == ins[1].axes \
            and lhs.shape == rhs.shape:
        # Two scalable operands of one shape: both take the scale, so both conditions hold
        # (TVM keeps the lhs's alone, and would push a negative scale through a relu on
        # the right).
        return Message(ins[0].axes, ins[0].require_positive or ins[1].require_positive)
    return None


def _add_sub_args(node: Call, messages: dict[int, Message]) -> list[Expr]:
    return [a for a in node.args if id(a) in messages]


def _add_sub_build(node: Call, new: Call, message: Message, scale: Expr,
                   messages: dict[int, Message]) -> Expr:
    scaled = [id(a) in messages for a in node.args]
    if all(scaled):
        return new                       # s * (x + y) = s * x + s * y
    side = scaled.index(True)
    ty = tensor_type(node.args[side])
    assert ty is not None
    operands = list(new.args)            # s * (x + b) = s * x + s * b
    operands[1 - side] = call("multiply", operands[1 - side],
                              expand_bias_to_match_axis(scale, len(ty.shape), message.axes))
    return Call(new.op, tuple(operands), new.attrs, new.type_args, span=node.span)


def _bias_add_prep(node: Call, ins: list[Message | None]) -> Message | None:
    data = tensor_type(node.args[0])
    attrs: Any = node.attrs
    if ins[0] is None or data is None or len(ins[0].axes) != 1:
        return None
    axis = attrs.axis + len(data.shape) if attrs.axis < 0 else attrs.axis
    return ins[0] if axis == ins[0].axes[0] else None


def _bias_add_build(node: Call, new: Call, message: Message, scale: Expr,
                    messages: dict[int, Message]) -> Expr:
    bias = call("multiply", new.args[1], scale)        # both 1-d along the channel axis
    return Call(new.op, (new.args[0], bias), new.attrs, new.type_args, span=node.span)


def _conv_prep(node: Call, ins: list[Message | None]) -> Message | None:
    axes = conv_axes(node)
    if axes is None or not foldable_consumer(node):
        return None
    return Message((axes.out_c,), False)


def _no_args(node: Call, messages: dict[int, Message]) -> list[Expr]:
    return []


def _conv_build(node: Call, new: Call, message: Message, scale: Expr,
                messages: dict[int, Message]) -> Expr:
    axes = conv_axes(node)
    assert axes is not None
    weight = call("multiply", new.args[1],
                  expand_bias_to_match_axis(scale, axes.kernel_ndim, (axes.kernel_o,)))
    return Call(new.op, (new.args[0], weight), new.attrs, new.type_args, span=node.span)


def _dense_prep(node: Call, ins: list[Message | None]) -> Message | None:
    data = tensor_type(node.args[0])
    if data is None or not foldable_consumer(node):
        return None
    # TVM offers axis 1, right for 2-d data only; the units are the last axis.
    return Message((len(data.shape) - 1,), False)


def _dense_build(node: Call, new: Call, message: Message, scale: Expr,
                 messages: dict[int, Message]) -> Expr:
    weight = call("multiply", new.args[1], expand_bias_to_match_axis(scale, 2, (0,)))
    return Call(new.op, (new.args[0], weight), new.attrs, new.type_args, span=node.span)


# scale_axis role (OpDef.scale_axis) -> how an op of that role takes a scale on its output;
# a "multiply" is the scale itself (`_fold_multiply`).
_SCALE: dict[str, ScaleRule] = {
    "relu": ScaleRule(_relu_prep, _first_arg, _as_is),
    "add_sub": ScaleRule(_add_sub_prep, _add_sub_args, _add_sub_build),
    "conv": ScaleRule(_conv_prep, _no_args, _conv_build),
    "bias_add": ScaleRule(_bias_add_prep, _first_arg, _bias_add_build),
    "dense": ScaleRule(_dense_prep, _no_args, _dense_build),
}
