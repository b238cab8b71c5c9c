"""README.md's section "External functions and bring-your-own-codegen": its Python example
(the MLC course's MLP from env.linear / env.relu externs called from a .relay program)
runs and prints what its comment says, and its `relay build --byoc blas` command works."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np

from relaylang.backend.runtime import load_module
from relaylang.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README.split("## External functions and bring-your-own-codegen", 1)[1].split(
    "\n## ", 1)[0]


def test_the_section_exists_after_the_quick_start():
    assert README.index("## Quick start") < README.index(
        "## External functions and bring-your-own-codegen")


def test_extern_example_prints_what_its_comment_says(tmp_path: Path) -> None:
    (block,) = re.findall(r"^```python\n(.*?)^```", SECTION, re.DOTALL | re.MULTILINE)
    assert 'rl.register_func("env.linear")' in block and "rl.register_extern_op" in block
    assert "env.relu(%0)" in block and 'func="env.linear"' in block
    result = subprocess.run([sys.executable, "-c", block], cwd=tmp_path, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 0, result.stderr
    # the interpreter and native code both give NumPy's MLP
    assert result.stdout.splitlines() == ["True True"]
    assert block.rstrip().endswith("# True True")


def test_byoc_command_of_the_section_builds_a_library_that_runs(tmp_path: Path, capsys):
    (command,) = re.findall(r"^```bash\n(.*?)^```", SECTION, re.DOTALL | re.MULTILINE)
    assert command.split("#")[0].split() == ["relay", "build", "--byoc", "blas", "model.relay",
                                             "-o", "model.rlib"]
    model = tmp_path / "model.relay"
    model.write_text('''#[version = "0.0.5"]
def @main(%x: Tensor[(2, 8), float32], %w: Tensor[(4, 8), float32], %b: Tensor[(4), float32]) {
  nn.relu(nn.bias_add(nn.dense(%x, %w), %b))
}''')
    out = tmp_path / "model.rlib"
    assert main(["build", "--byoc", "blas", str(model), "-o", str(out), "-q"]) == 0
    lib = load_module(str(out))
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype("float32") for s in [(2, 8), (4, 8), (4,)])
    np.testing.assert_allclose(lib(x, w, b), np.maximum(x @ w.T + b, 0), rtol=1e-5, atol=1e-6)
    assert [kind for _, kind in lib.external_steps] == ["blas"]
