"""`relay build FILE`: compile a program with the LLVM backend (TVM's `tvmc compile`).

    relay build model.relay --params model.npz -o model.rlib     # one-file library
    relay build model.relay -o model.ll --emit ll                # optimised LLVM IR
    relay build model.relay -o model.s --emit asm                # host assembly
    relay build model.relay -o model.o --emit obj                # object code
    relay build model.relay -o model.rlib --time --no-cache
    relay build model.relay -o model.rlib --knob schedule.tile_bytes=128 --show-schedule
    relay build model.relay -o model.rlib --byoc blas         # regions run by a BYOC target

The library runs with `relay run model.rlib` or `rl.runtime.load_module`. A program with
control flow is compiled whole when it is first-order over tensors (`if`, recursion
through globals); otherwise it runs in mixed mode and a note on stderr says why. Ops without a
native lowering are named in a warning (they run with their NumPy kernels); `--time`
prints the time of each phase (parse, types, passes, lowering, LLVM optimisation,
codegen) on stderr as the profiler's table (`relaylang.ir.timing`), then the passes of the
"passes" phase in a table of their own. `--knob` sets a scheduling knob for every kernel
that has it (`relaylang/backend/llvm/knobs.py`); `--show-schedule` lists each kernel's. On a terminal, lowering
many kernels shows a progress bar; `--quiet` hides it. `--byoc NAME[,NAME]` partitions
the module for those external targets first (`rl.build(byoc=...)`): an unknown name is an
error listing the targets with a codegen, a codegen that fails is a diagnostic at the
partitioned function, and the partitioning's notes (a pattern that matched nothing) are
printed. Bad input is a located diagnostic and exit status 1.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from typing import Any

from .common import (
    EXIT_DIAGNOSTICS,
    EXIT_OK,
    add_quiet_flag,
    color,
    error,
    print_pass_notes,
    read,
    source_name,
)

EMITS = ("lib", "ll", "asm", "obj")


def cmd_build(args: argparse.Namespace) -> int:
    from ..backend.build import BuildTimer, build
    from ..backend.params import InputSourceError, load_params
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    from ..transform import BindParams, BindParamsError
    from .run import warn_fallback
    timer = _counting_timer(BuildTimer, detailed=args.time)
    start = time.perf_counter()
    text = read(args.file)
    if text is None:
        return EXIT_DIAGNOSTICS
    try:
        mod = parse(text, source_name=source_name(args.file))
    except DiagnosticError as e:
        print(e.render(color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    timer.add("parse", time.perf_counter() - start)
    if args.entry not in mod:
        names = ", ".join("@" + gv.name_hint for gv in mod.functions) or "none"
        error(args.file, f"the module has no function @{args.entry} (functions: {names})")
        return EXIT_DIAGNOSTICS
    if args.params is not None:
        start = time.perf_counter()
        try:
            mod = BindParams(load_params(args.params), entry=args.entry)(mod)
        except InputSourceError as e:
            error(e.path or args.params, e.message)
            return EXIT_DIAGNOSTICS
        except BindParamsError as e:
            error(args.params, str(e))
            return EXIT_DIAGNOSTICS
        timer.add("params", time.perf_counter() - start)
    from ..backend.llvm import knobs
    from ..backend.tuning.database import TuningDatabaseWarning
    from ..transform.instruments import PassTimingInstrument
    from ..transform.pass_infra import PassContext
    try:
        settings = knobs.Settings(every=knobs.parse_assignments(",".join(args.knob or ())))
    except ValueError as e:
        error("--knob", str(e))
        return EXIT_DIAGNOSTICS
    byoc = None
    if args.byoc:
        from ..backend.byoc.runner import check_targets
        try:
            byoc = check_targets(args.byoc)
        except ValueError as e:
            error("--byoc", str(e))
            return EXIT_DIAGNOSTICS
    passes = PassTimingInstrument()          # --time: the "passes" phase, pass by pass
    instruments = [passes] if args.time else []
    instruments += _pass_progress()
    try:
        with PassContext(instruments=instruments), knobs.using(settings), \
                warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TuningDatabaseWarning)
            lib = build(mod, target="llvm", cache=not args.no_cache, entry=args.entry,
                        timer=timer, tuning_db=args.tuning_db, byoc=byoc)
    except DiagnosticError as e:
        sources = e.sources or {source_name(args.file): text}
        print(DiagnosticError(e.diagnostics, sources).render(color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    print_pass_notes(args.file, text, lib.notes)
    for w in caught:        # a database that cannot be used: said, not a traceback
        if issubclass(w.category, TuningDatabaseWarning):
            print(f"{args.tuning_db}: warning: {w.message}", file=sys.stderr)
        else:
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    warn_fallback(args.file, lib)
    _warn_unasked(args.file, settings, lib)
    if args.show_schedule:
        sys.stderr.write(schedule_table(lib))
    if lib.mode == "mixed" and lib.mixed_reason:
        print(f"{args.file}: note: the control flow runs on the interpreter's machine "
              f"(mixed mode): {lib.mixed_reason}", file=sys.stderr)
    start = time.perf_counter()
    status = _emit(args, lib)
    timer.add("write", time.perf_counter() - start)
    if args.time:
        sys.stderr.write(phase_table(timer))
        if passes.timings:
            sys.stderr.write("\n" + passes.report())
    return status


def _warn_unasked(file: str, settings: Any, lib: Any) -> None:
    """A `--knob` no kernel asked for is most likely a typo: say so, with the names
    the kernels did ask for."""
    asked = {name for _, values in lib.kernel_schedules.values() for name in values}
    for name in sorted(set(settings.every) - asked):
        known = ", ".join(sorted(asked)) or "none"
        print(f"{file}: warning: no kernel has the knob {name} (knobs asked: {known})",
              file=sys.stderr)


def schedule_table(lib: Any) -> str:
    """One line per native kernel: its knob key and its knobs (`--show-schedule`)."""
    rows = sorted(lib.kernel_schedules.items())
    if not rows:
        return "no native kernel asked for scheduling knobs\n"
    width = max(len(name) for name, _ in rows)
    from ..backend.llvm.knobs import describe
    return "".join(f"{name:<{width}}  {key}  {describe(values)}\n"
                   for name, (key, values) in rows)


def _pass_progress() -> list[Any]:
    """A progress task over rl.build's -O3 passes when a tool draws progress, else none."""
    from ..ir import progress
    if not progress.active():
        return []
    from ..transform.instruments import PassProgress, planned_steps
    from ..transform.pass_infra import PassContext
    from ..transform.tvm_pipeline import default_pipeline
    return [PassProgress(planned_steps([default_pipeline(3)], PassContext(opt_level=3)))]


