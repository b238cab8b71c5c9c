"""The REPL's `:commands`: one table of name, usage, one-line doc and handler.

`COMMAND_DOCS` (name -> doc) is what completion offers after `:`. Handlers take the
session and the text after the command name and return a `Reply`; `SessionError`
becomes an error reply in `Session.submit`.
"""
from __future__ import annotations

import difflib
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .reply import Reply, SessionError

if TYPE_CHECKING:
    from .session import Session


@dataclass(frozen=True)
class Command:
    name: str
    usage: str
    doc: str
    run: Callable[[Session, str], Reply]


def _help(session: Session, arg: str) -> Reply:
    width = max(len(c.usage) for c in COMMANDS.values())
    lines = ["Type a `def`/`type` item to add it to the session module, or an expression to",
             "evaluate it (%_ is the last result, %out1, %out2, ... the earlier ones).",
             "Enter submits a complete input; an unfinished one continues on the next line.",
             ""]
    lines += [f"  {c.usage.ljust(width)}  {c.doc}" for c in COMMANDS.values()]
    return Reply("\n".join(lines))


def _type(session: Session, arg: str) -> Reply:
    from ..ir.expr import Op
    from ..syntax.printer import astext
    checked = session.check_expression(_required(arg, ":type EXPR"))
    body = checked.function.body
    if isinstance(body, Op):
        # An op has no type of its own: each call's comes from its type relation.
        from ..op.signature import op_signature
        sig = op_signature(body.name)
        label = sig.label if sig is not None else body.name
        return Reply(f"{label}  (an operator: a call's type depends on its arguments)")
    return Reply(astext(checked.type) if checked.type is not None else "_")


def _ast(session: Session, arg: str) -> Reply:
    from .ast_dump import dump
    checked = session.check_expression(_required(arg, ":ast EXPR"))
    return Reply(dump(checked.function.body))


def _time(session: Session, arg: str) -> Reply:
    return session.evaluate(_required(arg, ":time EXPR"), timed=True)


def _profile(session: Session, arg: str) -> Reply:
    """`:profile EXPR`: evaluate with the interpreter under the profiler, show its table."""
    from ..backend.interpreter.executor import InputError
    from ..backend.interpreter.machine import InterpreterError
    from ..backend.profiler import profile
    from ..ir.diagnostics import Diagnostic
    from .session import WRAPPER
    checked = session.check_expression(_required(arg, ":profile EXPR"))
    try:
        prof = profile(checked.typed, *[r.value for r in checked.results], entry=WRAPPER,
                       show=False)
    except InterpreterError as e:
        raise SessionError(session.sources.render(
            [Diagnostic.error(e.message, e.span, code="runtime")], color=session.color)) from e
    except InputError as e:
        raise SessionError(f"error: {e}") from e
    except (RecursionError, MemoryError) as e:
        raise SessionError(f"error: ran out of memory or stack ({type(e).__name__})") from e
    return Reply(prof.text().replace(f"@{WRAPPER}", "the expression").rstrip("\n"))


def _passes(session: Session, arg: str) -> Reply:
    from ..transform.pass_infra import get_pass, list_passes
    lines = []
    for name in list_passes():
        lines.append(f"  {name:<24} {_pass_doc(type(get_pass(name)))}")
    return Reply("\n".join(lines))


def _pass_doc(cls: type) -> str:
    """The first line of the pass's docstring, else of its module's (a dataclass without
    a docstring gets a generated `Name(fields)` one, which says nothing)."""
    for doc in (cls.__doc__, sys.modules[cls.__module__].__doc__):
        lines = (doc or "").strip().splitlines()
        if lines and not lines[0].startswith(cls.__name__ + "("):
            return lines[0]
    return ""


def _opt(session: Session, arg: str) -> Reply:
    from .optimize import optimize
    return Reply(optimize(session.module, arg))


