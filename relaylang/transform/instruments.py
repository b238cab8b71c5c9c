"""The built-in pass instruments: print IR around passes, time them, verify after each.

(TVM's python/tvm/ir/instrument.py; xDSL's `PassPipeline.callback`.) They write to
the stream they are given, so the CLI decides where debugging output goes.
"""
from __future__ import annotations

import sys
import time
from typing import TextIO

from ..ir.analysis import free_vars
from ..ir.diagnostics import DiagnosticError
from ..ir.module import IRModule
from .pass_infra import PassInfo, PassInstrument, canonical_name


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
    """Wall time per pass, in the order passes ran; `report()` formats the table."""

    def __init__(self) -> None:
        self.timings: list[tuple[str, float]] = []
        self._start: list[float] = []

    def run_before_pass(self, mod: IRModule, info: PassInfo) -> None:
        self._start.append(time.perf_counter())

    def run_after_pass(self, mod: IRModule, info: PassInfo) -> None:
        self.timings.append((info.name, time.perf_counter() - self._start.pop()))

    def report(self) -> str:
        total = sum(t for _, t in self.timings) or 1e-12
        lines = [f"{'pass':<28} {'ms':>10} {'%':>6}"]
        for name, t in self.timings:
            lines.append(f"{name:<28} {t * 1e3:>10.3f} {100 * t / total:>6.1f}")
        lines.append(f"{'total':<28} {total * 1e3:>10.3f}")
        return "\n".join(lines) + "\n"


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
