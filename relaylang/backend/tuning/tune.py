"""`rl.tune`: search each kernel's schedule, keep the best in a database.

    report = rl.tune(mod, params=params, trials=200, db="tuning.json", timeout_s=1200)
    print(report.table())
    lib = rl.build(mod, target="llvm", params=params, tuning_db="tuning.json")

The tasks are the model's distinct kernels (`tasks.extract_tasks`). Each task's default
schedule is measured first; the remaining trials are shared out by each task's share of
the model's time (its default time x how many times the model runs it), and the tasks
are searched in that order (`search.search`), so that an interrupt leaves the kernels
that matter most tuned; with `timeout_s` each task also gets its share of the time that
is left when it starts. Every candidate's outputs are compared with the
default schedule's on the same inputs; one that differs is rejected (and reported: it is
a compiler bug). After each task the database is written (`database.Database.save`),
keeping what earlier runs found for other kernels and for this one when it was faster.
A search's winner is timed again against the default, alternately (`VALIDATE` times
each), and recorded only when it still beats it by `MIN_GAIN` (timing noise is not a
schedule).

Before the kernels, the graph knobs (layouts.py: the NCHWc channel block of a model with
blocked convolutions) are searched by timing the whole model built with each choice; the
kept choice is recorded for the model and the kernels are then tuned in that layout.

With `end_to_end` (the default) the report also times the whole model built with the
default schedules and with the database, side by side (interleaved runs, medians).
"""
from __future__ import annotations

import math
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...ir import progress
from .database import Database, GraphRecord, Record, load
from .measure import Bench, entry_args, same_values, time_builds
from .search import Trial, search
from .tasks import Task, extract_tasks

MIN_GAIN = 0.03        # a schedule must be 3% faster than the default to be recorded
VALIDATE = 3           # alternate timings of the winner and the default before keeping it


@dataclass
class KernelResult:
    name: str
    key: str
    ops: list[str]
    weight: int
    default_ms: float
    tuned_ms: float
    trials: int
    knobs: dict[str, int]
    rejected: list[str] = field(default_factory=list)

    @property
    def speedup(self) -> float:
        return self.default_ms / self.tuned_ms if self.tuned_ms > 0 else 1.0


@dataclass
class TuningReport:
    kernels: list[KernelResult]
    db: str
    model_default_ms: float | None = None
    model_tuned_ms: float | None = None
    seconds: float = 0.0
    layout: Any = None          # layouts.LayoutResult (None: no graph knob applied)

    def table(self) -> str:
        head = ("kernel", "runs", "default ms", "tuned ms", "speedup", "trials")
        rows = [(k.name, str(k.weight), f"{k.default_ms:.4f}", f"{k.tuned_ms:.4f}",
                 f"{k.speedup:.2f}x", str(k.trials)) for k in self.kernels]
        widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
                  for i, h in enumerate(head)]

        def line(cells: tuple[str, ...]) -> str:
            return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
        out = [line(head), "-" * len(line(head))] + [line(r) for r in rows]
        for k in self.kernels:
            for why in k.rejected:
                out.append(f"rejected for {k.name}: {why}")
        if self.layout is not None:
            out.append(self.layout.line())
        if self.model_default_ms is not None and self.model_tuned_ms is not None:
            gain = self.model_default_ms / self.model_tuned_ms if self.model_tuned_ms else 1.0
            out.append(f"model: {self.model_default_ms:.4f} ms with the default schedules, "
                       f"{self.model_tuned_ms:.4f} ms tuned ({gain:.2f}x)")
        out.append(f"tuned in {self.seconds:.1f} s; database: {self.db}")
        return "\n".join(out) + "\n"


def tune(mod: Any, params: Mapping[str, Any] | None = None, trials: int = 64,
         db: str = "tuning.json", timeout_s: float | None = None, entry: str = "main",
         target: str = "llvm", seed: int = 0, end_to_end: bool = True) -> TuningReport:
    """Tune the kernels of `mod` (see the module docstring); `trials` is the total number of
    schedules measured over all kernels, `timeout_s` a bound on the whole search."""
    start = time.perf_counter()
    deadline = start + timeout_s if timeout_s else math.inf
    if trials < 1:
        raise ValueError(f"trials must be at least 1, not {trials}")
    database = load(db, for_writing=True) or Database()
    layout = _tune_graph(mod, params, entry, target, database, db)
    tasks = extract_tasks(mod, params, entry, target,
                          config=layout.config if layout is not None else None)
    benches = {t.key: Bench(t, seed) for t in tasks}
    baselines: dict[str, Any] = {}
    with progress.begin("measuring default kernels", total=len(tasks), unit="kernel") as bar:
        for t in tasks:
            baselines[t.key] = benches[t.key].run(t.defaults)
            bar.update(1)
    shares = {t.key: baselines[t.key].ms * t.weight for t in tasks}
    budgets = _share_out(tasks, shares, max(0, trials - len(tasks)))
    order = sorted(tasks, key=lambda t: -shares[t.key])
    results: list[KernelResult] = []
    with progress.begin("tuning", total=max(trials, len(tasks)), unit="trial") as bar:
        bar.update(len(tasks))
        left = sum(shares.values())
        for task in order:
            now = time.perf_counter()
            if now >= deadline:
                break
            # a time budget shares out the time that is left as trials are shared out
            share = shares[task.key] / left if left > 0 else 1.0
            left -= shares[task.key]
            task_deadline = min(deadline, now + (deadline - now) * share) \
                if math.isfinite(deadline) else deadline
            result = _tune_task(task, benches[task.key], baselines[task.key],
                                1 + budgets[task.key], seed, task_deadline, bar)
            results.append(result)
            _record(database, task, result)
            database.save(db)
    for task in order[len(results):]:           # not reached before the deadline
        base = baselines[task.key]
        results.append(KernelResult(task.name, task.key, task.ops, task.weight, base.ms,
                                    base.ms, 1, dict(base.schedule)))
    report = TuningReport(results, db, layout=layout)
    if end_to_end:
        report.model_default_ms, report.model_tuned_ms = compare_builds(
            mod, params, db, entry, target)
    report.seconds = time.perf_counter() - start
    return report


