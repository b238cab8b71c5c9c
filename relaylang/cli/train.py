"""`relay train FILE`: train the weights of a model written in Relay.

    relay train examples/train_mlp.relay --epochs 30
    relay train examples/train_mlp.relay --epochs 30 --optimizer sgd --lr 0.1 --out w.npz
    relay train model.relay --data data.npz --init start.npz

FILE is a training module (`relaylang/training/trainer.py`): `@main(%x, %y, weights...)`
the loss, `@predict(%x, weights...)` the class scores. Its loss is differentiated by
`rl.transform.gradient`, the optimiser's update (Adam or SGD) added in Relay, and the
training step built with the LLVM backend; the data is scikit-learn's digits (1,300
images train, 497 are held out) unless `--data` names an .npz of x_train, y_train,
x_test, y_test. Prints the loss of each epoch (a progress bar on a terminal, unless
`--quiet`) and the test accuracy; `--out` writes the trained weights as an .npz
(`relay run --params` takes it). Bad input is a located diagnostic and exit status 1.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any

from .common import EXIT_DIAGNOSTICS, EXIT_OK, add_quiet_flag, color, error, read, source_name


def _say(text: str) -> None:
    from ..ir import progress
    progress.write(text, sys.stdout)


def _report(e: Any, path: str) -> int:
    """Render a DiagnosticError: located diagnostics with their source line, the others
    (a function the module lacks) as `FILE: error: ...`."""
    from ..ir.diagnostics import render_all
    located = [d for d in e.diagnostics if d.span is not None]
    for d in e.diagnostics:
        if d.span is None:
            error(path, d.message)
    if located:
        print(render_all(located, e.sources, color=color()), file=sys.stderr)
    return EXIT_DIAGNOSTICS


def cmd_train(args: argparse.Namespace) -> int:
    import time

    from ..backend.params import InputSourceError, load_params
    from ..ir.diagnostics import DiagnosticError
    from ..syntax.parser import parse
    from ..training import DataError, Trainer, check_data, digits_split, load_npz, training_problem
    if args.epochs < 1:
        error("--epochs", f"must be at least 1, not {args.epochs}")
        return EXIT_DIAGNOSTICS
    if args.lr is not None and not args.lr > 0:
        error("--lr", f"must be positive, not {args.lr}")
        return EXIT_DIAGNOSTICS
    text = read(args.file)
    if text is None:
        return EXIT_DIAGNOSTICS
    try:
        mod = parse(text, source_name=source_name(args.file))
        problem = training_problem(mod, entry=args.entry, predict=args.predict,
                                   inputs=args.inputs, labels=args.labels)
    except DiagnosticError as e:
        return _report(e, args.file)
    try:
        data = load_npz(args.data) if args.data is not None else digits_split()
    except DataError as e:
        error(args.data or "digits", str(e))
        return EXIT_DIAGNOSTICS
    start_params = None
    if args.init is not None:
        try:
            start_params = dict(load_params(args.init))
        except InputSourceError as e:
            error(e.path or args.init, e.message)
            return EXIT_DIAGNOSTICS
        known = {name for name, _, _ in problem.weights}
        unknown = sorted(set(start_params) - known)
        if unknown:
            error(args.init, f"no weight of @{args.entry} is named "
                             f"{', '.join('%' + n for n in unknown)}")
            return EXIT_DIAGNOSTICS
    try:
        check_data(problem, data.x_train, data.y_train)
        check_data(problem, data.x_test, data.y_test, what="test")
    except DiagnosticError as e:
        return _report(e, args.file)
    try:
        trainer = Trainer(problem, optimizer=args.optimizer, lr=args.lr, seed=args.seed,
                          params=start_params)
    except DiagnosticError as e:
        return _report(e, args.file)
    except ValueError as e:               # a starting weight of the wrong shape
        error(args.init or args.file, str(e))
        return EXIT_DIAGNOSTICS
    n_train, n_test = len(data.x_train), len(data.y_test)
    _say(f"{args.file}: {len(problem.weights)} weights "
         f"({sum(_size(s) for _, s, _ in problem.weights)} numbers), minibatch "
         f"{problem.batch}, {args.optimizer} lr {trainer.lr:g}; {data.name}: {n_train} "
         f"train, {n_test} test; training step built in {trainer.build_seconds:.2f} s")
    width = len(str(args.epochs))

    def on_epoch(r: Any) -> None:
        _say(f"epoch {r.epoch:{width}d}/{args.epochs}  loss {r.loss:.4f}  "
             f"({r.steps} steps, {r.seconds * 1e3:.1f} ms)")
    start = time.perf_counter()
    trainer.fit(data.x_train, data.y_train, args.epochs, on_epoch=on_epoch)
    elapsed = time.perf_counter() - start
    accuracy = trainer.accuracy(data.x_test, data.y_test)
    print(f"trained {args.epochs} epochs in {elapsed:.2f} s; "
          f"test accuracy {accuracy:.4f} ({n_test} held out)")
    if args.out is not None and not _save(args.out, trainer.weight_dict):
        return EXIT_DIAGNOSTICS
    return EXIT_OK


def _size(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


def _save(path: str, weights: dict[str, Any]) -> bool:
    import numpy as np
    try:
        with open(path, "wb") as f:
            np.savez(f, **weights)
    except OSError as e:
        error(path, f"cannot write the weights: {e.strerror or e}")
        return False
    print(f"wrote the trained weights to {path}")
    return True


def add_train_parser(sub: Any) -> None:
    p = sub.add_parser("train", help="train a model written in Relay (gradient, LLVM)",
                       description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("file", metavar="FILE", help="a training module (.relay): @main the loss, "
                                                "@predict the class scores")
    p.add_argument("--epochs", type=int, default=30, help="passes over the training set "
                                                           "(default 30)")
    p.add_argument("--optimizer", choices=("adam", "sgd"), default="adam",
                   help="the update (default adam)")
    p.add_argument("--lr", type=float, default=None,
                   help="learning rate (default 0.01 for adam, 0.1 for sgd)")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of the starting weights and the shuffling (default 0)")
    p.add_argument("--data", metavar="D.npz", default=None,
                   help="x_train, y_train, x_test, y_test arrays (default: scikit-learn's "
                        "digits, the first 1,300 to train)")
    p.add_argument("--init", metavar="P.npz", default=None,
                   help="starting weights by parameter name (default He-uniform, zero "
                        "biases)")
    p.add_argument("--out", metavar="W.npz", default=None,
                   help="write the trained weights here")
    p.add_argument("--entry", default="main", help="the loss function (default: main)")
    p.add_argument("--predict", default="predict",
                   help="the class-scores function (default: predict)")
    p.add_argument("--inputs", default="x", metavar="NAME",
                   help="the parameter taking a minibatch of inputs (default: x)")
    p.add_argument("--labels", default="y", metavar="NAME",
                   help="the parameter taking their labels (default: y)")
    add_quiet_flag(p)
    p.set_defaults(run=cmd_train)
