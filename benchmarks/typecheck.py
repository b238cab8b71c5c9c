"""Type-check time: `relaylang.typing.check_module` on ResNet-50 and GPT-2, and how it scales.

    python benchmarks/typecheck.py [--repeat 7] [--repeat-large 3] [--sizes 1000,10000,100000]
                                   [--layers 12] [--json]

Models: ResNet-50 with its weights as meta constants (gen_resnet.py) and GPT-2
(gen_models.py), each parsed afresh before every run (a node's `checked_type`
is set once, so a module is checked only once) and only `check_module` timed;
the median of `--repeat` runs is reported. Target (issue acceptance): under
0.5 s each.

Scaling: a graph-form chain of N elementwise calls (`%1 = multiply(%0, 2f);`)
and an N-long `let` chain, for each N of `--sizes`. The µs per op must stay
flat: the per-op time at the largest N over that at the smallest must be at
most 3 (linear time), and nothing may raise RecursionError. Sizes above
20,000 use `--repeat-large` runs. The exit status is 0 whether or not targets
are met; it is 1 when something failed to run (a RecursionError included).
"""
from __future__ import annotations

import argparse
import gc
import json
import math
import statistics
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parent))  # after the packages: `lsp` is not ./lsp.py
import gen_models  # sibling script modules, not a package
import gen_resnet

TARGET_MODEL_S = 0.5
TARGET_RATIO = 3.0
LARGE = 20_000                  # chains longer than this use --repeat-large
CHAIN_OPS = ("add", "multiply", "subtract")
SHOWN_ERRORS = 5


@dataclass
class Result:
    module: str
    kind: str                   # "model", "graph chain" or "let chain"
    lines: int
    nodes: int = 0              # IR nodes reachable from @main
    ops: int = 0                # calls, tuples and projections among them
    size: int | None = None     # N of a chain
    runs_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    error_count: int = 0        # type errors reported by check_module
    errors: list[str] = field(default_factory=list)       # the first few
    crash: str | None = None    # an exception that stopped the runs

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_ms) if self.runs_ms else float("nan")

    @property
    def cpu_median_ms(self) -> float:
        return statistics.median(self.cpu_ms) if self.cpu_ms else float("nan")

    def us_per_op(self, cpu: bool = False) -> float:
        ms = self.cpu_median_ms if cpu else self.median_ms
        return ms * 1000.0 / self.ops if self.ops else float("nan")


# --- inputs --------------------------------------------------------------------------------------

def chain_text(n: int, let: bool = False) -> str:
    """@main over %x with n elementwise calls in a row: graph bindings `%i = op(prev, c);`
    with the last call inlined as the result (as the printer does), or `let %vi = ...;`."""
    head = ['#[version = "0.0.5"]',
            "def @main(%x: Tensor[(1, 64), float32]) -> Tensor[(1, 64), float32] {"]
    lines, prev = [], "%x"
    for i in range(n):
        call = f"{CHAIN_OPS[i % 3]}({prev}, {i % 7 + 1}f)"
        name = f"%v{i}" if let else f"%{i}"
        if i == n - 1 and not let:
            lines.append(f"  {call}")
            break
        lines.append(f"  let {name} = {call};" if let else f"  {name} = {call};")
        prev = name
    if let:
        lines.append(f"  {prev}")
    return "\n".join(head + lines + ["}", ""])


def ir_counts(mod: Any) -> tuple[int, int]:
    """(IR nodes, calls + tuples + projections) reachable from @main."""
    from relaylang.ir.expr import Call, Tuple, TupleGetItem
    from relaylang.ir.traverse import post_order
    nodes = post_order(mod["main"])
    return len(nodes), sum(isinstance(n, (Call, Tuple, TupleGetItem)) for n in nodes)


# --- timing --------------------------------------------------------------------------------------

def _check_once(text: str, metadata: dict | None) -> tuple[Any, list[Any], float, float]:
    """Parse (not timed), then time check_module: (module, diagnostics, wall ms, CPU ms)."""
    import relaylang
    from relaylang.typing import check_module
    mod = relaylang.parse(text, metadata=metadata)
    gc.collect()        # the previous run's garbage is not this run's cost
    start, start_cpu = time.perf_counter(), time.process_time()
    _, diagnostics = check_module(mod)
    cpu = (time.process_time() - start_cpu) * 1000.0
    return mod, diagnostics, (time.perf_counter() - start) * 1000.0, cpu


