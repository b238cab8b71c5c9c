"""FoldScaleAxis: BackwardFoldScaleAxis, ForwardFoldScaleAxis, then FoldConstant
(TVM's `FoldScaleAxis()` in src/relay/transforms/fold_scale_axis.cc, a Sequential of
those three passes under that name).

After SimplifyInference and FoldConstant, a Conv2D + BatchNorm + ReLU with bound weights
is a conv, a multiply by the per-channel BN scale and an add of the BN shift. The
backward fold moves the scale into the conv weight, FoldConstant computes that weight:

    %0 = nn.conv2d(%data, meta[relay.Constant][0], ...);     %0 = nn.conv2d(%data,
    %1 = multiply(%0, meta[relay.Constant][1]);      ==>          meta[relay.Constant][0], ...);
    %2 = add(%1, meta[relay.Constant][2]);                   %1 = add(%0, meta[..][1]);
    nn.relu(%2)                                              nn.relu(%1)

The rules and where they do not apply are in backward.py and
forward.py. The three passes run whatever the context's opt level (it
chose to run this one), but a pass the context disables is skipped, as in TVM's
Sequential.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.module import IRModule
from ..fold_constant import FoldConstant
from ..pass_infra import ModulePass, Pass, PassContext, PassInfo, register_pass
from .backward import BackwardFoldScaleAxis
from .forward import ForwardFoldScaleAxis


@register_pass
@dataclass(frozen=True)
class FoldScaleAxis(ModulePass):
    """Fold per-channel scales into conv/dense weights, both directions, then fold constants."""

    name: ClassVar[str] = "FoldScaleAxis"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)   # FoldConstant's new constants

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        passes: tuple[Pass, ...] = (BackwardFoldScaleAxis(), ForwardFoldScaleAxis(),
                                    FoldConstant())
        for p in passes:
            # Level 0: only `disabled_pass` can stop a step, not the opt level.
            if ctx.should_run(PassInfo(p.name, 0)):
                mod = ctx.run(p, mod)
        return mod
