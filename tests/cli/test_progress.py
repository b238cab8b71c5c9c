"""Progress bars (issue 17, item 4): the library's `relaylang.ir.progress` reports to
whatever renderer a tool installs; `relay` draws tqdm bars on stderr only when it is a
terminal and `--quiet` is not given.

The terminal is faked by making the captured stderr's `isatty` answer True; the bars'
delay is set to 0 so that quick work draws them too.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

import relaylang as rl
import relaylang.cli.progress as cli_progress
from relaylang.cli import main
from relaylang.ir import progress
from relaylang.transform.instruments import planned_steps
from relaylang.transform.pass_infra import PassContext
from relaylang.transform.tvm_pipeline import default_pipeline

HEADER = '#[version = "0.0.5"]\n'
# after FuseOps four primitive functions: dense+exp, dense+tanh, dense, softmax
PROGRAM = HEADER + """def @main(%x: Tensor[(4, 4), float32], %w: Tensor[(4, 4), float32]) {
  %0 = nn.dense(%x, %w);
  %1 = exp(%0);
  %2 = nn.dense(%1, %w);
  %3 = tanh(%2);
  %4 = nn.dense(%3, %3);
  nn.softmax(%4)
}
"""


@pytest.fixture
def src(tmp_path: Path) -> str:
    path = tmp_path / "p.relay"
    path.write_text(PROGRAM)
    return str(path)


def _fake_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    """stderr (captured) claims to be a terminal; bars appear at once. Called in the test
    body: the stream capsys captures into is only in place during the call."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    monkeypatch.setattr(cli_progress, "DELAY", 0.0)


def _relay(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


def _bar(err: str, label: str) -> bool:
    """Whether `err` holds a tqdm bar of `label` (drawn with carriage returns)."""
    return f"{label}:" in err and "\r" in err


# ---------------------------------------------------------------- the library's API


def test_without_a_renderer_nothing_is_drawn_and_items_pass_through(capsys) -> None:
    assert not progress.active()
    assert list(progress.track(range(3), "work")) == [0, 1, 2]
    with progress.begin("task", total=2) as task:
        task.update(note="half")
        task.update()
    assert task.done == 2
    progress.write("a line")
    assert capsys.readouterr() == ("a line\n", "")


def test_a_renderer_sees_begin_updates_and_close() -> None:
    render, events = progress.recorder()
    with progress.installed(render):
        assert progress.active()
        assert list(progress.track(["a", "b"], "items", unit="item")) == ["a", "b"]
        with progress.begin("tuning conv2d", total=4, unit="trial") as task:
            task.update(2, note="best 1.5 GFLOPS")
    assert not progress.active()
    assert events == [("begin", "items", 2, "item"), ("update", "items", 1, None),
                      ("update", "items", 1, None), ("close", "items"),
                      ("begin", "tuning conv2d", 4, "trial"),
                      ("update", "tuning conv2d", 2, "best 1.5 GFLOPS"),
                      ("close", "tuning conv2d")]


def test_open_tasks_close_when_the_renderer_goes_even_on_an_error() -> None:
    render, events = progress.recorder()
    with pytest.raises(KeyError), progress.installed(render):
        progress.begin("left open", total=3)
        for _ in progress.track(range(5), "loop"):
            raise KeyError("boom")
    assert ("close", "left open") in events and ("close", "loop") in events
    assert not progress.active()


def test_the_innermost_renderer_draws() -> None:
    outer, outer_events = progress.recorder()
    inner, inner_events = progress.recorder()
    with progress.installed(outer):
        with progress.installed(inner):
            progress.begin("x").close()
        progress.begin("y").close()
    assert [e[1] for e in inner_events] == ["x", "x"]
    assert [e[1] for e in outer_events] == ["y", "y"]


def test_build_reports_each_primitive_function() -> None:
    render, events = progress.recorder()
    with progress.installed(render):
        rl.build(rl.parse(PROGRAM), target="llvm")
    begins = [e for e in events if e[0] == "begin" and e[1] == "lowering kernels"]
    assert begins == [("begin", "lowering kernels", 4, "kernel")]
    steps = sum(e[2] for e in events if e[0] == "update" and e[1] == "lowering kernels")
    assert steps == 4 and ("close", "lowering kernels") in events


# ---------------------------------------------------------------- the terminal renderer


def test_wants_bars_only_on_a_terminal_and_not_quiet() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True
    assert cli_progress.wants_bars(False, Terminal())
    assert not cli_progress.wants_bars(True, Terminal())
    assert not cli_progress.wants_bars(False, io.StringIO())


def test_tqdm_renderer_draws_and_clears_its_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_progress, "DELAY", 0.0)
    stream = io.StringIO()
    with progress.installed(cli_progress.terminal_renderer(stream)):
        for _ in progress.track(range(4), "golden files", unit="file"):
            pass
    text = stream.getvalue()
    assert "golden files:" in text and "/4 [" in text
    last = text.rstrip("\r").rsplit("\r", 1)[-1]
    assert last.strip() == ""           # leave=False: the bar's line is blanked at the end


