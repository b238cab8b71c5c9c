"""The profiler: where a run's time goes, per op call (interpreter) or per kernel (LLVM).

    prof = rl.profile(mod, x, w)                     # the interpreter; prints the table
    prof = rl.profile(lib, x, trace="out.json")      # a built library (rl.build): its kernels
    prof = rl.profile(mod, x, target="llvm", show=False)
    prof.rows, prof.total, prof.text(), prof.write_trace("out.json")

`relay run FILE --profile [--target interp|llvm] [--trace OUT.json]` and the REPL's
`:profile EXPR` print the same table (`Profile.text()`): one row per kind of call --
with the interpreter an op at given argument shapes (`nn.dense` on 1x784 and 128x784),
with LLVM a kernel of the plan (a fused primitive function: the ops it holds) -- with
its calls, total and mean milliseconds, share of the profiled run's measured time and,
for conv / dense / matmul / batch_matmul, the achieved GFLOPS (FLOPs counted from shapes
and attributes: `call_flops`), longest first, in `relaylang.ir.timing`'s format; then a
summary per op kind (the LLVM kernel's anchor op: its conv/dense/matmul if it has one),
and a footer with the measured total, the same run unprofiled, and the profiler's
overhead (per call: a timed empty kernel against an untimed one; in all: the time of
the profiled run outside every row).

How it runs (profiling is chosen once per run, never tested per call):
- the interpreter: a machine whose compiler emits op instructions calling a timing
  wrapper of each kernel (`Interpreter(compiler=...)`); the run loop is unchanged;
- LLVM "graph" libraries: `GraphRuntime.run_profiled`, a loop of its own that runs
  each step alone (one native call per kernel) between two clock reads;
- "mixed" libraries: the interpreter's machine as above, its `primitive` hook timing
  each native or fallback kernel;
- "program" libraries (control flow compiled whole) have no kernel boundaries: the
  optimised module is profiled in mixed mode (it is in the process that built it; a
  loaded library file gives one row for the whole call). The footer says so.

The program runs unprofiled first (`warmup`: kernel states, page faults, code), then
unprofiled and timed (the best of up to five runs, fewer past a quarter of a second),
then profiled `repeat` times (after one unrecorded profiled run when a run is short, so
that the timing machine's own first-use work is not counted). The trace (`trace=`, `--trace`)
is the Chrome trace event format (a JSON object with `traceEvents`), which Perfetto and
chrome://tracing load: one complete ("X") event per call with `name`, `ph`, `ts` and
`dur` in microseconds from the profile's start, `pid`, `tid` (the thread that ran the
call) and `args` (ops, shapes, FLOPs), inside one event per run of the entry; metadata
("M") events name the process and thread. A kernel the native pool splits over its
threads is one event on the calling thread (the workers' share is not traced apart).
Events are kept only for a trace (`trace=` or `keep_events=True`); otherwise the
wrappers only add up calls and seconds per row, so a long loop takes no memory per call.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ir.timing import TimingRow, timing_table

# The ops whose GFLOPS the table shows: multiply-accumulate counted as 2 FLOPs.
FLOP_OPS = frozenset({
    "nn.dense", "nn.matmul", "nn.batch_matmul",
    "nn.conv1d", "nn.conv2d", "nn.conv3d",
    "nn.conv1d_transpose", "nn.conv2d_transpose", "nn.conv3d_transpose",
    "nn.deformable_conv2d", "nn.modulated_deformable_conv2d", "nn.contrib_conv2d_NCHWc",
    "nn.contrib_depthwise_conv2d_NCHWc",
})
_DEFAULT_KERNEL_LAYOUT = {"nn.conv1d": "OIW", "nn.conv2d": "OIHW", "nn.conv3d": "OIDHW",
                          "nn.conv1d_transpose": "IOW", "nn.conv2d_transpose": "IOHW",
                          "nn.conv3d_transpose": "IODHW", "nn.deformable_conv2d": "OIHW",
                          "nn.modulated_deformable_conv2d": "OIHW",
                          "nn.contrib_conv2d_NCHWc": "OIHW",
                          "nn.contrib_depthwise_conv2d_NCHWc": "OIHW"}

Shape = tuple  # a tensor's shape, or (for a tuple value) a tuple of them marked by _TUPLE


class ProfileError(Exception):
    """A profile that cannot be made or written (the message is one line)."""


# ---------------------------------------------------------------- FLOPs

def _prod(dims: Sequence[int]) -> int:
    n = 1
    for d in dims:
        n *= int(d)
    return n


def _layout_axes(layout: str) -> list[str]:
    """One letter per dimension of a layout string (`OIHW16o` -> O, I, H, W, o)."""
    return [m.group(2) for m in re.finditer(r"(\d*)([A-Za-z])", layout)]


def call_flops(op: str, attrs: Any, in_shapes: Sequence[Any], out_shape: Any) -> int:
    """Floating-point operations of one call of `op` (2 per multiply-accumulate) from its
    input and output shapes and attributes; 0 for ops not in `FLOP_OPS` or shapes that
    do not fit."""
    if op not in FLOP_OPS or not isinstance(out_shape, tuple) or \
            any(not isinstance(d, int) for d in out_shape):
        return 0
    try:
        out = _prod(out_shape)
        if op in ("nn.dense", "nn.matmul", "nn.batch_matmul"):
            a = in_shapes[0]
            transpose_a = bool(getattr(attrs, "transpose_a", False)) if op != "nn.dense" \
                else False
            k = a[-2] if transpose_a else a[-1]
            return 2 * out * int(k)
        weight = in_shapes[2 if "deformable" in op else 1]
        layout = getattr(attrs, "kernel_layout", "") or _DEFAULT_KERNEL_LAYOUT[op]
        axes = _layout_axes(layout)
        if len(axes) != len(weight):
            axes = _layout_axes(_DEFAULT_KERNEL_LAYOUT[op])
        if op.endswith("_transpose"):
            # each input element feeds (out channels / groups) x kernel window outputs
            cin = _prod(d for d, a in zip(weight, axes) if a in "Ii")
            return 2 * _prod(in_shapes[0]) * (_prod(weight) // max(1, cin))
        cout = _prod(d for d, a in zip(weight, axes) if a in "Oo")
        return 2 * out * (_prod(weight) // max(1, cout))
    except (IndexError, KeyError, TypeError, ValueError):
        return 0


def _type_shape(ty: Any) -> Any:
    """The static shape of a tensor type, a tuple of them for a tuple type, else None."""
    from ..ir.types import TensorType, TupleType
    if isinstance(ty, TensorType):
        if all(type(d) is int for d in ty.shape):
            return tuple(ty.shape)
        return None
    if isinstance(ty, TupleType):
        fields = [_type_shape(f) for f in ty.fields]
        return None if any(f is None for f in fields) else _Tuple(fields)
    return None


class _Tuple(tuple):
    """The shapes of a tuple value's fields (told apart from one tensor's shape)."""


def node_flops(call: Any) -> int:
    """`call_flops` of a typed op call node (0 unless its shapes are static)."""
    name = call.op.name
    if name not in FLOP_OPS:
        return 0
    shapes = [_type_shape(a.checked_type) for a in call.args]
    out = _type_shape(call.checked_type)
    if out is None or any(s is None for s in shapes):
        return 0
    return call_flops(name, call.attrs, shapes, out)


def function_flops(fn: Any) -> int:
    """The FLOPs of one call of a (primitive) function: its conv/dense/matmul calls'."""
    from ..ir.expr import Call, Op
    from ..ir.traverse import post_order
    return sum(node_flops(n) for n in post_order(fn.body)
               if type(n) is Call and type(n.op) is Op and n.op.name in FLOP_OPS)


