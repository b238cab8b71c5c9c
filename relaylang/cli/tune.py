"""`relay tune FILE`: search the schedules of a program's kernels (TVM's meta-schedule
`tune_relay`), keep the best in a database that `relay build --tuning-db` applies.

    relay tune model.relay --params model.npz --trials 200 --db tuning.json
    relay build model.relay --params model.npz --tuning-db tuning.json -o model.rlib

The database is written after each kernel (an interrupted run keeps what it found); the
run ends with a table per kernel (default time, tuned time, speedup, trials) and the
whole model's time with the default schedules and tuned (`rl.tune`,
`relaylang/backend/tuning/`). Bad input is a located diagnostic and exit status 1.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, add_quiet_flag, color, error, read, source_name


def cmd_tune(args: argparse.Namespace) -> int:
    from ..backend.params import InputSourceError, load_params
    from ..backend.tuning import NotTunable, tune
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    if args.trials < 1:
        error("--trials", f"must be at least 1, not {args.trials}")
        return EXIT_DIAGNOSTICS
    text = read(args.file)
    if text is None:
        return EXIT_DIAGNOSTICS
    try:
        mod = parse(text, source_name=source_name(args.file))
    except DiagnosticError as e:
        print(e.render(color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    if args.entry not in mod:
        names = ", ".join("@" + gv.name_hint for gv in mod.functions) or "none"
        error(args.file, f"the module has no function @{args.entry} (functions: {names})")
        return EXIT_DIAGNOSTICS
    params: dict[str, Any] = {}
    if args.params is not None:
        try:
            params = dict(load_params(args.params))
        except InputSourceError as e:
            error(e.path or args.params, e.message)
            return EXIT_DIAGNOSTICS
    try:
        report = tune(mod, params=params or None, trials=args.trials, db=args.db,
                      timeout_s=args.timeout, entry=args.entry, seed=args.seed)
    except DiagnosticError as e:
        print(e.render(color=color()), file=sys.stderr)
        return EXIT_DIAGNOSTICS
    except NotTunable as e:
        error(args.file, f"nothing to tune: {e}")
        return EXIT_DIAGNOSTICS
    except OSError as e:
        error(args.db, f"cannot write the tuning database: {e.strerror or e}")
        return EXIT_DIAGNOSTICS
    sys.stdout.write(report.table())
    return EXIT_OK


def add_tune_parser(sub: Any) -> None:
    p = sub.add_parser("tune", help="search faster kernel schedules, keep them in a database")
    p.add_argument("file", metavar="FILE", help="a .relay file")
    p.add_argument("--params", metavar="P.npz",
                   help="arrays bound as constants to the parameters of their names")
    p.add_argument("--trials", type=int, default=64,
                   help="schedules to measure over all kernels (default 64)")
    p.add_argument("--db", default="tuning.json", metavar="DB.json",
                   help="the tuning database to update (default tuning.json)")
    p.add_argument("--timeout", type=float, default=None, metavar="SECONDS",
                   help="stop searching after this long (the database keeps what was found)")
    p.add_argument("--entry", default="main", help="the function to tune (default: main)")
    p.add_argument("--seed", type=int, default=0, help="the search's random seed")
    add_quiet_flag(p)
    p.set_defaults(run=cmd_tune)
