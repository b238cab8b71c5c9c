"""Issue 19's acceptance runs: what `rl.tune` buys, measured side by side.

    python benchmarks/tune.py gemm [--trials 200] [--threads 2]
    python benchmarks/tune.py resnet50 [--minutes 20] [--threads 2]
    python benchmarks/tune.py mlp [--trials 40]          # a quick smoke run
    python benchmarks/tune.py resnet50 --db DB --no-tune  # compare the builds of DB only

Each run tunes into a fresh database (`--db`, default a temporary file), then builds the
model twice -- default schedules and `tuning_db=` -- and times both (and the baseline:
NumPy's OpenBLAS for the GEMM) in blocks after idle gaps, interleaved, medians
(`benchmarks/gemm.py`'s `blocked`: OpenBLAS's and the pools' spinning threads do not
share a core with the next contender). It prints the tuner's per-kernel table, the
end-to-end medians and ratios, and checks the tuned build's outputs against the default
build's and (ResNet-50) against the reference interpreter.

* gemm: `nn.dense` 1024x1024 by a constant 1024x1024 weight (packed at build), fp32;
  the target is tuned >= 0.95x NumPy's speed (numpy ms / tuned ms) at 2 threads.
* resnet50: onnx's light ResNet-50, batch 1, imported with `from_onnx`; the target is a
  tuned build measurably faster than the default one after `--minutes` of tuning.
* mlp: 784-128-10, batch 64.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.append(str(Path(__file__).resolve().parent))  # after the packages: `lsp` is not ./lsp.py

import relaylang as rl  # noqa: E402
from gemm import _threads, blocked  # noqa: E402


def _report(name: str, default_ms: float, tuned_ms: float, base: tuple[str, float] | None,
            threads: int) -> None:
    print(f"\n{name}, {threads} thread(s), medians: default {default_ms:.3f} ms, tuned "
          f"{tuned_ms:.3f} ms ({default_ms / tuned_ms:.3f}x faster)", end="")
    if base is not None:
        label, ms = base
        print(f"; {label} {ms:.3f} ms (tuned reaches {ms / tuned_ms:.3f}x {label}'s speed, "
              f"default {ms / default_ms:.3f}x)", end="")
    print(flush=True)


def _tune(mod: Any, params: dict, args: argparse.Namespace, trials: int,
          timeout_s: float | None) -> str:
    if args.no_tune:            # compare the builds of an existing database only
        if not args.db or not os.path.exists(args.db):
            raise SystemExit("--no-tune needs --db with an existing database")
        print(f"(comparing with {args.db}, no tuning)")
        return args.db
    db = args.db or os.path.join(tempfile.mkdtemp(prefix="relay-tune-"), "tuning.json")
    if os.path.exists(db) and not args.db:
        os.unlink(db)
    start = time.perf_counter()
    report = rl.tune(mod, params=params, trials=trials, db=db, timeout_s=timeout_s,
                     end_to_end=False, seed=args.seed)
    print(report.table(), end="")
    print(f"(tuning took {time.perf_counter() - start:.0f} s)", flush=True)
    return db


def run_gemm(args: argparse.Namespace) -> None:
    n = 1024
    mod = rl.parse('#[version = "0.0.5"]\n'
                   f"def @main(%x: Tensor[({n}, {n}), float32], %w: Tensor[({n}, {n}), float32])"
                   " { nn.dense(%x, %w) }")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((n, n)).astype("float32")
    x = rng.standard_normal((n, n)).astype("float32")
    with _threads(args.threads):
        db = _tune(mod, {"w": w}, args, args.trials, args.minutes * 60 if args.minutes else None)
        default = rl.build(mod, target="llvm", params={"w": w})
        tuned = rl.build(mod, target="llvm", params={"w": w}, tuning_db=db)
        wt = np.ascontiguousarray(w.T)
        want = x @ wt
        for lib in (default, tuned):
            np.testing.assert_allclose(lib(x), want, rtol=1e-3, atol=1e-2)
        d_ms, np_ms = blocked(lambda: default(x), lambda: x @ wt, args.repeat)
        t_ms, np_ms2 = blocked(lambda: tuned(x), lambda: x @ wt, args.repeat)
    _report(f"dense {n}^3 (constant weight)", d_ms * 1e3, t_ms * 1e3,
            ("numpy", (np_ms + np_ms2) / 2 * 1e3), args.threads)


def run_mlp(args: argparse.Namespace) -> None:
    text = ('#[version = "0.0.5"]\n'
            "def @main(%x: Tensor[(64, 784), float32], %w1: Tensor[(128, 784), float32], "
            "%b1: Tensor[(128), float32], %w2: Tensor[(10, 128), float32], "
            "%b2: Tensor[(10), float32]) {\n"
            "  %0 = nn.relu(nn.bias_add(nn.dense(%x, %w1), %b1));\n"
            "  nn.bias_add(nn.dense(%0, %w2), %b2)\n}")
    mod = rl.parse(text)
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((128, 784)).astype("float32"),
              "b1": rng.standard_normal(128).astype("float32"),
              "w2": rng.standard_normal((10, 128)).astype("float32"),
              "b2": rng.standard_normal(10).astype("float32")}
    x = rng.standard_normal((64, 784)).astype("float32")
    with _threads(args.threads):
        db = _tune(mod, params, args, args.trials, args.minutes * 60 if args.minutes else None)
        default = rl.build(mod, target="llvm", params=params)
        tuned = rl.build(mod, target="llvm", params=params, tuning_db=db)
        np.testing.assert_allclose(tuned(x), default(x), rtol=1e-4, atol=1e-4)
        d, t = blocked(lambda: default(x), lambda: tuned(x), args.repeat)
    _report("MLP 784-128-10 b64", d * 1e3, t * 1e3, None, args.threads)


def run_resnet50(args: argparse.Namespace) -> None:
    import onnx_workloads
    work = onnx_workloads.resnet50()
    mod, params = rl.frontend.from_onnx(work.model, freeze_params=True)
    (x,) = work.feeds.values()
    with _threads(args.threads):
        db = _tune(mod, params, args, args.trials, args.minutes * 60)
        default = rl.build(mod, target="llvm", params=params)
        tuned = rl.build(mod, target="llvm", params=params, tuning_db=db)
        got = tuned(x)
        np.testing.assert_allclose(got, default(x), rtol=1e-3, atol=1e-4)
        d, t = blocked(lambda: default(x), lambda: tuned(x), args.repeat)
    _report("ResNet-50 b1", d * 1e3, t * 1e3, None, args.threads)
    if not args.skip_interpreter:
        start = time.perf_counter()
        from relaylang.transform import BindParams
        bound = BindParams(params)(mod) if params else mod
        want = rl.evaluate(bound, x, target="interp")
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, atol=1e-3)
        print(f"tuned ResNet-50 matches the interpreter (checked in "
              f"{time.perf_counter() - start:.0f} s)")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("workload", choices=["gemm", "resnet50", "mlp"])
    p.add_argument("--trials", type=int, default=None)
    p.add_argument("--minutes", type=float, default=None,
                   help="tuning time budget (resnet50: default 20)")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=15)
    p.add_argument("--db", default=None, help="the database to write (default: a temporary one)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--skip-interpreter", action="store_true")
    p.add_argument("--no-tune", action="store_true",
                   help="only build and compare, with the database --db already written")
    args = p.parse_args(argv)
    if args.workload == "gemm":
        args.trials = args.trials or 200
        run_gemm(args)
    elif args.workload == "mlp":
        args.trials = args.trials or 40
        run_mlp(args)
    else:
        args.minutes = args.minutes or 20.0
        args.trials = args.trials or 100_000
        run_resnet50(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