# ---------------------------------------------------------------- shapes as text

def _value_shape(value: Any) -> Any:
    """The shape of a run-time value: a tensor's, a tuple's fields', else None."""
    shape = getattr(value, "shape", None)
    if shape is not None and not isinstance(value, tuple):
        return tuple(int(d) for d in shape)
    if isinstance(value, tuple):
        return _Tuple(_value_shape(v) for v in value)
    return None


def shape_text(shape: Any) -> str:
    """`1x784`, `()` for a scalar, `(2x3, 2x3)` for a tuple, `?` when unknown."""
    if shape is None:
        return "?"
    if isinstance(shape, _Tuple):
        return "(" + ", ".join(shape_text(s) for s in shape) + ")"
    return "x".join(str(d) for d in shape) if shape else "()"


def shapes_text(inputs: Sequence[Any], output: Any) -> str:
    return ", ".join(shape_text(s) for s in inputs) + " -> " + shape_text(output)


# ---------------------------------------------------------------- the result

@dataclass
class ProfileRow:
    """One kind of call: an op at some shapes, or a kernel."""

    name: str
    ops: tuple[str, ...]
    shapes: str
    calls: int = 0
    seconds: float = 0.0
    flops: int = 0                  # per call; 0: not counted
    kind: str = ""                  # the summary's op kind

    @property
    def mean(self) -> float:
        return self.seconds / self.calls if self.calls else 0.0

    @property
    def gflops(self) -> float | None:
        """Achieved GFLOP/s over this row's calls, None when its FLOPs are not counted."""
        if not self.flops or self.seconds <= 0:
            return None
        return self.flops * self.calls / self.seconds / 1e9


