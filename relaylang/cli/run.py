"""`relay run FILE|LIB`: run a function with the reference interpreter or natively.

    relay run FILE [--entry main] [--input NAME=FILE.npy] [--params FILE.npz] [--random-inputs]
             [--max-depth N] [--time] [--full] [--output FILE.npy] [--top-k K]
             [--target interp|llvm] [--profile] [--trace OUT.json]
    relay run LIB.rlib [same options but --params]     # a library from `relay build`

`--target llvm` builds the program with the LLVM backend (`rl.build`) and runs the
library; a library file (written by `relay build` / `lib.export_library`) runs as it is.

`--profile` runs it under the profiler (`relaylang/backend/profiler.py`) and prints,
after the result, where the time went: one row per op and shapes (interpreter) or per
kernel (LLVM), a summary per op kind and the profiler's measured overhead; `--trace
OUT.json` (implies --profile) also writes the calls as a Chrome trace for Perfetto. The
program then runs a few times (a warm-up, unprofiled for comparison, profiled).

The result is printed as NumPy prints it (tuples one leaf per line); every problem with
the inputs is one line `FILE: error: ...`, run-time errors point at the source.
"""
from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, color, parse_file, type_check

if TYPE_CHECKING:
    from ..ir.expr import Function
    from ..ir.module import IRModule


class _RunFailed(Exception):
    """A `relay run` step that failed; the message is printed as it is, exit status 1."""


def _fail(where: str, message: str) -> _RunFailed:
    return _RunFailed(f"{where}: error: {message}")


def _bind_params(args: argparse.Namespace, mod: IRModule) -> tuple[IRModule, set[str]]:
    """`mod` with the `--params` arrays bound into `@entry`, and the names bound."""
    from ..backend.params import InputSourceError, load_params
    from ..transform import BindParams, BindParamsError
    if not any(gv.name_hint == args.entry for gv in mod.functions):
        names = ", ".join("@" + gv.name_hint for gv in mod.functions) or "none"
        raise _fail(args.file, f"the module has no function @{args.entry} (functions: {names})")
    if args.params is None:
        return mod, set()
    try:
        params = load_params(args.params)
        return BindParams(params, entry=args.entry)(mod), set(params)
    except InputSourceError as e:
        raise _fail(e.path or args.params, e.message) from e
    except BindParamsError as e:
        raise _fail(args.params, str(e)) from e


def _expression_input(mod: IRModule, name: str, text: str, ty: Any) -> Any:
    """The value of `--input NAME=EXPR` for a parameter that is not a tensor (an ADT, a
    tuple): EXPR is Relay text read in the module (its constructors and globals), checked
    against the parameter's type and run. Errors are located in the text of the option."""
    from ..backend.interpreter.executor import create_executor
    from ..backend.interpreter.machine import InterpreterError
    from ..ir.diagnostics import Severity, render_all
    from ..ir.expr import Function, GlobalVar
    from ..syntax.parser import parse_in_module
    from ..typing import check_module
    source = f"--input {name}"
    sources = {**mod.sources, source: text}
    found = parse_in_module(text, mod, source, expression=True)
    diagnostics = found.diagnostics
    if found.expr is not None and not any(d.severity is Severity.ERROR for d in diagnostics):
        gv = GlobalVar(f"input_{name}")
        _typed, diagnostics = check_module(mod.with_function(gv, Function((), found.expr, ty)))
        if not any(d.severity is Severity.ERROR for d in diagnostics):
            try:
                return create_executor(_typed, gv.name_hint)()
            except InterpreterError as e:
                raise _fail(source, e.message) from e
    raise _RunFailed(render_all([d for d in diagnostics if d.severity is Severity.ERROR],
                                sources, color=color()))


def _given_inputs(args: argparse.Namespace, fn: Function, bound: set[str],
                  mod: IRModule) -> dict[int, Any]:
    """The `--input` values by parameter identity."""
    from ..backend.params import InputSourceError, input_value, split_input
    from ..ir.types import TensorType
    from ..transform.bind_params import find_param, param_names, param_type
    given: dict[int, Any] = {}
    for spec in args.input:
        try:
            name, text = split_input(spec)
            var = find_param(fn, name)
            if var is None:
                why = "bound by --params" if name in bound else "no such parameter"
                raise _fail(args.file, f"--input {name}: @{args.entry} has no parameter "
                                       f"%{name} ({why}; parameters: {param_names(fn)})")
            if id(var) in given:
                raise _fail(args.file, f"--input {name}: %{var.name_hint} is given twice")
            ty = param_type(var)
            if ty is not None and not isinstance(ty, TensorType) and \
                    not text.lower().endswith(".npy"):
                given[id(var)] = _expression_input(mod, name, text, ty)
            else:
                given[id(var)] = input_value(name, text, ty)
        except InputSourceError as e:
            raise _fail(e.path or args.file, e.message) from e
    return given


