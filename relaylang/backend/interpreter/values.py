"""Run-time values of the reference interpreter (TVM's runtime ADT / closure / ref objects).

Tensors are `numpy.ndarray` (0-d for scalars) and tuples are Python tuples; the
classes here are the rest: ADT values, closures and reference cells.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ...ir.expr import Constructor, Function
    from .machine import Activation, Interpreter


class ConstructorValue:
    """A value built by an ADT constructor: `Cons(1, Nil)`."""

    __slots__ = ("constructor", "fields")

    def __init__(self, constructor: Constructor, fields: tuple[Any, ...]):
        self.constructor = constructor
        self.fields = fields

    @property
    def name(self) -> str:
        return self.constructor.name

    @property
    def tag(self) -> int:
        return self.constructor.tag

    def __repr__(self) -> str:
        # Iterative: a list of a million elements is a million nested values.
        parts: list[str] = []
        stack: list[Any] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                parts.append(item)
            elif isinstance(item, ConstructorValue):
                if not item.fields:
                    parts.append(item.name)
                    continue
                parts.append(item.name + "(")
                stack.append(")")
                for i, f in enumerate(reversed(item.fields)):
                    stack.append(f)
                    if i < len(item.fields) - 1:
                        stack.append(", ")
            else:
                parts.append(_short(item))
        return "".join(parts)


def _short(value: Any) -> str:
    import numpy as np
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return repr(value.item())
    return repr(value)


class Closure:
    """A function value with the environment it captured; calling it runs the interpreter."""

    __slots__ = ("function", "env", "interpreter")

    def __init__(self, function: Function, env: Activation | None, interpreter: Interpreter):
        self.function = function
        self.env = env
        self.interpreter = interpreter

    def __call__(self, *args: Any) -> Any:
        return self.interpreter.apply(self, list(args))

    def __repr__(self) -> str:
        return f"<closure of {len(self.function.params)} parameter(s)>"


class NativeClosure(Closure):
    """A closure of a `Primitive=1` function that a native backend runs (mixed mode):
    calling it runs `native(args)`, not the interpreter."""

    __slots__ = ("native",)

    def __init__(self, function: Function, env: Activation | None, interpreter: Interpreter,
                 native: Any):
        super().__init__(function, env, interpreter)
        self.native = native

    def __call__(self, *args: Any) -> Any:
        return self.native(list(args))


class RefValue:
    """A mutable cell (`ref(e)`)."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __repr__(self) -> str:
        return f"ref({_short(self.value)})"