@dataclass
class Profile:
    """A profile: rows (longest first), the measured times and the trace events."""

    backend: str                          # "interpreter" or "llvm (<mode> mode)"
    entry: str
    rows: list[ProfileRow]
    total: float                          # seconds: wall time of the profiled run(s)
    unprofiled: float                     # seconds: the same run(s), profiler off
    overhead_per_call: float              # seconds: calibrated cost of timing one call
    repeat: int
    result: Any = None
    notes: list[str] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    kernels: bool = False                 # rows are kernels (LLVM), not op calls
    traced: bool = True                   # `events` hold every call (else only the runs)

    @property
    def calls(self) -> int:
        return sum(r.calls for r in self.rows)

    @property
    def row_seconds(self) -> float:
        return sum(r.seconds for r in self.rows)

    @property
    def outside(self) -> float:
        """Seconds of the profiled run in no row: the executor's own work (argument
        handling, the machine's instructions between kernels) and the profiler's."""
        return self.total - self.row_seconds

    @property
    def measured_overhead_per_call(self) -> float:
        """(profiled - unprofiled) / calls: what profiling added per call (noisy)."""
        return (self.total - self.unprofiled) / self.calls if self.calls else 0.0

    # ------------------------------------------------------------ the tables
    def _extra(self, row: ProfileRow) -> dict[str, str]:
        gflops = row.gflops
        extra = {"shapes": row.shapes, "GFLOPS": f"{gflops:.2f}" if gflops is not None else "-"}
        if self.kernels:
            extra["ops"] = ", ".join(row.ops)
        return extra

    def table(self) -> str:
        headers = ("ops", "shapes", "GFLOPS") if self.kernels else ("shapes", "GFLOPS")
        rows = [TimingRow(r.name, r.calls, r.seconds, self._extra(r)) for r in self.rows]
        return timing_table(rows, name_header="kernel" if self.kernels else "op",
                            extra_headers=headers, total=self.total, footer=self.footer())

    def summary(self) -> str:
        """Time per op kind (op name; an LLVM kernel counts for its anchor op)."""
        kinds: dict[str, list[float]] = {}
        for r in self.rows:
            k = kinds.setdefault(r.kind or r.name, [0, 0.0, 0.0])
            k[0] += r.calls
            k[1] += r.seconds
            k[2] += r.flops * r.calls
        rows = [TimingRow(name, int(c), s, {"GFLOPS": f"{f / s / 1e9:.2f}" if f and s > 0
                                             else "-"})
                for name, (c, s, f) in kinds.items()]
        return timing_table(rows, name_header="op kind", extra_headers=("GFLOPS",),
                            total=self.total)

    def footer(self) -> list[str]:
        runs = f" ({self.repeat} runs)" if self.repeat > 1 else ""
        share = 100.0 * self.outside / self.total if self.total > 0 else 0.0
        measured = (f"measured: {self.total * 1e3:.3f} ms for @{self.entry} profiled{runs} "
                    f"({self.backend}), {self.unprofiled * 1e3:.3f} ms unprofiled (best run"
                    f"{' x ' + str(self.repeat) if self.repeat > 1 else ''}): profiling "
                    f"added {self.measured_overhead_per_call * 1e6:.2f} us per call")
        overhead = (f"overhead: {self.outside * 1e3:.3f} ms ({share:.1f}%) of the run is in "
                    "no row (the executor's own work and the profiler's); timing a call "
                    f"costs {self.overhead_per_call * 1e6:.2f} us (calibrated), "
                    f"{self.overhead_per_call * self.calls * 1e3:.3f} ms for {self.calls} "
                    "calls")
        lines = [measured, overhead]
        return lines + list(self.notes)

    def text(self) -> str:
        """The table, then the summary per op kind."""
        return self.table() + "\n" + self.summary()

    def __str__(self) -> str:
        return self.text()

    def __repr__(self) -> str:
        return (f"<Profile of @{self.entry} ({self.backend}): {len(self.rows)} rows, "
                f"{self.calls} calls, {self.total * 1e3:.3f} ms>")

    # ------------------------------------------------------------ the trace
    def trace(self) -> dict[str, Any]:
        """The Chrome trace event format (JSON object form)."""
        return {"traceEvents": self.events, "displayTimeUnit": "ms",
                "otherData": {"backend": self.backend, "entry": self.entry,
                              "note": "a kernel split over the native pool's threads is "
                                      "one event on the calling thread"}}

    def to_chrome_trace(self, path: str) -> None:
        """`write_trace` by DESIGN.md's name."""
        self.write_trace(path)

    def write_trace(self, path: str) -> None:
        """Write the trace to `path` (ProfileError when it cannot be written, or when
        the profile kept no events: `profile(..., trace=...)` or `keep_events=True`)."""
        if not self.traced:
            raise ProfileError("this profile kept only sums, not the calls: profile with "
                               "trace= or keep_events=True to write a trace")
        try:
            with open(path, "w", encoding="utf-8") as f:
                json.dump(self.trace(), f)
        except OSError as e:
            raise ProfileError(f"cannot write the trace to {path}: "
                               f"{e.strerror or e}") from e


