"""The `relay` command (DESIGN.md "The command line").

Exit status: 0 success, 1 diagnostics reported, 2 usage error. Subcommands
import what they need when they run, so `relay --help` stays fast.
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Sequence

if TYPE_CHECKING:
    from .ir.expr import Function
    from .ir.module import IRModule

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


def _read(path: str) -> str | None:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        print(f"{path}: error: cannot read file: {reason}", file=sys.stderr)
        return None


def _color() -> bool:
    return sys.stderr.isatty()


def _expand(paths: Sequence[str]) -> list[str]:
    """Files as given; directories become the `.relay` files inside them."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            out.extend(str(f) for f in sorted(path.rglob("*.relay")))
        else:
            out.append(p)
    return out


def _parse_file(path: str) -> IRModule | None:
    """The module in `path`, or None after printing why it cannot be had."""
    from .ir.diagnostics import DiagnosticError
    from .syntax.parser import parse
    text = _read(path)
    if text is None:
        return None
    try:
        return parse(text, source_name=path)
    except DiagnosticError as e:
        print(e.render(color=_color()), file=sys.stderr)
        return None


def cmd_parse(args: argparse.Namespace) -> int:
    status = EXIT_OK
    for path in _expand(args.files):
        if _parse_file(path) is None:
            status = EXIT_DIAGNOSTICS
    return status


def cmd_check(args: argparse.Namespace) -> int:
    from .ir.diagnostics import Severity, render_all
    from .syntax.printer import astext
    from .typing import check_module
    status = EXIT_OK
    for path in _expand(args.files):
        mod = _parse_file(path)
        if mod is None:
            status = EXIT_DIAGNOSTICS
            continue
        typed, diagnostics = check_module(mod)
        if diagnostics:
            print(render_all(diagnostics, mod.sources, color=_color()), file=sys.stderr)
        if any(d.severity is Severity.ERROR for d in diagnostics):
            status = EXIT_DIAGNOSTICS
            continue
        for gv in sorted(typed.functions, key=lambda g: g.name_hint):
            print(f"{path}: @{gv.name_hint}: {astext(gv.checked_type)}")
    return status


def cmd_fmt(args: argparse.Namespace) -> int:
    from .ir.diagnostics import DiagnosticError
    from .syntax.format import format_text
    status = EXIT_OK
    for path in _expand(args.files):
        text = _read(path)
        if text is None:
            status = EXIT_DIAGNOSTICS
            continue
        try:
            formatted = format_text(text, source_name=path)
        except DiagnosticError as e:
            print(e.render(color=_color()), file=sys.stderr)
            status = EXIT_DIAGNOSTICS
            continue
        if formatted.dropped_comments:
            print(f"{path}: warning: {formatted.dropped_comments} comment(s) inside definitions "
                  "are not kept by fmt", file=sys.stderr)
        if args.check:
            if formatted.text != text:
                diff = difflib.unified_diff(text.splitlines(keepends=True),
                                            formatted.text.splitlines(keepends=True),
                                            fromfile=path, tofile=f"{path} (formatted)")
                sys.stdout.writelines(diff)
                status = EXIT_DIAGNOSTICS
        elif args.in_place:
            if formatted.text != text:
                Path(path).write_text(formatted.text, encoding="utf-8")
        else:
            sys.stdout.write(formatted.text)
    return status


# ---------------------------------------------------------------- relay run


class _RunFailed(Exception):
    """A `relay run` step that failed; the message is printed as it is, exit status 1."""


def _fail(where: str, message: str) -> _RunFailed:
    return _RunFailed(f"{where}: error: {message}")


def _bind_params(args: argparse.Namespace, mod: IRModule) -> tuple[IRModule, set[str]]:
    """`mod` with the `--params` arrays bound into `@entry`, and the names bound."""
    from .backend.params import InputSourceError, load_params
    from .transform import BindParams, BindParamsError
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


def _type_check(mod: IRModule) -> IRModule | None:
    from .ir.diagnostics import Severity, render_all
    from .typing import check_module
    typed, diagnostics = check_module(mod)
    if diagnostics:
        print(render_all(diagnostics, mod.sources, color=_color()), file=sys.stderr)
    if any(d.severity is Severity.ERROR for d in diagnostics):
        return None
    return typed


def _given_inputs(args: argparse.Namespace, fn: Function, bound: set[str]) -> dict[int, Any]:
    """The `--input` values by parameter identity."""
    from .backend.params import InputSourceError, input_value, split_input
    from .transform.bind_params import find_param, param_names, param_type
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
            given[id(var)] = input_value(name, text, param_type(var))
        except InputSourceError as e:
            raise _fail(e.path or args.file, e.message) from e
    return given


def _gather_inputs(args: argparse.Namespace, fn: Function, bound: set[str]) -> list[Any]:
    """One value per remaining parameter: given, random, or a one-line error per missing one."""
    import numpy as np

    from .backend.params import InputSourceError, random_input
    from .syntax.printer import astext
    from .transform.bind_params import param_type
    given = _given_inputs(args, fn, bound)
    rng = np.random.default_rng(args.seed)
    values: list[Any] = []
    missing: list[str] = []
    for var in fn.params:
        name, ty = var.name_hint, param_type(var)
        if id(var) in given:
            values.append(given[id(var)])
        elif args.random_inputs:
            try:
                values.append(random_input(name, ty, rng))
            except InputSourceError as e:
                raise _fail(args.file, e.message) from e
        else:
            missing.append(f"{args.file}: error: no input for %{name}: "
                           f"{astext(ty) if ty is not None else '_'} (give --input "
                           f"{name}=FILE.npy or {name}=LITERAL, or --random-inputs)")
    if missing:
        raise _RunFailed("\n".join(missing))
    return values


