"""`relay build FILE`: compile a program with the LLVM backend (TVM's `tvmc compile`).

    relay build model.relay --params model.npz -o model.rlib     # one-file library
    relay build model.relay -o model.ll --emit ll                # optimised LLVM IR
    relay build model.relay -o model.s --emit asm                # host assembly
    relay build model.relay -o model.o --emit obj                # object code
    relay build model.relay -o model.rlib --time --no-cache

The library runs with `relay run model.rlib` or `rl.runtime.load_module`. A program with
control flow is compiled whole when it is first-order over tensors (`if`, recursion
through globals); otherwise it runs in mixed mode and a note on stderr says why. Ops without a
native lowering are named in a warning (they run with their NumPy kernels); `--time`
prints the seconds of each phase (parse, types, passes, lowering, LLVM optimisation,
codegen) on stderr. Bad input is a located diagnostic and exit status 1.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, color, error, read, source_name

EMITS = ("lib", "ll", "asm", "obj")


def cmd_build(args: argparse.Namespace) -> int:
    from ..backend.build import BuildTimer, build
    from ..backend.params import InputSourceError, load_params
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    from ..transform import BindParams, BindParamsError
    from .run import warn_fallback
    timer = BuildTimer(detailed=args.time)
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
    try:
        lib = build(mod, target="llvm", cache=not args.no_cache, entry=args.entry,
                    timer=timer)
    except DiagnosticError as e:
        print(e.render(color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    warn_fallback(args.file, lib)
    if lib.mode == "mixed" and lib.mixed_reason:
        print(f"{args.file}: note: the control flow runs on the interpreter's machine "
              f"(mixed mode): {lib.mixed_reason}", file=sys.stderr)
    start = time.perf_counter()
    status = _emit(args, lib)
    timer.add("write", time.perf_counter() - start)
    if args.time:
        for phase, seconds in timer.phases.items():
            print(f"time: {phase:<32} {seconds * 1e3:10.3f} ms", file=sys.stderr)
        total = sum(timer.phases.values())
        print(f"time: {'total':<32} {total * 1e3:10.3f} ms", file=sys.stderr)
    return status


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
                   help="print the time of each phase on stderr")
    p.set_defaults(run=cmd_build)