# ---------------------------------------------------------------- recording

class _Recorder:
    """Where the timed wrappers put their calls. Keeping events (`keep`, for a trace):
    `records`, (site, start, end[, shapes or argument key, output shape]) per call in
    order; else `totals`, [calls, seconds] per (site[, shapes or key, output shape]),
    so that a long loop's profile takes no memory per call. `tid`: the thread."""

    def __init__(self, clock: Callable[[], float], keep: bool = True):
        self.clock = clock
        self.keep = keep
        self.records: list[tuple] = []
        self.totals: dict[tuple, list] = {}
        self.tid = threading.get_native_id()

    def reset(self) -> None:
        """Forget the calls so far (a warm-up run's); the wrappers stay valid."""
        del self.records[:]
        for acc in self.totals.values():
            acc[0], acc[1] = 0, 0.0


@dataclass(frozen=True)
class _Site:
    """Where timed calls come from: one op call node, a plan step, a primitive function."""

    name: str
    ops: tuple[str, ...]
    kind: str
    shapes: str = ""                # static ones; "" when known per call only
    flops: int = 0
    attrs: Any = None               # for FLOPs per call (dynamic shapes)
    runner: Any = None              # mixed mode: (PrimitiveKernels, function)


def _timed(kernel: Callable, site: _Site, recorder: _Recorder) -> Callable:
    """The timed kernel of an op call of static shapes."""
    clock = recorder.clock
    if recorder.keep:
        append = recorder.records.append

        def timed(args: list, attrs: Any) -> Any:
            start = clock()
            out = kernel(args, attrs)
            append((site, start, clock()))
            return out
        return timed
    acc = recorder.totals.setdefault((site,), [0, 0.0])

    def summed(args: list, attrs: Any) -> Any:
        start = clock()
        out = kernel(args, attrs)
        end = clock()
        acc[0] += 1
        acc[1] += end - start
        return out
    return summed


def _timed_shapes(kernel: Callable, site: _Site, recorder: _Recorder) -> Callable:
    """The timed kernel of an op call whose shapes are known only when it runs."""
    clock = recorder.clock
    if recorder.keep:
        append = recorder.records.append

        def timed(args: list, attrs: Any) -> Any:
            shapes = tuple(_value_shape(a) for a in args)
            start = clock()
            out = kernel(args, attrs)
            end = clock()
            append((site, start, end, shapes, _value_shape(out)))
            return out
        return timed
    totals = recorder.totals

    def summed(args: list, attrs: Any) -> Any:
        shapes = tuple(_value_shape(a) for a in args)
        start = clock()
        out = kernel(args, attrs)
        end = clock()
        key = (site, shapes, _value_shape(out))
        acc = totals.get(key)
        if acc is None:
            acc = totals[key] = [0, 0.0]
        acc[0] += 1
        acc[1] += end - start
        return out
    return summed


def _timing_compiler(recorder: _Recorder) -> Any:
    """An interpreter compiler whose op instructions call timed kernels."""
    from .interpreter.compiler import FAIL, Compiler

    class TimingCompiler(Compiler):
        def _op_instruction(self, op: Any, node: Any) -> tuple:
            ins = super()._op_instruction(op, node)
            if ins[0] == FAIL:
                return ins
            name = op.name
            inputs = [_type_shape(a.checked_type) for a in node.args]
            out = _type_shape(node.checked_type)
            if out is None or any(s is None for s in inputs):
                site = _Site(name, (name,), name, attrs=node.attrs)
                kernel = _timed_shapes(ins[1], site, recorder)
            else:
                site = _Site(name, (name,), name, shapes_text(inputs, out),
                             call_flops(name, node.attrs, inputs, out))
                kernel = _timed(ins[1], site, recorder)
            return (ins[0], kernel) + ins[2:]

    return TimingCompiler()