def bench(res: Result, text: str, metadata: dict | None, repeat: int) -> Result:
    """Fill `res` with `repeat` timed runs; the first run's module gives the counts and its
    diagnostics the errors. A RecursionError (or any other exception) is recorded."""
    from relaylang.ir.diagnostics import Severity
    try:
        for i in range(repeat):
            mod, diagnostics, wall, cpu = _check_once(text, metadata)
            res.runs_ms.append(wall)
            res.cpu_ms.append(cpu)
            if i == 0:
                res.nodes, res.ops = ir_counts(mod)
                errors = [d for d in diagnostics if d.severity is Severity.ERROR]
                res.error_count = len(errors)
                res.errors = [d.short() for d in errors[:SHOWN_ERRORS]]
            del mod, diagnostics
    except RecursionError as e:
        res.crash = f"RecursionError: {e}"
    except Exception as e:  # noqa: BLE001  (reported as a failure to run, not a traceback)
        res.crash = f"{type(e).__name__}: {e}"
    return res


def bench_models(repeat: int, layers: int) -> list[Result]:
    resnet, metadata = gen_resnet.resnet50_module()
    gpt2 = gen_models.gpt2_module_text(layers=layers)
    return [
        bench(Result("resnet50 (meta constants)", "model", gen_models.count_lines(resnet)),
              resnet, metadata, repeat),
        bench(Result(f"gpt2 {layers} layers", "model", gen_models.count_lines(gpt2)),
              gpt2, None, repeat),
    ]


def bench_chains(sizes: list[int], repeat: int, repeat_large: int) -> list[Result]:
    out = []
    for let in (False, True):
        kind = "let chain" if let else "graph chain"
        for n in sizes:
            text = chain_text(n, let)
            res = Result(f"{kind} {n:,}", kind, gen_models.count_lines(text), size=n)
            out.append(bench(res, text, None, repeat_large if n > LARGE else repeat))
            del text
    return out


# --- verdicts ------------------------------------------------------------------------------------

def scaling(results: list[Result]) -> dict[str, dict[str, Any]]:
    """Per kind of chain: sizes, µs/op at each, and largest-over-smallest ratios."""
    out: dict[str, dict[str, Any]] = {}
    for kind in ("graph chain", "let chain"):
        rows = sorted((r for r in results if r.kind == kind and r.runs_ms and not r.crash),
                      key=lambda r: r.size or 0)
        if not rows:
            continue
        first, last = rows[0], rows[-1]
        out[kind] = {"sizes": [r.size for r in rows],
                     "us_per_op": [r.us_per_op() for r in rows],
                     "cpu_us_per_op": [r.us_per_op(cpu=True) for r in rows],
                     "ratio": {"wall": last.us_per_op() / first.us_per_op(),
                               "cpu": last.us_per_op(cpu=True) / first.us_per_op(cpu=True)}}
    return out


def check_targets(results: list[Result], scale: dict[str, dict[str, Any]]) -> list[dict]:
    """PASS/FAIL rows. A model passes when its check reports no error and its median is
    under the target; a chain kind when none of its runs crashed and the per-op ratio,
    the lower of wall and CPU (a busy machine inflates wall time), is at most 3."""
    rows = []
    for r in (r for r in results if r.kind == "model"):
        ok = not r.crash and r.error_count == 0 and r.median_ms / 1000.0 < TARGET_MODEL_S
        rows.append({"target": f"check s, {r.module}", "want": f"< {TARGET_MODEL_S:g}",
                     "got": r.median_ms / 1000.0, "pass": ok, "note": _why(r)})
    for kind in ("graph chain", "let chain"):
        mine = [r for r in results if r.kind == kind]
        if not mine:
            continue
        ratio = min(scale[kind]["ratio"].values()) if kind in scale else float("nan")
        sizes = f"{min(r.size or 0 for r in mine):,}..{max(r.size or 0 for r in mine):,}"
        bad = next((r for r in mine if r.crash or r.error_count), None)
        rows.append({"target": f"us/op ratio, {kind} {sizes}", "want": f"<= {TARGET_RATIO:g}x",
                     "got": ratio, "pass": bad is None and ratio <= TARGET_RATIO,
                     "note": _why(bad) if bad else ""})
    return rows


