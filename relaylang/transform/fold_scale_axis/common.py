"""What ForwardFoldScaleAxis and BackwardFoldScaleAxis share (TVM: the `Message`, `Intersect`
and op-independent helpers of src/relay/transforms/fold_scale_axis.cc and pattern_utils.h).

A *message* travels between nodes in a preparation phase and says "this value may be
scaled along `axes`" (sorted; one axis here, as only plain layouts are folded) and whether
the scale must be a positive constant (true once it passes a ReLU: relu(s * x) equals
s * relu(x) only for s > 0). `None` is TVM's null message: no scaling possible.

Which op plays which part is the op's `scale_axis` role, declared with the op in its
family (`OpDef.scale_axis`; `scale_role` reads it): the passes map roles to rules.
The consumers that absorb a scale into their weight (roles "conv" and "dense") are
conv2d, conv3d and dense: `conv_axes` says where a conv's channels sit, in the plain
(unblocked) layouts that the interpreter runs. Folding is limited to floating-point tensors whose weight has the
dtype of the data (TVM would also fold integer scales, where the `divide` that the
forward direction adds would truncate, and scales whose dtype differs from the weight,
which gives an ill-typed multiply).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.expr import Call, Constant, Expr, Op
from ...ir.types import TensorType
from ...op import call, get_op_def
from ...op.transform import ExpandDimsAttrs, RepeatAttrs, SqueezeAttrs


@dataclass(frozen=True)
class Message:
    axes: tuple[int, ...]
    require_positive: bool


def intersect(a: Message | None, b: Message | None) -> Message | None:
    """Both demands at once: the common axes, positive if either needs it (TVM's Intersect).
    An empty intersection is no message (TVM would keep it and then fail a check)."""
    if a is None or b is None:
        return None
    axes = tuple(sorted(set(a.axes) & set(b.axes)))
    return Message(axes, a.require_positive or b.require_positive) if axes else None


def scale_role(e: Expr) -> str | None:
    """The FoldScaleAxis role of the op `e` calls (`OpDef.scale_axis`), or None."""
    if not (isinstance(e, Call) and isinstance(e.op, Op)):
        return None
    opdef = get_op_def(e.op.name)
    return opdef.scale_axis if opdef is not None else None


def tensor_type(e: Expr) -> TensorType | None:
    ty = e.checked_type
    return ty if isinstance(ty, TensorType) else None


def is_float(ty: TensorType | None) -> bool:
    return ty is not None and dtype_kind(ty.dtype) == "float"


def match_broadcast_to_left_axes(lhs: TensorType, rhs: TensorType, axes: tuple[int, ...],
                                 rhs_value: Expr | None = None) -> tuple[bool, Expr | None]:
    """Whether `rhs` broadcast against `lhs` varies only along `axes` of `lhs` (where it has
    `lhs`'s extent; 1 elsewhere). With `rhs_value`, also that value reduced to the matched
    axes: squeezed, or for a scalar expanded and repeated (TVM's MatchBroadcastToLeftAxes)."""
    if len(lhs.shape) < len(rhs.shape):
        return False, None
    if not rhs.shape and rhs_value is not None and axes:
        extents = [lhs.shape[a] for a in axes]
        if not all(isinstance(d, int) for d in extents):
            return False, None          # TVM reads the extent as a constant; unknown here
        value: Expr = call("expand_dims", rhs_value, attrs=ExpandDimsAttrs(axis=0,
                                                                          num_newaxis=len(axes)))
        for i, extent in enumerate(extents):
            value = call("repeat", value, attrs=RepeatAttrs(repeats=extent, axis=i))
        return True, value
    base = len(lhs.shape) - len(rhs.shape)
    squeeze: list[int] = []
    for i, dim in enumerate(lhs.shape):
        if i in axes:
            if i < base or not _same_dim(dim, rhs.shape[i - base]):
                return False, None
        elif i >= base:
            if rhs.shape[i - base] != 1:
                return False, None
            squeeze.append(i - base)
    if rhs_value is not None and squeeze:
        rhs_value = call("squeeze", rhs_value, attrs=SqueezeAttrs(axis=tuple(squeeze)))
    return True, rhs_value


def _same_dim(a: Any, b: Any) -> bool:
    return a is b or (isinstance(a, int) and isinstance(b, int) and a == b)


def expand_bias_to_match_axis(bias: Expr, target_ndim: int, axes: tuple[int, ...]) -> Expr:
    """A tensor over `axes` given unit axes so that it broadcasts against a `target_ndim`-d
    tensor along those axes (TVM's ExpandBiasToMatchAxis)."""
    for i in range(len(axes), 0, -1):
        gap = target_ndim - axes[i - 1] - 1 if i == len(axes) else axes[i] - axes[i - 1]
        if gap > 0:
            bias = call("expand_dims", bias, attrs=ExpandDimsAttrs(axis=i, num_newaxis=gap))
    return bias


def is_all_positive_constant(e: Expr) -> bool:
    """A constant whose every element is > 0, possibly under shape-only ops (role "shape":
    expand_dims, reshape, transpose, squeeze, repeat, as TVM's IsAllPositiveConstant).
    A loop: the peeled chain may be long."""
    while scale_role(e) == "shape":
        assert isinstance(e, Call)
        e = e.args[0]
    if not isinstance(e, Constant):
        return False
    data = e.data
    return data.dtype.kind in "iuf" and bool((data > 0).all())


@dataclass(frozen=True)
class ConvAxes:
    """Where a conv's channels are: `data_c` in its input, `out_c` in its output, and the
    weight's output-channel (`kernel_o`) and input-channel (`kernel_i`) axes."""
    data_c: int
    out_c: int
    kernel_o: int
    kernel_i: int
    kernel_ndim: int
    depthwise: bool


def conv_axes(conv: Call) -> ConvAxes | None:
    """The channel axes of a conv that folding can handle: plain layouts (no `NCHW4c`
    blocking) and a full (groups=1) or depthwise (one filter per channel) convolution;
    None for anything else (grouped convs, as in TVM; blocked layouts, which TVM folds
    but the interpreter does not run)."""
    attrs: Any = conv.attrs
    data_layout, kernel_layout = attrs.data_layout, attrs.kernel_layout
    out_layout = attrs.out_layout or data_layout
    if any(ch.islower() for ch in data_layout + kernel_layout + out_layout):
        return None
    if "C" not in data_layout or "C" not in out_layout or not {"O", "I"} <= set(kernel_layout):
        return None
    weight = tensor_type(conv.args[1])
    if weight is None:
        return None
    o, i = kernel_layout.index("O"), kernel_layout.index("I")
    depthwise = weight.shape[o] == attrs.groups and weight.shape[i] == 1
    if attrs.groups != 1 and not depthwise:
        return None
    return ConvAxes(data_layout.index("C"), out_layout.index("C"), o, i, len(kernel_layout),
                    depthwise)


def foldable_consumer(consumer: Call) -> bool:
    """Data, weight and result are floats of one dtype (no `out_dtype` widening), so a
    scale of the data or of the result multiplies the weight without a cast."""
    types = (tensor_type(consumer.args[0]), tensor_type(consumer.args[1]),
             tensor_type(consumer))
    return all(is_float(t) for t in types) and len({t.dtype for t in types if t}) == 1
