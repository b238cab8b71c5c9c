"""The wheel carries the grammar, and a regular (non-editable) install works.

Builds without network access: `--no-isolation` uses the hatchling of the test
environment, and the fresh venv sees the already-installed dependencies.
"""
from __future__ import annotations

import os
import subprocess
import sys
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(out), str(ROOT)], check=True, capture_output=True)
    return next(out.glob("relaylang-*.whl"))


def test_wheel_contains_grammar_and_entry_point(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    assert "relaylang/grammar/relay.lark" in names
    assert "relaylang/syntax/parser.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "relay = relaylang.cli:main" in text
    # `relay lsp` joins the command through this group: relaylang never imports lsp
    assert "[relaylang.commands]\nlsp = lsp.command:add_lsp_parser" in text


def test_installed_wheel_parses_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, system_site_packages=True, with_pip=True)
    python = env_dir / "bin" / "python"
    # --ignore-installed: the test environment may already have relaylang installed,
    # and the venv sees it (system site packages); the wheel must go into the venv.
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed",
                    str(wheel)], check=True, capture_output=True)
    program = ("import relaylang, pathlib; "
               "m = relaylang.parse('#[version = \"0.0.5\"]\\ndef @main(%x: float32) { %x }'); "
               "print(pathlib.Path(relaylang.__file__).parent.parent.name, len(m.functions))")
    result = subprocess.run([str(python), "-c", program], cwd=tmp_path, check=True,
                            capture_output=True, text=True)
    assert result.stdout.split() == ["site-packages", "1"]
    cli = subprocess.run([str(env_dir / "bin" / "relay"), "--help"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert cli.returncode == 0 and "parse" in cli.stdout and "lsp" in cli.stdout


def test_parser_tables_are_cached_between_runs(tmp_path: Path) -> None:
    # Lark stores the LALR tables in the temp folder; the second start-up loads them.
    example = Path(__file__).resolve().parents[1] / "examples" / "mlp.relay"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-m", "relaylang", "parse", str(example)], env=env,
                           capture_output=True, text=True) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert len(list(tmp_path.glob(".lark_cache_*"))) == 1
