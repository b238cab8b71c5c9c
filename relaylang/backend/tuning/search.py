"""Searching one kernel's schedule space: a cost model guiding evolutionary mutation.

A point is a value for every knob of the task's space (`Task.space`: name -> choices,
all valid by construction). The search measures the default schedule first, then a few
random points, then repeatedly:

1. fits the cost model to what was measured: ridge regression of log(time) on the
   point's features (per knob, a one-hot of its choice and log2 of its value), in NumPy,
   refitted after every measurement (tens of points: closed form, microseconds);
2. makes a pool of unmeasured candidates: mutations (one or two knobs changed) of the
   best points so far, plus random points;
3. measures the pool's best by the model, or -- with probability `EXPLORE` -- a random
   member of the pool (the model only knows what it has seen).

A space no larger than the budget is measured exhaustively (in random order). Points
that make the same kernel (`Measurement.schedule`) are measured once.
"""
from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

EXPLORE = 0.25
INITIAL_RANDOM = 4
POOL = 64
ELITE = 4
RIDGE = 1e-2

Point = tuple[int, ...]        # a value per knob, in the space's (sorted) knob order


@dataclass
class Trial:
    point: Point
    ms: float              # math.inf: the candidate failed (wrong values, no kernel)
    note: str = ""


class CostModel:
    """Ridge regression of log(ms) on one-hot and log2 features of a point."""

    def __init__(self, space: list[tuple[str, tuple[int, ...]]]):
        self.space = space
        self.weights: np.ndarray | None = None

    def features(self, point: Point) -> np.ndarray:
        out: list[float] = [1.0]
        for (_, choices), v in zip(self.space, point):
            out.extend(1.0 if v == c else 0.0 for c in choices)
            out.append(math.log2(abs(v) + 1))
        return np.asarray(out)

    def fit(self, trials: list[Trial]) -> None:
        ok = [t for t in trials if math.isfinite(t.ms) and t.ms > 0]
        if len(ok) < 3:
            self.weights = None
            return
        x = np.stack([self.features(t.point) for t in ok])
        y = np.log(np.asarray([t.ms for t in ok]))
        a = x.T @ x + RIDGE * np.eye(x.shape[1])
        self.weights = np.linalg.solve(a, x.T @ y)

    def predict(self, point: Point) -> float:
        if self.weights is None:
            return 0.0
        return float(self.features(point) @ self.weights)


def search(space: dict[str, tuple[int, ...]], defaults: dict[str, int], budget: int,
           measure: Callable[[dict[str, int]], Trial], seed: int = 0,
           stop: Callable[[], bool] = lambda: False) -> list[Trial]:
    """Measure up to `budget` points of `space` (the default first), guided by the cost
    model; `measure(values)` times one point (its `Trial.point` is filled in here), `stop()`
    ends the search early (a deadline). The trials, in order."""
    names = sorted(space)
    order = [(n, tuple(space[n])) for n in names]
    rng = random.Random(seed)
    model = CostModel(order)
    total = math.prod(len(c) for _, c in order)
    trials: list[Trial] = []
    seen: set[Point] = set()

    def point_of(values: dict[str, int]) -> Point:
        return tuple(int(values.get(n, c[0])) for n, c in order)

    def random_point() -> Point:
        return tuple(rng.choice(c) for _, c in order)

    def run(point: Point) -> None:
        seen.add(point)
        trial = measure(dict(zip(names, point)))
        trial.point = point
        trials.append(trial)

    run(point_of(defaults))
    if total <= budget:
        rest = [p for p in _all_points(order) if p not in seen]
        rng.shuffle(rest)
        for p in rest:
            if stop() or len(trials) >= budget:
                break
            run(p)
        return trials
    while len(trials) < budget and len(seen) < total and not stop():
        if len(trials) <= INITIAL_RANDOM:
            candidate = _unseen(random_point, seen, rng)
        else:
            model.fit(trials)
            pool = _pool(trials, order, seen, random_point, rng)
            if not pool:
                break
            if model.weights is None or rng.random() < EXPLORE:
                candidate = rng.choice(pool)
            else:
                candidate = min(pool, key=model.predict)
        if candidate is None:
            break
        run(candidate)
    return trials


def _all_points(order: list[tuple[str, tuple[int, ...]]]) -> list[Point]:
    points: list[Point] = [()]
    for _, choices in order:
        points = [p + (c,) for p in points for c in choices]
    return points


def _unseen(make: Callable[[], Point], seen: set[Point], rng: random.Random) -> Point | None:
    for _ in range(64):
        p = make()
        if p not in seen:
            return p
    return None


def _pool(trials: list[Trial], order: list[tuple[str, tuple[int, ...]]], seen: set[Point],
          random_point: Callable[[], Point], rng: random.Random) -> list[Point]:
    """Unmeasured candidates: mutations of the best points, and random ones."""
    ranked = sorted((t for t in trials if math.isfinite(t.ms)), key=lambda t: t.ms)
    elite = [t.point for t in ranked[:ELITE]] or [trials[0].point]
    pool: set[Point] = set()
    for _ in range(POOL * 4):
        if len(pool) >= POOL:
            break
        if rng.random() < 0.75:
            p = list(rng.choice(elite))
            for _ in range(rng.choice((1, 1, 2))):
                k = rng.randrange(len(order))
                p[k] = rng.choice(order[k][1])
            point = tuple(p)
        else:
            point = random_point()
        if point not in seen:
            pool.add(point)
    return sorted(pool)