def _timed_primitive(hook: Callable, recorder: _Recorder, kernels: Any) -> Callable:
    """A mixed-mode `primitive` hook whose runners are timed (per call: the argument
    types, which pick the kernel)."""
    from .native.kernels import is_static_function, op_names
    from .native.mixed import _value_key

    def timed_hook(fn: Any) -> Callable:
        ops = tuple(op_names(fn))
        site = _Site("", ops, _anchor(ops), flops=function_flops(fn)
                     if is_static_function(fn) else 0, runner=(kernels, fn))
        return _timed_runner(hook(fn), site, recorder, _value_key)

    return timed_hook


def _timed_runner(run: Callable, site: _Site, recorder: _Recorder,
                  key_of: Callable) -> Callable:
    """A mixed-mode runner, timed; the arguments' types (`key_of`), which chose the
    kernel, are kept with each call."""
    clock = recorder.clock
    if recorder.keep:
        append = recorder.records.append

        def timed(args: list) -> Any:
            key = key_of(args)
            start = clock()
            out = run(args)
            append((site, start, clock(), key, None))
            return out
        return timed
    totals = recorder.totals

    def summed(args: list) -> Any:
        key = (site, key_of(args), None)
        start = clock()
        out = run(args)
        end = clock()
        acc = totals.get(key)
        if acc is None:
            acc = totals[key] = [0, 0.0]
        acc[0] += 1
        acc[1] += end - start
        return out
    return summed


def _calibrate_runner_wrapper(keep: bool) -> float:
    """`_calibrate_kernel_wrapper` for mixed mode's timed runners (on two small
    tensors: the argument key is part of the cost)."""
    import numpy as np

    from .native.mixed import _value_key
    site = _Site("calibration", (), "")
    recorder = _Recorder(time.perf_counter, keep)
    args = [np.zeros((4, 4), np.float32), np.zeros((4,), np.float32)]
    return _calibrate(lambda k: _timed_runner(k, site, recorder, _value_key),
                      lambda f: f(args))


def _anchor(ops: Sequence[str]) -> str:
    """A kernel's op kind: its conv/dense/matmul op, its only op, else its ops joined."""
    heavy = [op for op in ops if op in FLOP_OPS]
    if heavy:
        return heavy[0]
    if len(ops) == 1:
        return ops[0]
    return "+".join(ops) if ops else "copy"


# ---------------------------------------------------------------- calibration

def _calibrate(make: Callable[[Callable], Callable], call: Callable[[Callable], None],
               n: int = 2000) -> float:
    """Seconds one timed call costs more than the same untimed call: `make(kernel)` is
    the timed wrapper of an empty kernel; the best of seven loops of each."""
    def empty(*args: Any) -> None:
        return None
    timed = make(empty)
    clock = time.perf_counter
    plain = wrapped = float("inf")
    for _ in range(7):
        start = clock()
        for _ in range(n):
            call(empty)
        middle = clock()
        for _ in range(n):
            call(timed)
        end = clock()
        plain, wrapped = min(plain, middle - start), min(wrapped, end - middle)
    return max(0.0, (wrapped - plain) / n)


def _calibrate_kernel_wrapper(keep: bool) -> float:
    """The cost of the interpreter's timed kernel (`_timed`) over the kernel."""
    site = _Site("calibration", (), "")
    recorder = _Recorder(time.perf_counter, keep)
    args: list = [None]
    return _calibrate(lambda k: _timed(k, site, recorder), lambda f: f(args, None))


def _calibrate_step_timing() -> float:
    """A plan step's timing in `run_profiled`: two clock reads and one record call."""
    sink: list = []

    def record(index: int, start: float, end: float) -> None:
        sink.append((index, start, end))

    clock = time.perf_counter

    def make(kernel: Callable) -> Callable:
        def step() -> None:
            start = clock()
            kernel()
            record(0, start, clock())
        return step
    return _calibrate(make, lambda f: f())


# ---------------------------------------------------------------- running

