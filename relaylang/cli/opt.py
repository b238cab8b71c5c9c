"""`relay opt`: run a pass pipeline over a file and print the module (xDSL's xdsl_opt_main.py,
TVM's `tvm.transform.Sequential` under a `PassContext`).

    relay opt model.relay -p InferType,ToANormalForm --print-after-all --verify-each
    relay opt model.relay -O3 -p ToANormalForm     # relay.build's pipeline, then -p

`-O N` runs the standard pipeline (`relaylang.transform.optimize.default_pipeline`) at opt
level N, before the `-p` passes; `--opt-level` defaults to N then (else to 2).

The pipeline is `NAME[{option=value,...}]` items separated by commas (commas inside braces
belong to the options). Debugging flags become instruments on the `PassContext`: the passes
themselves never print. What is printed is `astext` of the result, so input comments are
never echoed (a golden file's CHECK lines cannot match themselves); a typed module carries
TVM's `/* ty=... */` annotations, as `mod.astext()` did in TVM.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ir.module import IRModule
    from .transform.pass_infra import Pass, PassContext

EXIT_OK, EXIT_DIAGNOSTICS, EXIT_INTERNAL = 0, 1, 70


class PipelineError(Exception):
    """A pipeline that cannot be built: malformed text, unknown pass or option."""


def split_pipeline(text: str) -> list[str]:
    """`A,B{x=1,y=2},C` -> `["A", "B{x=1,y=2}", "C"]`: commas split only outside braces."""
    items: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                raise PipelineError(f"malformed pipeline `{text}`: unbalanced `}}`")
        elif ch == "," and depth == 0:
            items.append(text[start:i])
            start = i + 1
    if depth != 0:
        raise PipelineError(f"malformed pipeline `{text}`: unbalanced `{{`")
    items.append(text[start:])
    return [item.strip() for item in items if item.strip()]


def build_pipeline(specs: Sequence[str]) -> list[Pass]:
    """The passes named by the `-p` arguments, in order; PipelineError names a bad one."""
    from .transform.pass_infra import PassNotFound, get_pass
    passes: list[Pass] = []
    for spec in specs:
        for item in split_pipeline(spec):
            try:
                passes.append(get_pass(item))
            except PassNotFound as e:
                raise PipelineError(e.message) from e
            except (TypeError, ValueError) as e:       # an option of the wrong kind
                raise PipelineError(f"bad options in `{item}`: {e}") from e
    return passes


def _instruments(args: argparse.Namespace) -> list[Any]:
    from .transform.instruments import PassTimingInstrument, PrintIR, VerifyEach
    found: list[Any] = []
    after = list(args.print_after)
    if args.print_after_all or (args.print_changed and not after):
        after = ["*"]
    if after or args.print_before:
        found.append(PrintIR(before=tuple(args.print_before), after=tuple(after),
                             changed_only=args.print_changed))
    if args.verify_each:
        found.append(VerifyEach())
    if args.time_passes:
        found.append(PassTimingInstrument())
    return found


class _CurrentPass:
    """Remembers which pass is running, so a crash inside one can be blamed on it."""

    def __init__(self) -> None:
        self.name: str | None = None

    def enter_pass_ctx(self) -> None: ...
    def exit_pass_ctx(self) -> None: ...

    def should_run(self, mod: Any, info: Any) -> bool:
        return True

    def run_before_pass(self, mod: Any, info: Any) -> None:
        self.name = info.name

    def run_after_pass(self, mod: Any, info: Any) -> None:
        self.name = None


def _warn_skipped(ctx: PassContext, passes: list[Pass], path: str) -> None:
    """A pass named on the command line but above --opt-level is skipped, as TVM does; say so."""
    for p in passes:
        if not ctx.should_run(p.info):
            print(f"{path}: warning: pass {p.info.name} skipped: its opt_level "
                  f"{p.info.opt_level} is above --opt-level {ctx.opt_level}", file=sys.stderr)


def _opt_level(args: argparse.Namespace) -> int:
    """--opt-level if given, else the level of -O, else TVM's default 2."""
    if getattr(args, "opt_level", None) is not None:
        return args.opt_level
    level = getattr(args, "O", None)
    return level if level is not None else 2


def _with_default_pipeline(args: argparse.Namespace, passes: list[Pass]) -> list[Pass]:
    """The -O pipeline (one Sequential, its skipped passes not warned about) before `passes`."""
    level = getattr(args, "O", None)
    if level is None:
        return passes
    from .transform.optimize import default_pipeline
    return [default_pipeline(level), *passes]


