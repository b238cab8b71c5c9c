"""Interpreter values of the standard library's types as plain Python (tests/std)."""
from __future__ import annotations

from typing import Any

import numpy as np

from relaylang.backend.interpreter.values import ConstructorValue


def py(value: Any) -> Any:
    """An interpreter value as plain Python: a List is a list, an Option the value or None,
    a Tree `(value, [children])`, a scalar a number. A list's spine is walked in a
    loop (lists are long); elements, tuples and trees by recursion (they are small)."""
    if isinstance(value, np.ndarray):
        return value.item() if value.ndim == 0 else value.tolist()
    if isinstance(value, tuple):
        return tuple(py(v) for v in value)
    if isinstance(value, ConstructorValue):
        if value.name in ("Cons", "Nil"):
            out = []
            while value.name == "Cons":
                out.append(py(value.fields[0]))
                value = value.fields[1]
            return out
        if value.name == "Some":
            return py(value.fields[0])
        if value.name == "None":
            return None
        if value.name == "Rose":
            return (py(value.fields[0]), py(value.fields[1]))
        return value
    return value