def profile(mod_or_lib: Any, *args: Any, entry: str | None = None, target: str | None = None,
            params: Any = None, trace: str | None = None, repeat: int = 1,
            show: bool = True, max_depth: int | None = None, warmup: int = 1,
            keep_events: bool = False) -> Profile:
    """Profile a run of `@entry` of `mod_or_lib` on `args`; print the table (`show`).

    `mod_or_lib` is an IRModule or Function (`entry` default "main") run by the
    interpreter (`target="interp"`, the default) or built here by `rl.build`
    (`target="llvm"`), or a `Library` (`entry` default: the library's). `params` are
    bound to the entry's parameters of those names first. `trace` writes the Chrome trace there; the calls'
    events are kept for it (or with `keep_events`), else only their sums (no memory per
    call). `repeat` profiled runs are added up (calls too). Returns the `Profile` (its
    `result` is the run's value)."""
    from ..ir.expr import Function
    from ..ir.module import IRModule
    from .native.library import Library
    if repeat < 1:
        raise ValueError(f"repeat must be at least 1, not {repeat}")
    keep = keep_events or trace is not None
    if isinstance(mod_or_lib, Function):
        mod_or_lib = IRModule.from_expr(mod_or_lib)
    if isinstance(mod_or_lib, IRModule):
        mod = mod_or_lib
        entry = entry or "main"
        name = str(target).split()[0] if target and str(target).strip() else "interp"
        from .build import INTERPRETER_TARGETS, _check_target
        if name in INTERPRETER_TARGETS:
            if params:
                from ..transform import BindParams
                mod = BindParams(dict(params), entry=entry)(mod)
            prof = _profile_interpreter(mod, list(args), entry, repeat, max_depth, warmup,
                                        keep)
        else:
            _check_target(name)
            from .build import build
            lib = build(mod, target=name, params=params, entry=entry, max_depth=max_depth)
            prof = _profile_library(lib, list(args), entry, repeat, warmup, keep)
    elif isinstance(mod_or_lib, Library):
        if target is not None and str(target).split()[:1] != ["llvm"]:
            raise ValueError(f"a library runs natively: target={target!r} does not apply")
        if params:
            raise ValueError("a library's parameters were bound when it was built; "
                             "params= does not apply")
        prof = _profile_library(mod_or_lib, list(args), entry or mod_or_lib.entry, repeat,
                                warmup,
                                keep)
    else:
        raise TypeError(f"rl.profile expects an IRModule, a Function or a library from "
                        f"rl.build, not {type(mod_or_lib).__name__}")
    if trace is not None:
        prof.write_trace(str(trace))
    if show:
        print(prof.text(), end="")
    return prof


