"""The golden-file harness: reading cases, running them in-process, FileCheck, `.out`/`.err`,
`--update`, and the automatic checks of every `relay opt` run."""
from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
from pass_helpers import registered_passes

from relaylang.cli import main
from relaylang.ir.expr import Call, Constant, Op
from relaylang.testing import GoldenFormatError, run_file, split_cases
from relaylang.testing.cases import parse_run
from relaylang.testing.checks import value_difference
from relaylang.testing.runner import call_relay, short_diagnostics
from relaylang.transform import FunctionPass

ROOT = Path(__file__).resolve().parents[2]
HEAD = '#[version = "0.0.5"]\n'
PROGRAM = HEAD + 'def @main(%x: Tensor[(3), float32]) {\n  add(%x, 1f)\n}\n'


@dataclass(frozen=True)
class Zero(FunctionPass):
    """Type-correct and idempotent, but the wrong answer: every result becomes 0."""
    name: ClassVar[str] = "TestZero"

    def transform_function(self, fn, mod, ctx):
        return fn.with_children([Call(Op("zeros_like"), (fn.params[0],))])


@dataclass(frozen=True)
class AddZero(FunctionPass):
    """Correct but not idempotent: adds `+ 0f` each time it runs."""
    name: ClassVar[str] = "TestAddZero"

    def transform_function(self, fn, mod, ctx):
        zero = Constant(np.array(0, dtype="float32"))
        return fn.with_children([Call(Op("add"), (fn.body, zero))])


@pytest.fixture(autouse=True)
def test_passes() -> Iterator[None]:
    with registered_passes(Zero, AddZero):
        yield


def write(tmp_path: Path, text: str, name: str = "t.relay") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(outcome) -> str:
    return "\n".join(p for _, ps in outcome.failures for p in ps)


# ---------------------------------------------------------------- reading files


def test_cases_inherit_run_lines_and_keep_line_numbers() -> None:
    text = ("// RUN: relay opt %s -p InferType\n// GOLDEN-SKIP: interp\n" + PROGRAM
            + "// -----\n// CHECK: add\n" + PROGRAM[len(HEAD):]
            + "// -----\n// RUN: relay check %s\n" + PROGRAM)
    cases = split_cases(Path("x.relay"), text)
    assert [c.first_line for c in cases] == [1, 8, 13]
    assert [c.runs[0].argv[0] for c in cases] == ["opt", "opt", "check"]
    assert [c.has_checks for c in cases] == [False, True, False]
    assert all(c.skip == {"interp"} for c in cases)
    lines = cases[1].text.splitlines()
    assert lines[0] == HEAD.strip() and lines[8] == "def @main(%x: Tensor[(3), float32]) {"
    assert all(line == "" for line in lines[1:7])
    assert cases[2].text.splitlines()[0] == ""       # it has its own header


def test_bad_files_are_reported_with_their_line() -> None:
    with pytest.raises(GoldenFormatError, match="no `// RUN: relay"):
        split_cases(Path("x.relay"), PROGRAM)
    with pytest.raises(GoldenFormatError, match=r"x.relay:2: .*runs `relay"):
        split_cases(Path("x.relay"), "\n// RUN: mlir-opt %s\n" + PROGRAM)
    with pytest.raises(GoldenFormatError, match="unknown check `speed`"):
        split_cases(Path("x.relay"), "// RUN: relay check %s\n// GOLDEN-SKIP: speed\n")
    with pytest.raises(GoldenFormatError, match="must be `filecheck %s`"):
        parse_run(Path("x.relay"), 1, "relay opt %s | grep add")


def test_run_line_syntax() -> None:
    run = parse_run(Path("x"), 3, "relay opt %s -p 'A{x=1}' 2>&1 | filecheck %s "
                                  "--check-prefix=ANF")
    assert run.argv == ("opt", "%s", "-p", "A{x=1}") and run.merge_stderr
    assert run.check_prefixes == ("ANF",) and run.line == 3
    cases = split_cases(Path("x"), "// RUN: relay opt %s \\\n// RUN:   -p InferType\n" + PROGRAM)
    assert cases[0].runs[0].argv == ("opt", "%s", "-p", "InferType")


