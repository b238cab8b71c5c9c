"""prompt_toolkit `Completer` over the shared completion engine (relaylang/ide).

The engine sees the current input and the session's typed module (globals, constructors,
types of locals); the session's results `%_`, `%out1`, ... are added after a `%`, and
the `:commands` at the start of the input.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ..ide import complete
from ..ir.text import type_text
from .commands import COMMAND_DOCS

if TYPE_CHECKING:
    from .session import Session

_LOCAL_AT_END = re.compile(r"%([A-Za-z0-9_]*)\Z")
# An op shows its signature (the detail, from relaylang/op/signature.py); these their doc.
_SHOWS_DOC = ("keyword", "command", "attribute")


class ReplCompleter(Completer):
    def __init__(self, session: Session):
        self.session = session

    def get_completions(self, document: Document,
                        complete_event: CompleteEvent) -> Iterable[Completion]:
        text, cursor = document.text, document.cursor_position
        for c in complete(text, cursor, module=self.session.typed, extra_commands=COMMAND_DOCS):
            meta = c.doc if c.kind in _SHOWS_DOC or not c.detail else c.detail
            yield Completion(c.label, start_position=c.replace_start - cursor, display=c.label,
                             display_meta=f"{c.kind}  {meta}".rstrip())
        local = _LOCAL_AT_END.search(text[:cursor])
        if local is None:
            return
        results = self.session.results
        named = [("_", results[-1])] if results else []
        named += [(r.name, r) for r in reversed(results)]
        for name, r in named:
            if name.startswith(local.group(1)):
                yield Completion("%" + name, start_position=-len(local.group(0)),
                                 display_meta=f"result  {type_text(r.type, none='_')}")
