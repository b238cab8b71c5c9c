"""Running a RUN line in-process: `relay parse`, `relay check` and `relay opt`, done with
the library (syntax, typing, transform/pipeline.py) and written as `relay` writes them.

Golden files test what the parser, the type checker and the passes print, so these are
the commands a RUN line runs; they take `relay`'s flags (`relay opt --help`; writing to a
file and colour are left out). The case's text is written to a scratch directory under
the test file's own name, so `%s` is `<scratch>/name.relay` and the outputs, with
`<scratch>/` removed, say `name.relay:3:7: ...` whatever machine runs them. `.err` files
hold diagnostics in the short form `LINE:COL: message` (bril's turnt `.err`): the file
name and the rendered source snippets are dropped, and `error: ` is implied.
"""
from __future__ import annotations

import argparse
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from .cases import RunLine

if TYPE_CHECKING:
    from ..ir.module import IRModule

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


@dataclass
class RunResult:
    run: RunLine
    argv: list[str]          # as run, `%s` substituted
    exit_code: int
    stdout: str              # with the scratch directory removed (stderr too, if 2>&1)
    stderr: str              # with the scratch directory removed


class _Output:
    """What one command prints: stdout and stderr, one stream with `2>&1`."""

    def __init__(self, merge_stderr: bool):
        self.out: list[str] = []
        self.err: list[str] = self.out if merge_stderr else []

    def error(self, text: str) -> None:
        """A message on stderr, ended by a newline (as `print` ends it)."""
        self.err.append(text if text.endswith("\n") else text + "\n")


