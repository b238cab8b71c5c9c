"""The REPL's `:viz @NAME [--after PASSES] [-o FILE]`."""
from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from relaylang.repl.commands import COMMAND_DOCS
from relaylang.repl.session import Session

DEF = "def @f(%x: Tensor[(2, 3), float32]) { %0 = nn.relu(%x); add(%0, %x) }"


def _session() -> Session:
    s = Session()
    assert not s.submit(DEF).error
    return s


def test_viz_writes_an_html_page_and_says_where() -> None:
    reply = _session().submit(":viz @f")
    assert not reply.error
    path = Path(reply.output.split()[1])
    assert reply.output.startswith(f"wrote {path} (@f: 4 nodes, 4 edges")
    page = path.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and ">nn.relu<" in page and "http" not in page
    assert "&lt;input 1&gt;:1:" in page and "%0 = nn.relu(%x); add(%0, %x)" in page  # tooltip


def test_viz_with_passes_and_an_output_file(tmp_path: Path) -> None:
    s = _session()
    out = tmp_path / "f.svg"
    reply = s.submit(f":viz f --after FuseOps -o {out}")
    assert not reply.error and reply.output.startswith(f"wrote {out} ")
    root = ET.fromstring(out.read_bytes())
    assert any("c-fused" in g.get("class", "") for g in root.iter("{http://www.w3.org/2000/svg}g"))
    assert "def @f" in s.submit(":list").output and "Primitive" not in s.submit(":list").output


def test_viz_errors(tmp_path: Path) -> None:
    s = _session()
    cases = {":viz": "usage: :viz @NAME",
             ":viz @g": "error: the module has no function @g",
             f":viz @f -o {tmp_path / 'x.png'}": "error: unknown output format (`.png`)",
             ":viz @f --after NoSuchPass": "error: unknown pass `NoSuchPass`",
             f":viz @f -o {tmp_path / 'no' / 'x.svg'}": "error: cannot write file"}
    for command, message in cases.items():
        reply = s.submit(command)
        assert reply.error and message in reply.output, (command, reply.output)
        assert "Traceback" not in reply.output


def test_viz_is_listed() -> None:
    assert "viz" in COMMAND_DOCS
    assert ":viz @NAME" in Session().submit(":help").output
