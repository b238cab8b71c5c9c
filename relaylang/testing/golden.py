"""Running golden cases and judging them against their expectations (sampsyo/bril's turnt,
LLVM lit with FileCheck).

A case's stdout (its RUN lines' outputs, in order, except those piped to `filecheck`) is
checked by the case's CHECK directives if it has any, else compared exactly with its section
of the sibling `<file>.out`. Its stderr, in the short form `LINE:COL: message`, is compared
with its section of `<file>.err`; without a `.err` file a case must exit 0 and print nothing
on stderr. An internal error (exit 70) always fails. Sections are separated by `// -----`.
"""
from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .cases import Case, join_sections, read_cases, split_sections
from .checks import filecheck, pass_checks, text_diff
from .runner import EXIT_INTERNAL, RunResult, execute, short_diagnostics


@dataclass
class CaseRun:
    """What a case did, and the problems found that do not depend on expected files."""

    case: Case
    results: list[RunResult]
    stdout: str = ""
    stderr: str = ""
    problems: list[str] = field(default_factory=list)


def run_case(case: Case) -> CaseRun:
    """Run every RUN line of `case` in a scratch directory; FileCheck and pass checks."""
    with tempfile.TemporaryDirectory(prefix="relay-golden-") as scratch:
        source = Path(scratch) / case.path.name
        source.write_text(case.text, encoding="utf-8")
        results = [execute(run, source) for run in case.runs]
        out = CaseRun(case, results)
        for r in results:
            out.problems += pass_checks(r, case.text, source, case.skip)
    for r in results:
        where = f"RUN line {r.run.line} (`relay {' '.join(r.run.argv)}`)"
        if r.exit_code == EXIT_INTERNAL:
            out.problems.append(f"{where} hit an internal error:\n{r.stderr}")
        if r.run.check_prefixes is not None:
            report = filecheck(case.text, r.stdout, r.run.check_prefixes, str(case.path))
            if report:
                out.problems.append(f"{where}: FileCheck failed:\n{report}")
        else:
            out.stdout += r.stdout
        out.stderr += short_diagnostics(r.stderr)
    if case.has_checks:
        report = filecheck(case.text, out.stdout, ("CHECK",), str(case.path))
        if report:
            out.problems.append(f"FileCheck failed:\n{report}")
    return out


def judge(run: CaseRun, expected_out: str | None, expected_err: str | None) -> list[str]:
    """Every problem with `run`, given its sections of the `.out`/`.err` files (None: none)."""
    problems = list(run.problems)
    if not run.case.has_checks:
        if expected_out is not None and run.stdout != expected_out:
            problems.append("stdout differs from the .out file:\n"
                            + text_diff(expected_out, run.stdout, "expected", "actual"))
        elif expected_out is None and run.stdout:
            problems.append("no CHECK lines and no .out file; run `relay test --update`. "
                            "stdout was:\n" + run.stdout)
    if expected_err is not None:
        if run.stderr != expected_err:
            problems.append("diagnostics differ from the .err file:\n"
                            + text_diff(expected_err, run.stderr, "expected", "actual"))
    else:
        failed = [r for r in run.results if r.exit_code not in (0, EXIT_INTERNAL)]
        if failed or run.stderr:
            problems.append(f"unexpected errors (exit {[r.exit_code for r in run.results]}; "
                            "add a .err file if they are expected):\n"
                            + "".join(r.stderr for r in run.results))
    return problems


def expected_sections(path: Path, suffix: str, count: int) -> list[str | None]:
    """Each case's section of `path.with_suffix(suffix)`, or Nones when there is no file."""
    sibling = path.with_suffix(suffix)
    if not sibling.exists():
        return [None] * count
    sections: list[str | None] = list(split_sections(sibling.read_text(encoding="utf-8")))
    if len(sections) != count:     # a file out of step with its cases fails every case
        return [f"<{sibling.name} has {len(sections)} sections for {count} cases>"] * count
    return sections


@dataclass
class FileOutcome:
    path: Path
    failures: list[tuple[Case, list[str]]]
    passed: int
    updates: list[str] = field(default_factory=list)   # diffs of rewritten expected files
    # cases whose diagnostics `--update` wrote anew: a case that stopped parsing would
    # otherwise pass silently with its errors recorded as expected
    new_diagnostics: list[Case] = field(default_factory=list)


def run_file(path: Path, update: bool = False) -> FileOutcome:
    """Run and judge every case of a golden file; with `update`, rewrite `.out`/`.err` first."""
    cases = read_cases(path)
    runs = [run_case(c) for c in cases]
    outcome = FileOutcome(path, [], 0)
    if update:
        before = expected_sections(path, ".err", len(cases))
        outcome.updates = _update(path, runs)
        outcome.new_diagnostics = [r.case for r, old in zip(runs, before)
                                   if r.stderr and r.stderr != old]
    outs = expected_sections(path, ".out", len(cases))
    errs = expected_sections(path, ".err", len(cases))
    for run, out, err in zip(runs, outs, errs):
        problems = judge(run, out, err)
        if problems:
            outcome.failures.append((run.case, problems))
        else:
            outcome.passed += 1
    return outcome


def _update(path: Path, runs: list[CaseRun]) -> list[str]:
    """Rewrite the expected files from `runs`; the diffs of what changed."""
    diffs: list[str] = []
    has_checks = any(r.case.has_checks for r in runs)
    stdout = None if has_checks or not any(r.stdout for r in runs) else \
        join_sections([r.stdout for r in runs])
    stderr = join_sections([r.stderr for r in runs]) if any(r.stderr for r in runs) else None
    for suffix, text in ((".out", stdout), (".err", stderr)):
        target = path.with_suffix(suffix)
        old = target.read_text(encoding="utf-8") if target.exists() else None
        if text == old or (has_checks and suffix == ".out"):
            continue
        if text is None:
            target.unlink()
        else:
            target.write_text(text, encoding="utf-8")
        diffs.append(text_diff(old or "", text or "", str(target), str(target) + " (updated)")
                     or f"{target}: rewritten\n")
    return diffs