class _UsageError(Exception):
    """Arguments `relay` would reject: exit status 2 and argparse's message."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _UsageError(f"{self.format_usage()}{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    """`relay parse|check|opt` with the flags golden files may use; the destinations of the
    `opt` flags are the field names of `PipelineOptions`."""
    top = _Parser(prog="relay", add_help=False)
    sub = top.add_subparsers(dest="command", required=True)
    for name in ("parse", "check"):
        sub.add_parser(name, add_help=False).add_argument("files", nargs="+")
    opt = sub.add_parser("opt", add_help=False)
    opt.add_argument("file")
    opt.add_argument("-p", "--passes", action="append", default=[])
    opt.add_argument("-O", dest="standard", type=int, choices=range(5))
    opt.add_argument("--opt-level", type=int)
    for flag, dest in (("--disabled-pass", "disabled"), ("--print-before", "print_before"),
                       ("--print-after", "print_after")):
        opt.add_argument(flag, dest=dest, action="append", default=[])
    opt.add_argument("--print-after-all", dest="print_after", action="append_const", const="*")
    for flag in ("--print-changed", "--time-passes", "--verify-each"):
        opt.add_argument(flag, action="store_true")
    return top


def _parsed(path: str, output: _Output) -> IRModule | None:
    """The module in `path`, or None after writing why not."""
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    try:
        return parse(Path(path).read_text(encoding="utf-8"), source_name=path)
    except (OSError, UnicodeDecodeError) as e:
        output.error(f"{path}: error: cannot read file: {getattr(e, 'strerror', None) or e}")
    except DiagnosticError as e:
        output.error(e.render())
    return None


def _check(files: list[str], output: _Output, show_types: bool) -> int:
    """`relay parse` (show_types=False) and `relay check`."""
    from ..ir.diagnostics import Severity, render_all
    from ..syntax.printer import astext
    from ..typing import check_module
    status = EXIT_OK
    for path in files:
        mod = _parsed(path, output)
        if mod is None or not show_types:
            status = EXIT_DIAGNOSTICS if mod is None else status
            continue
        typed, diagnostics = check_module(mod)
        if diagnostics:
            output.error(render_all(diagnostics, mod.sources))
        if any(d.severity is Severity.ERROR for d in diagnostics):
            status = EXIT_DIAGNOSTICS
            continue
        output.out += [f"{path}: @{gv.name_hint}: {astext(gv.checked_type)}\n"
                       for gv in sorted(typed.functions, key=lambda g: g.name_hint)]
    return status


def _opt(args: argparse.Namespace, output: _Output) -> int:
    from ..ir.diagnostics import render_all
    from ..transform.instruments import VerifyError
    from ..transform.pipeline import PassFailed, Pipeline, PipelineError, PipelineOptions
    try:
        pipeline = Pipeline.parse(args.passes, PipelineOptions.of(vars(args)))
    except PipelineError as e:
        output.error(f"relay opt: error: {e}")
        return EXIT_DIAGNOSTICS
    mod = _parsed(args.file, output)
    if mod is None:
        return EXIT_DIAGNOSTICS
    level = pipeline.options.level
    for info in pipeline.skipped():
        why = f"its opt_level {info.opt_level} is above --opt-level {level}" \
            if info.opt_level > level else "it is disabled by --disabled-pass"
        output.error(f"{args.file}: warning: pass {info.name} skipped: {why}")
    try:
        result = pipeline.run(mod)
    except PassFailed as e:
        output.err.append(e.log)
        if isinstance(e.cause, VerifyError):
            output.error(f"{args.file}: error: --verify-each: {e.cause}")
        if not e.user_error:
            output.error(f"relay opt: internal error: {e}")
            return EXIT_INTERNAL
        output.error(render_all(e.diagnostics, e.sources(mod)))
        return EXIT_DIAGNOSTICS
    output.err += [result.log, result.timing]
    if result.notes:                 # as relay opt prints them (cli/opt.py)
        from ..transform.byoc.notes import render_notes
        output.err.append(render_notes(args.file, mod.sources, result.notes))
    output.out.append(result.text())
    return EXIT_OK


def call_relay(argv: Sequence[str], merge_stderr: bool = False) -> tuple[int, str, str]:
    """Exit status, stdout and stderr of `relay ARGV` (parse, check or opt), run here."""
    output = _Output(merge_stderr)
    try:
        args = _parser().parse_args(list(argv))
        if args.command == "opt":
            code = _opt(args, output)
        else:
            code = _check(args.files, output, show_types=args.command == "check")
    except _UsageError as e:
        output.err.append(str(e))
        code = EXIT_USAGE
    except Exception as e:         # noqa: BLE001 -- a bug in relaylang: the case fails on it
        output.error(f"relay: internal error: {type(e).__name__}: {e}")
        code = EXIT_INTERNAL
    return code, "".join(output.out), "" if merge_stderr else "".join(output.err)


def substitute(argv: Sequence[str], source: Path) -> list[str]:
    return [a.replace("%s", str(source)) for a in argv]


def execute(run: RunLine, source: Path) -> RunResult:
    """Run one RUN line on the case text saved at `source`."""
    argv = substitute(run.argv, source)
    code, out, err = call_relay(argv, run.merge_stderr)
    scratch = str(source.parent) + os.sep
    return RunResult(run, argv, code, out.replace(scratch, ""), err.replace(scratch, ""))


_SNIPPET = re.compile(r"^\s*\d*\s\|(\s|$)")
_HEADER = re.compile(r"^[^\s:]+:(\d+):(\d+): (\w+): (.*)$")


def short_diagnostics(stderr: str) -> str:
    """Rendered diagnostics as `LINE:COL: message` lines (`LINE:COL: warning: message` for
    other severities); source snippets dropped, other lines kept as they are."""
    lines: list[str] = []
    for line in stderr.splitlines():
        if _SNIPPET.match(line):
            continue
        m = _HEADER.match(line)
        if m is not None:
            line_no, col, severity, message = m.groups()
            sev = "" if severity == "error" else f"{severity}: "
            line = f"{line_no}:{col}: {sev}{message}"
        lines.append(line)
    return "".join(line + "\n" for line in lines)