def _time_runs(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """Seconds of `repeat` runs unprofiled: `repeat` times the best of up to
    `_BEST_OF` runs (fewer when they take over `_BEST_OF_SECONDS` together)."""
    result, best, spent = None, float("inf"), 0.0
    for _ in range(_BEST_OF):
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        best, spent = min(best, seconds), spent + seconds
        if spent > _BEST_OF_SECONDS:
            break
    return best * repeat, result


_BEST_OF, _BEST_OF_SECONDS = 5, 0.25


def _profile_interpreter(mod: Any, args: list[Any], entry: str, repeat: int,
                         max_depth: int | None, warmup: int, keep: bool) -> Profile:
    from .interpreter.executor import Executor
    from .interpreter.machine import Interpreter
    executor = Executor(mod, entry, max_depth=max_depth)
    for _ in range(max(1, warmup)):                  # checks and converts the arguments
        result = executor(*args, entry=entry)
    fn = executor.mod[entry]
    ft = executor.mod.get_global_var(entry).checked_type
    from ..ir.types import FuncType
    from .interpreter.executor import convert_argument
    types = ft.arg_types if isinstance(ft, FuncType) else [None] * len(args)
    values = [convert_argument(a, t, f"argument %{p.name_hint} of @{entry}")
              for a, t, p in zip(args, types, fn.params)]
    plain = executor.interpreter
    unprofiled, _ = _time_runs(lambda: plain.apply(plain.global_closure(entry), values),
                               repeat)
    recorder = _Recorder(time.perf_counter, keep)
    machine = Interpreter(executor.mod, max_depth=max_depth,
                          compiler=_timing_compiler(recorder))
    machine._function_unit(fn)                      # compiled before the clock runs
    closure = machine.global_closure(entry)
    runs, result = _profiled_runs(lambda: machine.apply(closure, values), recorder, repeat,
                                  unprofiled / repeat)
    prof = _make_profile("interpreter", entry, recorder, runs, unprofiled,
                         _calibrate_kernel_wrapper(keep), repeat, kernels=False)
    prof.result = result
    return prof


def _profile_library(lib: Any, args: list[Any], entry: str, repeat: int,
                     warmup: int, keep: bool) -> Profile:
    from .native.kernels import flatten
    for _ in range(max(1, warmup)):
        result = lib[entry](*args)
    values = lib.check_arguments(entry, args)
    if lib.graph is not None and entry == lib.entry:
        graph = lib.graph
        flat = flatten(tuple(values))
        unprofiled, _ = _time_runs(lambda: graph.run(flat), repeat)
        recorder = _Recorder(time.perf_counter)
        plan = graph.plan
        sites = [_step_site(plan, step) for step in plan.steps]
        records = recorder.records

        def record(index: int, start: float, end: float) -> None:
            records.append((sites[index], start, end))
        runs, result = _profiled_runs(
            lambda: graph.run_profiled(flat, time.perf_counter, record), recorder, repeat,
            0.0)                           # the warm-up prepares run_profiled's state
        return _finish(_make_profile("llvm (graph mode)", entry, recorder, runs, unprofiled,
                                     _calibrate_step_timing(), repeat, kernels=True), result)
    notes: list[str] = []
    mixed = lib.mixed
    if lib.program is not None:
        if lib.program.module is None:
            return _profile_whole_program(lib, values, entry, repeat, result)
        mixed = lib.program._mixed_runtime()
        notes.append("program mode: the program is compiled whole, without kernel "
                     "boundaries; its kernels were profiled in mixed mode")
        for _ in range(max(1, warmup)):
            mixed.run(entry, values)
    assert mixed is not None
    unprofiled, _ = _time_runs(lambda: mixed.run(entry, values), repeat)
    from .interpreter.machine import Interpreter
    recorder = _Recorder(time.perf_counter, keep)
    machine = Interpreter(mixed.mod, max_depth=mixed.interpreter.max_depth,
                          primitive=_timed_primitive(mixed.kernels.hook, recorder,
                                                     mixed.kernels),
                          compiler=_timing_compiler(recorder))
    closure = machine.global_closure(entry)
    machine._function_unit(closure.function)        # compiled before the clock runs
    runs, result = _profiled_runs(lambda: machine.apply(closure, values), recorder, repeat,
                                  unprofiled / repeat)
    prof = _make_profile("llvm (mixed mode)", entry, recorder, runs, unprofiled,
                         _calibrate_runner_wrapper(keep), repeat, kernels=True)
    prof.notes.extend(notes)
    return _finish(prof, result)


# A run shorter than this is first run once profiled, unrecorded: the timing machine's
# code (blocks compiled on first use) and the timed kernels' set-up are then not counted.
_WARM_PROFILED_SECONDS = 0.5


def _profiled_runs(run: Callable[[], Any], recorder: _Recorder, repeat: int,
                   seconds: float) -> tuple[list[tuple[float, float]], Any]:
    """(start, end) of each of `repeat` profiled runs and the last one's result; a run
    of `seconds` (unprofiled) under `_WARM_PROFILED_SECONDS` is warmed up first."""
    if seconds < _WARM_PROFILED_SECONDS:
        run()
        recorder.reset()
    runs: list[tuple[float, float]] = []
    result = None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        runs.append((start, time.perf_counter()))
    return runs, result


def _finish(prof: Profile, result: Any) -> Profile:
    prof.result = result
    return prof


def _profile_whole_program(lib: Any, values: list[Any], entry: str, repeat: int,
                           result: Any) -> Profile:
    """A loaded program library: one row, the whole native call."""
    unprofiled, _ = _time_runs(lambda: lib.program.run(entry, values), repeat)
    recorder = _Recorder(time.perf_counter)
    site = _Site(f"@{entry}", ("native program",), f"@{entry}")
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = lib.program.run(entry, values)
        end = time.perf_counter()
        recorder.records.append((site, start, end))
        runs.append((start, end))
    prof = _make_profile("llvm (program mode)", entry, recorder, runs, unprofiled,
                         0.0, repeat, kernels=True)
    prof.notes.append("program mode, loaded from a file: the program is compiled whole, "
                      "without kernel boundaries, so it is one row")
    return _finish(prof, result)


def _step_site(plan: Any, step: Any) -> _Site:
    from .native.plan import leaves
    inputs = [plan.values[v].shape for v in leaves(step.inputs)]
    outputs = [plan.values[v].shape for v in step.outputs]
    out: Any = outputs[0] if len(outputs) == 1 else _Tuple(outputs)
    name = step.kernel if step.native else f"{step.kernel} (NumPy)"
    return _Site(name, tuple(step.ops), _anchor(step.ops), shapes_text(inputs, out),
                 int(getattr(step, "flops", 0) or 0))


def _mixed_row(site: _Site, key: Any) -> tuple[str, str, int]:
    """Name, shapes and FLOPs of a mixed-mode kernel call with argument key `key`."""
    kernels, fn = site.runner
    runner = kernels._runners.get((id(fn), key))
    name = getattr(runner, "name", None)
    if name is None:
        name = "fallback " + "+".join(site.ops) + " (NumPy)"
    shapes = ", ".join(_key_text(k) for k in key)
    if runner is not None and getattr(runner, "result_type", None) is not None:
        shapes += " -> " + shape_text(_type_shape(runner.result_type))
    return name, shapes, site.flops


def _key_text(key: Any) -> str:
    if isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], tuple) and \
            isinstance(key[1], str):
        return shape_text(key[0])
    if isinstance(key, tuple):
        return "(" + ", ".join(_key_text(k) for k in key) + ")"
    return str(key)


