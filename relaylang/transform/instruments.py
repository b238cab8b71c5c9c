"""The built-in pass instruments: print IR around passes, time them, verify after each,
show their progress.

(TVM's python/tvm/ir/instrument.py; xDSL's `PassPipeline.callback`.) They write to
the stream they are given, so the CLI decides where debugging output goes.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any, TextIO

from ..ir.analysis import free_vars
from ..ir.diagnostics import DiagnosticError
from ..ir.module import IRModule
from .pass_infra import Pass, PassContext, PassInfo, PassInstrument, Sequential, canonical_name


def _text(mod: IRModule) -> str:
    from ..syntax.printer import astext
    return astext(mod, show_meta_data=False)


class PrintIR(PassInstrument):
    """Print the module before and/or after passes: `before`/`after` name passes, or "*"
    for all; with `changed_only`, print after a pass only if it changed the text."""

    def __init__(self, before: tuple[str, ...] = (), after: tuple[str, ...] = (),
                 changed_only: bool = False, stream: TextIO | None = None):
        self.before = {canonical_name(n) if n != "*" else "*" for n in before}
        self.after = {canonical_name(n) if n != "*" else "*" for n in after}
        self.changed_only = changed_only
        self.stream = stream
        self._last: dict[str, str] = {}

    def _wants(self, names: set[str], info: PassInfo) -> bool:
        return "*" in names or canonical_name(info.name) in names

    def _write(self, header: str, text: str) -> None:
        out = self.stream or sys.stderr
        out.write(f"// ----- {header} -----\n{text}")

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        if self.changed_only:
            self._last[info.name] = _text(mod)
        if self._wants(self.before, info):
            self._write(f"IR before {info.name}", _text(mod))

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        if not self._wants(self.after, info):
            return
        text = _text(mod)
        if self.changed_only and self._last.get(info.name) == text:
            return
        self._write(f"IR after {info.name}", text)


class PassTimingInstrument(PassInstrument):
    """Wall time per pass, in the order passes ran; `report()` formats the table
    (`ir/timing.py`: one row per pass name with its calls, sorted by time, and the total).
    A pass run inside another one's run is timed on its own and its time taken out of the
    outer pass's, so the rows add up to the time spent in passes.

    `render()` is TVM's: the same table for the passes timed since the last time a
    context holding the instrument was left (TVM clears its profile then), "" when there
    are none; `report()` and `timings` keep everything, for reading after the context."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._start: list[list[float]] = []      # [start, seconds of the passes inside]
        self._live = 0                           # timings[_live:]: what render() shows

    def exit_pass_ctx(self) -> None:
        self._live = len(self.timings)

    def render(self) -> str:
        if self._live >= len(self.timings):
            return ""
        from ..ir.timing import aggregate, timing_table
        return timing_table(aggregate(self.timings[self._live:]), name_header="pass")

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._start.append([time.perf_counter(), 0.0])

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        start, inner = self._start.pop()
        elapsed = time.perf_counter() - start
        if self._start:
            self._start[-1][1] += elapsed
        self.timings.append((info.name, max(elapsed - inner, 0.0)))

    def report(self) -> str:
        from ..ir.timing import aggregate, timing_table
        return timing_table(aggregate(self.timings), name_header="pass")


class PassProgress(PassInstrument):
    """Passes as a progress task (`relaylang.ir.progress`): one step per pass run at the
    top (passes a pass runs inside it are part of its step), the running pass's name as
    the note. `total`: the steps expected (`planned_steps`), None when unknown. The task
    begins with the first pass and ends with the context it began in (a nested context
    holding it too: when that one is left), or once `total` steps are done. Nothing is
    drawn unless a tool installed a renderer."""

    def __init__(self, total: int | None = None, label: str = "passes"):
        self.total, self.label = total, label
        self._task: Any = None
        self._contexts = 0         # contexts entered holding this instrument, nested
        self._began_in = 0         # ... when the task began
        self._depth = 0            # passes running, nested

    def enter_pass_ctx(self) -> None:
        self._contexts += 1

    def exit_pass_ctx(self) -> None:
        self._contexts -= 1
        if self._contexts < self._began_in:
            self._close()

    def _close(self) -> None:
        if self._task is not None:
            self._task.close()
            self._task = None
        self._depth = 0

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._depth += 1
        if self._depth == 1:
            if self._task is None:
                from ..ir.progress import begin
                self._task = begin(self.label, self.total, "pass")
                self._began_in = self._contexts
            self._task.update(0, note=info.name)

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._depth -= 1
        if self._depth == 0 and self._task is not None:
            self._task.update(1)
            if self.total is not None and self._task.done >= self.total:
                self._close()


def planned_steps(passes: Sequence[Pass], ctx: PassContext) -> int:
    """How many top-level passes `passes` run under `ctx` (those of Sequentials flattened;
    skipped ones, above its opt level or disabled, not counted)."""
    count = 0
    stack = list(reversed(passes))
    while stack:
        p = stack.pop()
        if not ctx.should_run(p.info):
            continue
        if isinstance(p, Sequential):
            stack.extend(reversed(p.passes))
        else:
            count += 1
    return count


class VerifyError(Exception):
    """A pass produced an ill-formed or ill-typed module; the message names the pass."""

    def __init__(self, pass_name: str, detail: str, diagnostics: list | None = None):
        super().__init__(f"after pass {pass_name}: {detail}")
        self.pass_name = pass_name
        self.diagnostics = diagnostics or []


class VerifyEach(PassInstrument):
    """After every pass: global functions have no free variables and the module
    type-checks. The first pass that breaks a program is named."""

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        for gv, fn in mod.functions.items():
            loose = free_vars(fn)
            if loose:
                names = ", ".join("%" + v.name_hint for v in loose)
                raise VerifyError(info.name, f"@{gv.name_hint} has free variables {names}")
        from ..typing import infer_types
        try:
            infer_types(mod)
        except DiagnosticError as e:
            first = e.diagnostics[0].message if e.diagnostics else "type errors"
            raise VerifyError(info.name, f"the module no longer type-checks: {first}",
                              e.diagnostics) from e
