"""Reading a golden test file: its cases and their RUN lines (LLVM lit's RUN syntax, MLIR's
`--split-input-file` cases; xDSL's tests/filecheck).

    // RUN: relay opt %s -p ToANormalForm
    // CHECK-LABEL: def @main
    def @main(...) { ... }
    // -----
    def @other(...) { ... }          <- a second case; it inherits the first case's RUN lines

A RUN line is `relay ARGS [2>&1] [| filecheck %s [--check-prefix=P]]`, where the command is
`relay parse`, `relay check` or `relay opt`, run in-process (runner.py). `// GOLDEN-SKIP:
idempotent, interp` turns off automatic pass checks that do not apply (ToCPS is not
idempotent).
Each case's text keeps the file's line numbers (other cases' lines are blanked, and a later
case without its own `#[version]` header gets one on its first blank line), so the
diagnostics of a case point at the lines of the file.
"""
from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

SPLIT = re.compile(r"^\s*//\s*-----\s*$")
_RUN = re.compile(r"^\s*//\s*RUN:(.*)$")
_SKIP = re.compile(r"^\s*//\s*GOLDEN-SKIP:(.*)$")
_CHECK = re.compile(r"^\s*//\s*CHECK(?:-[A-Z]+)?:")
_VERSION = re.compile(r"^\s*#\[version")
VERSION_LINE = '#[version = "0.0.5"]'
AUTO_CHECKS = ("reparse", "idempotent", "interp")


class GoldenFormatError(Exception):
    """A test file that cannot be understood (bad RUN line, no RUN line)."""

    def __init__(self, path: Path, line: int, message: str):
        super().__init__(f"{path}:{line}: {message}")
        self.path, self.line, self.message = path, line, message


@dataclass(frozen=True)
class RunLine:
    argv: tuple[str, ...]                  # the relay arguments, `%s` not yet substituted
    line: int                              # where it is written (1-based)
    check_prefixes: tuple[str, ...] | None   # `| filecheck %s`: check this run's output alone
    merge_stderr: bool = False             # `2>&1`


@dataclass(frozen=True)
class Case:
    path: Path
    index: int                  # 0-based position in the file
    first_line: int             # 1-based line where the case's text begins
    text: str                   # the case's text, earlier lines blanked
    runs: tuple[RunLine, ...]
    skip: frozenset[str]        # automatic checks turned off
    has_checks: bool            # CHECK directives with the default prefix

    @property
    def name(self) -> str:
        return f"case{self.index + 1}@L{self.first_line}"


def _run_lines(path: Path, lines: list[tuple[int, str]]) -> list[RunLine]:
    """RUN lines of one case; a trailing `\\` continues a RUN line on the next."""
    runs: list[RunLine] = []
    pending, start = "", 0
    for number, line in lines:
        m = _RUN.match(line)
        if m is None:
            continue
        body = m.group(1).strip()
        start = start or number
        if body.endswith("\\"):
            pending += body[:-1] + " "
            continue
        runs.append(parse_run(path, start, pending + body))
        pending, start = "", 0
    if pending:
        raise GoldenFormatError(path, start, "RUN line ends with `\\` but nothing follows")
    return runs


def parse_run(path: Path, line: int, text: str) -> RunLine:
    """`relay opt %s -p X 2>&1 | filecheck %s --check-prefix=P` -> RunLine."""
    stages = text.split("|")
    if len(stages) > 2:
        raise GoldenFormatError(path, line, "a RUN line has at most one `| filecheck %s` stage")
    try:
        argv = shlex.split(stages[0])
    except ValueError as e:
        raise GoldenFormatError(path, line, f"bad RUN line: {e}") from e
    if not argv or argv[0] != "relay":
        raise GoldenFormatError(path, line, "a RUN line runs `relay ...` (in-process)")
    merge = "2>&1" in argv
    argv = [a for a in argv[1:] if a != "2>&1"]
    prefixes = _filecheck_stage(path, line, stages[1]) if len(stages) == 2 else None
    return RunLine(tuple(argv), line, prefixes, merge)


def _filecheck_stage(path: Path, line: int, text: str) -> tuple[str, ...]:
    words = shlex.split(text)
    if not words or words[0].lower() != "filecheck" or "%s" not in words:
        raise GoldenFormatError(path, line, "the stage after `|` must be `filecheck %s`")
    prefixes: list[str] = []
    for w in words[1:]:
        if w.startswith(("--check-prefix=", "--check-prefixes=")):
            prefixes += w.split("=", 1)[1].split(",")
        elif w != "%s":
            raise GoldenFormatError(path, line, f"unsupported filecheck option `{w}`")
    return tuple(prefixes or ["CHECK"])


def _skips(path: Path, lines: list[tuple[int, str]]) -> set[str]:
    found: set[str] = set()
    for number, line in lines:
        m = _SKIP.match(line)
        if m is None:
            continue
        for word in filter(None, (w.strip() for w in m.group(1).split(","))):
            if word not in AUTO_CHECKS:
                raise GoldenFormatError(path, number, f"GOLDEN-SKIP: unknown check `{word}` "
                                                      f"(known: {', '.join(AUTO_CHECKS)})")
            found.add(word)
    return found


def split_cases(path: Path, text: str) -> list[Case]:
    """The cases of a test file; cases without RUN lines inherit the first case's."""
    all_lines = text.splitlines()
    chunks: list[list[tuple[int, str]]] = [[]]
    for number, line in enumerate(all_lines, 1):
        if SPLIT.match(line):
            chunks.append([])
        else:
            chunks[-1].append((number, line))
    first_runs = _run_lines(path, chunks[0])
    if not first_runs:
        raise GoldenFormatError(path, 1, "no `// RUN: relay ...` line in the first case")
    first_skip = _skips(path, chunks[0])
    cases: list[Case] = []
    for index, chunk in enumerate(chunks):
        begin = chunk[0][0] if chunk else len(all_lines) + 1
        padded = [""] * (begin - 1) + [line for _, line in chunk]
        if begin > 1 and not any(_VERSION.match(line) for _, line in chunk):
            padded[0] = VERSION_LINE     # later cases share the file's header, on a blank line
        runs = _run_lines(path, chunk) if index else first_runs
        cases.append(Case(path, index, begin, "\n".join(padded) + "\n", tuple(runs or first_runs),
                          frozenset(first_skip | _skips(path, chunk)),
                          any(_CHECK.match(line) for _, line in chunk)))
    return cases


def read_cases(path: Path) -> list[Case]:
    return split_cases(path, path.read_text(encoding="utf-8"))


def split_sections(text: str) -> list[str]:
    """An expected-output file's per-case sections (separated by `// -----` lines)."""
    sections: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if SPLIT.match(line):
            sections.append([])
        else:
            sections[-1].append(line)
    return ["".join(s) for s in sections]


def join_sections(sections: list[str]) -> str:
    return "// -----\n".join(s if not s or s.endswith("\n") else s + "\n" for s in sections)