def _make_profile(backend: str, entry: str, recorder: _Recorder,
                  runs: list[tuple[float, float]], unprofiled: float, per_call: float,
                  repeat: int, kernels: bool) -> Profile:
    rows: dict[tuple, ProfileRow] = {}
    pid, tid = os.getpid(), recorder.tid
    base = runs[0][0] if runs else 0.0
    meta: list[dict[str, Any]] = [
        {"name": "process_name", "ph": "M", "ts": 0, "dur": 0, "pid": pid, "tid": tid,
         "args": {"name": f"relaylang profile of @{entry} ({backend})"}},
        {"name": "thread_name", "ph": "M", "ts": 0, "dur": 0, "pid": pid, "tid": tid,
         "args": {"name": "calling thread"}},
    ]
    events: list[dict[str, Any]] = []
    for i, (start, end) in enumerate(runs):
        events.append({"name": f"@{entry}", "cat": "run", "ph": "X",
                       "ts": (start - base) * 1e6, "dur": (end - start) * 1e6, "pid": pid,
                       "tid": tid, "args": {"run": i, "backend": backend}})
    described: dict[tuple, tuple[ProfileRow, dict[str, Any]]] = {}

    def row_of(key: tuple) -> tuple[ProfileRow, dict[str, Any]]:
        """The row of a (site[, shapes or argument key, output shape]) and its events'
        args; made once per key."""
        found = described.get(key)
        if found is not None:
            return found
        site = key[0]
        if len(key) == 1:
            name, shapes, flops = site.name, site.shapes, site.flops
        elif site.runner is not None:
            name, shapes, flops = _mixed_row(site, key[1])
        else:
            name, shapes = site.name, shapes_text(key[1], key[2])
            flops = call_flops(site.name, site.attrs, key[1], key[2])
        row = rows.get((name, shapes))
        if row is None:
            row = rows[(name, shapes)] = ProfileRow(name, site.ops, shapes, flops=flops,
                                                    kind=site.kind)
        args: dict[str, Any] = {"ops": ", ".join(site.ops), "shapes": shapes}
        if flops:
            args["flops"] = flops
        described[key] = (row, args)
        return row, args

    category = "kernel" if kernels else "op"
    for rec in recorder.records:
        start, end = rec[1], rec[2]
        row, args = row_of((rec[0],) if len(rec) == 3 else (rec[0], rec[3], rec[4]))
        row.calls += 1
        row.seconds += end - start
        events.append({"name": row.name, "cat": category, "ph": "X",
                       "ts": (start - base) * 1e6, "dur": (end - start) * 1e6,
                       "pid": pid, "tid": tid, "args": args})
    for key, (calls, seconds) in recorder.totals.items():
        if calls:
            row, _ = row_of(key)
            row.calls += calls
            row.seconds += seconds
    # per thread, by start; an enclosing event (longer) before those it holds
    events.sort(key=lambda e: (e["tid"], e["ts"], -e["dur"]))
    events = meta + events
    total = sum(end - start for start, end in runs)
    ordered = sorted(rows.values(), key=lambda r: -r.seconds)
    return Profile(backend, entry, ordered, total, unprofiled, per_call, repeat,
                   events=events, kernels=kernels, traced=recorder.keep)


__all__ = ["FLOP_OPS", "Profile", "ProfileError", "ProfileRow", "call_flops",
           "function_flops", "node_flops", "profile", "shape_text"]
