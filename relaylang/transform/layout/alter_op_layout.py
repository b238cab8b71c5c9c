"""AlterOpLayout: compute ops in the layouts the target's kernels prefer
(TVM's src/relay/transforms/alter_op_layout.cc).

TVM asks each op's target-specific `FTVMAlterOpLayout` (topi's schedules: x86 conv2d
becomes NCHW16c, ARM's NHWC) for a replacement and then repairs layouts like
ConvertLayout. There are no per-target schedules here, so the target's wishes are a
table, `TARGET_LAYOUTS`, and the repair is the machinery ConvertLayout uses
(`rewrite.py`, `rules.py`):

  llvm    as TVM on x86: nn.conv2d becomes nn.contrib_conv2d_NCHWc, data in blocks of
          channels (NCHW{ic}c), weights OIHW{ic}i{oc}o (FoldConstant pre-transforms
          constant weights), the output NCHW{oc}c, blocks chosen per convolution
          (`nchwc.py`: the output block the largest of 64/32/16/8 dividing the channels,
          the input block the producer's). Bias adds, relu, clip, residual adds and pools
          follow the blocked layout, so consecutive convolutions exchange blocked
          tensors; only regions of at least two such convolutions are converted (one
          alone is not worth its two transforms), and depthwise, grouped, short-reduction
          or non-float convolutions stay NCHW. NHWC (HWIO weights) stays available
          through ConvertLayout{desired_layouts=nn.conv2d:NHWC}.
  interp  nothing: the reference interpreter's convolutions (im2col + matmul) are
          indifferent to layout, and transforms would only add work.

The target is the `target` option (`-p 'AlterOpLayout{target=llvm}'`; "llvm -mcpu=..."
reads as llvm) or else the pass context's `config["target"]`, which a build sets.
With neither, the pass does nothing: that is how it sits in `-O3`
(optimize.TVM_PIPELINE, opt_level 3 as TVM's), where converting a model for no
particular target would only add layout_transforms at the edges of every converted
region (parameters, weights that are not constants, the result) -- more ops, no gain.

    AlterOpLayout{target=llvm}, weights constant, then FoldConstant (which makes them
    new constants, blocked):
    %0 = nn.conv2d(%x, meta[relay.Constant][0], padding=[1, 1, 1, 1]);  (x 1x16x8x8, 64 3x3 filters)
    %1 = nn.relu(%0);
    nn.conv2d(%1, meta[relay.Constant][1])                              (64 1x1 filters)
    ==>
    %0 = layout_transform(%x, src_layout="NCHW", dst_layout="NCHW16c");
    %1 = nn.contrib_conv2d_NCHWc(%0, meta[relay.Constant][0], padding=[1, 1, 1, 1],
           data_layout="NCHW16c", kernel_layout="OIHW16i64o", out_layout="NCHW64c");
    %2 = nn.relu(%1);
    %3 = nn.contrib_conv2d_NCHWc(%2, meta[relay.Constant][1], data_layout="NCHW64c",
           kernel_layout="OIHW64i64o", out_layout="NCHW64c");
    layout_transform(%3, src_layout="NCHW64c", dst_layout="NCHW")

`rl.build` runs it (the build's pass context names its target, backend/build.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Function
from ...ir.module import IRModule
from ..pass_infra import FunctionPass, PassContext, register_pass
from .convert_layout import convert_layouts
from .desired_layouts import DesiredLayouts
from .nchwc import BlockedConvLayouts
from .rewrite import rewrite_layouts
from .rules import RULES

TARGET_LAYOUTS: dict[str, DesiredLayouts | BlockedConvLayouts] = {
    "llvm": BlockedConvLayouts(),
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

    def preferences(self, ctx: PassContext) -> DesiredLayouts | BlockedConvLayouts:
        kind = target_kind(self.target or ctx.config.get("target"))
        return TARGET_LAYOUTS.get(kind, DesiredLayouts())

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return convert_layouts(mod, self.preferences(ctx), ctx, super().transform_module)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        prefs = self.preferences(ctx)
        if isinstance(prefs, BlockedConvLayouts):
            prefs = prefs.for_function(fn)      # only regions worth their transforms
        return rewrite_layouts(fn, RULES, prefs.prefer)
