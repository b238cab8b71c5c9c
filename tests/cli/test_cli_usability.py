"""What a new user met at the command line: `--version`, `-` for standard input, a UTF-8
byte-order mark, a directory without `.relay` files, a subcommand's unknown option, a
misspelt global, `relay fmt -i` losing comments, `relay opt --params`."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import relaylang as rl
from relaylang.cli import main

ROOT = Path(__file__).resolve().parents[2]
HEADER = '#[version = "0.0.5"]\n'
Capture = pytest.CaptureFixture[str]


def _relay(*args: str, stdin: str | None = None, cwd: Path | None = None) \
        -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "relaylang", *args], input=stdin,
                          capture_output=True, text=True, cwd=cwd, timeout=120)


def test_version(capsys: Capture) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out.strip() == f"relay (relaylang) {rl.__version__}"


def test_dash_reads_standard_input() -> None:
    check = _relay("check", "-", stdin=HEADER + "def @main(%x: float32) { %x }\n")
    assert check.returncode == 0 and check.stdout == "<stdin>: @main: fn (float32) -> float32\n"
    bad = _relay("parse", "-", stdin=HEADER + "def @main() { %y }\n")
    assert bad.returncode == 1 and "<stdin>:2:15: error: unknown local variable" in bad.stderr
    fmt = _relay("fmt", "-", stdin=HEADER + "def @main(){1f}\n")
    assert fmt.returncode == 0 and fmt.stdout == HEADER + "def @main() {\n  1f\n}\n"


def test_fmt_in_place_on_standard_input_is_a_usage_error(capsys: Capture) -> None:
    assert main(["fmt", "-i", "-"]) == 2
    assert "-i cannot rewrite standard input" in capsys.readouterr().err


def test_utf8_byte_order_mark_is_accepted(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "bom.relay"
    path.write_bytes(b"\xef\xbb\xbf" + (HEADER + "def @main() { 1f }\r\n").encode())
    assert main(["check", str(path)]) == 0
    assert capsys.readouterr().out == f"{path}: @main: fn () -> float32\n"


def test_directory_without_relay_files_is_an_error(tmp_path: Path, capsys: Capture) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("not relay")
    for command in ("parse", "check", "fmt"):
        assert main([command, str(empty)]) == 1
        assert f"{empty}: error: no .relay files in this directory" in capsys.readouterr().err


def test_unknown_option_of_a_subcommand_shows_that_subcommand_usage(tmp_path: Path) -> None:
    run = _relay("run", "x.relay", "--bogus", cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("usage: relay run ") and \
        "relay run: error: unrecognized arguments: --bogus" in run.stderr
    top = _relay("--bogus", cwd=tmp_path)
    assert top.returncode == 2 and top.stderr.startswith("usage: relay ")


def test_misspelt_global_gets_a_did_you_mean(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "typo.relay"
    path.write_text(HEADER + "def @main(%x: float32) { %x }\ndef @f() { @mian(1f) }\n")
    assert main(["parse", str(path)]) == 1
    assert f"{path}:3:12: error: undefined global function `@mian`; did you mean `@main`?" \
        in capsys.readouterr().err


BODY_COMMENT = HEADER + ("// kept: before the def\n"
                         "def @main(%x: float32) {\n"
                         "  // lost: inside the body\n"
                         "  add(%x,   1f)\n"
                         "}\n")


def test_fmt_in_place_keeps_comments_inside_definitions(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "commented.relay"
    path.write_text(BODY_COMMENT)
    assert main(["fmt", "-i", str(path)]) == 0
    assert capsys.readouterr().err == ""
    assert path.read_text() == HEADER + ("// kept: before the def\n"
                                         "def @main(%x: float32) {\n"
                                         "  // lost: inside the body\n"
                                         "  add(%x, 1f)\n"
                                         "}\n")


def test_fmt_in_place_refuses_when_a_comment_has_no_place(tmp_path: Path, capsys: Capture,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from relaylang.syntax import format as fmt
    real = fmt.format_text

    def losing(text: str, source_name: str = "from_string") -> fmt.Formatted:
        done = real(text, source_name)      # as if the comment on line 4 had no place
        return fmt.Formatted(done.text.replace("  // lost: inside the body\n", ""), 1, [4])
    monkeypatch.setattr(fmt, "format_text", losing)
    path = tmp_path / "commented.relay"
    path.write_text(BODY_COMMENT)
    assert main(["fmt", "-i", str(path)]) == 1
    err = capsys.readouterr().err
    assert (f"{path}: error: not rewritten: 1 comment(s) inside definitions would be lost "
            f"(at {path}:4)") in err
    assert path.read_text() == BODY_COMMENT                      # untouched
    assert main(["fmt", "-i", "--force", str(path)]) == 0
    assert "// lost" not in path.read_text() and "// kept" in path.read_text()


def test_fmt_force_needs_in_place(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "a.relay"
    path.write_text(HEADER + "def @main() { 1f }\n")
    assert main(["fmt", "--force", str(path)]) == 2


def test_opt_binds_params_before_the_passes(tmp_path: Path, capsys: Capture) -> None:
    path = tmp_path / "scale.relay"
    path.write_text(HEADER + "def @main(%x: Tensor[(2), float32], %w: Tensor[(2), float32]) {\n"
                             "  multiply(%x, add(%w, %w))\n}\n")
    params = tmp_path / "w.npz"
    np.savez(params, w=np.array([1, 2], "float32"))
    assert main(["opt", str(path), "-p", "FoldConstant", "--params", str(params)]) == 0
    out = capsys.readouterr().out
    assert "def @main(%x: Tensor[(2), float32])" in out and "%w" not in out
    assert main(["opt", str(path), "-p", "FoldConstant", "--params", str(tmp_path / "no.npz")]) \
        == 1
    assert "no.npz: error: cannot read arrays" in capsys.readouterr().err
    np.savez(params, nope=np.zeros(2, "float32"))
    assert main(["opt", str(path), "-p", "FoldConstant", "--params", str(params)]) == 1
    assert f"{params}: error:" in capsys.readouterr().err


ADT = HEADER + """type List[A] {
  Cons(A, List[A]),
  Nil,
}

def @sum(%xs: List[float32]) -> float32 {
  match (%xs) {
    Cons(%h, %t) => add(%h, @sum(%t)),
    Nil => 0f,
  }
}

def @main(%xs: List[float32], %p: (float32, int32)) -> float32 {
  add(@sum(%xs), %p.0)
}
"""


def test_run_takes_adt_and_tuple_arguments_as_relay_text(tmp_path: Path,
                                                         capsys: Capture) -> None:
    path = tmp_path / "adt.relay"
    path.write_text(ADT)
    assert main(["run", str(path), "--input", "xs=Cons(1f, Cons(2.5f, Nil))",
                 "--input", "p=(1f, 2)"]) == 0
    assert capsys.readouterr().out == "4.5\n"
    assert main(["run", str(path), "--input", "xs=Cons(1, Nil)", "--input", "p=(1f, 2)"]) == 1
    err = capsys.readouterr().err
    assert "--input xs:1:1: error: type mismatch" in err and "List[float32]" in err
    assert main(["run", str(path), "--input", "xs=Cons(1f, Nill)", "--input", "p=(1f, 2)"]) == 1
    assert "--input xs:1:10: error: unknown operator or constructor `Nill`; did you mean " \
           "`Nil`?" in capsys.readouterr().err
