"""pytest collects the golden files of tests/golden/: each case of a `.relay` file is one test
item, run exactly as `relay test` runs it (relaylang/testing/)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden"


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    if file_path.suffix == ".relay" and GOLDEN in file_path.parents:
        return GoldenFile.from_parent(parent, path=file_path)
    return None


class GoldenFile(pytest.File):
    def collect(self) -> Iterator[pytest.Item]:
        from relaylang.testing import read_cases
        cases = read_cases(self.path)
        for case in cases:
            yield GoldenCase.from_parent(self, name=case.name, case=case, count=len(cases))


class GoldenFailure(Exception):
    """A golden case that did not hold; the message lists every problem."""


class GoldenCase(pytest.Item):
    def __init__(self, *, case: Any, count: int, **kwargs: Any):
        super().__init__(**kwargs)
        self.case, self.count = case, count
        # Function items have fixtures here; pytest-lsp's runtest wrapper reads this
        # attribute and fails to yield for items that lack it.
        self.funcargs: dict[str, Any] = {}

    def runtest(self) -> None:
        from relaylang.testing import judge, run_case
        from relaylang.testing.golden import expected_sections
        run = run_case(self.case)
        out = expected_sections(self.path, ".out", self.count)[self.case.index]
        err = expected_sections(self.path, ".err", self.count)[self.case.index]
        problems = judge(run, out, err)
        if problems:
            raise GoldenFailure("\n\n".join(problems))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException],
                     style: Any = None) -> str:
        if isinstance(excinfo.value, GoldenFailure):
            return f"{self.path} {self.case.name} (line {self.case.first_line}):\n" \
                   f"{excinfo.value}"
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[Path, int, str]:
        return self.path, self.case.first_line - 1, f"{self.path.name}::{self.case.name}"


@pytest.fixture(scope="session", autouse=True)
def relay_kernel_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Compiled LLVM kernels are cached in one temporary folder per test run (shared by
    the xdist workers: entries are written atomically), never in the user's cache."""
    import os
    base = tmp_path_factory.getbasetemp()
    if base.name.startswith("popen-gw"):          # an xdist worker: share with the others
        base = base.parent
    folder = base / "relay_kernel_cache"
    folder.mkdir(parents=True, exist_ok=True)
    old = os.environ.get("RELAY_CACHE_DIR")
    os.environ["RELAY_CACHE_DIR"] = str(folder)
    yield folder
    if old is None:
        os.environ.pop("RELAY_CACHE_DIR", None)
    else:
        os.environ["RELAY_CACHE_DIR"] = old