def run_pipeline(args: argparse.Namespace, mod: IRModule, passes: list[Pass]) -> IRModule:
    """`mod` through the passes under a context built from the flags; errors propagate."""
    from .transform.instruments import PassTimingInstrument
    from .transform.pass_infra import PassContext, Sequential
    current = _CurrentPass()
    instruments = _instruments(args)
    disabled = [n for spec in getattr(args, "disabled_pass", []) for n in split_pipeline(spec)]
    ctx = PassContext(opt_level=_opt_level(args), disabled_pass=disabled,
                      instruments=[current, *instruments])
    _warn_skipped(ctx, passes, args.file)
    try:
        with ctx:
            out = Sequential(_with_default_pipeline(args, passes))(mod)
    except Exception as e:
        e.relay_pass = current.name      # type: ignore[attr-defined]
        raise
    for inst in instruments:
        if isinstance(inst, PassTimingInstrument):
            sys.stderr.write(inst.report())
    return out


def _write_output(args: argparse.Namespace, text: str) -> int:
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    try:
        Path(args.output).write_text(text, encoding="utf-8")
    except OSError as e:
        print(f"{args.output}: error: cannot write file: {e.strerror or e}", file=sys.stderr)
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _report_failure(args: argparse.Namespace, mod: IRModule, e: Exception) -> int:
    """Diagnostics and VerifyError as the user's errors (exit 1); anything else names the
    pass that crashed and is an internal error (exit 70)."""
    from .ir.diagnostics import DiagnosticError, render_all
    from .transform.instruments import VerifyError
    color = sys.stderr.isatty()
    if isinstance(e, VerifyError):
        print(f"{args.file}: error: --verify-each: {e}", file=sys.stderr)
        if e.diagnostics:
            print(render_all(e.diagnostics, mod.sources, color=color), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    if isinstance(e, DiagnosticError):
        print(render_all(e.diagnostics, {**mod.sources, **e.sources}, color=color),
              file=sys.stderr)
        return EXIT_DIAGNOSTICS
    if os.environ.get("RELAYLANG_TRACEBACK"):
        raise e
    where = f"pass {getattr(e, 'relay_pass', None)}" if getattr(e, "relay_pass", None) \
        else "the pipeline"
    print(f"relay opt: internal error in {where} (a bug in that pass): {type(e).__name__}: {e}"
          "\n(set RELAYLANG_TRACEBACK=1 to see the traceback)", file=sys.stderr)
    return EXIT_INTERNAL


def cmd_opt(args: argparse.Namespace) -> int:
    from .cli import _parse_file
    from .syntax.printer import astext
    try:
        passes = build_pipeline(args.passes)
    except PipelineError as e:
        print(f"relay opt: error: {e}", file=sys.stderr)
        return EXIT_DIAGNOSTICS
    mod = _parse_file(args.file)
    if mod is None:
        return EXIT_DIAGNOSTICS
    try:
        out = run_pipeline(args, mod, passes)
    except Exception as e:            # noqa: BLE001 -- sorted into user errors and bugs
        return _report_failure(args, mod, e)
    text = astext(out)
    text = text if text.endswith("\n") else text + "\n"
    if args.output is None and _use_color(args.color):
        from .syntax.highlight import highlight_text
        text = highlight_text(text, color=True)
    return _write_output(args, text)


def _use_color(when: str) -> bool:
    """--color=always, or auto (the default) with stdout on a terminal."""
    return when == "always" or (when == "auto" and sys.stdout.isatty())


def add_opt_parser(sub: Any) -> None:
    p = sub.add_parser("opt", help="run a pass pipeline and print the module")
    p.add_argument("file", metavar="FILE", help="a .relay file")
    p.add_argument("-p", "--passes", action="append", default=[], metavar="PASS[,PASS...]",
                   help="passes to run in order, NAME or NAME{option=value,...}; repeatable")
    p.add_argument("-O", dest="O", type=int, choices=range(5), metavar="N",
                   help="run the standard pipeline at opt level N (-O3: relay.build's) "
                        "before the -p passes")
    p.add_argument("--opt-level", type=int, default=None,
                   help="passes above this level are skipped, as in TVM "
                        "(default: N of -O, else 2)")
    p.add_argument("--disabled-pass", action="append", default=[], metavar="PASS[,PASS...]",
                   help="never run these passes (TVM's PassContext disabled_pass); repeatable")
    p.add_argument("--print-after-all", action="store_true",
                   help="print the module after every pass (on stderr)")
    p.add_argument("--print-before", action="append", default=[], metavar="PASS",
                   help="print the module before this pass (on stderr); repeatable")
    p.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the module after this pass (on stderr); repeatable")
    p.add_argument("--print-changed", action="store_true",
                   help="print after a pass only when it changed the module")
    p.add_argument("--time-passes", action="store_true",
                   help="print the wall time of each pass (on stderr)")
    p.add_argument("--verify-each", action="store_true",
                   help="after each pass check for free variables and type errors, "
                        "naming the pass that broke the module")
    p.add_argument("-o", "--output", metavar="OUT", help="write the module here, not stdout")
    p.add_argument("--color", nargs="?", const="always", default="auto",
                   choices=["auto", "always", "never"],
                   help="highlight the printed module: auto (default, when stdout is a "
                        "terminal), always (also plain --color) or never; never with -o")
    p.set_defaults(run=cmd_opt)