def test_short_diagnostics_drop_paths_and_snippets() -> None:
    rendered = ("t.relay:3:11: error: bad thing\n  |\n3 |   add(%x, %y)\n  |           ^^\n"
                "t.relay:2:5: note: declared here\nt.relay:4:1: warning: unused\n"
                "relay opt: error: unknown pass `X`\n")
    assert short_diagnostics(rendered) == ("3:11: bad thing\n2:5: note: declared here\n"
                                           "4:1: warning: unused\nrelay opt: error: unknown "
                                           "pass `X`\n")


def test_call_relay_captures_usage_errors() -> None:
    code, out, err = call_relay(["opt"])
    assert code == 2 and out == "" and "usage: relay opt" in err
    code, _, err = call_relay(["run", "x.relay"])
    assert code == 2 and "invalid choice: 'run'" in err


def relay_prints(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_run_lines_print_what_relay_prints(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The runner does with the library what `relay` does: same status, same text."""
    good = str(write(tmp_path, PROGRAM, "good.relay"))
    bad = str(write(tmp_path, HEAD + "def @main(%x: float32, %y: int32) {\n  add(%x, %y)\n}\n",
                    "bad.relay"))
    broken = str(write(tmp_path, HEAD + "def @main( {\n", "broken.relay"))
    for argv in (["opt", good, "-p", "InferType,FoldConstant", "--print-after-all"],
                 ["opt", good, "-p", "TestZero", "--print-before", "TestZero",
                  "--print-changed"],
                 ["opt", good, "-O3", "--disabled-pass", "FuseOps", "-p", "ToANormalForm"],
                 ["opt", good, "-p", "EliminateCommonSubexpr,FuseOps", "--disabled-pass",
                  "FuseOps"],
                 ["opt", good, "-p", "InferTipe"], ["opt", bad, "-p", "InferType"],
                 ["opt", broken, "-p", "InferType"], ["opt", good, "-p", "FoldConstant{x=1}"],
                 ["check", good, bad], ["parse", good, broken]):
        assert call_relay(argv) == relay_prints(capsys, argv), argv


def test_golden_run_lines_print_what_relay_prints(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from relaylang.testing import read_cases
    from relaylang.testing.runner import execute
    scratch = str(tmp_path) + "/"
    for path in sorted((ROOT / "tests" / "golden").rglob("*.relay")):
        for case in read_cases(path):
            source = write(tmp_path, case.text, path.name)
            for run in case.runs:
                result = execute(run, source)
                code, out, err = relay_prints(capsys, result.argv)
                if run.merge_stderr:
                    out, err = err + out, ""
                assert (result.exit_code, result.stdout, result.stderr) == \
                    (code, out.replace(scratch, ""), err.replace(scratch, "")), (path, case.name)


# ---------------------------------------------------------------- judging


def test_filecheck_cases_pass_and_fail(tmp_path: Path) -> None:
    good = write(tmp_path, "// RUN: relay opt %s -p InferType\n// CHECK-LABEL: def @main(\n"
                    "// CHECK-SAME: %x: Tensor[(3), float32]\n// CHECK-NEXT: add(%x, 1f\n"
                    "// CHECK-NOT: CHECK\n" + PROGRAM)
    assert run_file(good).passed == 1
    bad = write(tmp_path, "// RUN: relay opt %s -p InferType\n// CHECK: multiply\n" + PROGRAM)
    outcome = run_file(bad)
    assert outcome.passed == 0 and "FileCheck failed" in problems(outcome)
    assert "Couldn't match \"multiply\"" in problems(outcome)


def test_filecheck_stage_with_prefix(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay opt %s --print-after-all 2>&1 -p InferType "
                           "| filecheck %s --check-prefix=IR\n"
                           "// IR: IR after InferType\n// IR: add(%x, 1f /* ty=float32 */)\n"
                 + PROGRAM)
    outcome = run_file(path)
    assert outcome.failures == [] and outcome.passed == 1


def test_update_writes_out_and_err_then_cases_pass(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay check %s\n" + PROGRAM + "// -----\n"
                           "def @main(%x: float32) { add(%x, %q) }\n")
    first = run_file(path)
    assert first.passed == 0 and "no CHECK lines and no .out file" in problems(first)
    updated = run_file(path, update=True)
    assert updated.passed == 2 and len(updated.updates) == 2
    assert [c.name for c in updated.new_diagnostics] == [updated.new_diagnostics[0].name]
    assert run_file(path, update=True).new_diagnostics == []    # recorded already
    assert (tmp_path / "t.out").read_text() == (
        "t.relay: @main: fn (Tensor[(3), float32]) -> Tensor[(3), float32]\n// -----\n")
    assert (tmp_path / "t.err").read_text().startswith("// -----\n7:34: unknown local variable")
    assert run_file(path).passed == 2
    (tmp_path / "t.out").write_text("t.relay: @main: fn () -> int8\n// -----\n")
    outcome = run_file(path)
    assert outcome.passed == 1 and "-t.relay: @main: fn () -> int8" in problems(outcome)


def test_errors_without_err_file_fail(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay opt %s -p NoSuchPass\n" + PROGRAM)
    assert "unexpected errors (exit [1]" in problems(run_file(path))


def test_wrong_section_count_fails(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay check %s\n" + PROGRAM)
    (tmp_path / "t.out").write_text("a\n// -----\nb\n")
    assert "has 2 sections for 1 cases" in problems(run_file(path))


# ---------------------------------------------------------------- automatic pass checks


def test_a_pass_that_changes_results_is_caught(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay opt %s -p TestZero\n// CHECK: zeros_like\n" + PROGRAM)
    text = problems(run_file(path))
    assert "gives a different result on random inputs (seed 0)" in text
    path.write_text("// RUN: relay opt %s -p TestZero\n// GOLDEN-SKIP: interp\n"
                    "// CHECK: zeros_like\n" + PROGRAM)
    assert run_file(path).failures == []


def test_a_pass_that_is_not_idempotent_is_caught(tmp_path: Path) -> None:
    path = write(tmp_path, "// RUN: relay opt %s -p TestAddZero\n// CHECK: add\n" + PROGRAM)
    text = problems(run_file(path))
    assert "not idempotent" in text and "+  %1 = add(%0, 0f);" in text
    path.write_text("// RUN: relay opt %s -p TestAddZero\n// GOLDEN-SKIP: idempotent\n"
                    "// CHECK: add\n" + PROGRAM)
    assert run_file(path).failures == []


def test_value_difference() -> None:
    a = (np.array([1.0, 2.0], dtype="float32"), np.array(3, dtype="int32"))
    assert value_difference(a, (a[0].copy(), np.array(3, dtype="int32"))) is None
    assert value_difference(a, (a[0] + 1, a[1])).startswith("result[0]:")
    assert "int64" in value_difference(a, (a[0], np.array(3, dtype="int64")))
    assert value_difference((1,), (1, 2)) is not None


# ---------------------------------------------------------------- the command and pytest


def test_relay_test_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, "// RUN: relay opt %s -p InferType\n" + PROGRAM)
    assert main(["test", str(path)]) == 1
    assert "FAIL" in capsys.readouterr().out
    assert main(["test", "--update", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"+++ {tmp_path / 't.out'} (updated)" in out and "1 passed, 0 failed" in out
    assert main(["test", str(tmp_path)]) == 0
    assert main(["test", str(tmp_path / "missing")]) == 1


def test_update_names_cases_that_now_fail(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A case that stopped parsing must not pass silently under --update."""
    path = write(tmp_path, "// RUN: relay opt %s -p InferType\n" + PROGRAM)
    assert main(["test", "--update", str(tmp_path)]) == 0
    path.write_text(path.read_text().replace("add(", "add(("))
    capsys.readouterr()
    assert main(["test", "--update", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "NOTE" in out and "recorded as expected in t.err" in out
    assert "(1 with newly recorded diagnostics)" in out


def test_the_project_golden_files_pass(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", str(ROOT / "tests" / "golden")]) == 0, capsys.readouterr().out


def test_pytest_collects_one_item_per_case() -> None:
    result = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q",
                             "tests/golden/diagnostics/type_errors.relay"],
                            cwd=ROOT, capture_output=True, text=True, check=False)
    items = [line for line in result.stdout.splitlines() if "::" in line]
    assert items == [f"tests/golden/diagnostics/type_errors.relay::case{i}@L{line}"
                     for i, line in ((1, 1), (2, 7), (3, 11))]
