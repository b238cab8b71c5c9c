"""Graph knobs: choices a pass makes for the whole model, searched by timing the model.

The channel block of the llvm target's NCHWc convolutions (AlterOpLayout,
transform/layout/nchwc.py: `MAX_BLOCK_CONFIG`, the largest block the blocks are chosen
from) changes every convolution of a region and the layouts between them, so it is no
kernel's knob: `tune_layout` builds the model with each choice, times the builds
alternately on the same inputs (medians), and keeps the fastest when it beats the default
by `tune.MIN_GAIN`. The database keeps the choice per model (`Database.graphs`, keyed by
`model_key`: the structural hash of the entry function as given), and `rl.build(...,
tuning_db=...)` puts it in the pass context before the passes run. The kernels are then
tuned in that layout (their tasks come from the module built with it).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...transform.layout.nchwc import DEPTHWISE_OP, MAX_BLOCK_CHOICES, MAX_BLOCK_CONFIG, NCHWC_OP
from .database import GRAPH_KNOBS, model_key
from .measure import entry_args, time_builds

__all__ = ["GRAPH_KNOBS", "LayoutResult", "blocked_convolutions", "model_key", "time_builds",
           "tune_layout"]


def blocked_convolutions(optimised: Any, entry: str = "main") -> int:
    """How many NCHWc convolutions the optimised module computes (0: the channel block
    is not a choice for it)."""
    from ...ir.expr import Call, Op
    from ...ir.traverse import post_order
    count = 0
    for fn in optimised.functions.values():
        for node in post_order(fn):
            if isinstance(node, Call) and isinstance(node.op, Op) \
                    and node.op.name in (NCHWC_OP, DEPTHWISE_OP):
                count += 1
    return count


@dataclass
class LayoutResult:
    config: dict[str, int]                      # the kept choice ({}: the default)
    default_ms: float
    tuned_ms: float
    times: dict[int, float] = field(default_factory=dict)   # choice -> median ms

    def line(self) -> str:
        shown = ", ".join(f"{k}: {ms:.3f} ms" for k, ms in self.times.items())
        kept = self.config.get(MAX_BLOCK_CONFIG, MAX_BLOCK_CHOICES[0])
        return (f"layout: NCHWc max block ({shown}); kept {kept}"
                + ("" if self.config else " (the default)"))


def tune_layout(mod: Any, params: Mapping[str, Any] | None, entry: str = "main",
                target: str = "llvm", rounds: int = 15, min_gain: float = 0.03,
                seed: int = 0) -> LayoutResult | None:
    """The fastest NCHWc max block for the model (None: it has no blocked convolution)."""
    from ...transform.pass_infra import PassContext
    from ..build import build, prepare
    if not blocked_convolutions(prepare(mod, target, params, entry), entry):
        return None
    default, choices = GRAPH_KNOBS[MAX_BLOCK_CONFIG]
    libs: dict[int, Any] = {}
    for choice in choices:
        ctx = PassContext.current()
        with ctx.derived(config={**ctx.config, MAX_BLOCK_CONFIG: choice}):
            libs[choice] = build(mod, target, params=params, entry=entry)
    args = entry_args(libs[default], entry, seed)
    want = libs[default][entry](*args)
    for choice, lib in libs.items():        # warm up, and the same values in every layout
        got = lib[entry](*args)
        for a, b in zip(_leaves(got), _leaves(want)):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-3,
                                       err_msg=f"NCHWc max block {choice} changed the values")
    times = time_builds(libs, entry, args, rounds)
    best = min(times, key=lambda c: times[c])
    keep = best != default and times[best] <= times[default] * (1 - min_gain)
    return LayoutResult({MAX_BLOCK_CONFIG: best} if keep else {}, times[default],
                        times[best] if keep else times[default], times)


def _leaves(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (tuple, list)) else [value]
