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

`call(args)`: the one-native-call path (`Library.__call__` tries it first). When every
step is native (one step table) and the entry takes static tensors, everything of a
call but the arguments and the outputs is fixed, and planned once (`_Fast`): the table,
the pointer-array slots each argument and each output goes to (a patch list), the
output shapes, a descriptor of all that for `native_pool`'s `run_graph`. A call checks
each argument in a few attribute reads (an ndarray of exactly the parameter's shape
and dtype, C-contiguous, aligned, writable), takes each output (the previous call's
when unreferenced, else new: `np.empty` below `ALIGNED_OUTPUT_BYTES`, 64-byte aligned
above), writes the arrays into the descriptor (the objects themselves: native code
reads their data pointers at the offset `native_pool.array_data_offset` checked at
start-up; else their data addresses) and makes ONE ctypes call with one argument:
`run_graph` writes the addresses into the slots and runs the table (parallel kernels
through the native pool). Anything else (a list, a read-only or strided array, a
state busy in another thread, a fallback step in the plan, a constant or an input in
the result) returns `NOT_FAST` and takes the checked path above.
"""
from __future__ import annotations

import ctypes
import sys
import threading
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.types import TensorType
from . import native_pool
from .kernels import Fallback, NativeCall
from .memory import address as address_of
from .memory import aligned_bytes, aligned_empty, as_aligned, view
from .native_pool import StepTable
from .plan import CONST, INPUT, OUTPUT, TEMP, Plan, leaves

D_POOL = native_pool.D_POOL
NOT_FAST = object()       # `GraphRuntime.call`: these arguments take the checked path
# Outputs smaller than this are plain `np.empty` arrays (aligned to their element, all a
# kernel's arguments promise; 64-byte alignment costs 2 us a call in NumPy calls).
ALIGNED_OUTPUT_BYTES = 4096
_ndarray = np.ndarray
_getrefcount = sys.getrefcount
_char_at = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _data(array: np.ndarray) -> int:
    """The address of an array's data (without the object offset check)."""
    try:
        return _addressof(_char_at(array))
    except (TypeError, ValueError, BufferError):      # read-only, empty
        return array.ctypes.data


def _new_output(shape: tuple[int, ...], dtype: Any, nbytes: int) -> np.ndarray:
    """A fresh output array of the fast path."""
    if nbytes < ALIGNED_OUTPUT_BYTES:
        return np.empty(shape, dtype)
    return aligned_empty(shape, dtype)


class _Fast:
    """What `GraphRuntime.call` needs, prepared once from the state (see the module
    docstring): `inputs` (shape, dtype, [(pointer array, position)]) per argument,
    `outputs` (shape, dtype, bytes, [(pointer array, position)]) per output value,
    `result` the result structure over output indices, the table's native call."""

    def __init__(self, runtime: GraphRuntime, state: _State, table: StepTable,
                 patches: list[tuple[Any, int, int]]):
        plan = runtime.plan
        targets: dict[int, list[tuple[Any, int]]] = {}
        for array, pos, vid in patches:
            targets.setdefault(vid, []).append((array, pos))
        self.inputs = []
        for vid in runtime._input_ids:
            v = plan.values[vid]
            self.inputs.append((tuple(v.shape), np.dtype(v.dtype), targets.get(vid, [])))
        self.outputs = []
        index: dict[int, int] = {}
        for vid in runtime._output_ids:
            v = plan.values[vid]
            dt = np.dtype(v.dtype)
            nbytes = dt.itemsize
            for d in v.shape:
                nbytes *= int(d)
            index[vid] = len(self.outputs)
            self.outputs.append((tuple(v.shape), dt, nbytes, targets.get(vid, [])))
        self.result = _reindex(plan.outputs, index)
        self.table = table
        self.last: list[Any] = [None] * len(self.outputs)
        self.state = state          # keeps the pointer arrays' temporaries alive
        # `run_graph`'s descriptor (native_pool.D_*): the table, the pool, the patch
        # list (io index, slot address) and the io values, written per call
        funcs = native_pool.functions()
        assert funcs is not None
        self.run_graph = funcs.run_graph
        # array objects (their data pointer read natively) or, without a checked
        # offset, data addresses
        self.objects = funcs.data_offset >= 0
        io_targets = [t for _, _, t in self.inputs] + [t for _, _, _, t in self.outputs]
        pairs = [(k, ctypes.addressof(array) + pos * ctypes.sizeof(ctypes.c_void_p))
                 for k, targets in enumerate(io_targets) for array, pos in targets]
        for array, pos, _ in patches:       # every slot patched is in the list
            assert len(array) > pos
        self.patches = (ctypes.c_int64 * max(1, 2 * len(pairs)))()
        for p, (k, slot) in enumerate(pairs):
            self.patches[2 * p], self.patches[2 * p + 1] = k, slot
        n_in = len(self.inputs)
        self.desc = (ctypes.c_int64 * (native_pool.D_IO + len(io_targets)))()
        d = self.desc
        d[native_pool.D_STEPS] = table._steps_address
        d[native_pool.D_N] = table.n
        d[native_pool.D_FAILED] = table._failed_address
        d[native_pool.D_OFFSET] = funcs.data_offset
        d[native_pool.D_PATCHES] = ctypes.addressof(self.patches)
        d[native_pool.D_NPATCH] = len(pairs)
        self.desc_address = ctypes.addressof(d)
        self.arity = n_in
        # per argument: (shape, dtype, its io word), checked and written in one loop
        # (an argument not matching leaves earlier words written: harmless, every
        # call writes all of them)
        self.checks = [(shape, dtype, native_pool.D_IO + k)
                       for k, (shape, dtype, _) in enumerate(self.inputs)]
        self.out_slots = [(k, native_pool.D_IO + n_in + k) for k in range(len(self.outputs))]


