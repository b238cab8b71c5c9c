"""Pass pipelines from text (relaylang/transform/pipeline.py): parsing, options, instruments'
output returned as data, and failures as exceptions naming the pass."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar

import pytest
from pass_helpers import registered_passes

import relaylang as rl
from relaylang.ir.expr import Var
from relaylang.ir.timing import read_timing_table
from relaylang.transform import FunctionPass, ModulePass
from relaylang.transform.pipeline import (
    PassFailed,
    Pipeline,
    PipelineError,
    PipelineOptions,
    parse_pipeline,
    run_pipeline,
    split_pipeline,
)

TEXT = ('#[version = "0.0.5"]\n'
        'def @main(%x: float32) -> float32 {\n  %0 = add(1f, 2f);\n  multiply(%0, %x)\n}\n')


@dataclass(frozen=True)
class Crash(ModulePass):
    name: ClassVar[str] = "TestPipelineCrash"

    def transform_module(self, mod, ctx):
        raise KeyError("boom")


@dataclass(frozen=True)
class LoseBody(FunctionPass):
    """Deliberately broken: the body becomes a free variable."""
    name: ClassVar[str] = "TestPipelineLoseBody"

    def transform_function(self, fn, mod, ctx):
        return fn.with_children([Var("oops")])


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    with registered_passes(Crash, LoseBody):
        yield


@pytest.fixture
def mod() -> rl.IRModule:
    return rl.parse(TEXT, source_name="m.relay")


# ---------------------------------------------------------------- parsing


def test_items_split_on_commas_outside_braces() -> None:
    assert split_pipeline("FoldConstant, FuseOps{fuse_opt_level=2,max_fuse_depth=3}") == [
        "FoldConstant", "FuseOps{fuse_opt_level=2,max_fuse_depth=3}"]
    passes = parse_pipeline("FoldConstant,FuseOps{fuse_opt_level=2}")
    assert [p.name for p in passes] == ["FoldConstant", "FuseOps"]
    assert passes[1].fuse_opt_level == 2
    assert [p.name for p in parse_pipeline(["InferType", "to-a-normal-form"])] == [
        "InferType", "ToANormalForm"]
    assert parse_pipeline("") == []


@pytest.mark.parametrize("text, message", [
    ("InferTipe", "unknown pass `InferTipe`, did you mean InferType?"),
    ("FoldConstant{nope=1}", "pass FoldConstant has no option `nope`"),
    ("FoldConstant{max_elements=many}", "bad options in `FoldConstant{max_elements=many}`"),
    ("FuseOps{fuse_opt_level=2", "malformed pipeline `FuseOps{fuse_opt_level=2`: unbalanced `{`"),
    ("A}", "unbalanced `}`"),
    ("Fold Constant", "malformed pass `Fold Constant`"),
])
def test_a_bad_pipeline_is_one_clear_message(text: str, message: str) -> None:
    with pytest.raises(PipelineError) as e:
        Pipeline.parse(text)
    assert message in str(e.value) and "\n" not in str(e.value)


# ---------------------------------------------------------------- running, options


def test_run_returns_the_module_and_no_text(mod: rl.IRModule) -> None:
    result = Pipeline.parse("FoldConstant").run(mod)
    assert "multiply(3f, %x)" in result.text() and result.text().endswith("\n")
    assert result.log == "" and result.timing == ""
    assert run_pipeline(mod, "FoldConstant").text() == result.text()


def test_opt_level_skips_passes_above_it(mod: rl.IRModule) -> None:
    pipeline = Pipeline.parse("EliminateCommonSubexpr,FoldConstant")
    assert pipeline.options.level == 2
    assert [i.name for i in pipeline.skipped()] == ["EliminateCommonSubexpr"]
    assert Pipeline.parse("EliminateCommonSubexpr", PipelineOptions(opt_level=3)).skipped() == []
    assert PipelineOptions(standard=1).level == 1                 # -O1: its level by default
    assert PipelineOptions(standard=1, opt_level=3).level == 3


def test_disabled_passes_do_not_run(mod: rl.IRModule) -> None:
    off = Pipeline.parse("FoldConstant", PipelineOptions(disabled=["InferType,FoldConstant"]))
    assert [i.name for i in off.skipped()] == ["FoldConstant"]
    assert "add(1f, 2f)" in off.run(mod).text()


def test_standard_pipeline_runs_first(mod: rl.IRModule) -> None:
    text = Pipeline([], PipelineOptions(standard=3)).run(mod).text()
    assert "multiply(3f /* ty=float32 */, %p0)" in text and "Primitive=1" in text   # FuseOps


def test_options_from_a_command_line_namespace() -> None:
    values = {"opt_level": 3, "print_after": ["*"], "file": "m.relay", "passes": ["A"]}
    assert PipelineOptions.of(values) == PipelineOptions(opt_level=3, print_after=["*"])


# ---------------------------------------------------------------- instruments as data


def test_print_and_timing_are_returned_not_printed(mod: rl.IRModule,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    options = PipelineOptions(print_before=["FoldConstant"], print_after=["*"],
                              time_passes=True)
    result = Pipeline.parse("InferType,FoldConstant", options).run(mod)
    assert capsys.readouterr() == ("", "")
    headers = [line for line in result.log.splitlines() if line.startswith("// -----")]
    assert headers == ["// ----- IR after InferType -----", "// ----- IR before FoldConstant -----",
                       "// ----- IR after FoldConstant -----"]
    header, rows, total = read_timing_table(result.timing)
    assert header == ["pass", "calls", "total ms", "mean ms", "share %"]
    assert sorted(r[0] for r in rows) == ["FoldConstant", "InferType"] and total[0] == "total"


def test_print_changed_alone_logs_only_changes(mod: rl.IRModule) -> None:
    options = PipelineOptions(print_changed=True)
    log = Pipeline.parse("FoldConstant,FoldConstant", options).run(mod).log
    assert log.count("// ----- IR after FoldConstant -----") == 1


# ---------------------------------------------------------------- failures


def test_a_crashing_pass_is_named_with_its_cause(mod: rl.IRModule) -> None:
    pipeline = Pipeline.parse("InferType,TestPipelineCrash", PipelineOptions(print_after=["*"]))
    with pytest.raises(PassFailed) as e:
        pipeline.run(mod)
    failed = e.value
    assert failed.pass_name == "TestPipelineCrash" and isinstance(failed.cause, KeyError)
    assert not failed.user_error and failed.diagnostics == []
    assert "IR after InferType" in failed.log         # what the instruments wrote before it
    assert str(failed) == "pass TestPipelineCrash failed: KeyError: 'boom'"


def test_verify_each_failure_is_the_users_with_the_pass_named(mod: rl.IRModule) -> None:
    pipeline = Pipeline.parse("TestPipelineLoseBody", PipelineOptions(verify_each=True))
    with pytest.raises(PassFailed) as e:
        pipeline.run(mod)
    assert e.value.user_error
    assert "after pass TestPipelineLoseBody: @main has free variables %oops" in str(e.value.cause)


def test_type_errors_found_by_a_pass_carry_their_diagnostics() -> None:
    bad = rl.parse('#[version = "0.0.5"]\ndef @main(%x: float32, %y: int32) {\n'
                   '  add(%x, %y)\n}\n', source_name="bad.relay")
    with pytest.raises(PassFailed) as e:
        Pipeline.parse("InferType").run(bad)
    failed = e.value
    assert failed.user_error and failed.pass_name == "InferType"
    (d,) = failed.diagnostics
    assert (d.span.line, d.span.column) == (3, 11) and "lhs has dtype float32" in d.message
    assert "bad.relay" in failed.sources(bad)
