"""A REPL session without a terminal: the session module, inputs, results, commands.

    s = Session()
    s.submit("def @twice(%x: float32) { add(%x, %x) }")   # defines (or replaces) @twice
    s.submit("@twice(2f)")                    # -> "%out1: float32 = 4.0"
    s.submit("@twice(%_)")                    # %_ is the last result, %out1 the first
    s.submit(":type @twice")

A module item (`def`, `type`, `extern`) adds to or replaces definitions of the session
module; anything else is an expression, type-checked and run by the reference
interpreter as the body of a hidden global whose parameters are the earlier results it
uses. Inputs are parsed inside the session module (`parse_in_module`: it is never
printed or parsed again) and type-checked with only the globals they reach. Replies are
text (reply.py); errors never end the session. The `:commands` are commands.py; the
prompt_toolkit front end is app.py, which this module does not import, so tests need no
terminal.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..ide.tokens import tokenize
from ..ir.diagnostics import Diagnostic, Severity
from ..ir.module import IRModule
from ..ir.text import type_text
from .reply import Reply, SessionError
from .source import INPUT_NAME, Sources

if TYPE_CHECKING:
    from ..ir.expr import Function, GlobalVar, Var
    from ..ir.span import Span
    from ..ir.types import Type
    from ..syntax.parser import ModuleInput
    from .redefine import DefinitionText, Key

WRAPPER = "__repl_input"            # the hidden global an expression is evaluated as
_ITEM_KEYWORDS = ("def", "type", "extern")
_VERSION = re.compile(r"\A(\s*(?://[^\n]*\n\s*)*)#\[\s*version[^\]]*\]")
_RESULT_REF = re.compile(r"%(_|out[0-9]+)(?![A-Za-z0-9_/])")


@dataclass(frozen=True)
class Result:
    name: str                 # `out1`: reachable as %out1 (and the last one as %_)
    value: Any
    type: Type | None


@dataclass(frozen=True)
class CheckedExpression:
    """An expression parsed and type-checked inside the session module."""

    typed: IRModule           # the session module plus the wrapper global
    function: Function        # the wrapper
    type: Type | None
    results: list[Result]     # earlier results it uses, in wrapper-parameter order


def _blank_version_line(text: str) -> str:
    """A pasted file's `#[version]` header turned into spaces (the session adds its own)."""
    m = _VERSION.match(text)
    return text if m is None else text[:m.start(0) + len(m.group(1))] + \
        " " * (m.end(0) - m.start(0) - len(m.group(1))) + text[m.end(0):]


def input_kind(text: str) -> str:
    """"command", "items", "expression" or "empty", from the input's first token."""
    if text.lstrip().startswith(":"):
        return "command"
    if text.lstrip().startswith("#[import"):      # brings definitions, like `def`
        return "items"
    tokens = tokenize(_blank_version_line(text)).tokens
    if not tokens:
        return "empty"
    return "items" if tokens[0].text in _ITEM_KEYWORDS else "expression"


