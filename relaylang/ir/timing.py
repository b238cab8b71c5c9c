"""The timing table every tool prints: `relay opt --time-passes`, `relay build --time` and
the profiler (a leaf: the standard library only, so every layer may format one).

    rows = aggregate([("InferType", 0.004), ("FoldConstant", 0.012), ("InferType", 0.003)])
    print(timing_table(rows, name_header="pass"), end="")

    pass          calls  total ms  mean ms  share %
    FoldConstant      1    12.000   12.000     63.2
    InferType         2     7.000    3.500     36.8
    -----------------------------------------------
    total             3    19.000    6.333    100.0

One row per name: calls, total and mean milliseconds and the share of the total, sorted by
total time (longest first; equal times keep their order), then a rule and the totals row,
whose calls and milliseconds are the sums of the rows' (its share is that sum's share of
`total=` when one is given, else 100). Extra columns (the profiler's ops,
shapes, GFLOPS) follow the share, as text. `total=` (a measured total, e.g. with the
profiler's overhead) sets what the shares are of; `footer=` lines follow the table.
Columns are separated by at least two spaces and a cell never holds two spaces running, so
`read_timing_table` (for tests) splits a line back into its cells.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

COLUMNS = ("calls", "total ms", "mean ms", "share %")


@dataclass(frozen=True)
class TimingRow:
    """One row: `name`, how many `calls`, their `seconds` in all, and extra cells by
    header (text)."""

    name: str
    calls: int
    seconds: float
    extra: Mapping[str, str] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        return self.seconds / self.calls if self.calls else 0.0


def aggregate(samples: Iterable[tuple[str, float]]) -> list[TimingRow]:
    """One row per name of (name, seconds) samples, in the order names first appear."""
    calls: dict[str, int] = {}
    seconds: dict[str, float] = {}
    for name, s in samples:
        calls[name] = calls.get(name, 0) + 1
        seconds[name] = seconds.get(name, 0.0) + s
    return [TimingRow(name, calls[name], seconds[name]) for name in calls]


def _cell(text: str) -> str:
    """A cell's text: never empty, never two spaces running (they separate cells)."""
    text = " ".join(str(text).split())
    return text or "-"


def timing_table(rows: Iterable[TimingRow], name_header: str = "name",
                 extra_headers: Sequence[str] = (), total: float | None = None,
                 footer: Sequence[str] = (), sort: bool = True) -> str:
    """The table of `rows` as text ending in a newline (see the module's docstring)."""
    rows = list(rows)
    if sort:
        rows = sorted(rows, key=lambda r: -r.seconds)      # stable: ties keep their order
    row_sum = sum(r.seconds for r in rows)
    calls_sum = sum(r.calls for r in rows)
    base = total if total is not None else row_sum
    share = (lambda s: 100.0 * s / base) if base > 0 else (lambda s: 0.0)

    def numbers(calls: int, seconds: float) -> list[str]:
        mean = seconds / calls if calls else 0.0
        return [str(calls), f"{seconds * 1e3:.3f}", f"{mean * 1e3:.3f}", f"{share(seconds):.1f}"]

    header = [name_header, *COLUMNS, *extra_headers]
    body = [[_cell(r.name), *numbers(r.calls, r.seconds),
             *(_cell(r.extra.get(h, "")) for h in extra_headers)] for r in rows]
    totals = ["total", *numbers(calls_sum, row_sum), *("" for _ in extra_headers)]
    table = [header, *body, totals]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    numeric = range(1, 1 + len(COLUMNS))

    def render(line: list[str]) -> str:
        cells = [c.rjust(w) if i in numeric else c.ljust(w)
                 for i, (c, w) in enumerate(zip(line, widths))]
        return "  ".join(cells).rstrip()

    rule = "-" * len(render(header))
    out = [render(header), *(render(line) for line in body), rule, render(totals), *footer]
    return "\n".join(out) + "\n"


def read_timing_table(text: str) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, totals row) of a table `timing_table` wrote, each a list of cells
    (lines after the totals row, the footer, are ignored)."""
    lines = [line for line in text.splitlines() if line.strip()]
    split = [re.split(r"\s{2,}", line.strip()) for line in lines]
    rule = next(i for i, line in enumerate(lines) if set(line.strip()) == {"-"})
    return split[0], split[1:rule], split[rule + 1]
