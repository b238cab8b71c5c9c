"""What the REPL answers to an input, and the error an input can be refused with: shared by
the session (session.py) and its `:commands` (commands.py, optimize.py)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reply:
    """What the session answers to one input."""

    output: str = ""
    error: bool = False
    quit: bool = False


class SessionError(Exception):
    """An input that cannot be handled; the message is shown as it is."""
