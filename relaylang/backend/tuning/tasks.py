"""Tuning tasks: the distinct native kernels of a model, what they compute on, and how
often the model runs each.

`extract_tasks` prepares the module exactly as `rl.build` does (`build.prepare`: params
bound, -O3 for the target), plans the entry as a graph and lowers each primitive function
once with the default knobs, as the build would. Kernels are deduplicated by their knob
key (`knobs.kernel_key`: the structural hash and the constant parameters), weighted by how
many steps of the plan run them. A task keeps the arrays of its constant parameters (the
model's weights): a kernel whose weight is packed at build time is measured with its
real packed weight. A program that is not a static dataflow graph has no plan: its
kernels are not tuned (`NotTunable`).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...ir.expr import Function


class NotTunable(ValueError):
    """The module has no kernels the tuner can measure (not a static dataflow graph,
    or no native kernel with knobs)."""


@dataclass
class Task:
    key: str                        # knobs.kernel_key: where its record lives
    name: str                       # the kernel's name in a default build
    fn: Function                    # the typed primitive function
    constant_params: frozenset[int]
    leaves: list[np.ndarray | None]  # per flat input of `fn`: a constant's array, or None
    weight: int                     # steps of the plan that run it
    ops: list[str]
    flops: int
    space: dict[str, tuple[int, ...]]       # knob -> choices, as the default lowering asked
    defaults: dict[str, int]
    notes: list[str] = field(default_factory=list)

    @property
    def size(self) -> int:
        """The number of schedules in its space (the product of the choices)."""
        return math.prod(len(c) for c in self.space.values())


def extract_tasks(mod: Any, params: Mapping[str, Any] | None = None, entry: str = "main",
                  target: str = "llvm", config: Mapping[str, Any] | None = None) -> list[Task]:
    """The tunable kernels of `mod` (see the module docstring), most weighted first;
    `config`: pass-context options of the build (graph knobs, layouts.py)."""
    from ...ir.progress import track
    from ..build import _wrap_op, prepare
    from ..llvm import knobs
    from ..native.kernels import is_refusal, kernel_name, lower, op_names
    from ..native.plan import CONST, NotAGraph, constant_params, leaves, make_plan
    from ..profiler import function_flops
    optimised = prepare(mod, target, params, entry, config=config)
    try:
        plan, functions = make_plan(optimised[entry], _wrap_op)
    except NotAGraph as e:
        raise NotTunable(f"@{entry} is not a static dataflow graph ({e}): only a graph's "
                         "kernels are tuned") from None
    tasks: dict[str, Task] = {}
    for fn, step in track(list(zip(functions, plan.steps)), "finding kernels", unit="kernel"):
        consts = constant_params(plan, step)
        key = knobs.kernel_key(fn, sorted(consts))
        if key in tasks:
            tasks[key].weight += 1
            continue
        prim = lower(fn, kernel_name(fn, len(tasks)), consts)
        if is_refusal(prim) or not prim.knob_space:
            continue
        flat: list[np.ndarray | None] = []
        for i, arg in enumerate(step.inputs):
            for v in leaves(arg):
                value = plan.values[v]
                flat.append(plan.constants[value.ref] if i in consts and value.kind == CONST
                            else None)
        tasks[key] = Task(key, prim.name, fn, consts, flat, 1, op_names(fn),
                          int(function_flops(fn) or 0), dict(prim.knob_space),
                          dict(prim.knobs))
    if not tasks:
        raise NotTunable(f"@{entry} has no native kernel with scheduling knobs")
    return sorted(tasks.values(), key=lambda t: (-t.weight * max(t.flops, 1), t.name))
