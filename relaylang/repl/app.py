"""The terminal front end of `relay repl`, on prompt_toolkit (the session is session.py).

Enter submits when the parser says the input is complete and the cursor is at its end,
and otherwise inserts a newline (indented like the line above, one level more after an
opening bracket); Escape-Enter always inserts one. Ctrl-C drops the current input (or
stops a running evaluation), Ctrl-D on an empty line leaves. Highlighting is the Pygments
`RelayLexer`, with the bracket under the cursor and its match highlighted; history is
kept in a file and suggested as you type.
"""
from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.auto_suggest import AutoSuggestFromHistory
from prompt_toolkit.filters import completion_is_selected, has_completions
from prompt_toolkit.history import FileHistory, History, InMemoryHistory
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout.processors import HighlightMatchingBracketProcessor
from prompt_toolkit.lexers import PygmentsLexer

from ..syntax.highlight import RelayLexer
from .completer import ReplCompleter
from .reply import Reply, SessionError
from .session import Session

PROMPT, CONTINUATION = "relay> ", "  ...  "
HISTORY_ENV = "RELAY_REPL_HISTORY"
BANNER = "Relay REPL: definitions, expressions and :commands (:help lists them, Ctrl-D leaves)."


def history_path() -> Path:
    """$RELAY_REPL_HISTORY, else $XDG_STATE_HOME/relaylang/repl_history, else ~/.relay_history."""
    if os.environ.get(HISTORY_ENV):
        return Path(os.environ[HISTORY_ENV])
    state = os.environ.get("XDG_STATE_HOME")
    return Path(state) / "relaylang" / "repl_history" if state else Path.home() / ".relay_history"


def open_history() -> History:
    path = history_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch(exist_ok=True)
    except OSError:
        return InMemoryHistory()       # a read-only home must not stop the REPL
    return FileHistory(str(path))


def _newline(event: KeyPressEvent) -> None:
    buffer = event.current_buffer
    line = buffer.document.current_line_before_cursor
    indent = line[:len(line) - len(line.lstrip())]
    if line.rstrip()[-1:] in ("{", "(", "["):
        indent += "  "
    buffer.insert_text("\n" + indent)


def key_bindings(ready: Callable[[str], bool]) -> KeyBindings:
    """Enter: submit if `ready(text)` and the cursor is at the end; else a newline."""
    kb = KeyBindings()

    @kb.add("enter", filter=has_completions & completion_is_selected)
    def _accept_completion(event: KeyPressEvent) -> None:
        event.current_buffer.complete_state = None

    @kb.add("enter", filter=~(has_completions & completion_is_selected))
    def _enter(event: KeyPressEvent) -> None:
        document = event.current_buffer.document
        if not document.text_after_cursor.strip() and ready(document.text):
            event.current_buffer.validate_and_handle()
        else:
            _newline(event)

    for closer in ("}", ")", "]"):
        @kb.add(closer)
        def _dedent_closer(event: KeyPressEvent) -> None:
            # A closing bracket alone on its line goes back to the opening line's level.
            buffer = event.current_buffer
            before = buffer.document.current_line_before_cursor
            if before and not before.strip():
                buffer.delete_before_cursor(min(2, len(before)))
            buffer.insert_text(event.data)

    @kb.add("escape", "enter")
    def _force_newline(event: KeyPressEvent) -> None:
        _newline(event)

    return kb


class Repl:
    """The loop: read an input, let the session answer, show the reply."""

    def __init__(self, session: Session | None = None, *, color: bool | None = None,
                 history: History | None = None, write: Callable[[str], None] | None = None,
                 interactive: bool = True, **prompt_options: Any):
        self.color = sys.stdout.isatty() if color is None else color
        self.session = session or Session(color=self.color)
        self.write = write or self._print
        self.failed = False               # whether any reply was an error (run_lines' status)
        self._warm = threading.Thread(target=_warm_up, daemon=True)
        # Without a terminal (run_lines) there is no prompt: prompt_toolkit would write
        # its terminal control sequences and a warning into the output.
        self.prompt = None if not interactive else PromptSession(
            PROMPT, multiline=True, prompt_continuation=CONTINUATION,
            key_bindings=key_bindings(self._ready), lexer=PygmentsLexer(RelayLexer),
            completer=ReplCompleter(self.session), complete_while_typing=True,
            auto_suggest=AutoSuggestFromHistory(), history=history or open_history(),
            input_processors=[HighlightMatchingBracketProcessor()], **prompt_options)

    def _print(self, text: str) -> None:
        print(text, flush=True)

    def _wait_for_warm_up(self) -> None:
        if self._warm.ident is not None:     # started by run(); not when driven by tests
            self._warm.join()

    def _ready(self, text: str) -> bool:
        self._wait_for_warm_up()
        try:
            return self.session.is_complete(text)
        except Exception:         # noqa: BLE001 -- a checker bug must not eat the input
            return True

    def load(self, paths: list[str]) -> bool:
        """Load the command line's files; False (the error shown on stderr) when one cannot
        be read or has errors, as a compiler would refuse a bad input file."""
        from .commands import run_command
        for path in paths:
            try:
                self.show(run_command(self.session, f":load {path}"))
            except SessionError as e:
                print(e, file=sys.stderr)
                return False
        return True

    def show(self, reply: Reply) -> None:
        self.failed = self.failed or reply.error
        if reply.output:
            red, reset = ("\x1b[31m", "\x1b[0m") if self.color and reply.error and \
                "\x1b[" not in reply.output else ("", "")
            self.write(red + reply.output + reset)

    def handle(self, text: str) -> bool:
        """Answer one input; False when the session should end."""
        self._wait_for_warm_up()
        try:
            reply = self.session.submit(text)
        except KeyboardInterrupt:
            reply = Reply("interrupted", error=True)
        except Exception as e:    # noqa: BLE001 -- a bug in relaylang must not end the session
            reply = Reply(f"internal error (a bug in relaylang, please report it): "
                          f"{type(e).__name__}: {e}", error=True)
        self.show(reply)
        return not reply.quit

    def run_lines(self, lines: Iterable[str]) -> int:
        """The loop without a terminal (input from a pipe or a file): no prompt and no
        editing; an input goes on over lines until the parser says it is complete (or
        the input ends). 0 at the end, 1 when any input was answered with an error."""
        buffer: list[str] = []
        for line in lines:
            buffer.append(line.rstrip("\r\n"))
            text = "\n".join(buffer)
            if not text.strip():
                buffer.clear()
            elif self._ready(text):
                buffer.clear()
                if not self.handle(text):
                    return 1 if self.failed else 0
        if "\n".join(buffer).strip():
            self.handle("\n".join(buffer))
        return 1 if self.failed else 0

    def run(self) -> int:
        assert self.prompt is not None, "run() needs a terminal; run_lines() reads a pipe"
        self._warm.start()
        while True:
            try:
                text = self.prompt.prompt()
            except KeyboardInterrupt:
                continue               # Ctrl-C drops the input being typed
            except EOFError:
                return 0
            if not self.handle(text):
                return 0


def _warm_up() -> None:
    """Build the parser and load the op registry while the user reads the first prompt."""
    from ..op.registry import all_ops
    from ..syntax.parser import parse_expr
    parse_expr("0")
    all_ops()
