"""Name environments the parser's callbacks keep while rules reduce.

LALR reduces rules in source order, innermost first, so lexical scoping can be
done as the IR is built: a binding site binds its name when its rule reduces
(`let_head`, `param`, a pattern variable, `type_params`), and the rule that
closes the scope (a sequence, a function, a clause) unbinds exactly the names
its children bound, most recent first. Shadowed bindings are restored from a
stack, so lookups are one dict access.
"""
from __future__ import annotations

from typing import Generic, TypeVar

T = TypeVar("T")


class Env(Generic[T]):
    """A name -> binding map with LIFO shadowing."""

    __slots__ = ("current", "_shadowed")

    def __init__(self) -> None:
        self.current: dict[str, T] = {}
        self._shadowed: list[T | None] = []

    def bind(self, name: str, value: T) -> None:
        self._shadowed.append(self.current.get(name))
        self.current[name] = value

    def unbind(self, name: str) -> None:
        previous = self._shadowed.pop()
        if previous is None:
            del self.current[name]
        else:
            self.current[name] = previous

    def get(self, name: str) -> T | None:
        return self.current.get(name)

    def clear(self) -> None:
        self.current.clear()
        self._shadowed.clear()