def _execute(args: argparse.Namespace, typed: IRModule, values: list[Any]) -> Any:
    """Run `@entry` on `values`; run-time errors are rendered at their source location."""
    import time

    from .backend.interpreter.executor import InputError, create_executor
    from .backend.interpreter.machine import InterpreterError
    from .ir.diagnostics import Diagnostic, render
    executor = create_executor(typed, args.entry)
    start = time.perf_counter()
    try:
        result = executor(*values)
    except InputError as e:
        raise _fail(args.file, str(e)) from e
    except InterpreterError as e:
        diagnostic = Diagnostic.error(e.message, e.span, code="runtime")
        raise _RunFailed(render(diagnostic, typed.sources, color=_color())) from e
    except (RecursionError, MemoryError) as e:
        what = f"ran out of memory or stack ({type(e).__name__})"
        raise _fail(args.file, f"@{args.entry} {what}") from e
    if args.time:
        print(f"time: {(time.perf_counter() - start) * 1e3:.3f} ms", file=sys.stderr)
    return result


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
            text = np.array2string(np.asarray(item), threshold=threshold, prefix=prefix)
        else:
            text = repr(item)
        lines.append(prefix + text)
    return "\n".join(lines)


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
    rows = result.reshape(-1, result.shape[-1])
    lines = []
    for r, row in enumerate(rows):
        best = np.argsort(-row, kind="stable")[:k]
        ranked = ", ".join(f"{int(i)} ({row[i].item():.6g})" for i in best)
        prefix = f"row {r}: " if len(rows) > 1 else ""
        lines.append(f"{prefix}top-{min(k, row.size)}: {ranked}")
    return "\n".join(lines)


def cmd_run(args: argparse.Namespace) -> int:
    from .ir.expr import Function
    mod = _parse_file(args.file)
    if mod is None:
        return EXIT_DIAGNOSTICS
    try:
        mod, bound = _bind_params(args, mod)
        typed = _type_check(mod)
        if typed is None:
            return EXIT_DIAGNOSTICS
        fn = typed[args.entry]
        assert isinstance(fn, Function)
        result = _execute(args, typed, _gather_inputs(args, fn, bound))
        print(_result_text(result, args.full))
        if args.top_k:
            print(_top_k_text(result, args.top_k, args.file))
        if args.output is not None:
            _save_output(args, result)
    except _RunFailed as e:
        print(e, file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="relay", description="Tools for the Relay text IR (TVM's text format 0.0.5).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("parse", help="check syntax; errors as FILE:LINE:COL: message")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    p.set_defaults(run=cmd_parse)

    p = sub.add_parser("check", help="parse and type-check; print each global's type")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    p.set_defaults(run=cmd_check)

    p = sub.add_parser("fmt", help="print files in the canonical layout")
    p.add_argument("files", nargs="+", metavar="FILE", help=".relay files or directories")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true",
                      help="change nothing; exit 1 and show a diff if a file would change")
    mode.add_argument("-i", "--in-place", action="store_true", help="rewrite the files")
    p.set_defaults(run=cmd_fmt)

    p = sub.add_parser("run", help="run a function with the reference interpreter")
    p.add_argument("file", metavar="FILE", help="a .relay file")
    p.add_argument("--entry", default="main", help="the function to run (default: main)")
    p.add_argument("--input", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter's value: NAME=FILE.npy, or a literal (NAME=3, "
                        "NAME=2.5, NAME=[1,2,3]) converted to its dtype; repeatable")
    p.add_argument("--params", metavar="FILE.npz",
                   help="arrays bound as constants to the parameters of their names")
    p.add_argument("--random-inputs", action="store_true",
                   help="fill tensor parameters without --input with random values")
    p.add_argument("--seed", type=int, default=0, help="seed for --random-inputs (default: 0)")
    p.add_argument("--time", action="store_true", help="print the run's wall time on stderr")
    p.add_argument("--full", action="store_true", help="print arrays in full, not summarised")
    p.add_argument("--output", metavar="FILE.npy", help="also save the (tensor) result")
    p.add_argument("--top-k", type=int, default=0, metavar="K",
                   help="also print the K largest entries of the result's last axis, with "
                        "their indices (a classifier's predicted classes)")
    p.add_argument("--target", choices=["interp"], default="interp",
                   help="what runs the program: the reference interpreter (the LLVM backend "
                        "is not built yet)")
    p.set_defaults(run=cmd_run)

    from .cli_opt import add_opt_parser
    from .testing.command import add_test_parser
    add_opt_parser(sub)
    from .repl.command import add_repl_parser
    add_repl_parser(sub)
    add_test_parser(sub)
    from lsp.command import add_lsp_parser
    add_lsp_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return EXIT_OK
    except Exception as e:     # a bug in relaylang, not in the user's input: say so plainly
        if os.environ.get("RELAYLANG_TRACEBACK"):
            raise
        print(f"relay: internal error (a bug in relaylang, please report it): "
              f"{type(e).__name__}: {e}\n(set RELAYLANG_TRACEBACK=1 to see the traceback)",
              file=sys.stderr)
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
