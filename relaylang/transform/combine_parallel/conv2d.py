"""CombineParallelConv2D: convolutions of one input become one convolution with the weights
concatenated along the output channels, sliced back per branch
(TVM's src/relay/transforms/combine_parallel_conv2d.cc).

Convolutions (`groups=1`) of the same data combine when strides, padding, dilation,
groups, layouts and out_dtype agree and the kernels have the same height and width; the
number of output channels may differ. The elementwise/broadcast ops that follow each
convolution combine too while they match level by level (same op and attributes, other
arguments with the channel axis of the branch, equal elsewhere; those are concatenated
along the channel axis). Each branch then reads its channels with
`strided_slice(..., slice_mode="size")`. An Inception block launches one kernel, not four.

    def @main(%x: Tensor[(1, 4, 8, 8), float32], %w1: Tensor[(2, 4, 3, 3), float32],
              %w2: Tensor[(3, 4, 3, 3), float32], %b1: Tensor[(2, 1, 1), float32],
              %b2: Tensor[(3, 1, 1), float32]) {
      %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);
      %1 = nn.conv2d(%x, %w2, padding=[1, 1, 1, 1]);
      (add(%0, %b1), add(%1, %b2))
    }
        ==>  (CombineParallelConv2D{min_num_branches=2})
      %0 = concatenate((%w1, %w2));
      %1 = nn.conv2d(%x, %0, padding=[1, 1, 1, 1], channels=5);
      %2 = add(%1, concatenate((%b1, %b2)));
      (strided_slice(%2, begin=[0, 0], end=[-1, 2], strides=[1, 1], slice_mode="size"),
       strided_slice(%2, begin=[0, 2], end=[-1, 3], strides=[1, 1], slice_mode="size"))

Deviations from TVM, all where TVM would build a wrong or ill-typed program: layouts with
sub-axes (`NCHW4c`) and convolutions whose shapes are not static are left alone, the
weights' dtypes must agree, a following op that changes the branch's shape (expand_dims,
a broadcast to a larger shape) is not combined, and a group never mixes scopes or reads
its own outputs (see common.py). TVM's pass info says `CombineParallelConv2d`;
both spellings find this pass. Results agree with the separate convolutions up to float rounding of
the same sums: rtol=1e-5, atol=1e-6.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

from ...ir.expr import Call, Expr
from ...op.registry import get as get_op
from ...op.transform import StridedSliceAttrs
from ..pass_infra import register_pass
from .common import (
    CombineParallelPass,
    Combiner,
    Group,
    Lookup,
    concat,
    static_shape,
    tensor_type,
)

RTOL, ATOL = 1e-5, 1e-6


@register_pass
@dataclass(frozen=True)
class CombineParallelConv2D(CombineParallelPass):
    """Combine at least `min_num_branches` parallel conv2d of one input into one."""

    name: ClassVar[str] = "CombineParallelConv2D"
    opt_level: ClassVar[int] = 4
    min_num_branches: int = 3

    def combiner(self) -> Combiner:
        return Conv2DCombiner()


def _plain(layout: str) -> bool:
    """A layout of primal axes only, each once (`NCHW`, `OIHW`, `HWIO`, ...)."""
    return layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


class Conv2DCombiner(Combiner):
    op_name = "nn.conv2d"

    def is_supported(self, call: Call) -> bool:
        attrs: Any = call.attrs
        out_layout = attrs.out_layout or attrs.data_layout
        return (attrs.groups == 1 and _plain(attrs.data_layout) and _plain(out_layout)
                and _plain(attrs.kernel_layout) and "C" in out_layout
                and set("OHW") <= set(attrs.kernel_layout)
                and static_shape(call.args[1]) is not None and static_shape(call) is not None)

    def can_combine(self, a: Call, b: Call) -> bool:
        x: Any = a.attrs
        y: Any = b.attrs
        same = ("strides", "padding", "dilation", "groups", "data_layout", "kernel_layout",
                "out_dtype", "out_layout")
        if any(getattr(x, f) != getattr(y, f) for f in same):
            return False
        wa, wb = tensor_type(a.args[1]), tensor_type(b.args[1])
        assert wa is not None and wb is not None
        h, w = x.kernel_layout.index("H"), x.kernel_layout.index("W")
        return wa.dtype == wb.dtype and wa.shape[h] == wb.shape[h] and wa.shape[w] == wb.shape[w]

    def make_combined_op(self, group: Group, new: Lookup) -> Expr:
        root = group[0][0]
        attrs: Any = root.attrs
        weights = [new(b[0].args[1]) for b in group]
        channels = sum(_channels(b[0]) for b in group)
        weight = concat(weights, attrs.kernel_layout.index("O"))
        return Call(root.op, (new(root.args[0]), weight),
                    dataclasses.replace(attrs, channels=channels))

    def is_arg_compatible(self, root: Call, a: Call, b: Call, index: int,
                          parent_index: int) -> bool:
        ta, tb = tensor_type(a.args[index]), tensor_type(b.args[index])
        out_a, out_b = static_shape(a), static_shape(b)
        if ta is None or tb is None or out_a is None or out_b is None:
            return False
        if ta.dtype != tb.dtype or len(ta.shape) != len(tb.shape):
            return False
        channel = _channel_axis(root)
        arg_channel = channel - len(out_a) + len(ta.shape)
        # The channel axis must be present in the argument, not broadcast (TVM's rule).
        if arg_channel < 0 or ta.shape[arg_channel] != out_a[channel] or \
                tb.shape[arg_channel] != out_b[channel]:
            return False
        return all(ta.shape[i] == tb.shape[i] for i in range(len(ta.shape)) if i != arg_channel)

    def make_following(self, data: Expr, group: Group, depth: int, parent_index: int,
                       new: Lookup) -> Expr:
        first = group[0][depth]
        out = tensor_type(first)
        assert out is not None
        channel = _channel_axis(group[0][0])
        args: list[Expr] = []
        for i, arg in enumerate(first.args):
            if i == parent_index:
                args.append(data)
                continue
            ty = tensor_type(arg)
            assert ty is not None
            axis = channel - len(out.shape) + len(ty.shape)
            args.append(concat([new(b[depth].args[i]) for b in group], axis))
        return Call(first.op, tuple(args), first.attrs)

    def split_outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        channel = _channel_axis(group[0][0])
        outputs: list[Expr] = []
        start = 0
        for branch in group:
            channels = _channels(branch[0])
            attrs = StridedSliceAttrs(begin=(0,) * channel + (start,),
                                      end=(-1,) * channel + (channels,),
                                      strides=(1,) * (channel + 1), slice_mode="size",
                                      axes=None)
            outputs.append(Call(get_op("strided_slice"), (data,), attrs,
                                span=branch[depth].span))
            start += channels
        return outputs


def _channel_axis(conv: Call) -> int:
    """The position of C in the conv's output layout; the ops that follow keep the shape."""
    attrs: Any = conv.attrs
    return (attrs.out_layout or attrs.data_layout).index("C")


def _channels(conv: Call) -> int:
    shape = static_shape(conv)
    assert shape is not None
    return shape[_channel_axis(conv)]