# ---------------------------------------------------------------- relay build / opt / test


def test_build_shows_a_bar_on_a_terminal(monkeypatch, src, tmp_path, capsys) -> None:
    _fake_tty(monkeypatch)
    code, _, err = _relay(capsys, "build", src, "-o", str(tmp_path / "p.rlib"))
    assert code == 0, err
    assert _bar(err, "lowering kernels") and _bar(err, "passes")
    steps = planned_steps([default_pipeline(3)], PassContext(opt_level=3))
    assert "/4 [" in err and f"/{steps} [" in err     # four kernels; the -O3 passes


def test_build_shows_no_bar_when_stderr_is_not_a_terminal(src, tmp_path, capsys) -> None:
    code, _, err = _relay(capsys, "build", src, "-o", str(tmp_path / "p.rlib"))
    assert code == 0 and err == ""


def test_quiet_silences_the_bar(monkeypatch, src, tmp_path, capsys) -> None:
    _fake_tty(monkeypatch)
    code, _, err = _relay(capsys, "build", src, "-o", str(tmp_path / "p.rlib"), "--quiet")
    assert code == 0 and err == ""
    code, out, err = _relay(capsys, "opt", src, "-O3", "-q")
    assert code == 0 and err == "" and "def @main" in out


def test_opt_shows_the_passes_and_keeps_stdout_clean(monkeypatch, src, capsys) -> None:
    _fake_tty(monkeypatch)
    code, out, err = _relay(capsys, "opt", src, "-O3")
    assert code == 0 and _bar(err, "passes")
    assert out.startswith(HEADER) and "\r" not in out


def test_golden_tree_bar_and_failures_above_it(monkeypatch, tmp_path, capsys) -> None:
    _fake_tty(monkeypatch)
    good = tmp_path / "good.relay"
    good.write_text("// RUN: relay opt %s -p InferType\n" + HEADER
                    + "def @main(%x: float32) { add(%x, %x) }\n// CHECK: def @main\n")
    bad = tmp_path / "bad.relay"
    bad.write_text("// RUN: relay opt %s -p InferType\n" + HEADER
                   + "def @main(%x: float32) { add(%x, %x) }\n// CHECK: no such text\n")
    code, out, err = _relay(capsys, "test", str(tmp_path))
    assert code == 1 and _bar(err, "golden files")
    assert f"FAIL {bad}" in out and out.rstrip().endswith("1 passed, 1 failed")
    code, out, err = _relay(capsys, "test", str(good), "--quiet")
    assert code == 0 and err == "" and out == "1 passed, 0 failed\n"


def test_errors_are_printed_whole_while_a_bar_is_open(monkeypatch, capsys) -> None:
    _fake_tty(monkeypatch)
    stream = sys.stderr
    with progress.installed(cli_progress.terminal_renderer(stream)):
        task = progress.begin("import x.onnx", total=3)
        from relaylang.cli.common import error
        error("x.onnx", "cannot write file")
        task.close()
    err = capsys.readouterr().err
    assert "\nx.onnx: error: cannot write file\n" in err.replace("\r", "\n")


def test_import_shows_its_phases(monkeypatch, tmp_path, capsys) -> None:
    _fake_tty(monkeypatch)
    pytest.importorskip("onnx")
    import onnx
    from onnx import TensorProto, helper
    node = helper.make_node("Relu", ["x"], ["y"])
    graph = helper.make_graph([node], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "relu.onnx"
    onnx.save(model, str(path))
    code, out, err = _relay(capsys, "import", str(path))
    assert code == 0 and "relu(" in out
    assert _bar(err, "import relu.onnx")
    code, out, err = _relay(capsys, "import", str(path), "--quiet")
    assert code == 0 and err == ""
