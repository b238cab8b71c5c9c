"""Every registered pass on 10k- and 100k-node programs of four shapes: time must grow linearly.

    python benchmarks/passes.py                  # table, PASS/FAIL per pass and shape
    python benchmarks/passes.py --sizes 1000,10000 --passes FuseOps,InferType --shapes let
    python benchmarks/passes.py --json

Four shapes of N bindings, written as Relay text and parsed (parsing is not timed;
parsed nodes carry spans, as real input does, so costs that show only with spans,
such as locating a use in the source, are measured):

    graph    %i = add(%i-1, 1f);                     a graph-form chain
    let      let %vi = add(%vi-1, 1f);               the same chain in A-normal form
    if       if (if (... %c ...) {%c} else {%c}) ... `if`s nested in conditions
    tuple    (((%x, %x), %x), %x) ...                 tuples nested in tuples

Each pass runs on a typed module built once per shape and size (InferType itself on
a fresh parse per run); the median of `--repeat` runs, 1 run at 50k or more. The
table gives µs per IR node at each size and the ratio of the largest size's time to
the smallest's; linear means that ratio is at most 1.2 times the ratio of the sizes
(12x from 10k to 100k), times the growth of the cost per node of one plain traversal
(the row `(traversal)`: a rebuild visiting each node once), when a node costs more
to visit in a larger heap (cache misses, on a busy machine notably). Times are CPU seconds of the process (`time.process_time`),
so other work on the machine does not distort them. A run longer than `--budget`
CPU seconds is stopped and counts
as a failure (a quadratic pass would take hours at 100k); the larger sizes of that
pass and shape are skipped. The exit status is 0 unless a pass crashes
(RecursionError is a crash).

A second section times `optimize(mod, opt_level=3)` (`relay opt -O3`, relay.build's
pipeline) on ResNet-50 (gen_resnet.py, weights as constants) and GPT-2
(gen_models.py, weights as parameters), parsing not timed; the target is < 2 s each.
`--o3-only` runs just that section, `--no-o3` skips it.
"""
from __future__ import annotations

import argparse
import gc
import json
import signal
import statistics
import sys
import time
from typing import Callable

sys.path.append(str(__import__("pathlib").Path(__file__).resolve().parent))  # after the packages
from gen_models import gpt2_module_text  # noqa: E402
from gen_resnet import resnet50_module  # noqa: E402

from relaylang.ir import IRModule
from relaylang.ir.traverse import post_order, rewrite
import relaylang as rl
from relaylang.transform import InferType, get_pass, list_passes
from relaylang.transform.tvm_pipeline import optimize

SKIP = {"BindParams"}       # needs arrays to bind, not a program transformation to time
CPU_CLOCK_MIN = 0.2         # seconds: shorter runs are timed by the wall clock, unless
# the CPU clock is fine-grained (Linux: 1 ns); wall time on a shared machine counts other
# processes' work and made the 10k runs (tens of ms) look slower than they are
CPU_CLOCK_FINE = time.get_clock_info("process_time").resolution <= 1e-6
LINEAR_SLACK = 1.2          # allowed growth of the time per node from the smallest size
HEADER = '#[version = "0.0.5"]\n'


def graph_text(n: int) -> str:
    lines = [f"  %{i} = add(%{i - 1}, 1f);" if i else "  %0 = add(%x, 1f);" for i in range(n)]
    return (HEADER + "def @main(%x: Tensor[(4), float32]) {\n" + "\n".join(lines)
            + f"\n  %{n - 1}\n}}\n")


def let_text(n: int) -> str:
    lines = [f"  let %v{i + 1} = add(%v{i}, 1f);" for i in range(n)]
    return (HEADER + "def @main(%v0: Tensor[(4), float32]) {\n" + "\n".join(lines)
            + f"\n  %v{n}\n}}\n")


def if_text(n: int) -> str:
    parts = ["if (" * n, "%c"]
    parts.extend(") {\n  %c\n} else {\n  %c\n}" for _ in range(n))
    cond = "".join(parts)
    return (HEADER + "def @main(%c: bool, %x: Tensor[(4), float32]) {\n"
            + f"  if ({cond}) {{ %x }} else {{ add(%x, 1f) }}\n}}\n")


