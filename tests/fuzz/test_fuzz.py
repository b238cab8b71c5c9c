"""The mutation fuzzer of issue 14, kept as a test.

Seeds are the programs of examples/ and of the golden cases (tests/golden/) that
parse and type-check. Each test draws from them with hypothesis and checks:

  * mutated seeds (`mutation_fuzz.mutated`): parsing, type checking and printing
    raise nothing but `DiagnosticError`, every diagnostic is located, a module
    that type-checks prints as text that parses back structurally equal, and its
    `@main` evaluates or fails with a documented evaluation error;
  * seeds under every registered pass, one at a time: the pass raises nothing but
    `DiagnosticError` (a located refusal); its output type-checks, prints as text
    that parses back structurally equal, and `@main` computes what it did before
    on random inputs (when `@main` takes tensors and the interpreter runs it).

CI runs a bounded number of cases, derandomized and without an example database
(a failure in CI is a failure here); `RELAY_FUZZ_CASES=5000` runs a longer fuzz.
"""
from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mutation_fuzz import fuzz_cases, mutated
from pass_helpers import main_args, same_value

import relaylang as rl
from relaylang.backend.interpreter.executor import InputError
from relaylang.backend.interpreter.machine import InterpreterError
from relaylang.ir.module import IRModule
from relaylang.transform import InferType, PassContext, Sequential, get_pass, list_passes

ROOT = Path(__file__).resolve().parents[2]

# Passes run with the pass that undoes them (ToCPS adds a continuation parameter to
# @main by design), or with options that make them fire on small programs.
PIPELINES = {"ToCPS": ("ToCPS", "UnCPS")}
OPTIONS = {"CombineParallelConv2D": "CombineParallelConv2D{min_num_branches=2}",
           "CombineParallelDense": "CombineParallelDense{min_num_branches=2}"}
# Passes whose results differ from their input on purpose, and why.
NOT_VALUE_PRESERVING = {"ChangeBatch": "changes input shapes by design",
                        "Gradient": "returns the result with the gradients by design"}
# Float tolerance: some passes reassociate or approximate float arithmetic on purpose.
RTOL, ATOL = 2e-2, 2e-3
# What evaluation may raise on a program it cannot run (documented in backend/interpreter).
EVALUATION_ERRORS = (rl.DiagnosticError, InterpreterError, InputError, NotImplementedError)

SETTINGS = settings(deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))


@functools.cache
def corpus() -> tuple[tuple[str, str, IRModule], ...]:
    """(name, text, typed module) of every example and golden case that type-checks."""
    from relaylang.testing import read_cases
    found = []
    texts = [(p.name, p.read_text()) for p in sorted((ROOT / "examples").glob("*.relay"))]
    for path in sorted((ROOT / "tests" / "golden").rglob("*.relay")):
        texts += [(f"{path.parent.name}/{path.name}#{c.index}", c.text) for c in read_cases(path)]
    for name, text in texts:
        try:
            found.append((name, text, InferType()(rl.parse(text, source_name=name))))
        except rl.DiagnosticError:
            continue                    # a case about a diagnostic: not a seed
    return tuple(found)


def seed_texts() -> list[str]:
    return [text for _, text, _ in corpus()]


def test_corpus_is_large() -> None:
    assert len(corpus()) >= 50, len(corpus())


def _located(e: rl.DiagnosticError) -> None:
    assert e.diagnostics
    for d in e.diagnostics:
        assert d.message and d.span is not None and d.span.line >= 1 and d.span.column >= 1, d


def check_text(text: str) -> None:
    """Parse, type-check and print `text`: only located `DiagnosticError`s."""
    try:
        mod = rl.parse(text)
    except rl.DiagnosticError as e:
        _located(e)
        return
    assert rl.structural_equal(rl.parse(rl.astext(mod)), mod), rl.astext(mod)
    try:
        typed = InferType()(mod)
    except rl.DiagnosticError as e:
        _located(e)
        return
    printed = rl.astext(typed)
    assert rl.structural_equal(rl.parse(printed), typed), printed
    if "main" in {gv.name_hint for gv in typed.functions}:
        args = main_args(typed, seed=2)
        if args is not None:
            _evaluate(typed, args)      # only the documented evaluation errors


@settings(SETTINGS, max_examples=fuzz_cases(300))
@given(st.data())
def test_mutated_programs_raise_only_diagnostic_errors(data: st.DataObject) -> None:
    check_text(data.draw(mutated(seed_texts())))


def _evaluate(mod: IRModule, args: list[Any]) -> tuple[bool, Any]:
    try:
        return True, rl.evaluate(mod, *args)
    except EVALUATION_ERRORS:
        return False, None


def _pass(name: str) -> Any:
    if name in PIPELINES:
        return Sequential([get_pass(n) for n in PIPELINES[name]])
    return get_pass(OPTIONS.get(name, name))


def check_pass(name: str, seed: str, mod: IRModule, input_seed: int = 1,
               bools: str = "ones") -> None:
    try:
        with PassContext(opt_level=4):
            out = _pass(name)(mod)
    except rl.DiagnosticError as e:
        _located(e)                     # a located refusal is an answer
        return
    text = rl.astext(out)
    try:
        typed = InferType()(out)
    except rl.DiagnosticError as e:
        raise AssertionError(f"{name} on {seed}: the result does not type-check: {e}\n"
                             f"{text}") from None
    printed = rl.astext(typed)
    assert rl.structural_equal(rl.parse(printed), typed), \
        f"{name} on {seed}: the result does not parse back\n{printed}"
    if name in NOT_VALUE_PRESERVING or "main" not in {gv.name_hint for gv in mod.functions}:
        return
    args = main_args(mod, seed=input_seed, bools=bools)
    if args is None:
        return
    ran, before = _evaluate(mod, args)
    if not ran:
        return
    ran_after, after = _evaluate(typed, args)
    assert ran_after, f"{name} on {seed}: the result no longer runs\n{printed}"
    assert same_value(before, after, rtol=RTOL, atol=ATOL, equal_nan=True), (
        f"{name} on {seed} changed the result\nbefore: {before!r}\nafter: {after!r}\n{printed}")


@settings(SETTINGS, max_examples=fuzz_cases(400))
@given(st.data())
def test_every_pass_on_the_corpus(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(sorted(list_passes())), label="pass")
    seed, _, mod = data.draw(st.sampled_from(corpus()), label="seed")
    # The inputs are drawn too (random bools take the other branches), so a longer run
    # (RELAY_FUZZ_CASES) keeps finding new cases after every pass met every seed.
    input_seed = data.draw(st.integers(0, 2**31 - 1), label="input seed")
    check_pass(name, seed, mod, input_seed, bools="random")


@pytest.mark.parametrize("name", sorted(list_passes()))
def test_each_pass_on_one_rich_example(name: str) -> None:
    """Every pass at least once, on examples with closures, ADTs and references."""
    for seed, _, mod in corpus():
        if seed in ("closures.relay", "list_adt.relay", "references.relay"):
            check_pass(name, seed, mod)
