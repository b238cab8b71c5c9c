"""The REPL's prompt_toolkit front end, in process: pipe input, dummy output."""
from __future__ import annotations

import threading
import time

import pytest
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from relaylang.repl.app import Repl, history_path, open_history
from relaylang.repl.completer import ReplCompleter
from relaylang.repl.session import Session

ENTER, CTRL_C, CTRL_D, TAB = "\r", "\x03", "\x04", "\t"
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def run_repl(*chunks: str, session: Session | None = None, pause: float = 0.0) -> list[str]:
    """Type `chunks` into a REPL (with `pause` seconds between them) until it ends."""
    out: list[str] = []
    with create_pipe_input() as pipe:
        repl = Repl(session, color=False, history=InMemoryHistory(), write=out.append,
                    input=pipe, output=DummyOutput())
        if pause:
            def feed() -> None:
                for chunk in chunks:
                    time.sleep(pause)
                    pipe.send_text(chunk)
            threading.Thread(target=feed, daemon=True).start()
        else:
            pipe.send_text("".join(chunks))
        assert repl.run() == 0
    return out


def test_multi_line_definition_then_call():
    out = run_repl("def @g(%x: float32) {" + ENTER, "add(%x, 1f)" + ENTER, "}" + ENTER,
                   "@g(1f)" + ENTER, ":quit" + ENTER)
    assert out == ["defined @g: fn (float32) -> float32", "%out1: float32 = 2.0"]


def test_enter_inside_unfinished_call_continues_the_input():
    session = Session()
    run_repl("add(1f," + ENTER + "2f)" + ENTER, ":quit" + ENTER, session=session)
    assert session.results[0].value == 3.0


def test_syntax_error_is_shown_at_once_and_the_session_goes_on():
    out = run_repl("add(1f, 2f))" + ENTER, "1f" + ENTER, CTRL_D)
    assert out[0].startswith("<input>:1:12: error: unexpected `)`")
    assert out[1] == "%out1: float32 = 1.0"


def test_ctrl_c_drops_the_current_input():
    out = run_repl("def @f() {" + ENTER + "1f", CTRL_C, "2f" + ENTER, CTRL_D)
    assert out == ["%out1: float32 = 2.0"]


def test_ctrl_d_leaves():
    assert run_repl(CTRL_D) == []


def test_bracketed_paste_of_a_whole_file():
    text = '#[version = "0.0.5"]\ndef @a() -> float32 {\n  1f\n}\n\ndef @b() {\n  @a()\n}\n'
    out = run_repl(PASTE_START + text + PASTE_END + ENTER, "@b()" + ENTER, CTRL_D)
    assert out == ["defined @a: fn () -> float32\ndefined @b: fn () -> float32",
                   "%out1: float32 = 1.0"]


def test_closing_brace_goes_back_to_the_opening_level():
    out: list[str] = []
    with create_pipe_input() as pipe:
        repl = Repl(color=False, history=InMemoryHistory(), write=out.append, input=pipe,
                    output=DummyOutput())
        pipe.send_text("def @g() {" + ENTER + "1f" + ENTER + "}" + ENTER)
        assert repl.prompt.prompt() == "def @g() {\n  1f\n}"


def test_tab_completes_a_global():
    session = Session()
    session.submit("def @twice(%x: float32) { add(%x, %x) }")
    out = run_repl("@tw", TAB, "(1f)" + ENTER, CTRL_D, session=session, pause=0.3)
    assert out == ["%out1: float32 = 2.0"]


def completions(session: Session, text: str, cursor: int | None = None) -> list[tuple[str, str]]:
    document = Document(text, len(text) if cursor is None else cursor)
    found = ReplCompleter(session).get_completions(document, CompleteEvent(True))
    return [(c.text, c.display_meta_text) for c in found]


def test_completion_lists_at_cursor_positions():
    session = Session()
    session.submit("def @twice(%x: float32) { add(%x, %x) }")
    session.submit("@twice(1f)")
    nn = completions(session, "nn.")
    assert nn and all(label.startswith("nn.") for label, _ in nn)
    assert ("nn.relu", "op  nn.relu(data)") in nn
    assert completions(session, "@") == [("@twice", "global  (%x: float32) -> float32")]
    assert completions(session, ":ty") == [
        (":type", "command  the type of an expression, without running it")]
    assert [c for c, _ in completions(session, "%")] == ["%_", "%out1"]
    text = "fn (%a: float32) { nn.softmax(%a, "
    got = completions(session, text)
    assert ("axis", "attribute  nn.softmax attribute axis=-1") in got
    assert [c for c, _ in completions(session, text + "%")] == ["%a", "%_", "%out1"]
    middle = "add(%out1, 1f)"
    assert [c for c, _ in completions(session, middle, 6)] == ["%out1"]


def test_history_file_location(monkeypatch, tmp_path):
    monkeypatch.setenv("RELAY_REPL_HISTORY", str(tmp_path / "h"))
    assert history_path() == tmp_path / "h"
    assert isinstance(open_history(), FileHistory)
    monkeypatch.delenv("RELAY_REPL_HISTORY")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert history_path() == tmp_path / "state" / "relaylang" / "repl_history"
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert history_path() == tmp_path / ".relay_history"


@pytest.mark.parametrize("text", ["1f", ":help"])
def test_inputs_go_to_history(text, tmp_path):
    history = FileHistory(str(tmp_path / "h"))
    with create_pipe_input() as pipe:
        repl = Repl(color=False, history=history, write=lambda s: None, input=pipe,
                    output=DummyOutput())
        pipe.send_text(text + ENTER + CTRL_D)
        repl.run()
    assert list(FileHistory(str(tmp_path / "h")).load_history_strings()) == [text]


@pytest.mark.parametrize("text, message", [
    (None, "missing.relay: error: cannot read file"),
    ("def @f() { 1f + }\n", "bad.relay:1:17: error: unexpected `}`"),
])
def test_a_bad_file_on_the_command_line_is_a_located_error_and_exit_1(tmp_path, text, message):
    import subprocess
    import sys
    path = tmp_path / ("missing.relay" if text is None else "bad.relay")
    if text is not None:
        path.write_text(text)
    run = subprocess.run([sys.executable, "-m", "relaylang", "repl", str(path)], cwd=tmp_path,
                         stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and message in run.stderr, run.stderr
    assert "internal error" not in run.stderr and "Traceback" not in run.stderr