def _counting_timer(base: type, detailed: bool) -> Any:
    """A `BuildTimer` (`base`) that also counts how often each phase was added to."""
    class CountingTimer(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__(detailed=detailed)
            self.calls: dict[str, int] = {}

        def add(self, phase: str, seconds: float) -> None:
            super().add(phase, seconds)
            self.calls[phase] = self.calls.get(phase, 0) + 1
    return CountingTimer()


def phase_table(timer: Any) -> str:
    """`--time`: the build's phases as the timing table (`relaylang.ir.timing`) of the
    profiler and `relay opt --time-passes`."""
    from ..ir.timing import TimingRow, timing_table
    calls = getattr(timer, "calls", {})
    rows = [TimingRow(phase, calls.get(phase, 1), seconds)
            for phase, seconds in timer.phases.items()]
    return timing_table(rows, name_header="phase")


def _emit(args: argparse.Namespace, lib: Any) -> int:
    from pathlib import Path
    emit = args.emit or "lib"
    try:
        if emit == "lib":
            lib.export_library(args.output)
        elif lib.program is not None:        # one module: control code and kernels
            if emit == "obj":
                Path(args.output).write_bytes(lib.program.program.export()[0])
            else:
                Path(args.output).write_text(lib.get_source(emit), encoding="utf-8")
        elif emit in ("ll", "asm"):
            if not lib.modules:
                error(args.file, f"--emit {emit}: no op of this program has a native "
                                 "lowering, so there is no LLVM code")
                return EXIT_DIAGNOSTICS
            Path(args.output).write_text(lib.get_source(emit), encoding="utf-8")
        else:
            if not lib.modules:
                error(args.file, "--emit obj: no op of this program has a native lowering, "
                                 "so there is no object code")
                return EXIT_DIAGNOSTICS
            Path(args.output).write_bytes(lib.modules[0].object_code)
            for i, module in enumerate(lib.modules[1:], 1):
                Path(f"{args.output}.{i}").write_bytes(module.object_code)
    except OSError as e:
        error(args.output, f"cannot write file: {e.strerror or e}")
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def add_build_parser(sub: Any) -> None:
    p = sub.add_parser("build", help="compile a program to native code (LLVM backend)")
    p.add_argument("file", metavar="FILE", help="a .relay file")
    p.add_argument("-o", "--output", required=True, metavar="OUT",
                   help="the file to write: a library (.rlib), or what --emit names")
    p.add_argument("--params", metavar="P.npz",
                   help="arrays bound as constants to the parameters of their names")
    p.add_argument("--emit", choices=["ll", "asm", "obj"], default=None,
                   help="write the LLVM IR, the assembly or the object code instead of a "
                        "library")
    p.add_argument("--entry", default="main", help="the function to build (default: main)")
    p.add_argument("--no-cache", action="store_true",
                   help="compile every kernel anew (do not read or write the kernel cache)")
    p.add_argument("--time", action="store_true",
                   help="print the time of each phase on stderr (a table: calls, total "
                        "and mean ms, share, longest first)")
    p.add_argument("--knob", action="append", metavar="NAME=VALUE[,...]",
                   help="a scheduling knob's value for every kernel that has it, e.g. "
                        "schedule.tile_bytes=128 (a value outside a kernel's choices is "
                        "ignored there); repeatable")
    p.add_argument("--tuning-db", metavar="DB.json",
                   help="build the kernels `relay tune` tuned with their schedules (a "
                        "database from another CPU, or unreadable, is a warning)")
    p.add_argument("--show-schedule", action="store_true",
                   help="print each native kernel's scheduling knobs on stderr")
    p.add_argument("--byoc", metavar="NAME[,NAME]",
                   help="partition the regions these external targets take (e.g. blas, "
                        "onnxruntime) and run them with their codegens; the "
                        "partitioning's notes are printed on stderr")
    add_quiet_flag(p)
    p.set_defaults(run=cmd_build)