def _why(r: Result) -> str:
    if r.crash:
        return r.crash
    return f"{r.error_count} type errors" if r.error_count else ""


# --- output --------------------------------------------------------------------------------------

def _fmt(value: float | None, digits: int = 1) -> str:
    if value is None or math.isnan(value):
        return "-"
    return f"{value:,}" if isinstance(value, int) else f"{value:,.{digits}f}"


def format_table(results: list[Result]) -> list[str]:
    head = (f"{'module':<26} {'lines':>7} {'nodes':>8} {'ops':>7} {'runs':>4} "
            f"{'median ms':>10} {'cpu ms':>9} {'us/op':>7} {'errors':>6}")
    out = [head, "-" * len(head)]
    for r in results:
        out.append(f"{r.module:<26} {_fmt(r.lines):>7} {_fmt(r.nodes):>8} {_fmt(r.ops):>7} "
                   f"{len(r.runs_ms):>4} {_fmt(r.median_ms, 2):>10} "
                   f"{_fmt(r.cpu_median_ms, 2):>9} {_fmt(r.us_per_op(), 2):>7} "
                   f"{_fmt(r.error_count):>6}")
    return out


def format_problems(results: list[Result]) -> list[str]:
    out = []
    for r in results:
        if r.crash:
            out.append(f"error: {r.module}: {r.crash}")
        if r.error_count:
            out.append(f"error: {r.module}: check_module reported {r.error_count} type errors, "
                       "the first:")
            out += [f"    {e}" for e in r.errors]
    return out


def format_report(report: dict[str, Any], results: list[Result]) -> str:
    out = ["relaylang.typing.check_module; each run on a freshly parsed module, "
           + "parsing not timed", ""]
    out += format_table(results) + format_problems(results) + [""]
    for kind, s in report["scaling"].items():
        per_op = ", ".join(f"{u:.2f} ({n:,})" for u, n in zip(s["us_per_op"], s["sizes"]))
        out.append(f"{kind}: us/op {per_op}; largest/smallest {s['ratio']['wall']:.2f}x wall, "
                   f"{s['ratio']['cpu']:.2f}x CPU")
    out.append("")
    for row in report["targets"]:
        got = f"{row['got']:.2f}x" if row["want"].endswith("x") else f"{row['got']:.3f}"
        verdict = "PASS" if row["pass"] else "FAIL"
        note = f"  ({row['note']})" if row["note"] else ""
        out.append(f"{row['target']:<40} {row['want']:>8} {got:>8}  {verdict}{note}")
    return "\n".join(out)


def run(args: argparse.Namespace) -> tuple[dict[str, Any], list[Result]]:
    results = [] if args.no_models else bench_models(args.repeat, args.layers)
    results += bench_chains(args.sizes, args.repeat, args.repeat_large)
    scale = scaling(results)
    report = {"command": args.command, "scaling": scale,
              "targets": check_targets(results, scale)}
    return report, results


def _sizes(text: str) -> list[int]:
    return sorted({int(s.replace("_", "")) for s in text.split(",") if s.strip()})


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=7, help="runs per model and per chain")
    ap.add_argument("--repeat-large", type=int, default=3,
                    help=f"runs per chain longer than {LARGE:,}")
    ap.add_argument("--sizes", type=_sizes, default=[1_000, 10_000, 100_000],
                    help="chain lengths, comma-separated")
    ap.add_argument("--layers", type=int, default=12, help="layers of the GPT-2 module")
    ap.add_argument("--no-models", action="store_true", help="only the scaling section")
    ap.add_argument("--json", action="store_true", help="machine-readable output")
    args = ap.parse_args(argv)
    args.command = " ".join(["python", "benchmarks/typecheck.py",
                             *(sys.argv[1:] if argv is None else argv)])
    report, results = run(args)
    if args.json:
        report["results"] = [dict(asdict(r), median_ms=r.median_ms,
                                  cpu_median_ms=r.cpu_median_ms, us_per_op=r.us_per_op())
                             for r in results]
        print(json.dumps(report, indent=2))
    else:
        print(format_report(report, results))
    return 1 if any(r.crash for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