class Session:
    def __init__(self, color: bool = False):
        self.color = color
        self.reset()

    def reset(self) -> None:
        self.module = IRModule(source_name="<session>")    # no wrapper; typed in place
        self.typed = self.module
        self.results: list[Result] = []
        self.sources = Sources()
        self.definitions: dict[Key, DefinitionText] = {}   # where each was read from

    # ------------------------------------------------------------ input
    def is_complete(self, text: str) -> bool:
        """False when the parser wants more (an open brace, an unfinished call, an open
        comment or string); a genuine syntax error is complete (it is shown at once)."""
        if tokenize(text + "\n").ends_in_comment_or_string:
            return False
        kind = input_kind(text)
        if kind in ("command", "empty"):
            return True
        found = self._parse(text, INPUT_NAME, kind == "expression")
        return not any(d.message.startswith("unexpected end of input")
                       for d in found.diagnostics)

    def submit(self, text: str) -> Reply:
        """Handle one complete input: a `:command`, module items, or an expression."""
        kind = input_kind(text)
        try:
            if kind == "command":
                from .commands import run_command
                return run_command(self, text.strip())
            if kind == "items":
                return self.add_items(text)
            if kind == "expression":
                return self.evaluate(text)
            return Reply()
        except SessionError as e:
            return Reply(str(e), error=True)

    def _parse(self, text: str, source_name: str, expression: bool) -> ModuleInput:
        from ..syntax.parser import parse_in_module
        local_vars = self._result_vars(text) if expression else None
        return parse_in_module(text, self.module, source_name, expression=expression,
                               local_vars=local_vars)

    # ------------------------------------------------------------ module items
    def add_items(self, text: str, input_name: str = INPUT_NAME) -> Reply:
        """Add the `def`/`type` items of `text` to the module, replacing same-named ones;
        kept definitions using a replaced one are re-read from their own texts
        (redefine.py) and re-checked with it. Nothing changes unless all check."""
        from .redefine import DefinitionText, combine, items_of, stale_users
        source_name = self.sources.add(text, input_name)
        found = self._parse(text, source_name, False)
        self._raise_errors(found.diagnostics)
        new_texts = {item.key: DefinitionText(source_name, text, item.start, item.end)
                     for item in items_of(text)}
        users = stale_users(self.module, self.definitions, found.replaced, set(new_texts))
        if users:
            self._refuse_metadata_users(users, found.replaced)
            combined = combine(source_name, text, [self.definitions[k] for k in users])
            found = self._parse(combined.text, self.sources.add_combined(combined), False)
            self._raise_errors(found.diagnostics, users)
        functions = {gv: fn for gv, fn in self.module.functions.items()
                     if gv.name_hint not in found.replaced}
        functions.update(found.items.functions)
        types = {gtv: data for gtv, data in self.module.type_definitions.items()
                 if gtv.name_hint not in found.replaced}
        types.update(found.items.type_definitions)
        module = IRModule(functions, types, source_name="<session>")
        self._check(module, list(found.items.functions), users)
        self.module = self.typed = module
        self.definitions.update(new_texts)
        lines = [self._describe_global(gv) for gv in _by_name(found.items.functions)
                 if ("def", gv.name_hint) in new_texts]
        lines += [f"defined type {gtv.name_hint}"
                  for gtv in _by_name(found.items.type_definitions)
                  if ("type", gtv.name_hint) in new_texts]
        lines += [self._describe_global(module.get_global_var(name), "updated")
                  if kind == "def" else f"updated type {name}" for kind, name in users]
        return Reply("\n".join(lines))

    def _refuse_metadata_users(self, users: list[Key], replaced: frozenset[str]) -> None:
        """A user whose item refers to its input's metadata table cannot be re-read
        with another input (the combined text has one table)."""
        for key in users:
            if self.definitions[key].uses_metadata():
                shown = f"@{key[1]}" if key[0] == "def" else f"type {key[1]}"
                raise SessionError(
                    f"error: {shown} uses {_names(replaced)}, which this input redefines, and "
                    f"refers to its input's metadata table; redefine {shown} in the same "
                    "input (or :reset)")

    def _describe_global(self, gv: GlobalVar, verb: str = "defined") -> str:
        from ..syntax.printer import astext
        return f"{verb} @{gv.name_hint}: {astext(gv.checked_type)}" \
            if gv.checked_type is not None else f"{verb} @{gv.name_hint}"

    def _check(self, module: IRModule, roots: list[GlobalVar],
               users: list[Key] | None = None) -> None:
        """Type-check `roots` and the globals they reach (the others are typed already);
        types are set in place on the nodes."""
        from ..typing import check_module
        reached = IRModule(_reachable(module, roots), module.type_definitions,
                           source_name="<session>")
        _, diagnostics = check_module(reached)
        self._raise_errors(diagnostics, users)

    def _raise_errors(self, diagnostics: list[Diagnostic], users: list[Key] | None = None) -> None:
        """SessionError showing the errors. With `users` (kept definitions re-read with
        this input) a last line names them, those the errors are in if any: the
        conflict may be reported at either end (inference unifies both)."""
        errors = [d for d in diagnostics if d.severity is Severity.ERROR]
        if not errors:
            return
        message = self.sources.render(diagnostics, color=self.color)
        if users:
            broken = [key for key in users if any(
                self._in_definition(key, self.sources.original(d.span)) for d in errors)]
            named = broken or users
            shown = ", ".join(f"@{n}" if kind == "def" else f"type {n}" for kind, n in named)
            message += (f"\nerror: this input's redefinitions do not type-check with {shown}, "
                        f"which {'uses' if len(named) == 1 else 'use'} them; nothing was changed")
        raise SessionError(message)

    def _in_definition(self, key: Key, span: Span | None) -> bool:
        source = self.definitions[key]
        if span is None or span.source_name != source.source_name:
            return False
        first = source.text.count("\n", 0, source.start) + 1
        last = source.text.count("\n", 0, len(source.text[:source.end].rstrip())) + 1
        return first <= span.line <= last

    # ------------------------------------------------------------ expressions
    def _used_results(self, text: str) -> list[tuple[str, Result]]:
        """(name as written, result) of each earlier result `text` refers to."""
        by_name = {r.name: r for r in self.results}
        if self.results:
            by_name["_"] = self.results[-1]
        used: dict[str, Result] = {}
        for tok in tokenize(text).tokens:
            m = _RESULT_REF.fullmatch(tok.text) if tok.kind == "local" else None
            if m and m.group(1) in by_name:
                used[m.group(1)] = by_name[m.group(1)]
        return list(used.items())

    def _result_vars(self, text: str) -> dict[str, Var]:
        """A typed variable for each earlier result the text uses: the wrapper's
        parameters."""
        from ..ir.expr import Var
        return {name: Var(name, r.type) for name, r in self._used_results(text)}

    def check_expression(self, text: str) -> CheckedExpression:
        """`text` parsed and type-checked as the body of the wrapper (SessionError if not)."""
        from ..ir.expr import Function, GlobalVar
        from ..ir.types import FuncType
        from ..syntax.parser import parse_in_module
        local_vars = self._result_vars(text)
        found = parse_in_module(text, self.module, self.sources.add(text), expression=True,
                                local_vars=local_vars)
        self._raise_errors(found.diagnostics)
        assert found.expr is not None
        gv = GlobalVar(WRAPPER)
        fn = Function(tuple(local_vars.values()), found.expr)
        typed = self.module.with_function(gv, fn)
        self._check(typed, [gv])
        ft = gv.checked_type
        ty = ft.ret_type if isinstance(ft, FuncType) else fn.body.checked_type
        results = [r for _, r in self._used_results(text)]
        return CheckedExpression(typed, fn, ty, results)

    def run_expression(self, checked: CheckedExpression) -> Any:
        """The value of a checked expression; run-time errors become SessionError."""
        from ..backend.interpreter.executor import InputError, create_executor
        from ..backend.interpreter.machine import InterpreterError
        try:
            return create_executor(checked.typed, WRAPPER)(*[r.value for r in checked.results])
        except InterpreterError as e:
            raise SessionError(self.sources.render([Diagnostic.error(e.message, e.span,
                                                                     code="runtime")],
                                                   color=self.color)) from e
        except InputError as e:
            raise SessionError(f"error: {e}") from e
        except (RecursionError, MemoryError) as e:
            raise SessionError(f"error: ran out of memory or stack ({type(e).__name__})") from e

    def evaluate(self, text: str, timed: bool = False) -> Reply:
        checked = self.check_expression(text)
        start = time.perf_counter()
        value = self.run_expression(checked)
        elapsed = time.perf_counter() - start
        result = Result(f"out{len(self.results) + 1}", value, checked.type)
        self.results.append(result)
        reply = result_text(result)
        if timed:
            reply += f"\ntime: {elapsed * 1e3:.3f} ms"
        return Reply(reply)


def _by_name(table: dict) -> dict:
    return dict(sorted(table.items(), key=lambda item: item[0].name_hint))


def _names(replaced: frozenset[str]) -> str:
    return ", ".join(f"`{name}`" for name in sorted(replaced))


def _reachable(module: IRModule, roots: list[GlobalVar]) -> dict[GlobalVar, Function]:
    """The functions of `roots` and of every global they call, directly or not."""
    from ..ir.expr import GlobalVar
    from ..ir.traverse import post_order
    out: dict[GlobalVar, Function] = {}
    stack = list(roots)
    while stack:
        gv = stack.pop()
        if gv in out or gv not in module.functions:
            continue
        out[gv] = module.functions[gv]
        stack.extend(n for n in post_order(out[gv]) if isinstance(n, GlobalVar))
    return out


def result_text(result: Result) -> str:
    """`%out1: float32 = 4.0`; a multi-line value starts on its own line."""
    from .values import value_text
    value = value_text(result.value)
    head = f"%{result.name}: {type_text(result.type, none='_')} ="
    return f"{head}\n{value}" if "\n" in value else f"{head} {value}"