def tuple_text(n: int) -> str:
    body = "(" * n + "%x" + "".join(", %x)" if i % 2 else ", add(%x, 1f))" for i in range(n))
    return HEADER + f"def @main(%x: Tensor[(4), float32]) {{\n  {body}\n}}\n"


SHAPES: dict[str, Callable[[int], str]] = {
    "graph": graph_text, "let": let_text, "if": if_text, "tuple": tuple_text}


class _Timeout(Exception):
    pass


def _alarm(signum, frame):
    raise _Timeout


def _timed(fn: Callable[[], object], budget: float) -> float:
    """CPU seconds `fn` takes; `_Timeout` when over `budget` (where SIGPROF exists).

    CPU time of this process, not wall time: the machine may be shared, and a
    loaded machine must not make a linear pass look quadratic. Runs shorter than
    `CPU_CLOCK_MIN` use wall time where the CPU clock is coarse. Garbage left by
    earlier runs is collected first, so that it is not charged to this one."""
    gc.collect()
    use_alarm = budget > 0 and hasattr(signal, "SIGPROF")
    if use_alarm:
        old = signal.signal(signal.SIGPROF, _alarm)
        signal.setitimer(signal.ITIMER_PROF, budget)
    try:
        start, wall = time.process_time(), time.perf_counter()
        fn()
        cpu, wall = time.process_time() - start, time.perf_counter() - wall
        return cpu if cpu >= CPU_CLOCK_MIN or CPU_CLOCK_FINE else wall  # it may tick in 10 ms
    finally:
        if use_alarm:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)


def prepared(name: str, text: str, typed: IRModule | None) -> IRModule:
    """The input of pass `name`: a fresh parse for InferType, else the typed module."""
    if name == "InferType" or typed is None:
        return rl.parse(text)
    if name == "UnCPS":
        return get_pass("ToCPS")(typed)  # UnCPS undoes ToCPS: time it on CPS code
    return typed


BASELINE = "(traversal)"       # one visit of every node: what the memory hierarchy costs


def time_pass(name: str, text: str, typed: IRModule, repeat: int, budget: float) -> float:
    if name == BASELINE:
        return statistics.median(_timed(lambda: rewrite(typed["main"], lambda old, new: None),
                                        budget) for _ in range(repeat))
    runs = []
    for _ in range(repeat):
        box: list[IRModule] = []    # preparing is not timed, but is bounded by the budget too
        _timed(lambda box=box: box.append(prepared(name, text, typed)), budget)
        mod, p = box[0], get_pass(name)
        runs.append(_timed(lambda p=p, mod=mod: p(mod), budget))
    return statistics.median(runs)


def scaling(names: list[str], shapes: list[str], sizes: list[int], repeat: int,
            budget: float, progress: bool = False) -> list[dict]:
    """One row per pass and shape: seconds and µs per node at each size, the ratio."""
    rows = {(name, shape): {"pass": name, "shape": shape, "seconds": [], "us_per_node": [],
                            "nodes": [], "timeout": False}
            for name in [BASELINE, *names] for shape in shapes}
    for shape in shapes:
        for n in sizes:
            text = SHAPES[shape](n)
            typed = InferType()(rl.parse(text))
            nodes = len(post_order(typed["main"]))
            for name in [BASELINE, *names]:
                row = rows[name, shape]
                if row["timeout"]:
                    continue
                try:
                    seconds = time_pass(name, text, typed, repeat if n < 50_000 else 1, budget)
                except _Timeout:
                    row["timeout"] = True
                    continue
                row["seconds"].append(seconds)
                row["nodes"].append(nodes)
                row["us_per_node"].append(seconds * 1e6 / nodes)
                if progress:
                    print(f"  {name} {shape} {n}: {seconds:.3f} s", file=sys.stderr)
    for row in rows.values():
        secs = row["seconds"]
        row["ratio"] = secs[-1] / secs[0] if len(secs) == len(sizes) and secs[0] > 0 else None
    for row in rows.values():
        row["linear"] = not row["timeout"] and (
            row["ratio"] is None or row["ratio"] <= ratio_limit(sizes, rows[BASELINE, row["shape"]]))
    return list(rows.values())