def _positive_params(fn: Function) -> set[int]:
    """The parameters (by identity) passed straight to an op input that must be positive
    (batch_norm's `moving_var`): --random-inputs draws them positive."""
    from ..backend.params import POSITIVE_INPUTS
    from ..ir.expr import Call, Op, Var
    from ..ir.traverse import post_order
    from ..op.registry import get_op_def
    params = {id(p) for p in fn.params}
    out: set[int] = set()
    for node in post_order(fn.body):
        if type(node) is Call and isinstance(node.op, Op):
            op_def = get_op_def(node.op.name)
            names = op_def.input_names if op_def is not None else ()
            for arg, input_name in zip(node.args, names):
                if type(arg) is Var and id(arg) in params and input_name in POSITIVE_INPUTS:
                    out.add(id(arg))
    return out


def _gather_inputs(args: argparse.Namespace, fn: Function, bound: set[str],
                   mod: IRModule) -> list[Any]:
    """One value per remaining parameter: given, random, or a one-line error per missing one."""
    import numpy as np

    from ..backend.params import InputSourceError, random_input
    from ..syntax.printer import astext
    from ..transform.bind_params import param_type
    given = _given_inputs(args, fn, bound, mod)
    positive = _positive_params(fn)
    rng = np.random.default_rng(args.seed)
    values: list[Any] = []
    missing: list[str] = []
    for var in fn.params:
        name, ty = var.name_hint, param_type(var)
        if id(var) in given:
            values.append(given[id(var)])
        elif args.random_inputs:
            where = str(var.span) if var.span is not None else args.file
            try:
                values.append(random_input(name, ty, rng, positive=id(var) in positive))
            except InputSourceError as e:
                raise _fail(where, e.message) from e
            except MemoryError as e:
                raise _fail(where, f"not enough memory for a random %{name}") from e
        else:
            missing.append(f"{args.file}: error: no input for %{name}: "
                           f"{astext(ty) if ty is not None else '_'} (give --input "
                           f"{name}=FILE.npy or {name}=LITERAL, or --random-inputs)")
    if missing:
        raise _RunFailed("\n".join(missing))
    return values


def _build_native(args: argparse.Namespace, typed: IRModule) -> Any:
    """`--target llvm`: the library of `typed` (params already bound), called like an
    executor; fallback ops are a warning."""
    from ..backend.build import NativeExecutor, build
    from ..ir.diagnostics import DiagnosticError
    try:
        lib = build(typed, target="llvm", entry=args.entry, max_depth=args.max_depth)
    except DiagnosticError as e:
        raise _RunFailed(e.render(color=color())) from e
    warn_fallback(args.file, lib)
    return NativeExecutor(lib)


def warn_fallback(path: str, lib: Any) -> None:
    """The ops of `lib` that run with their NumPy kernels, as a warning on stderr (with
    the core's reason where an op has a lowering that refused this use)."""
    ops = lib.fallback_ops
    if not ops:
        return
    reasons = lib.fallback_reasons
    named = ", ".join(f"{op} ({reasons[op]})" if op in reasons else op for op in ops)
    print(f"{path}: warning: {len(ops)} op(s) have no native lowering here and run with "
          f"their NumPy kernels: {named}", file=sys.stderr)


def _execute(args: argparse.Namespace, typed: IRModule | None, values: list[Any],
             executor: Any = None) -> Any:
    """Run `@entry` on `values`; run-time errors are rendered at their source location."""
    import time

    from ..backend.interpreter.executor import create_executor
    if getattr(args, "profile", False) or getattr(args, "trace", None):
        return _profiled(args, typed, values, executor)
    if executor is None:
        assert typed is not None
        executor = create_executor(typed, args.entry, max_depth=args.max_depth)
    start = time.perf_counter()
    with _run_failures(args, typed):
        result = executor(*values)
    if args.time:
        print(f"time: {(time.perf_counter() - start) * 1e3:.3f} ms", file=sys.stderr)
    return result


@contextlib.contextmanager
def _run_failures(args: argparse.Namespace, typed: IRModule | None) -> Iterator[None]:
    """Running `@entry` (plainly or under the profiler): bad inputs and exhausted memory
    or stack as one-line errors, a run-time error as a located diagnostic."""
    from ..backend.interpreter.executor import InputError
    from ..backend.interpreter.machine import InterpreterError
    from ..ir.diagnostics import Diagnostic, render
    try:
        yield
    except InputError as e:
        raise _fail(args.file, str(e)) from e
    except InterpreterError as e:
        diagnostic = Diagnostic.error(e.message, e.span, code="runtime")
        sources = typed.sources if typed is not None else {}
        raise _RunFailed(render(diagnostic, sources, color=color())) from e
    except (RecursionError, MemoryError) as e:
        what = f"ran out of memory or stack ({type(e).__name__})"
        raise _fail(args.file, f"@{args.entry} {what}") from e


