"""The `relay` command: exit codes, rendered diagnostics, fmt modes."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from relaylang.cli import main

ROOT = Path(__file__).resolve().parents[2]
GOOD = '#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 {\n  add(%x, 1f)\n}\n'
BAD = '#[version = "0.0.5"]\ndef @main(%x) {\n  %y\n}\ndef @g() {\n  foo(1)\n}\n'


def _write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_parse_ok_is_silent(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["parse", _write(tmp_path, "ok.relay", GOOD)]) == 0
    out = capsys.readouterr()
    assert out.out == "" and out.err == ""


def test_parse_reports_every_error_with_location(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "bad.relay", BAD)
    assert main(["parse", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:3: error: unknown local variable `%y`" in err
    assert f"{path}:6:3: error: unknown operator or constructor `foo`" in err
    assert "3 |   %y\n  |   ^^" in err
    assert "Traceback" not in err


def test_missing_file_is_a_one_line_error(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    missing = str(tmp_path / "nope.relay")
    assert main(["parse", missing]) == 1
    assert capsys.readouterr().err.strip() == (
        f"{missing}: error: cannot read file: No such file or directory")


def test_usage_error_exits_2() -> None:
    with pytest.raises(SystemExit) as info:
        main(["parse"])
    assert info.value.code == 2
    with pytest.raises(SystemExit) as info:
        main(["frobnicate"])
    assert info.value.code == 2


def test_python_dash_m_is_the_same_program(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "relaylang", "parse",
                             _write(tmp_path, "bad.relay", BAD)], capture_output=True, text=True)
    assert result.returncode == 1 and "unknown local variable" in result.stderr


def test_fmt_prints_check_and_in_place(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    messy = ('// header comment\n#[version = "0.0.5"]\n'
             '// the entry point\ndef @main(%x: float32) -> float32 { add(%x,1f) }\n')
    path = _write(tmp_path, "messy.relay", messy)
    assert main(["fmt", path]) == 0
    formatted = capsys.readouterr().out
    assert formatted.startswith('// header comment\n#[version = "0.0.5"]\n')
    assert "// the entry point\ndef @main(%x: float32) -> float32 {\n  add(%x, 1f)\n}\n" in formatted
    assert main(["fmt", "--check", path]) == 1
    assert "+  add(%x, 1f)" in capsys.readouterr().out
    assert main(["fmt", "-i", path]) == 0
    assert Path(path).read_text() == formatted
    assert main(["fmt", "--check", path]) == 0


def test_fmt_keeps_body_comments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _write(tmp_path, "c.relay", GOOD.replace("add(%x, 1f)", "add(%x,   1f) // inner"))
    assert main(["fmt", path]) == 0
    out = capsys.readouterr()
    assert "  add(%x, 1f)  // inner\n" in out.out and out.err == ""
    assert main(["fmt", "-i", path]) == 0
    assert main(["fmt", "--check", path]) == 0


def test_fmt_check_examples_is_clean() -> None:
    assert main(["fmt", "--check", str(ROOT / "examples")]) == 0


def test_check_prints_each_global_type(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = ('#[version = "0.0.5"]\ndef @main(%x: float32) -> float32 {\n  @id(%x)\n}\n'
            'def @id(%y: float32) {\n  %y\n}\n')
    path = _write(tmp_path, "ok.relay", text)
    assert main(["check", path]) == 0
    assert capsys.readouterr().out.splitlines() == [f"{path}: @id: fn (float32) -> float32",
                                                    f"{path}: @main: fn (float32) -> float32"]


def test_check_reports_type_errors_with_location(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    text = '#[version = "0.0.5"]\ndef @main(%x: float32) -> int32 {\n  %x\n}\n'
    path = _write(tmp_path, "bad.relay", text)
    assert main(["check", path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:3:3: error: type mismatch in the function body: expected int32, found float32" \
        in err
    assert "note: the result type is declared here" in err


def test_check_examples_type_check() -> None:
    assert main(["check", str(ROOT / "examples")]) == 0


def test_internal_errors_are_reported_as_such(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    import relaylang.cli.source as source

    def broken(args: object) -> int:
        raise KeyError("boom")
    monkeypatch.setattr(source, "cmd_parse", broken)
    monkeypatch.delenv("RELAYLANG_TRACEBACK", raising=False)
    assert main(["parse", _write(tmp_path, "ok.relay", GOOD)]) == 70
    err = capsys.readouterr().err
    assert "internal error (a bug in relaylang" in err and "KeyError" in err
    assert "Traceback" not in err
