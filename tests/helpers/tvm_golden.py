"""Mirroring TVM's pass tests (issue 22): a pass pipeline run through the golden harness
with its automatic checks, and structural comparison with TVM's expected module."""
from __future__ import annotations

from pathlib import Path

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.testing.cases import split_cases
from relaylang.testing.golden import run_case
from relaylang.transform import InferType


def run_golden(mod: IRModule | str, pipeline: str, skip: tuple[str, ...] = (),
               opt_level: int | None = None) -> IRModule:
    """`relay opt [--opt-level N] -p PIPELINE` on `mod` through the golden harness
    (relaylang/testing):
    its automatic checks (re-parse, idempotence, same values on the interpreter) must hold;
    the typed output module."""
    text = mod if isinstance(mod, str) else rl.astext(mod)
    level = "" if opt_level is None else f" --opt-level {opt_level}"
    head = f"// RUN: relay opt %s{level} -p {pipeline}\n"
    if skip:
        head += f"// GOLDEN-SKIP: {', '.join(skip)}\n"
    run = run_case(split_cases(Path("tvm_case.relay"), head + text)[0])
    assert [r.exit_code for r in run.results] == [0], run.results[0].stderr
    assert not run.problems, "\n".join(run.problems)
    return InferType()(rl.parse(run.stdout))


def assert_same(actual: IRModule, expected: IRModule) -> None:
    expected = InferType()(expected)
    assert rl.structural_equal(actual, expected, map_free_vars=True), \
        f"actual:\n{rl.astext(actual)}\nexpected:\n{rl.astext(expected)}"