def _profiled(args: argparse.Namespace, typed: IRModule | None, values: list[Any],
              executor: Any) -> Any:
    """`--profile` / `--trace`: run `@entry` under the profiler; its table is kept for
    `_report` (printed after the result)."""
    import os

    from ..backend.profiler import ProfileError, profile
    if args.trace:                  # before a long run: can the trace be written there?
        folder = os.path.dirname(os.path.abspath(args.trace))
        if os.path.isdir(args.trace) or not os.path.isdir(folder) or \
                not os.access(folder, os.W_OK) or \
                (os.path.exists(args.trace) and not os.access(args.trace, os.W_OK)):
            raise _fail(args.trace, "cannot write the trace file here (no such folder, "
                                    "not writable, or a folder)")
    target = executor.lib if executor is not None else typed
    with _run_failures(args, typed):
        try:
            prof = profile(target, *values, entry=args.entry, trace=args.trace, show=False,
                           max_depth=args.max_depth if executor is None else None)
        except ProfileError as e:
            raise _fail(args.trace, str(e)) from e
    if args.time:                       # the run's own time: unprofiled (the best run)
        print(f"time: {prof.unprofiled / prof.repeat * 1e3:.3f} ms", file=sys.stderr)
    args.profile_text = prof.text()
    return prof.result


def _result_text(value: Any, full: bool) -> str:
    """Tensors as NumPy prints them, tuples one leaf per line (`[1][0] = ...`), others by repr."""
    import numpy as np
    threshold = sys.maxsize if full else 1000
    lines: list[str] = []
    stack: list[tuple[str, Any]] = [("", value)]
    while stack:                       # tuples nest; walk them without recursion
        path, item = stack.pop()
        if isinstance(item, tuple) and item:
            stack.extend((f"{path}[{i}]", f) for i, f in reversed(list(enumerate(item))))
            continue
        prefix = f"{path} = " if path else ""
        if isinstance(item, (np.ndarray, np.generic)):
            shown = np.asarray(item)
            if shown.dtype.kind == "V":         # a carrier (bfloat16, float8, ...): its values
                from ..op.numpy_support import widen
                shown = widen(shown)
            text = np.array2string(shown, threshold=threshold, prefix=prefix)
        else:
            text = repr(item)
        lines.append(prefix + text)
    return "\n".join(lines)


def _has_nan(value: Any) -> bool:
    """Whether a tensor of the result (tuples walked without recursion) holds a NaN."""
    import numpy as np
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, tuple):
            stack.extend(item)
        elif isinstance(item, (np.ndarray, np.generic)) and item.dtype.kind == "V":
            from ..op.numpy_support import widen
            wide = widen(item)
            if wide.dtype.kind == "f" and bool(np.isnan(wide).any()):
                return True
        elif isinstance(item, (np.ndarray, np.generic)) and item.dtype.kind in "fc" and \
                bool(np.isnan(item).any()):
            return True
    return False


def _save_output(args: argparse.Namespace, result: Any) -> None:
    import numpy as np
    if not isinstance(result, (np.ndarray, np.generic)):
        kind = f"a tuple of {len(result)} values" if isinstance(result, tuple) else repr(result)
        raise _fail(args.output, f"--output needs a tensor result; @{args.entry} returned "
                                 f"{kind if len(kind) <= 60 else kind[:57] + '...'}")
    try:
        with open(args.output, "wb") as f:
            np.save(f, np.asarray(result))
    except OSError as e:
        raise _fail(args.output, f"cannot write file: {e.strerror or e}") from e


def _top_k_text(result: Any, k: int, path: str) -> str:
    """The k largest entries along the last axis of each row: a classifier's answer."""
    import numpy as np
    if not isinstance(result, np.ndarray) or result.ndim == 0:
        raise _fail(path, "--top-k needs a tensor result with at least one axis")
    if result.dtype.kind == "V":                # a carrier (bfloat16, float8, ...): its values
        from ..op.numpy_support import widen
        result = widen(result)
    rows = result.reshape(-1, result.shape[-1])
    lines = []
    for r, row in enumerate(rows):
        best = np.argsort(-row, kind="stable")[:k]
        ranked = ", ".join(f"{int(i)} ({row[i].item():.6g})" for i in best)
        prefix = f"row {r}: " if len(rows) > 1 else ""
        lines.append(f"{prefix}top-{min(k, row.size)}: {ranked}")
    return "\n".join(lines)