def _viz(session: Session, arg: str) -> Reply:
    from .viz import USAGE, visualize
    return visualize(session.module, _required(arg, USAGE), session.sources)


def _shortcut(pass_name: str) -> Callable[[Session, str], Reply]:
    def run(session: Session, arg: str) -> Reply:
        return _opt(session, f"{pass_name} {arg}".strip())
    return run


def _load(session: Session, arg: str) -> Reply:
    path = _required(arg, ":load FILE")
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise SessionError(f"{path}: error: cannot read file: "
                           f"{getattr(e, 'strerror', None) or e}") from e
    return session.add_items(text, input_name=path)


def _save(session: Session, arg: str) -> Reply:
    from ..syntax.printer import astext
    path = _required(arg, ":save FILE")
    try:
        Path(path).write_text(astext(session.module), encoding="utf-8")
    except OSError as e:
        raise SessionError(f"{path}: error: cannot write file: {e.strerror or e}") from e
    return Reply(f"saved {len(session.module.functions)} function(s) and "
                 f"{len(session.module.type_definitions)} type(s) to {path}")


def _list(session: Session, arg: str) -> Reply:
    from ..syntax.printer import astext
    return Reply(astext(session.module).rstrip("\n"))


def _reset(session: Session, arg: str) -> Reply:
    session.reset()
    return Reply("session cleared")


def _quit(session: Session, arg: str) -> Reply:
    return Reply(quit=True)


def _required(arg: str, usage: str) -> str:
    if not arg.strip():
        raise SessionError(f"usage: {usage}")
    return arg


_TABLE = [
    Command("help", ":help", "show this help", _help),
    Command("type", ":type EXPR", "the type of an expression, without running it", _type),
    Command("ast", ":ast EXPR", "the IR tree of an expression", _ast),
    Command("time", ":time EXPR", "evaluate an expression and show how long it took", _time),
    Command("profile", ":profile EXPR",
            "evaluate an expression under the profiler: time per op and shapes", _profile),
    Command("passes", ":passes", "the registered passes, each with a one-line doc", _passes),
    Command("opt", ":opt PASS[,PASS] [@global] [--diff]",
            "run passes over the session module and show the result (or a diff)", _opt),
    Command("anf", ":anf [@global] [--diff]", "shortcut for :opt ToANormalForm",
            _shortcut("ToANormalForm")),
    Command("gnf", ":gnf [@global] [--diff]", "shortcut for :opt ToGraphNormalForm",
            _shortcut("ToGraphNormalForm")),
    Command("cps", ":cps [@global] [--diff]", "shortcut for :opt ToCPS", _shortcut("ToCPS")),
    Command("viz", ":viz @NAME [--after PASSES] [-o FILE]",
            "draw a function's dataflow graph (an HTML page; .svg/.dot with -o)", _viz),
    Command("list", ":list", "show the session module", _list),
    Command("load", ":load FILE", "add the definitions of a .relay file to the session", _load),
    Command("save", ":save FILE", "write the session module to a file (it loads back)", _save),
    Command("reset", ":reset", "forget all definitions and results", _reset),
    Command("quit", ":quit", "leave the REPL (also Ctrl-D)", _quit),
]
COMMANDS: dict[str, Command] = {c.name: c for c in _TABLE}
COMMAND_DOCS: dict[str, str] = {c.name: c.doc for c in _TABLE}


def run_command(session: Session, text: str) -> Reply:
    """`text` is `:name argument...`."""
    m = re.match(r":(\S*)\s*(.*)\Z", text, re.DOTALL)
    name, arg = (m.group(1), m.group(2)) if m else ("", "")
    command = COMMANDS.get(name)
    if command is None:
        close = difflib.get_close_matches(name, list(COMMANDS), n=1)
        hint = f"; did you mean :{close[0]}?" if close else "; :help lists the commands"
        return Reply(f"error: unknown command :{name}{hint}", error=True)
    return command.run(session, arg.strip())
