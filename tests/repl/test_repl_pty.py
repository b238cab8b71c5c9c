"""`relay repl` as a person uses it: through a pseudo-terminal, reading the screen."""
from __future__ import annotations

import os
import re
import sys
import time
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect")

ROOT = Path(__file__).resolve().parents[2]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[>=]|\r")
UP = "\x1b[A"


def spawn(tmp_path: Path, *args: str):
    env = dict(os.environ, RELAY_REPL_HISTORY=str(tmp_path / "history"), TERM="xterm",
               PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return pexpect.spawn(sys.executable, ["-m", "relaylang", "repl", *args], env=env,
                         encoding="utf-8", timeout=30, dimensions=(40, 120))


def typed(child, text: str) -> None:
    """Type like a person: one chunk, then a pause for the screen to settle."""
    child.send(text)
    time.sleep(0.15)


def test_session_through_a_terminal(tmp_path):
    child = spawn(tmp_path)
    child.expect("relay>")
    typed(child, "def @inc(%x: float32) {\r")
    child.expect(r"\.\.\.")                    # the continuation prompt: more is needed
    typed(child, "add(%x, 1f)\r")
    typed(child, "}\r")
    child.expect("defined @inc: fn \\(float32\\) -> float32")
    typed(child, "@inc(2f)\r")
    child.expect("%out1: float32 = 3.0")
    typed(child, ":type @inc\r")
    child.expect(r"fn \(float32\) -> float32")
    typed(child, "@i")
    typed(child, "\t")                         # completes the only global: @inc
    typed(child, "(%_)\r")
    child.expect("%out2: float32 = 4.0")
    typed(child, UP)                           # history recall
    typed(child, "\r")
    child.expect("%out3: float32 = 5.0")
    typed(child, "\x04")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    screen = ANSI.sub("", child.before or "")
    assert "Traceback" not in screen
    history = (tmp_path / "history").read_text()
    assert "+@inc(%_)" in history and "+def @inc(%x: float32) {" in history
