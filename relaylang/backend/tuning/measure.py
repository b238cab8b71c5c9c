"""Measuring one kernel under one schedule, natively.

A `Bench` holds one task's inputs: the real constants for its constant parameters (so a
packed weight is packed by the candidate's own packer), seeded random arrays for the
rest. `Bench.run(values)` lowers the task's primitive function with those knob values
(for this kernel only), compiles it with its packers in one module (through the kernel
cache: a schedule seen before costs no LLVM time), runs the packers, then times the
kernel the way the executor calls it (`NativeCall`: split over the native pool when it
is large enough): a warm-up, then batches of calls long enough to time (`BATCH_S`), the
median batch's time per call. Its outputs are kept, so that the tuner can check every
candidate against the default schedule's (`same_values`).

Two knob settings the lowering treats alike (a knob the kernel did not ask for under
the others' values) make the same kernel: `Measurement.schedule` (the knobs the lowering
actually asked, with their values) is what identifies a measured schedule.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tasks import Task

WARMUP = 2
BATCH_S = 0.002        # a timed batch lasts at least this long
BATCHES = 5
MAX_CALLS = 10_000     # per batch (a kernel of a few nanoseconds)


@dataclass
class Measurement:
    values: dict[str, int]                  # what was asked for
    schedule: tuple[tuple[str, int], ...]   # what the lowering used (PrimFunc.knobs)
    ms: float                               # median time per call
    outputs: list[np.ndarray]
    compile_s: float


def random_array(shape: tuple[int, ...], dtype: str, rng: np.random.Generator) -> np.ndarray:
    """Seeded values for a kernel's (or a model's) input: normal floats, small ints."""
    if dtype == "bool":
        return rng.integers(0, 2, size=shape).astype(bool)
    kind = np.dtype(dtype).kind
    if kind in "iu":
        return rng.integers(0, 8, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype("float32").astype(dtype)


class Bench:
    """One task's kernel, measured under any knob values (see the module docstring)."""

    def __init__(self, task: Task, seed: int = 0):
        from ...ir.types import tuple_leaves
        self.task = task
        rng = np.random.default_rng(seed)
        types = [t for p in task.fn.params for t in tuple_leaves(p.checked_type)]
        self.leaves: list[np.ndarray] = []
        for arr, t in zip(task.leaves, types):
            shape = tuple(int(d) for d in t.shape)
            self.leaves.append(np.ascontiguousarray(arr) if arr is not None
                               else random_array(shape, str(t.dtype), rng))
        self.calls = 0

    def run(self, values: dict[str, int]) -> Measurement:
        from ..llvm import knobs
        from ..native.kernels import NativeCall, compile_native, is_refusal, lower, pointer_array
        from ..native.memory import aligned_empty, as_aligned
        task = self.task
        start = time.perf_counter()
        with knobs.using(knobs.Settings(per_kernel={task.key: dict(values)})):
            prim = lower(task.fn, task.name, task.constant_params)
        if is_refusal(prim):
            raise RuntimeError(f"{task.name} no longer lowers: {prim}")
        packers = [p.packer for p in getattr(prim, "packed", ())]
        module = compile_native([prim, *packers], cache=True)
        compile_s = time.perf_counter() - start
        leaves = [as_aligned(a) for a in self.leaves]
        if packers:
            inputs = [leaves[k] for k in prim.leaf_inputs]
            for p in prim.packed:
                (out,) = p.packer.outputs
                array = aligned_empty(out.shape, out.dtype)
                runner = NativeCall(p.packer.name, module.kernels[p.packer.name])
                runner.run(pointer_array([leaves[s] for s in p.sources] + [array]))
                inputs.append(array)
        else:
            inputs = leaves
        outputs = [aligned_empty(b.shape, b.dtype) for b in prim.outputs]
        for o in outputs:
            o.fill(0)
        call = NativeCall(prim.name, module.kernels[prim.name])
        ptrs = pointer_array(inputs + outputs)
        ms = _time(call, ptrs)
        self.calls += 1
        return Measurement(dict(values), tuple(prim.knobs), ms,
                           [np.array(o, copy=True) for o in outputs], compile_s)


def entry_args(lib: Any, entry: str = "main", seed: int = 0) -> list[Any]:
    """Random arguments for a built model's entry (`random_array` per tensor, a tuple
    parameter as a tuple)."""
    from ...ir.types import tuple_leaves
    rng = np.random.default_rng(seed)
    args = []
    for _, ty in lib.entry_params(entry):
        leaves = [random_array(tuple(int(d) for d in t.shape), str(t.dtype), rng)
                  for t in tuple_leaves(ty)]
        args.append(leaves[0] if len(leaves) == 1 else tuple(leaves))
    return args


def time_builds(libs: Any, entry: str, args: list[Any], rounds: int) -> dict[Any, float]:
    """Median ms per run of each of `libs` (a mapping name -> built library), run
    alternately on the same inputs."""
    samples: dict[Any, list[float]] = {c: [] for c in libs}
    for _ in range(rounds):
        for choice, lib in libs.items():
            t0 = time.perf_counter()
            lib[entry](*args)
            samples[choice].append(time.perf_counter() - t0)
    return {c: float(np.median(s)) * 1e3 for c, s in samples.items()}


def _time(call: Any, ptrs: Any) -> float:
    """Milliseconds per call: the median of `BATCHES` batches, each at least `BATCH_S`."""
    for _ in range(WARMUP):
        call.run(ptrs)
    start = time.perf_counter()
    call.run(ptrs)
    once = max(time.perf_counter() - start, 1e-7)
    number = int(min(MAX_CALLS, max(1, BATCH_S / once)))
    samples = []
    for _ in range(BATCHES):
        start = time.perf_counter()
        for _ in range(number):
            call.run(ptrs)
        samples.append((time.perf_counter() - start) / number)
    return float(np.median(samples)) * 1e3


def same_values(got: list[np.ndarray], want: list[np.ndarray]) -> str:
    """"" when a candidate's outputs are the default schedule's (floats within a
    reassociation's rounding), else what differs."""
    if len(got) != len(want):
        return f"{len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"output {k} is {g.dtype}{list(g.shape)}, expected {w.dtype}{list(w.shape)}"
        if g.dtype.kind == "f" or g.dtype.names:
            gf, wf = g.astype("float64"), w.astype("float64")
            scale = max(1.0, float(np.nanmax(np.abs(wf))) if wf.size else 1.0)
            bad = ~np.isclose(gf, wf, rtol=1e-3, atol=1e-4 * scale, equal_nan=True)
        else:
            bad = g != w
        if bad.any():
            return f"output {k} differs at {int(bad.sum())} of {bad.size} elements"
    return ""
