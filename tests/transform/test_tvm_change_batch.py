"""ChangeBatch against TVM v0.19's tests/python/relay/test_change_batch.py, run through the
golden harness (re-parse, idempotence; the value check is off: the inputs change shape)."""
from __future__ import annotations

from pathlib import Path

import relaylang as rl
from relaylang.ir.module import IRModule
from relaylang.testing import models
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


# TVM's test_change_batch_synthetic (relay.testing.synthetic there; the LeNet-style CNN of
# relaylang.testing.models here): the first parameter's axis 0 becomes 123, and so does
# the result's.
def test_change_batch_synthetic() -> None:
    mod, _ = models.get_workload("mnist")
    first = mod["main"].params[0].name_hint
    after = run_golden(mod, f"ChangeBatch{{data={first}:0,batch_size=123}}", skip=("interp",))
    assert after["main"].checked_type.ret_type.shape[0] == 123