def _tune_graph(mod: Any, params: Mapping[str, Any] | None, entry: str, target: str,
                database: Database, db: str) -> Any:
    """The model's graph knobs searched (layouts.py) and the choice recorded (a choice
    no faster than the default by MIN_GAIN removes an earlier record: the model is
    built with the default)."""
    from .layouts import model_key, tune_layout
    with progress.begin("choosing the layout", total=1, unit="model") as bar:
        result = tune_layout(mod, params, entry, target, min_gain=MIN_GAIN)
        bar.update(1)
    if result is None:
        return None
    key = model_key(mod, entry)
    if result.config:
        database.graphs[key] = GraphRecord(entry, dict(result.config), result.default_ms,
                                           result.tuned_ms)
    else:
        database.graphs.pop(key, None)
    database.save(db)
    return result


def _share_out(tasks: list[Task], shares: dict[str, float], extra: int) -> dict[str, int]:
    """`extra` trials split by share of the model's time (largest remainders), none to a
    task whose space has only its default."""
    room = {t.key: max(0, t.size - 1) for t in tasks}
    total = sum(shares[t.key] for t in tasks if room[t.key]) or 1.0
    want = {t.key: extra * shares[t.key] / total if room[t.key] else 0.0 for t in tasks}
    out = {k: min(room[k], int(w)) for k, w in want.items()}
    left = extra - sum(out.values())
    for k in sorted(want, key=lambda k: -(want[k] - int(want[k]))):
        if left <= 0:
            break
        if out[k] < room[k]:
            out[k] += 1
            left -= 1
    return out


def _tune_task(task: Task, bench: Bench, base: Any, budget: int, seed: int,
               deadline: float, bar: Any) -> KernelResult:
    by_schedule: dict[tuple, float] = {base.schedule: base.ms}
    rejected: list[str] = []
    best = (base.ms, dict(base.schedule))
    count = 0

    def measure(values: dict[str, int]) -> Trial:
        nonlocal best, count
        count += 1
        if count == 1:
            return Trial((), base.ms)          # the default, measured already
        bar.update(1)
        try:
            m = bench.run(values)
        except Exception as e:  # noqa: BLE001 -- a candidate failing to build is a result
            rejected.append(f"{_show(values)}: {type(e).__name__}: {e}")
            return Trial((), math.inf, "failed")
        if m.schedule in by_schedule:
            return Trial((), by_schedule[m.schedule], "same kernel")
        why = same_values(m.outputs, base.outputs)
        if why:
            rejected.append(f"{_show(values)}: {why}")
            by_schedule[m.schedule] = math.inf
            return Trial((), math.inf, why)
        by_schedule[m.schedule] = m.ms
        if m.ms < best[0]:
            best = (m.ms, dict(m.schedule))
            bar.update(0, note=f"{task.name} {base.ms / m.ms:.2f}x")
        return Trial((), m.ms)

    trials = search(task.space, task.defaults, budget, measure, seed,
                    stop=lambda: time.perf_counter() >= deadline)
    default_ms, tuned_ms, knobs = base.ms, best[0], best[1]
    if knobs != dict(base.schedule):
        # the search's best of many noisy times is optimistic: the winner and the
        # default are timed again, alternately, and the winner kept only if it still wins
        d, t = [], []
        for _ in range(VALIDATE):
            d.append(bench.run(task.defaults).ms)
            t.append(bench.run(knobs).ms)
        default_ms, tuned_ms = float(np.median(d)), float(np.median(t))
        if tuned_ms > default_ms * (1 - MIN_GAIN):
            tuned_ms, knobs = default_ms, dict(base.schedule)
    return KernelResult(task.name, task.key, task.ops, task.weight, default_ms, tuned_ms,
                        len(trials), knobs, rejected)


def _record(database: Database, task: Task, result: KernelResult) -> None:
    """Keep the tuned schedule when it beat the default by MIN_GAIN and no earlier run
    recorded a faster one (a run that found nothing better leaves the record alone)."""
    if result.tuned_ms > result.default_ms * (1 - MIN_GAIN):
        return
    old = database.kernels.get(task.key)
    if old is not None and 0 < old.tuned_ms <= result.tuned_ms:
        return
    database.kernels[task.key] = Record(task.name, task.ops, result.knobs, result.default_ms,
                                       result.tuned_ms, result.trials)


def _show(values: dict[str, int]) -> str:
    from ..llvm.knobs import describe
    return describe(values)


def compare_builds(mod: Any, params: Mapping[str, Any] | None, db: str, entry: str = "main",
                   target: str = "llvm", rounds: int = 15) -> tuple[float, float]:
    """Median ms per run of the model built with the default schedules and with `db`,
    timed in alternation on the same random inputs."""
    from ..build import build
    libs = {"default": build(mod, target, params=params, entry=entry),
            "tuned": build(mod, target, params=params, entry=entry, tuning_db=db)}
    args = entry_args(libs["default"], entry)
    for lib in libs.values():
        lib[entry](*args)
    times = time_builds(libs, entry, args, rounds)
    return times["default"], times["tuned"]
