"""`relay viz`: every example draws in every format; bad input is a one-line error, exit 1."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from relaylang.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.relay"))
TEXT = ('#[version = "0.0.5"]\n'
        "def @main(%x: Tensor[(2, 2), float32]) {\n  %0 = nn.relu(%x);\n  add(%0, %x)\n}\n")


def relay(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_draws(example: Path, tmp_path: Path,
                             capsys: pytest.CaptureFixture[str]) -> None:
    for ext in ("svg", "html", "dot"):
        out = tmp_path / f"{example.stem}.{ext}"
        code, _, err = relay(capsys, "viz", str(example), "-o", str(out))
        assert code == 0, err
        assert err.startswith(f"{out}: @main: ") and "nodes" in err
        text = out.read_text(encoding="utf-8")
        if ext == "svg":
            ET.fromstring(text.encode("utf-8"))
        elif ext == "html":
            assert "http://" not in text and "https://" not in text and "src=" not in text
        else:
            assert text.startswith('digraph "@main" {')
    code, _, err = relay(capsys, "viz", str(example), "--after", "FuseOps", "-q",
                         "-o", str(tmp_path / "fused.svg"))
    assert code == 0 and err == ""


def test_function_and_after(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "f.dot"
    code, _, err = relay(capsys, "viz", str(ROOT / "examples" / "recursion.relay"),
                         "--function", "factorial", "-o", str(out))
    assert code == 0, err
    assert out.read_text().startswith('digraph "@factorial" {')
    assert "subgraph cluster_" in out.read_text()            # the branches of its `if`
    out = tmp_path / "fused.svg"
    code, _, err = relay(capsys, "viz", str(ROOT / "examples" / "conv_bn_relu.relay"),
                         "--after", "SimplifyInference,FuseOps", "-o", str(out))
    assert code == 0, err
    assert 'class="cluster c-fused"' in out.read_text()


def _one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_unknown_function(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.relay"
    path.write_text(TEXT)
    code, _, err = relay(capsys, "viz", str(path), "--function", "mian",
                         "-o", str(tmp_path / "o.svg"))
    assert code == 1
    assert _one_line_error(err) == \
        f"{path}: error: the module has no function @mian; did you mean @main?"
    assert not (tmp_path / "o.svg").exists()


def test_unwritable_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.relay"
    path.write_text(TEXT)
    for out in (tmp_path / "no" / "such" / "dir" / "o.svg", tmp_path):
        target = str(out) if out != tmp_path else str(tmp_path / "d.html")
        if out == tmp_path:
            (tmp_path / "d.html").mkdir()                 # a directory in the way
        code, _, err = relay(capsys, "viz", str(path), "-o", target)
        assert code == 1
        assert _one_line_error(err).startswith(f"{target}: error: cannot write file: ")


def test_unknown_extension(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.relay"
    path.write_text(TEXT)
    for name, said in (("o.png", "`.png`"), ("o", "no extension")):
        code, _, err = relay(capsys, "viz", str(path), "-o", str(tmp_path / name))
        assert code == 1
        assert _one_line_error(err) == (f"{tmp_path / name}: error: unknown output format "
                                        f"({said}): use .dot, .svg or .html")


def test_syntax_and_type_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "bad.relay"
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: float32) {\n  add(%x,\n}\n')
    code, _, err = relay(capsys, "viz", str(path), "-o", str(tmp_path / "o.svg"))
    assert code == 1 and "Traceback" not in err
    assert err.splitlines()[0].startswith(f"{path}:4:1: error: ")
    path.write_text('#[version = "0.0.5"]\ndef @main(%x: float32) {\n  nn.dense(%x, 1)\n}\n')
    code, _, err = relay(capsys, "viz", str(path), "-o", str(tmp_path / "o.svg"))
    assert code == 1 and "Traceback" not in err
    assert err.splitlines()[0].startswith(f"{path}:3:")


def test_unknown_pass_and_missing_file(tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.relay"
    path.write_text(TEXT)
    code, _, err = relay(capsys, "viz", str(path), "--after", "FuseOpps",
                         "-o", str(tmp_path / "o.svg"))
    assert code == 1 and "unknown pass `FuseOpps`" in _one_line_error(err)
    code, _, err = relay(capsys, "viz", str(tmp_path / "none.relay"),
                         "-o", str(tmp_path / "o.svg"))
    assert code == 1
    assert _one_line_error(err).startswith(f"{tmp_path / 'none.relay'}: error: cannot read")


@pytest.mark.parametrize("name", ["resnet50", "gpt2"])
def test_the_tvm_test_models_draw(name: str, tmp_path: Path,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    from relaylang.syntax.printer import astext
    from relaylang.testing.models import get_workload
    mod, _ = get_workload(name, small=True)
    path = tmp_path / f"{name}.relay"
    path.write_text(astext(mod), encoding="utf-8")
    for after in ([], ["--after", "FuseOps"]):
        out = tmp_path / f"{name}.html"
        code, _, err = relay(capsys, "viz", str(path), *after, "-o", str(out))
        assert code == 0, err
        assert out.read_text(encoding="utf-8").count('class="node k-op"') > 40
