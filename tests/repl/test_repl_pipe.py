"""`relay repl` without a terminal reads lines plainly (no prompt_toolkit control codes),
and `:type` of an operator shows its signature instead of `_`."""
from __future__ import annotations

import subprocess
import sys

from relaylang.repl.app import Repl
from relaylang.repl.session import Session

SCRIPT = (":type nn.relu\n"
          "def @inc(%x: float32) {\n"
          "  add(%x, 1f)\n"
          "}\n"
          "\n"
          "@inc(2f)\n")


def test_type_of_an_operator_is_its_signature() -> None:
    out = Session().submit(":type nn.conv2d").output
    assert out.startswith("nn.conv2d(data, weight, strides=(1, 1)") and "_" != out
    assert "an operator" in out


def test_piped_input_is_read_line_by_line_without_terminal_codes() -> None:
    run = subprocess.run([sys.executable, "-m", "relaylang", "repl"], input=SCRIPT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "\x1b" not in run.stdout + run.stderr and "\r" not in run.stdout
    assert "not a terminal" not in run.stderr
    assert run.stdout.splitlines() == [
        "nn.relu(data)  (an operator: a call's type depends on its arguments)",
        "defined @inc: fn (float32) -> float32",
        "%out1: float32 = 3.0"]


def test_piped_input_with_an_error_goes_on_and_exits_1() -> None:
    run = subprocess.run([sys.executable, "-m", "relaylang", "repl"],
                         input="%nope\n1f\n", capture_output=True, text=True, timeout=120)
    assert run.returncode == 1
    assert "error: unknown local variable `%nope`" in run.stdout
    assert run.stdout.rstrip().endswith("%out1: float32 = 1.0")


def test_run_lines_submits_an_unfinished_input_at_the_end() -> None:
    shown: list[str] = []
    repl = Repl(Session(), write=shown.append, interactive=False)
    assert repl.prompt is None
    assert repl.run_lines(["add(1f,\n", "  2f)\n", "add(1f,\n"]) == 1
    assert shown[0] == "%out1: float32 = 3.0" and "error" in shown[1]