def ratio_limit(sizes: list[int], baseline: dict) -> float:
    """The largest linear ratio: 1.2x the sizes' ratio, times how much more a node costs to
    merely visit at the largest size (cache misses on a large heap), if it does."""
    grow = sizes[-1] / sizes[0]
    per_node = baseline["ratio"] / grow if baseline["ratio"] is not None else 1.0
    return LINEAR_SLACK * grow * max(1.0, per_node)


O3_TARGET_SECONDS = 2.0


def o3_models(small: bool = False) -> list[tuple[str, Callable[[], IRModule]]]:
    """The -O3 benchmark inputs; `small` shrinks them (for the test suite)."""
    def resnet() -> IRModule:
        text, meta = resnet50_module(units=(1, 1, 1, 1), image=32) if small \
            else resnet50_module()
        return rl.parse(text, metadata=meta)
    return [("resnet50", resnet),
            ("gpt2", lambda: rl.parse(gpt2_module_text(layers=1 if small else 12)))]


def time_o3(repeat: int, small: bool = False) -> list[dict]:
    """Median wall time of the -O3 pipeline per model, parsing excluded."""
    rows = []
    for name, build in o3_models(small):
        runs = []
        for _ in range(repeat):
            mod = build()
            start = time.perf_counter()
            optimize(mod, opt_level=3)
            runs.append(time.perf_counter() - start)
        seconds = statistics.median(runs)
        rows.append({"model": name, "seconds": seconds, "ok": seconds < O3_TARGET_SECONDS})
    return rows


def print_o3(rows: list[dict]) -> None:
    print(f"\n{'-O3 pipeline':<24} {'seconds':>10}   (target < {O3_TARGET_SECONDS:g} s)")
    for r in rows:
        print(f"{r['model']:<24} {r['seconds']:>10.3f}   {'PASS' if r['ok'] else 'FAIL'}")


def main(argv: list[str] | None = None) -> int:
    # What the process held before (a test run's thousands of modules) is frozen out of
    # the collections `_timed` runs before each measurement: each would traverse it all
    # (in the test suite: 164 s instead of 17 for the small sizes)
    gc.freeze()
    try:
        return _main(argv)
    finally:
        gc.unfreeze()


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--passes", default="", help="comma-separated (default: all)")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="of " + ",".join(SHAPES))
    parser.add_argument("--budget", type=float, default=120.0,
                        help="seconds a run may take before it counts as a failure")
    parser.add_argument("--progress", action="store_true", help="each run on stderr")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--o3-only", action="store_true", help="only the -O3 section")
    parser.add_argument("--no-o3", action="store_true", help="skip the -O3 section")
    parser.add_argument("--small", action="store_true", help="shrunk -O3 models (tests)")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    o3 = [] if args.no_o3 else time_o3(args.repeat, args.small)
    if args.o3_only:
        print(json.dumps({"o3": o3}, indent=2)) if args.json else print_o3(o3)
        return 0
    names = [p for p in args.passes.split(",") if p] or \
        [p for p in list_passes() if p not in SKIP]
    shapes = [s for s in args.shapes.split(",") if s]
    results = scaling(names, shapes, sizes, args.repeat, args.budget, args.progress)
    if args.json:
        print(json.dumps({"sizes": sizes, "results": results, "o3": o3}, indent=2))
        return 0
    head = " ".join(f"{n:>9,}" for n in sizes)
    limits = ", ".join(f"{s} {ratio_limit(sizes, b):.3g}" for b in results
                       if b["pass"] == BASELINE for s in [b["shape"]])
    print(f"{'pass':<24} {'shape':<6} {head}   ratio  (µs per node; linear: ratio <= "
          f"{LINEAR_SLACK:g} x sizes' ratio x {BASELINE}'s growth per node: {limits})")
    for r in results:
        cells = [f"{v:>9.2f}" for v in r["us_per_node"]]
        cells += [f"{'timeout' if r['timeout'] else '-':>9}"] * (len(sizes) - len(cells))
        ratio = f"{r['ratio']:6.2f}" if r["ratio"] is not None else f"{'-':>6}"
        print(f"{r['pass']:<24} {r['shape']:<6} {' '.join(cells)}  {ratio}  "
              f"{'PASS' if r['linear'] else 'FAIL'}")
    if o3:
        print_o3(o3)
    return 0


if __name__ == "__main__":
    sys.exit(main())
