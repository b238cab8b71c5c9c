"""`relay opt`: pipelines, printing, the debugging flags and how errors are reported."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from pass_helpers import registered_passes

import relaylang as rl
from relaylang.cli import main
from relaylang.ir.expr import Tuple, Var
from relaylang.ir.timing import read_timing_table
from relaylang.transform import FunctionPass, ModulePass
from relaylang.transform.pipeline import PipelineError, parse_pipeline, split_pipeline

TEXT = ('#[version = "0.0.5"]\n// a comment the output never shows\n'
        'def @main(%x: float32) -> float32 {\n  %0 = add(%x, 1f);\n  multiply(%0, %0)\n}\n')


@dataclass(frozen=True)
class LoseBody(FunctionPass):
    """Deliberately broken: the body becomes a free variable."""
    name: ClassVar[str] = "TestLoseBody"

    def transform_function(self, fn, mod, ctx):
        return fn.with_children([Var("oops")])


@dataclass(frozen=True)
class WrapInTuple(FunctionPass):
    """Deliberately broken: the body becomes a 1-tuple, against the declared result type."""
    name: ClassVar[str] = "TestWrapInTuple"

    def transform_function(self, fn, mod, ctx):
        return fn.with_children([Tuple((fn.body,))])


@dataclass(frozen=True)
class Crash(ModulePass):
    name: ClassVar[str] = "TestCrash"

    def transform_module(self, mod, ctx):
        raise KeyError("boom")


@dataclass(frozen=True)
class Nothing(ModulePass):
    name: ClassVar[str] = "TestNothing"
    opt_level: ClassVar[int] = 3

    def transform_module(self, mod, ctx):
        return mod


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    with registered_passes(LoseBody, WrapInTuple, Crash, Nothing):
        yield


@pytest.fixture
def src(tmp_path: Path) -> str:
    path = tmp_path / "m.relay"
    path.write_text(TEXT)
    return str(path)


def opt(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["opt", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def test_split_pipeline_keeps_commas_inside_options() -> None:
    assert split_pipeline("A, B{x=1,y=2},C") == ["A", "B{x=1,y=2}", "C"]
    assert split_pipeline("") == []
    with pytest.raises(PipelineError, match="unbalanced"):
        split_pipeline("A{x=1")
    with pytest.raises(PipelineError, match="unbalanced"):
        split_pipeline("A}")


def test_build_pipeline_reads_repeated_p_and_names_unknown_passes() -> None:
    passes = parse_pipeline(["InferType", "infer-type,TestNothing"])
    assert [p.name for p in passes] == ["InferType", "InferType", "TestNothing"]
    with pytest.raises(PipelineError, match="did you mean InferType"):
        parse_pipeline(["InferTyp"])


def test_opt_prints_the_module_without_comments(src: str, capsys) -> None:
    code, out, err = opt(capsys, src, "-p", "InferType")
    assert code == 0 and err == ""
    assert "comment" not in out
    assert "multiply(%0, %0) /* ty=float32 */" in out
    assert rl.astext(rl.parse(out)).startswith('#[version = "0.0.5"]')


def test_opt_without_passes_prints_the_parsed_module(src: str, capsys) -> None:
    code, out, _ = opt(capsys, src)
    assert code == 0 and out.rstrip("\n") == rl.astext(rl.parse(TEXT)).rstrip("\n")
    assert "/* ty=" not in out


def test_output_file(src: str, tmp_path: Path, capsys) -> None:
    target = tmp_path / "out.relay"
    code, out, _ = opt(capsys, src, "-p", "InferType", "-o", str(target))
    assert code == 0 and out == ""
    assert "/* ty=float32 */" in target.read_text()


def test_unknown_pass_is_one_line_with_close_matches(src: str, capsys) -> None:
    code, out, err = opt(capsys, src, "-p", "InferType,InferTipe")
    assert code == 1 and out == ""
    assert err == "relay opt: error: unknown pass `InferTipe`, did you mean InferType?\n"


def test_bad_option_is_an_error(src: str, capsys) -> None:
    code, _, err = opt(capsys, src, "-p", "InferType{depth=3}")
    assert code == 1 and "has no option `depth`" in err


def test_parse_and_type_errors_are_rendered(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.relay"
    bad.write_text('#[version = "0.0.5"]\ndef @main(%x: float32, %y: int32) {\n'
                   '  add(%x, %y)\n}\n')
    code, out, err = opt(capsys, str(bad), "-p", "InferType")
    assert code == 1 and out == ""
    assert f"{bad}:3:11: error: add: lhs has dtype float32" in err
    assert "^" in err and "Traceback" not in err
    bad.write_text('#[version = "0.0.5"]\ndef @main( {\n')
    code, _, err = opt(capsys, str(bad), "-p", "InferType")
    assert code == 1 and f"{bad}:2:" in err


def test_time_passes_reports_each_pass(src: str, capsys) -> None:
    code, out, err = opt(capsys, src, "-p", "InferType,TestNothing", "--time-passes",
                         "--opt-level", "3")
    assert code == 0 and "def @main" in out
    header, rows, total = read_timing_table(err)
    assert header == ["pass", "calls", "total ms", "mean ms", "share %"]
    assert sorted(r[0] for r in rows) == ["InferType", "TestNothing"] and total[0] == "total"


def test_print_after_all_and_before(src: str, capsys) -> None:
    _, _, err = opt(capsys, src, "-p", "InferType", "--print-after-all")
    assert err.startswith("// ----- IR after InferType -----\n")
    assert "/* ty=float32 */" in err
    _, _, err = opt(capsys, src, "-p", "InferType", "--print-before", "infer-type")
    assert err.startswith("// ----- IR before InferType -----\n")
    assert "/* ty=" not in err
    _, _, err = opt(capsys, src, "-p", "InferType", "--print-after", "InferType")
    assert err.count("IR after") == 1


def test_print_changed_skips_passes_that_change_nothing(src: str, capsys) -> None:
    _, _, err = opt(capsys, src, "-p", "TestNothing,InferType,TestNothing", "--print-changed",
                    "--opt-level", "3")
    assert err.count("// ----- IR after") == 1 and "IR after InferType" in err


def test_verify_each_names_the_broken_pass(src: str, capsys) -> None:
    code, out, _ = opt(capsys, src, "-p", "InferType,TestLoseBody")
    assert code == 0 and "%oops" in out          # unverified, the broken module is printed
    code, out, err = opt(capsys, src, "-p", "InferType,TestLoseBody,InferType", "--verify-each")
    assert code == 1 and out == ""
    assert err.startswith(f"{src}: error: --verify-each: after pass TestLoseBody: "
                          "@main has free variables %oops")
    code, _, err = opt(capsys, src, "-p", "InferType,TestWrapInTuple", "--verify-each")
    assert code == 1
    assert "after pass TestWrapInTuple: the module no longer type-checks" in err
    assert "Traceback" not in err


def test_a_crashing_pass_is_an_internal_error_naming_it(src: str, capsys, monkeypatch) -> None:
    monkeypatch.delenv("RELAYLANG_TRACEBACK", raising=False)
    code, out, err = opt(capsys, src, "-p", "InferType,TestCrash")
    assert code == 70 and out == ""
    assert "internal error in pass TestCrash" in err and "KeyError" in err
    assert "Traceback" not in err


def test_passes_above_the_opt_level_are_skipped_with_a_warning(src: str, capsys) -> None:
    code, out, err = opt(capsys, src, "-p", "TestNothing", "--time-passes")
    assert code == 0 and "def @main" in out
    assert "warning: pass TestNothing skipped: its opt_level 3 is above --opt-level 2" in err
    assert "TestNothing " not in err.split("warning")[1].split("\n", 1)[1]


def test_opt_help_lists_the_flags(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["opt", "--help"])
    text = capsys.readouterr().out
    for flag in ("--print-after-all", "--print-before", "--print-after", "--print-changed",
                 "--time-passes", "--verify-each", "--opt-level", "-o"):
        assert flag in text


def test_opt_prints_what_passes_noted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pass's notes (MergeComposite: a pattern that matched nothing) reach stderr, the
    unmatched patterns of a table in one line; the module is printed as usual."""
    path = tmp_path / "relu.relay"
    path.write_text('#[version = "0.0.5"]\n'
                    "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }\n")
    code, out, err = opt(capsys, str(path), "-p", "MergeComposite{pattern_table=blas}")
    assert code == 0 and "nn.relu(%x)" in out
    assert "note: MergeComposite: 12 patterns matched nothing: `blas.conv2d_bias_relu`" in err
    assert err.count("matched nothing") == 1


def test_opt_unknown_pattern_table_is_a_located_error(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """A MergeComposite option naming no registered table is the user's error (exit 1,
    at the module's first function), not an internal error of the pass."""
    path = tmp_path / "relu.relay"
    path.write_text('#[version = "0.0.5"]\n'
                    "def @main(%x: Tensor[(2, 3), float32]) { nn.relu(%x) }\n")
    code, out, err = opt(capsys, str(path), "-p", "MergeComposite{pattern_table=nosuch}")
    assert code == 1 and out == ""
    assert "relu.relay:2:1: error: MergeComposite: no pattern table registered for `nosuch`" \
        in err
    assert "internal error" not in err
