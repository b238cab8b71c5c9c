"""The LLVM backend against NumPy and the reference interpreter, measured side by side.

    python benchmarks/llvm.py [--repeat 7] [--only chain,mlp,mnist,resnet50,loop,build]
                              [--threads N] [--json]

Every comparison runs both sides in this process; medians are reported with their
ratio native/baseline (below 1 means native is faster). Native results are checked
against the baseline's before timing (a wrong result fails its row). The chain and
the loop alternate single calls (native, baseline, native, ...) after one untimed
warm-up each. The models alternate blocks of calls (`blocks`: 2 untimed then 5 timed
calls of each side per round), because the interpreter's OpenBLAS threads keep
spinning on both cores for about 0.1 s after each of its calls: a native call right
after one runs on a single core. Their rows also print the strictly alternating
figures in the note.

* chain: `sqrt(exp((x + 1) * 0.5))`, a 4-op fused elementwise chain on 4M float32,
  against NumPy doing the same four ops (into one out= buffer, no temporaries). Target: native at least 2x faster (ratio <= 0.5).
* mlp: relaylang.testing.models "mlp" (784-128-10, batch 1) against the
  interpreter. Target: ratio <= 0.5.
* mnist: the MNIST CNN against the interpreter. Target: ratio <= 0.5.
* resnet50: ResNet-50 batch 1, 224x224, on all cores (RELAY_NUM_THREADS) against
  the interpreter (NumPy + OpenBLAS on all cores). Target: ratio <= 1.0.
* loop: a tail-recursive int64 loop (acc = (31 acc + i) mod 1000003, which LLVM
  cannot fold into a closed form), 1,000,000 iterations natively, 20,000 in the
  interpreter (scaled per iteration). Target: native >= 1000x faster.
* build: `rl.build` of ResNet-50 in a fresh process with an empty kernel cache
  (cold) and again in another fresh process with the cache it filled (warm).
  Targets: <= 3 s cold, <= 0.5 s from the cache (the whole rl.build call; parsing
  is not involved: the model is built in Python). The children keep Python bytecode
  in a temporary folder (as an installed package has its .pyc files) even when
  PYTHONDONTWRITEBYTECODE is set.

The exit status is 0 whether or not targets are met; 1 when something failed to
run or a result was wrong.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

import relaylang as rl
from relaylang.testing.models import example_inputs, get_workload


@dataclass
class Row:
    name: str
    native_s: float
    baseline_s: float
    baseline: str
    target: str
    met: bool
    note: str = ""

    @property
    def ratio(self) -> float:
        return self.native_s / self.baseline_s if self.baseline_s else float("inf")


def interleaved(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int
                ) -> tuple[float, float]:
    native()
    baseline()
    n_times, b_times = [], []
    for _ in range(repeat):
        t = time.perf_counter()
        native()
        n_times.append(time.perf_counter() - t)
        t = time.perf_counter()
        baseline()
        b_times.append(time.perf_counter() - t)
    return statistics.median(n_times), statistics.median(b_times)


def blocks(native: Callable[[], Any], baseline: Callable[[], Any], repeat: int,
           block: int = 5, settle: int = 2) -> tuple[float, float]:
    """Medians over `repeat` rounds of: `settle` untimed then `block` timed calls of
    native, the same of baseline. A side's first calls after the other ran are not
    timed: the interpreter's OpenBLAS threads keep spinning on both cores for a while
    after each of its calls (about 0.1 s), so a native call right after one gets a
    single core, and strictly alternating calls (`interleaved`) measure native
    threads against OpenBLAS's spinners rather than against its work."""
    n_times, b_times = [], []
    for _ in range(repeat):
        for fn, times in ((native, n_times), (baseline, b_times)):
            for _ in range(settle):
                fn()
            for _ in range(block):
                t = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t)
    return statistics.median(n_times), statistics.median(b_times)


def close(a: Any, b: Any, rtol: float = 1e-4, atol: float = 1e-5) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(close(x, y, rtol, atol) for x, y in zip(a, b))
    return np.allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


CHAIN = """#[version = "0.0.5"]
def @main(%x: Tensor[(4194304), float32]) -> Tensor[(4194304), float32] {
  %0 = add(%x, 1f);
  %1 = multiply(%0, 0.5f);
  %2 = exp(%1);
  sqrt(%2)
}
"""


def bench_chain(repeat: int) -> Row:
    lib = rl.build(rl.parse(CHAIN), target="llvm")
    x = np.random.default_rng(0).uniform(-1, 1, 4194304).astype("float32")
    tmp = np.empty_like(x)

    def numpy_chain() -> np.ndarray:
        np.add(x, 1.0, out=tmp)
        np.multiply(tmp, 0.5, out=tmp)
        np.exp(tmp, out=tmp)
        return np.sqrt(tmp, out=tmp)

    ok = close(lib(x), numpy_chain(), rtol=1e-5)
    n, b = interleaved(lambda: lib(x), numpy_chain, repeat)
    return Row("chain (4 ops, 4M float32)", n, b, "numpy", "<= 0.5", ok and n / b <= 0.5,
               "" if ok else "WRONG RESULT")


