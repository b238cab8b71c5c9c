"""Runs an execution plan: the graph executor's inner loop.

Everything that does not change between calls is prepared once (`_State`): the storage
slots (64-byte aligned), each temporary's view into its slot, each native step's
argument pointer array with the constants' and temporaries' addresses filled in. A call
then only puts the inputs' and the fresh outputs' addresses into the pointer arrays and
runs the steps in order, without checking types (the inputs were checked against the
entry's types before; the plan's kernels were compiled for exactly these types).

Consecutive native steps form one `native_pool.StepTable`, prepared once too: a run of
them costs one ctypes call (parallel kernels are split over the native pool inside
it); a NumPy fallback step ends a run. A nonzero kernel status stops the run and is
raised for the step that failed, as `NativeCall.run` raises it.

The profiler runs the plan through `run_profiled`, a loop of its own over a state with
one table per native step (each step timed alone): `run` has no profiling branch.

One prepared state serves one call at a time; a call made while another thread runs
the same library prepares a state of its own. Outputs are fresh arrays for the caller,
except that an output array of the previous call that nobody references any more
(its reference count says so) is written again instead of allocating new pages.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from .kernels import Fallback, NativeCall
from .memory import address as address_of
from .memory import aligned_bytes, aligned_empty, as_aligned, view
from .native_pool import StepTable
from .plan import CONST, INPUT, OUTPUT, TEMP, Plan, leaves


def _structured(structure: Any, values: list[Any]) -> Any:
    if isinstance(structure, list):
        return tuple(_structured(s, values) for s in structure)
    return values[structure]


class _State:
    """The buffers and pointer arrays of one executing call."""

    def __init__(self, runtime: GraphRuntime, split: bool = False):
        plan = runtime.plan
        slots = [aligned_bytes(n) for n in plan.slots]
        self.values: list[Any] = [None] * len(plan.values)
        for i, v in enumerate(plan.values):
            if v.kind == TEMP:
                self.values[i] = view(slots[v.ref], v.shape, v.dtype)
            elif v.kind == CONST:
                self.values[i] = runtime.constants[v.ref]
        self.slots = slots
        # Maximal runs of consecutive native steps, each one StepTable run by one native
        # call: (table, [(pointer array, position, value id) to fill per call], None);
        # a fallback step between them: (None, step, runner).
        self.segments: list[tuple[Any, Any, Any]] = []
        # `split` (the profiler's state): one table per native step, so each is timed
        # alone; `first_step[k]` is the index of the plan step segment k starts with.
        self.first_step: list[int] = []
        calls: list[NativeCall] = []
        arrays: list[Any] = []
        patches: list[tuple[Any, int, int]] = []
        for index, (step, runner) in enumerate(zip(plan.steps, runtime.runners)):
            if not isinstance(runner, NativeCall):
                if calls:
                    self.segments.append((StepTable(calls, arrays), patches, None))
                    calls, arrays, patches = [], [], []
                self.first_step.append(index)
                self.segments.append((None, step, runner))
                continue
            if not calls:
                self.first_step.append(index)
            ids = leaves(step.inputs) + step.outputs
            array = (ctypes.c_void_p * max(1, len(ids)))()
            for pos, vid in enumerate(ids):
                kind = plan.values[vid].kind
                if kind in (INPUT, OUTPUT):
                    patches.append((array, pos, vid))
                else:
                    array[pos] = self.values[vid].ctypes.data
            calls.append(runner)
            arrays.append(array)
            if split:
                self.segments.append((StepTable(calls, arrays), patches, None))
                calls, arrays, patches = [], [], []
        if calls:
            self.segments.append((StepTable(calls, arrays), patches, None))


class GraphRuntime:
    """A plan with its kernels: `run(leaves)` takes the entry's input tensors (flattened,
    already checked) and returns the result value (tensors, tuples)."""

    def __init__(self, plan: Plan, runners: Sequence[NativeCall | Fallback]):
        self.plan = plan
        self.runners = list(runners)
        self.constants = [as_aligned(np.asarray(c)) for c in plan.constants]
        self._lock = threading.Lock()
        self._state: _State | None = None
        self._profiled_state: _State | None = None      # run_profiled's (split) state
        self._profile_lock = threading.Lock()
        self._input_ids = leaves(plan.inputs)
        self._output_ids = [i for i, v in enumerate(plan.values) if v.kind == OUTPUT]
        # The outputs of the last call: reused by the next when the caller let them go.
        self._last_outputs: dict[int, np.ndarray] = {}
        # a constant in the result is copied: the caller may write to it
        self._constant_output = any(plan.values[v].kind == CONST for v in leaves(plan.outputs))

    def run(self, inputs: Sequence[np.ndarray]) -> Any:
        if self._lock.acquire(blocking=False):
            try:
                if self._state is None:
                    self._state = _State(self)
                return self._run(self._state, inputs)
            finally:
                self._lock.release()
        return self._run(_State(self), inputs)

    def _run(self, state: _State, inputs: Sequence[np.ndarray]) -> Any:
        plan, values = self.plan, state.values
        address: dict[int, int] = {}
        for vid, array in zip(self._input_ids, inputs):
            array = as_aligned(array)
            values[vid] = array
            address[vid] = address_of(array)
        last = self._last_outputs if state is self._state else {}
        for vid in self._output_ids:
            array = last.get(vid)
            if array is None or not _unreferenced(array):
                v = plan.values[vid]
                array = aligned_empty(v.shape, v.dtype)
            values[vid] = array
            address[vid] = address_of(array)
        for table, patches, runner in state.segments:
            if table is not None:
                for array, pos, vid in patches:
                    array[pos] = address[vid]
                status, failed = table.run()
                if status:
                    table.calls[failed]._fail(status)
            else:
                step = patches
                result = runner([_structured(a, values) for a in step.inputs])
                outs = step.outputs
                if len(outs) == 1 and not isinstance(result, tuple):
                    np.copyto(values[outs[0]], result)
                else:
                    from .kernels import flatten
                    for vid, leaf in zip(outs, flatten(result)):
                        np.copyto(values[vid], leaf)
        result = _structured(plan.outputs, values)
        if state is self._state:
            self._last_outputs = {vid: values[vid] for vid in self._output_ids}
        for vid in self._input_ids + self._output_ids:
            values[vid] = None              # the state keeps no caller's array alive
        return _copy_constants(result) if self._constant_output else result

    def run_profiled(self, inputs: Sequence[np.ndarray], clock: Any, record: Any) -> Any:
        """`run` for the profiler (`backend/profiler.py`): each step runs on its own
        (one native call per native step, not one per run of them) and
        `record(step index, start, end)` gets its `clock()` times. A loop of its own, so
        that `run` has no profiling branch; outputs are always fresh."""
        if not self._profile_lock.acquire(blocking=False):      # another profile runs
            return self._run_profiled(_State(self, split=True), inputs, clock, record)
        try:
            if self._profiled_state is None:
                self._profiled_state = _State(self, split=True)
            return self._run_profiled(self._profiled_state, inputs, clock, record)
        finally:
            self._profile_lock.release()

    def _run_profiled(self, state: _State, inputs: Sequence[np.ndarray], clock: Any,
                      record: Any) -> Any:
        plan, values = self.plan, state.values
        address: dict[int, int] = {}
        for vid, array in zip(self._input_ids, inputs):
            array = as_aligned(array)
            values[vid] = array
            address[vid] = address_of(array)
        for vid in self._output_ids:
            v = plan.values[vid]
            values[vid] = array = aligned_empty(v.shape, v.dtype)
            address[vid] = address_of(array)
        for index, (table, patches, runner) in zip(state.first_step, state.segments):
            if table is not None:
                for array, pos, vid in patches:
                    array[pos] = address[vid]
                start = clock()
                status, failed = table.run()
                record(index, start, clock())
                if status:
                    table.calls[failed]._fail(status)
            else:
                step = patches
                start = clock()
                result = runner([_structured(a, values) for a in step.inputs])
                outs = step.outputs
                if len(outs) == 1 and not isinstance(result, tuple):
                    np.copyto(values[outs[0]], result)
                else:
                    from .kernels import flatten
                    for vid, leaf in zip(outs, flatten(result)):
                        np.copyto(values[vid], leaf)
                record(index, start, clock())
        result = _structured(plan.outputs, values)
        for vid in self._input_ids + self._output_ids:
            values[vid] = None
        return _copy_constants(result) if self._constant_output else result


def _unreferenced(array: np.ndarray) -> bool:
    """Whether only the runtime holds `array`: 4 references to it (`_last_outputs`, the
    caller's local, this function's parameter, getrefcount's argument) and 2 to the
    buffer that owns its memory (the array's `base`, the argument). A caller's view
    refers to the owner directly (NumPy collapses chains of views), so both are counted."""
    if sys.getrefcount(array) > 4:
        return False
    return array.base is None or sys.getrefcount(array.base) <= 2


def _copy_constants(value: Any) -> Any:
    """The result with its tensors copied (it holds a constant of the library)."""
    if isinstance(value, tuple):
        return tuple(_copy_constants(v) for v in value)
    return np.array(value, copy=True)
