"""ConvertLayout: compute convolutions and pools in the layouts asked for, with
`layout_transform` only at the edges of the converted region (TVM's
src/relay/transforms/convert_layout.cc; python `relay.transform.ConvertLayout`).

    -p 'ConvertLayout{desired_layouts=nn.conv2d:NHWC}'   (run at --opt-level 3, as TVM)

    %0 = nn.conv2d(%x, %w1, padding=[1, 1, 1, 1]);        %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
    %1 = nn.relu(%0);                                     %1 = layout_transform(%w1, src_layout="OIHW", dst_layout="HWIO");
    %2 = nn.max_pool2d(%1, pool_size=[2, 2]);      ==>    %2 = nn.conv2d(%0, %1, padding=[1, 1, 1, 1], data_layout="NHWC", kernel_layout="HWIO");
    nn.conv2d(%2, %w2)                                    %3 = nn.relu(%2);
                                                          %4 = nn.max_pool2d(%3, pool_size=[2, 2], layout="NHWC");
                                                          %5 = layout_transform(%w2, src_layout="OIHW", dst_layout="HWIO");
                                                          %6 = nn.conv2d(%4, %5, data_layout="NHWC", kernel_layout="HWIO");
                                                          layout_transform(%6, src_layout="NHWC", dst_layout="NCHW")

One transform where the data enters, one per weight (FoldConstant folds them when the
weights are constants) and one where the result leaves. The ops it converts are those
`desired_layouts` names (see `desired_layouts.py` for the spelling and the "default"
kernel layouts); every other layout-aware op follows the layout of its input
(`rules.py` lists them) and anything else is an edge (`rewrite.py`).

The default, `nn.conv2d:NHWC` (kernel HWIO, HWOI when depthwise), is what ConvertLayout
is mostly asked for (channels-last targets); TVM has no default and needs the option.
Deviation from TVM: TVM requires CanonicalizeOps first (bias_add becomes a broadcast
add); here `nn.bias_add` is converted directly, its axis renumbered, so no expand_dims
appears. The result is type-checked. Values are exactly the original's: a layout
change only moves elements, and the kernels sum in the same order (tolerance 0 on the
examples; the golden runner's rtol=1e-5 covers a kernel that did not).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Function
from ...ir.module import IRModule
from ..pass_infra import FunctionPass, PassContext, register_pass
from .desired_layouts import DesiredLayouts
from .rewrite import rewrite_layouts
from .rules import RULES

DEFAULT_DESIRED = DesiredLayouts.of({"nn.conv2d": ("NHWC", "default")})


def convert_layouts(mod: IRModule, desired: DesiredLayouts, ctx: PassContext,
                    apply: Callable[[IRModule, PassContext], IRModule]) -> IRModule:
    """`mod` (typed: the passes require InferType) with each function rewritten by `apply`."""
    return apply(mod, ctx) if desired.entries else mod


@register_pass
@dataclass(frozen=True)
class ConvertLayout(FunctionPass):
    """Convert the ops named in `desired_layouts` to those layouts (module docstring)."""

    name: ClassVar[str] = "ConvertLayout"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    desired_layouts: DesiredLayouts = DEFAULT_DESIRED   # also a dict, or "op:L[:K];..."

    def __post_init__(self) -> None:
        object.__setattr__(self, "desired_layouts", DesiredLayouts.of(self.desired_layouts))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return convert_layouts(mod, self.desired_layouts, ctx, super().transform_module)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        return rewrite_layouts(fn, RULES, self.desired_layouts.prefer)