def _is_library(path: str) -> bool:
    """Whether `path` is a library file (a zip archive), not Relay text."""
    if path.endswith(".rlib"):
        return True
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"PK\x03\x04"
    except OSError:
        return False


def _run_library(args: argparse.Namespace) -> int:
    """`relay run LIB`: load an exported library and run its entry."""
    from ..backend.build import NativeExecutor
    from ..backend.runtime import load_module
    from ..ir.expr import Function, Tuple, Var
    try:
        from ..backend.native.library_file import LibraryLoadError
        try:
            lib = load_module(args.file)
        except LibraryLoadError as e:
            raise _RunFailed(f"{args.file}: error: {str(e).removeprefix(args.file + ': ')}") \
                from e
        if args.params is not None:
            raise _fail(args.params, "a library's parameters were bound when it was built "
                                     "(relay build --params); --params does not apply")
        try:
            params = lib.entry_params(args.entry)
        except KeyError as e:
            raise _fail(args.file, f"the library has no function @{args.entry}") from e
        fn = Function(tuple(Var(n, t) for n, t in params), Tuple(()))
        mod = lib.mixed.mod if lib.mixed is not None else None
        values = _gather_inputs(args, fn, set(), mod)  # type: ignore[arg-type]
        result = _execute(args, mod, values, NativeExecutor(lib))
        _report(args, result)
    except _RunFailed as e:
        print(e, file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _report(args: argparse.Namespace, result: Any) -> None:
    print(_result_text(result, args.full))
    if args.random_inputs and _has_nan(result):
        print(f"{args.file}: warning: the result contains NaN (a random input outside "
              "an op's domain? give that parameter with --input)", file=sys.stderr)
    if args.top_k:
        print(_top_k_text(result, args.top_k, args.file))
    if args.output is not None:
        _save_output(args, result)
    if getattr(args, "profile_text", None):
        print("\n" + args.profile_text, end="")


def cmd_run(args: argparse.Namespace) -> int:
    from ..ir.expr import Function
    if _is_library(args.file):
        return _run_library(args)
    mod = parse_file(args.file)
    if mod is None:
        return EXIT_DIAGNOSTICS
    try:
        mod, bound = _bind_params(args, mod)
        typed = type_check(mod)
        if typed is None:
            return EXIT_DIAGNOSTICS
        fn = typed[args.entry]
        assert isinstance(fn, Function)
        values = _gather_inputs(args, fn, bound, typed)
        executor = _build_native(args, typed) if args.target == "llvm" else None
        result = _execute(args, typed, values, executor)
        _report(args, result)
    except _RunFailed as e:
        print(e, file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, not {text!r}")
    return value


def add_run_parser(sub: Any) -> None:
    p = sub.add_parser("run", help="run a function with the interpreter or natively")
    p.add_argument("file", metavar="FILE", help="a .relay file, or a library from relay build")
    p.add_argument("--entry", default="main", help="the function to run (default: main)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter's value: NAME=FILE.npy, or a literal (NAME=3, "
                        "NAME=2.5, NAME=[1,2,3]) converted to its dtype; for an ADT or "
                        "tuple parameter a Relay expression (NAME='Cons(1f, Nil)'); "
                        "repeatable")
    p.add_argument("--params", metavar="FILE.npz",
                   help="arrays bound as constants to the parameters of their names")
    p.add_argument("--random-inputs", action="store_true",
                   help="fill tensor parameters without --input with random values")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-inputs (default: 0)")
    p.add_argument("--max-depth", type=_positive_int, default=None, metavar="N",
                   help="stop with 'recursion too deep' when more than N calls are pending "
                        "(default: sized to the machine's memory, millions)")
    p.add_argument("--time", action="store_true", help="print the run's wall time on stderr")
    p.add_argument("--full", action="store_true", help="print arrays in full, not summarised")
    p.add_argument("--output", metavar="FILE.npy", help="also save the (tensor) result")
    p.add_argument("--top-k", type=int, default=0, metavar="K",
                   help="also print the K largest entries of the result's last axis, with "
                        "their indices (a classifier's predicted classes)")
    p.add_argument("--profile", action="store_true",
                   help="run under the profiler and print where the time went: per op "
                        "(interpreter) or kernel (llvm), with GFLOPS and the overhead")
    p.add_argument("--trace", metavar="OUT.json",
                   help="with the profiler, write the calls as a Chrome trace (Perfetto, "
                        "chrome://tracing); implies --profile")
    p.add_argument("--target", choices=["interp", "llvm"], default="interp",
                   help="what runs the program: the reference interpreter (default) or "
                        "native code from the LLVM backend")
    p.set_defaults(run=cmd_run)