def bench_model(name: str, repeat: int, target: float, **options: Any) -> Row:
    mod, params = get_workload(name, **options)
    inputs = example_inputs(mod, params)
    lib = rl.build(mod, target="llvm", params=params)
    interp = rl.create_executor(rl.transform.BindParams(params)(mod))
    ok = close(lib(*inputs), interp(*inputs), rtol=1e-3, atol=1e-4)
    n, b = blocks(lambda: lib(*inputs), lambda: interp(*inputs), max(3, repeat // 5))
    na, ba = interleaved(lambda: lib(*inputs), lambda: interp(*inputs), repeat)
    note = f"(strictly alternating: {na * 1e3:.3f} ms vs {ba * 1e3:.3f} ms, {na / ba:.2f})"
    if not ok:
        note = "WRONG RESULT " + note
    if lib.fallback_ops:
        note += f" fallback: {', '.join(lib.fallback_ops)}"
    return Row(name, n, b, "interpreter", f"<= {target}", ok and n / b <= target, note.strip())


LOOP = """#[version = "0.0.5"]
def @loop(%i: int64, %acc: int64) -> int64 {
  if (equal(%i, 0i64)) {
    %acc
  } else {
    @loop(subtract(%i, 1i64), mod(add(multiply(%acc, 31i64), %i), 1000003i64))
  }
}
def @main(%n: int64) -> int64 { @loop(%n, 0i64) }
"""


def _loop_reference(n: int) -> int:
    acc = 0
    for i in range(n, 0, -1):
        acc = (acc * 31 + i) % 1000003
    return acc


def bench_loop(repeat: int) -> Row:
    """A hash-like update LLVM cannot turn into a closed form, so every iteration runs."""
    mod = rl.parse(LOOP)
    lib = rl.build(mod, target="llvm")
    interp = rl.create_executor(mod)
    big, small = 1_000_000, 20_000
    ok = (int(lib(np.int64(big))) == _loop_reference(big)
          and int(interp(np.int64(small))) == _loop_reference(small))
    n, b = interleaved(lambda: lib(np.int64(big)), lambda: interp(np.int64(small)), repeat)
    per_native, per_interp = n / big, b / small
    return Row(f"loop (tail recursion, per iteration; {lib.mode} mode)", per_native,
               per_interp, "interpreter", ">= 1000x faster",
               ok and per_interp / per_native >= 1000, "" if ok else "WRONG RESULT")


_BUILD_CHILD = """
import time, sys
import relaylang as rl
from relaylang.testing.models import get_workload
mod, params = get_workload("resnet50")
t = time.perf_counter()
rl.build(mod, target="llvm", params=params)
print(time.perf_counter() - t)
"""


def bench_build() -> list[Row]:
    with tempfile.TemporaryDirectory() as cache, tempfile.TemporaryDirectory() as pyc:
        env = dict(os.environ, RELAY_CACHE_DIR=cache)
        # bytecode as an installed package has it (written by the first child into a
        # folder of its own, reused by the second), even where PYTHONDONTWRITEBYTECODE
        # is set: compiling ~90 modules from source would add ~0.13 s to each child
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        times = []
        for _ in range(2):
            out = subprocess.run([sys.executable, "-X", f"pycache_prefix={pyc}", "-c",
                                  _BUILD_CHILD], env=env, check=True,
                                 capture_output=True, text=True)
            times.append(float(out.stdout.strip().splitlines()[-1]))
    cold, warm = times
    return [Row("build resnet50 cold", cold, 3.0, "target 3 s", "<= 3 s", cold <= 3.0),
            Row("build resnet50 from cache", warm, 0.5, "target 0.5 s", "<= 0.5 s", warm <= 0.5)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--only", default="chain,mlp,mnist,resnet50,loop,build")
    parser.add_argument("--threads", type=int, default=None,
                        help="RELAY_NUM_THREADS for the native side (default: all cores)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.threads:
        os.environ["RELAY_NUM_THREADS"] = str(args.threads)
    wanted = args.only.split(",")
    rows: list[Row] = []
    failed = False
    runners: dict[str, Callable[[], list[Row]]] = {
        "chain": lambda: [bench_chain(args.repeat)],
        "mlp": lambda: [bench_model("mlp", args.repeat * 20, 0.5)],
        "mnist": lambda: [bench_model("mnist", args.repeat * 5, 0.5)],
        "resnet50": lambda: [bench_model("resnet50", args.repeat, 1.0)],
        "loop": lambda: [bench_loop(max(3, args.repeat // 2))],
        "build": bench_build,
    }
    for name in wanted:
        try:
            rows.extend(runners[name]())
        except Exception as e:  # noqa: BLE001 - a benchmark that cannot run is reported
            failed = True
            print(f"{name}: failed to run: {type(e).__name__}: {e}", file=sys.stderr)
    if args.json:
        print(json.dumps([dict(asdict(r), ratio=r.ratio) for r in rows], indent=2))
    else:
        print(f"{'benchmark':40} {'native':>12} {'baseline':>12} {'ratio':>8}  target")
        for r in rows:
            mark = "met" if r.met else "MISSED"
            print(f"{r.name:40} {r.native_s * 1e3:10.3f}ms {r.baseline_s * 1e3:10.3f}ms "
                  f"{r.ratio:8.5f}  {r.target} vs {r.baseline}: {mark} {r.note}")
    failed = failed or any("WRONG" in r.note for r in rows)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
