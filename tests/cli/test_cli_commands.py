"""The `relay` command's table of subcommands (relaylang/cli/__init__.py): every subcommand
of DESIGN.md that exists is listed, each is loaded only when needed, and subcommands of
other packages (`relay lsp`) come through the `relaylang.commands` entry points."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

import relaylang.cli as cli

ROOT = Path(__file__).resolve().parents[2]
# DESIGN.md "The command line", the subcommands built so far, in `relay --help`'s order.
EXISTING = ["parse", "check", "fmt", "run", "build", "tune", "train", "opt", "import", "viz",
            "repl", "test", "lsp"]


def listed(help_text: str) -> list[str]:
    """The subcommand names of `relay --help`, in order."""
    lines = help_text.split("positional arguments:", 1)[1].split("options:", 1)[0].splitlines()
    return [line.split()[0] for line in lines if line.startswith("    ") and line.split()]


def test_help_lists_every_existing_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["--help"])
    assert e.value.code == 0
    assert listed(capsys.readouterr().out) == EXISTING


def test_installed_command_lists_them_too() -> None:
    """A fresh process: `lsp` is found through the installed entry point."""
    result = subprocess.run([sys.executable, "-m", "relaylang", "--help"], cwd=ROOT,
                            capture_output=True, text=True, check=True)
    assert listed(result.stdout) == EXISTING


def test_every_row_loads_a_parser_adder() -> None:
    for name, target in cli.COMMANDS.items():
        sub = argparse.ArgumentParser(prog="relay").add_subparsers()
        cli._load(target)(sub)
        assert list(sub.choices) == [name], target
    assert "lsp" not in cli.COMMANDS              # relaylang does not name the lsp package
    assert "lsp" in cli._plugins()


def test_a_subcommand_loads_only_its_own_module() -> None:
    program = ("import sys, relaylang.cli as c; c.parser(sys.argv[1:]); "
               "print(' '.join(sorted(m for m in sys.modules if m.startswith(("
               "'relaylang.cli.', 'relaylang.repl', 'relaylang.testing', 'lsp', "
               "'importlib.metadata')))))")
    def loaded(*argv: str) -> list[str]:
        return subprocess.run([sys.executable, "-c", program, *argv], cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.split()
    assert loaded("parse", "x.relay") == ["relaylang.cli.common", "relaylang.cli.source"]
    assert loaded("opt", "x.relay") == ["relaylang.cli.common", "relaylang.cli.opt"]
    assert "lsp.command" in loaded("lsp") and "lsp.server" not in loaded("lsp")


def test_help_imports_no_heavy_module() -> None:
    program = ("import sys, relaylang.cli as c; c.parser(['--help']); "
               "print(' '.join(sorted(sys.modules)))")
    modules = subprocess.run([sys.executable, "-c", program], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout.split()
    heavy = ("numpy", "lark", "llvmlite", "pygls", "prompt_toolkit", "relaylang.ir",
             "relaylang.syntax", "relaylang.transform", "relaylang.testing.golden", "lsp.server")
    assert [m for m in modules if m.startswith(heavy)] == []


def test_a_plugin_subcommand_runs(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    def add_hello_parser(sub: object) -> None:
        p = sub.add_parser("hello", help="say hello")       # type: ignore[attr-defined]
        p.add_argument("--name", default="world")
        p.set_defaults(run=lambda args: print(f"hello {args.name}") or 0)

    class EntryPoint:
        name = "hello"

        def load(self) -> object:
            return add_hello_parser

    monkeypatch.setattr(cli, "_plugins", lambda: {"hello": EntryPoint()})
    assert cli.main(["hello", "--name", "relay"]) == 0
    assert capsys.readouterr().out == "hello relay\n"
    with pytest.raises(SystemExit):
        cli.main(["--help"])
    assert listed(capsys.readouterr().out)[-1] == "hello"


def test_an_unknown_subcommand_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["optimise", "x.relay"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'optimise'" in err and "'opt'" in err and "'lsp'" in err
