"""README.md's promises: its Python examples run as pasted, its documents are in the
repository, and its test command is the one `.ci/run` runs."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
PYTHON_BLOCKS = re.findall(r"^```python\n(.*?)^```", README, re.S | re.M)


@pytest.mark.parametrize("index", range(len(PYTHON_BLOCKS)))
def test_python_example_runs_as_pasted(index: int, tmp_path: Path) -> None:
    # A fresh interpreter outside the checkout: the block defines everything it uses.
    result = subprocess.run([sys.executable, "-c", PYTHON_BLOCKS[index]], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_python_example_prints_what_its_comments_say(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-c", PYTHON_BLOCKS[0]], cwd=tmp_path,
                            capture_output=True, text=True, check=True)
    lines = result.stdout.splitlines()
    assert "add(%x, 1f)" in lines                        # print(expr): Relay text
    assert "[[4.5 0. ]]" in lines                        # the evaluated model
    assert lines[-1].startswith("error 2 17 unknown local variable `%y`")


def test_readme_has_python_examples() -> None:
    assert PYTHON_BLOCKS


def test_documents_the_readme_cites_are_in_the_repository() -> None:
    cited = set(re.findall(r"\]\(([^)#:]+)\)", README))
    assert {"docs/LANGUAGE.md", "docs/DESIGN.md"} <= cited
    assert all((ROOT / path).exists() for path in cited), cited
    assert "../shared" not in README


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    commands = re.findall(r"^```bash\n(.*?)^```", README, re.S | re.M)
    test_command = next(c.strip() for c in commands if "pytest" in c)
    assert "-n auto" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text()
