"""`relay opt`: run a pass pipeline over a file and print the module (xDSL's xdsl_opt_main.py).

    relay opt model.relay -p InferType,ToANormalForm --print-after-all --verify-each
    relay opt model.relay -O3 -p ToANormalForm     # relay.build's pipeline, then -p
    relay opt model.relay -O3 --params model.npz   # weights bound as constants first

`-O N` runs the standard pipeline (`relaylang.transform.default_pipeline`) at opt
level N, before the `-p` passes; `--opt-level` defaults to N then (else to 2).

The pipeline is `NAME[{option=value,...}]` items separated by commas (commas inside braces
belong to the options). Debugging flags become instruments on the `PassContext`: the passes
themselves never print. What is printed is `astext` of the result, so input comments are
never echoed (a golden file's CHECK lines cannot match themselves); a typed module carries
TVM's `/* ty=... */` annotations, as `mod.astext()` did in TVM.

`--time-passes` prints the profiler's table (`relaylang.ir.timing`) on stderr: one row per
pass with its calls, longest first, and the total. On a terminal a long pipeline shows a
progress bar of its passes; `--quiet` hides it.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from .common import (
    EXIT_DIAGNOSTICS,
    EXIT_OK,
    add_quiet_flag,
    color,
    error,
    internal_error,
    parse_file,
    print_pass_notes,
    source_name,
    write,
)

if TYPE_CHECKING:
    from ..ir.module import IRModule
    from ..transform.pipeline import PassFailed, Pipeline


def _warn_skipped(pipeline: Pipeline, path: str) -> None:
    """A pass named on the command line that will not run is skipped, as TVM does; say so."""
    level = pipeline.options.level
    for info in pipeline.skipped():
        why = f"its opt_level {info.opt_level} is above --opt-level {level}" \
            if info.opt_level > level else "it is disabled by --disabled-pass"
        print(f"{path}: warning: pass {info.name} skipped: {why}", file=sys.stderr)


def _report_failure(path: str, mod: IRModule, e: PassFailed) -> int:
    """Diagnostics and --verify-each failures are the user's errors (exit 1); anything else
    names the pass that crashed and is an internal error (exit 70)."""
    from ..ir.diagnostics import render_all
    from ..transform.instruments import VerifyError
    if isinstance(e.cause, VerifyError):
        error(path, f"--verify-each: {e.cause}")
    if e.user_error:
        if e.diagnostics:
            print(render_all(e.diagnostics, e.sources(mod), color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    where = f"pass {e.pass_name}" if e.pass_name else "the pipeline"
    return internal_error(f"relay opt: internal error in {where} (a bug in that pass)", e.cause)


def cmd_opt(args: argparse.Namespace) -> int:
    from ..transform.pipeline import PassFailed, Pipeline, PipelineError, PipelineOptions
    try:
        pipeline = Pipeline.parse(args.passes, PipelineOptions.of(vars(args)))
    except PipelineError as e:
        print(f"relay opt: error: {e}", file=sys.stderr)
        return EXIT_DIAGNOSTICS
    mod = parse_file(args.file)
    if mod is None:
        return EXIT_DIAGNOSTICS
    if args.params is not None:
        mod = _bind_params(args, mod)
        if mod is None:
            return EXIT_DIAGNOSTICS
    _warn_skipped(pipeline, args.file)
    try:
        result = pipeline.run(mod)
    except PassFailed as e:
        sys.stderr.write(e.log)
        return _report_failure(args.file, mod, e)
    sys.stderr.write(result.log + result.timing)
    if result.notes:             # what the passes noted without failing (a pattern unmatched)
        print_pass_notes(args.file, mod.sources.get(source_name(args.file), ""), result.notes)
    text = result.text()
    if args.output is not None:
        return EXIT_OK if write(args.output, text) else EXIT_DIAGNOSTICS
    if _use_color(args.color):
        from ..syntax.highlight import highlight_text
        text = highlight_text(text, color=True)
    sys.stdout.write(text)
    return EXIT_OK


def _bind_params(args: argparse.Namespace, mod: IRModule) -> IRModule | None:
    """`mod` with the `--params` arrays bound as constants into `@entry` (as relay.build's
    `params=`, so FoldConstant and FoldScaleAxis see the weights); None after an error."""
    from ..backend.params import InputSourceError, load_params
    from ..transform import BindParams, BindParamsError
    if not any(gv.name_hint == args.entry for gv in mod.functions):
        error(args.file, f"--params: the module has no function @{args.entry}")
        return None
    try:
        return BindParams(load_params(args.params), entry=args.entry)(mod)
    except InputSourceError as e:
        error(e.path or args.params, e.message)
    except BindParamsError as e:
        error(args.params, str(e))
    return None


def _use_color(when: str) -> bool:
    """--color=always, or auto (the default) with stdout on a terminal."""
    return when == "always" or (when == "auto" and sys.stdout.isatty())


def add_opt_parser(sub: Any) -> None:
    p = sub.add_parser("opt", help="run a pass pipeline and print the module")
    p.add_argument("file", metavar="FILE", help="a .relay file")
    p.add_argument("-p", "--passes", action="append", default=[], metavar="PASS[,PASS...]",
                   help="passes to run in order, NAME or NAME{option=value,...}; repeatable")
    p.add_argument("-O", dest="standard", type=int, choices=range(5), metavar="N",
                   help="run the standard pipeline at opt level N (-O3: relay.build's) "
                        "before the -p passes")
    p.add_argument("--opt-level", type=int, default=None,
                   help="passes above this level are skipped, as in TVM "
                        "(default: N of -O, else 2)")
    p.add_argument("--disabled-pass", dest="disabled", action="append", default=[],
                   metavar="PASS[,PASS...]",
                   help="never run these passes (TVM's PassContext disabled_pass); repeatable")
    p.add_argument("--print-after-all", dest="print_after", action="append_const", const="*",
                   default=[], help="print the module after every pass (on stderr)")
    p.add_argument("--print-before", action="append", default=[], metavar="PASS",
                   help="print the module before this pass (on stderr); repeatable")
    p.add_argument("--print-after", action="append", default=[], metavar="PASS",
                   help="print the module after this pass (on stderr); repeatable")
    p.add_argument("--print-changed", action="store_true",
                   help="print after a pass only when it changed the module")
    p.add_argument("--time-passes", action="store_true",
                   help="print the wall time of each pass on stderr (a table: calls, total "
                        "and mean ms, share, longest first)")
    p.add_argument("--verify-each", action="store_true",
                   help="after each pass check for free variables and type errors, "
                        "naming the pass that broke the module")
    p.add_argument("--params", metavar="FILE.npz",
                   help="bind these arrays as constants to the parameters of their names "
                        "before the passes (relay.build's params)")
    p.add_argument("--entry", default="main",
                   help="the function --params binds into (default: main)")
    p.add_argument("-o", "--output", metavar="OUT", help="write the module here, not stdout")
    p.add_argument("--color", nargs="?", const="always", default="auto",
                   choices=["auto", "always", "never"],
                   help="highlight the printed module: auto (default, when stdout is a "
                        "terminal), always (also plain --color) or never; never with -o")
    add_quiet_flag(p)
    p.set_defaults(run=cmd_opt)
