"""The wheel carries the grammar, and a regular (non-editable) install works.

Builds without network access: `--no-isolation` uses the hatchling of the test
environment, and the fresh venv sees the test environment's packages (its
site-packages, whether that is a virtual environment or the base interpreter).
"""
from __future__ import annotations

import os
import site
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
    # the standard library is Relay text inside the package (relaylang/std)
    assert {"relaylang/std/prelude.relay", "relaylang/std/nat.relay"} <= set(names)
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    text = zipfile.ZipFile(wheel).read(entry_points).decode()
    assert "relay = relaylang.cli:main" in text
    # `relay lsp` joins the command through this group: relaylang never imports lsp
    assert "[relaylang.commands]\nlsp = lsp.command:add_lsp_parser" in text


def _visible_site_packages() -> list[str]:
    """The site-packages directories of the running interpreter, a venv's included.

    A nested venv made with `system_site_packages=True` sees the *base* interpreter's
    packages, not an outer venv's; a .pth file listing these directories works in both."""
    dirs = list(site.getsitepackages())
    if site.ENABLE_USER_SITE:
        dirs.append(site.getusersitepackages())
    return [d for d in dirs if os.path.isdir(d)]


def test_installed_wheel_parses_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    python = env_dir / "bin" / "python"
    # The wheel goes into the venv's own site-packages, installed by this environment's pip.
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    # The dependencies (lark, numpy, ...) come from the test environment, after the
    # venv's own directory: plain path lines, so its .pth files (an editable relaylang)
    # are not processed and the installed wheel is the relaylang imported.
    (Path(purelib) / "test_environment.pth").write_text(
        "".join(d + "\n" for d in _visible_site_packages()))
    program = ("import relaylang, pathlib, lark; "
               "m = relaylang.parse('#[version = \"0.0.5\"]\\ndef @main(%x: float32) { %x }'); "
               "print(pathlib.Path(relaylang.__file__).parent.parent.name, len(m.functions)); "
               "print(pathlib.Path(lark.__file__).resolve())")
    result = subprocess.run([str(python), "-c", program], cwd=tmp_path, check=True,
                            capture_output=True, text=True)
    first, lark_file = result.stdout.splitlines()
    assert first.split() == ["site-packages", "1"]
    # The dependencies are this environment's (an outer venv's, not its base interpreter's).
    import lark
    assert lark_file == str(Path(lark.__file__).resolve())
    cli = subprocess.run([str(env_dir / "bin" / "relay"), "--help"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert cli.returncode == 0 and "parse" in cli.stdout and "lsp" in cli.stdout
    # the installed standard library: `#[import "prelude"]` and rl.prelude()
    program = ("import relaylang as rl; m = rl.parse('#[version = \"0.0.5\"]\\n"
               "#[import \"prelude\"]\\ndef @main() -> int32 { @length(Cons(1, Nil)) }'); "
               "print(rl.evaluate(m), len(rl.prelude().functions))")
    result = subprocess.run([str(python), "-c", program], cwd=tmp_path, check=True,
                            capture_output=True, text=True)
    assert result.stdout.split() == ["1", "24"]


def test_parser_tables_are_cached_between_runs(tmp_path: Path) -> None:
    # Lark stores the LALR tables in the temp folder; the second start-up loads them.
    example = Path(__file__).resolve().parents[1] / "examples" / "mlp.relay"
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-m", "relaylang", "parse", str(example)], env=env,
                           capture_output=True, text=True) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[0].stderr
    assert len(list(tmp_path.glob(".lark_cache_*"))) == 1
