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

`skip_layers` (TVM's `LayoutConfig(skip_layers=[0])` scope, here an option:
`skip_layers=0;2`) leaves the first, third, ... nn.conv2d of each function in its own
layouts. nn.conv2d may also be asked for NCHW{n}c with an OIHW{n}i{n}o kernel, as TVM's
convert_conv2d: it becomes nn.contrib_conv2d_NCHWc where the blocks divide its channels.

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

from ...ir.expr import Call, Function, Op
from ...ir.module import IRModule
from ...ir.normal_forms import opaque_children
from ...ir.traverse import post_order
from ..pass_infra import FunctionPass, PassContext, register_pass
from .desired_layouts import DesiredLayouts
from .rewrite import rewrite_layouts
from .rules import RULES

DEFAULT_DESIRED = DesiredLayouts.of({"nn.conv2d": ("NHWC", "default")})


class SkipLayers(tuple):
    """ConvertLayout's `skip_layers` (TVM's `LayoutConfig(skip_layers=[...])`): the
    positions of the nn.conv2d calls to leave in their layouts, counted from 0 in each
    function in dataflow order (arguments first). From Python a list; in a pipeline
    string separated by `;` (`skip_layers=0;3`)."""

    @staticmethod
    def of(value: object) -> SkipLayers:
        if isinstance(value, SkipLayers):
            return value
        items = value.split(";") if isinstance(value, str) else value
        try:
            out = [int(str(i).strip()) for i in items if str(i).strip()]  # type: ignore
        except (TypeError, ValueError):
            raise ValueError(f"skip_layers must be layer positions such as 0;2, not "
                             f"{value!r}") from None
        if any(i < 0 for i in out):
            raise ValueError(f"skip_layers must be positions from 0, not {value!r}")
        return SkipLayers(sorted(set(out)))

    def __str__(self) -> str:
        return ";".join(map(str, self))


NO_SKIP = SkipLayers()


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
    skip_layers: SkipLayers = NO_SKIP                   # also a list, or "0;2"

    def __post_init__(self) -> None:
        object.__setattr__(self, "desired_layouts", DesiredLayouts.of(self.desired_layouts))
        object.__setattr__(self, "skip_layers", SkipLayers.of(self.skip_layers))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return convert_layouts(mod, self.desired_layouts, ctx, super().transform_module)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        prefer = self.desired_layouts.prefer
        if self.skip_layers:
            convs = [n for n in post_order(fn, opaque_children) if isinstance(n, Call)
                     and isinstance(n.op, Op) and n.op.name == "nn.conv2d"]
            skipped = {id(convs[i]) for i in self.skip_layers if i < len(convs)}
            asked = prefer

            def prefer(call: Call) -> tuple[str, ...] | None:
                return None if id(call) in skipped else asked(call)
        return rewrite_layouts(fn, RULES, prefer)
