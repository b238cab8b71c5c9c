"""AlterOpLayout: compute ops in the layouts the target's kernels prefer
(TVM's src/relay/transforms/alter_op_layout.cc).

TVM asks each op's target-specific `FTVMAlterOpLayout` (topi's schedules: x86 conv2d
becomes NCHW16c, ARM's NHWC) for a replacement and then repairs layouts like
ConvertLayout. There are no per-target schedules here, so the target's wishes are a
table, `TARGET_LAYOUTS`, and the repair is the machinery ConvertLayout uses
(`rewrite.py`, `rules.py`):

  llvm    conv2d in NHWC with HWIO weights (HWOI when depthwise). With channels last,
          the innermost loop of a convolution -- over input channels for the data,
          output channels for HWIO weights -- walks contiguous memory, so it
          vectorises without gathers and reuses each input pixel for every output
          channel; TVM's CPU NHWC schedules (topi/arm_cpu, topi/x86 conv2d_nhwc) use
          the same pair. Pools, bias_add, relu, ... follow the convolutions' layout.
  interp  nothing: the reference interpreter's convolutions (im2col + matmul) are
          indifferent to layout, and transforms would only add work.

The target is the `target` option (`-p 'AlterOpLayout{target=llvm}'`; "llvm -mcpu=..."
reads as llvm) or else the pass context's `config["target"]`, which a build sets.
With neither, the pass does nothing: that is how it sits in `-O3`
(optimize.TVM_PIPELINE, opt_level 3 as TVM's), where converting a model for no
particular target would only add layout_transforms at the edges of every converted
region (parameters, weights that are not constants, the result) -- more ops, no gain.

    AlterOpLayout{target=llvm}, weights constant, then FoldConstant:
    %0 = nn.conv2d(%x, meta[relay.Constant][0]);         %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NHWC");
    %1 = nn.relu(%0);                             ==>    %1 = nn.conv2d(%0, meta[relay.Constant][0], data_layout="NHWC", kernel_layout="HWIO");
    nn.global_avg_pool2d(%1)                             %2 = nn.relu(%1);
                                                         %3 = nn.global_avg_pool2d(%2, layout="NHWC");
                                                         layout_transform(%3, src_layout="NHWC", dst_layout="NCHW")
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Function
from ...ir.module import IRModule
from ..pass_infra import FunctionPass, PassContext, register_pass
from .convert_layout import convert_layouts
from .desired_layouts import DesiredLayouts
from .rewrite import rewrite_layouts
from .rules import RULES

TARGET_LAYOUTS: dict[str, DesiredLayouts] = {
    "llvm": DesiredLayouts.of({"nn.conv2d": ("NHWC", "default")}),
    "interp": DesiredLayouts(),
}


def target_kind(target: object) -> str:
    """`llvm` of "llvm -mcpu=skylake", or of a target object's `kind` (TVM's Target)."""
    text = str(getattr(target, "kind", target) or "")
    return text.split()[0] if text.strip() else ""


@register_pass
@dataclass(frozen=True)
class AlterOpLayout(FunctionPass):
    """Rewrite ops into the layouts `target` prefers (module docstring)."""

    name: ClassVar[str] = "AlterOpLayout"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    target: str = ""                 # empty: the context's config["target"], else nothing

    def __post_init__(self) -> None:
        kind = target_kind(self.target)
        if kind and kind not in TARGET_LAYOUTS:
            raise ValueError(f"AlterOpLayout knows no layouts for target `{kind}`; "
                             f"targets: {', '.join(TARGET_LAYOUTS)}")

    def preferences(self, ctx: PassContext) -> DesiredLayouts:
        kind = target_kind(self.target or ctx.config.get("target"))
        return TARGET_LAYOUTS.get(kind, DesiredLayouts())

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return convert_layouts(mod, self.preferences(ctx), ctx, super().transform_module)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        return rewrite_layouts(fn, RULES, self.preferences(ctx).prefer)