def _reindex(structure: Any, index: dict[int, int]) -> Any:
    if isinstance(structure, list):
        return [_reindex(s, index) for s in structure]
    return index[structure]


def _fast_eligible(runtime: GraphRuntime) -> bool:
    """Whether the plan can run by `call`: static tensor parameters of NumPy dtypes, one
    leaf each, every result leaf a fresh output, no constant in the result."""
    plan = runtime.plan
    if runtime._constant_output or len(plan.params) != len(runtime._input_ids):
        return False
    for (_, ty), vid in zip(plan.params, runtime._input_ids):
        v = plan.values[vid]
        if not (isinstance(ty, TensorType) and all(type(d) is int for d in ty.shape)):
            return False
        if ty.dtype in CARRIED or v.dtype in CARRIED or tuple(ty.shape) != tuple(v.shape) \
                or np.dtype(ty.dtype) != np.dtype(v.dtype):
            return False
    return all(plan.values[vid].kind == OUTPUT for vid in leaves(plan.outputs))


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
        self._fast: _Fast | None = None
        self._fast_checked = False

    def _prepare_fast(self) -> _Fast | None:
        """The fast path's data, made on the first `call` (under the lock), or None when
        this plan or host has none."""
        if native_pool.functions() is None:
            return None
        self._fast_checked = True
        if not _fast_eligible(self):
            return None
        if self._state is None:
            self._state = _State(self)
        segments = self._state.segments
        if len(segments) != 1 or segments[0][0] is None:
            return None
        table, patches, _ = segments[0]
        self._fast = _Fast(self, self._state, table, patches)
        return self._fast

    def call(self, args: Sequence[Any]) -> Any:
        """Run on the caller's arguments in one native call, or `NOT_FAST` (nothing ran)
        when they are not exactly the entry's arrays or this plan has no fast path."""
        if not self._lock.acquire(blocking=False):
            return NOT_FAST
        try:
            fast = self._fast
            if fast is None:
                if self._fast_checked or self._prepare_fast() is None:
                    return NOT_FAST
                fast = self._fast
            if len(args) != fast.arity or native_pool.functions() is None:
                return NOT_FAST             # (None: tests take the native code away)
            desc, last, objects = fast.desc, fast.last, fast.objects
            for a, (shape, dtype, slot) in zip(args, fast.checks):
                if type(a) is not _ndarray or a.shape != shape or a.dtype != dtype or \
                        not a.flags.carray:
                    return NOT_FAST
                desc[slot] = id(a) if objects else _data(a)
            for k, slot in fast.out_slots:
                out = last[k]
                # reused when only `last` (and this local and getrefcount's argument)
                # holds it and nobody holds a view of its owner
                if out is None or _getrefcount(out) > 3 or (
                        out.base is not None and _getrefcount(out.base) > 2):
                    shape, dtype, nbytes, _ = fast.outputs[k]
                    out = last[k] = _new_output(shape, dtype, nbytes)
                desc[slot] = id(out) if objects else _data(out)
            pool = native_pool.get_native_pool()
            desc[D_POOL] = pool.address if pool is not None else 0
            # the arguments (held by `args`) and outputs (by `last`) live through it
            status = fast.run_graph(fast.desc_address)
            if status:
                fast.table.calls[fast.table._failed.value]._fail(status)
            result = fast.result
            return last[result] if type(result) is int else _structured(result, last[:])
        finally:
            self._lock.release()

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
                _run_fallback(patches, runner, values)
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
                start = clock()
                _run_fallback(patches, runner, values)
                record(index, start, clock())
        result = _structured(plan.outputs, values)
        for vid in self._input_ids + self._output_ids:
            values[vid] = None
        return _copy_constants(result) if self._constant_output else result


def _run_fallback(step: Any, runner: Any, values: list[Any]) -> None:
    """A step that runs in NumPy (`runner`): its results copied into its output values."""
    result = runner([_structured(a, values) for a in step.inputs])
    outs = step.outputs
    if len(outs) == 1 and not isinstance(result, tuple):
        np.copyto(values[outs[0]], result)
    else:
        from .kernels import flatten
        for vid, leaf in zip(outs, flatten(result)):
            np.copyto(values[vid], leaf)


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
