"""Patterns as text, for messages and `str(pattern)`: `nn.relu(nn.conv2d(*, const))`.

`*` is a wildcard, `%x` a named variable pattern, `const` a constant pattern, `(a | b)`
an alternative; constraints follow what they constrain (`*.has_dtype("float32")`).
A sub-pattern used twice is printed twice. Iterative.
"""
from __future__ import annotations

from ..ir.expr import Op
from .pattern import (
    _ENGINE,
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    pattern_children,
)


def pattern_text(root: DFPattern) -> str:
    done: dict[int, str] = {}
    active: set[int] = set()
    stack: list[tuple[DFPattern, bool]] = [(root, False)]
    while stack:
        p, ready = stack.pop()
        if not ready:
            if id(p) in done:
                continue
            if id(p) in active:          # a redirected wildcard that refers to itself
                done[id(p)] = "<recursive>"
                continue
            active.add(id(p))
            stack.append((p, True))
            stack.extend((c, False) for c in reversed(pattern_children(p)) if id(c) not in done)
            continue
        active.discard(id(p))
        kids = [done.get(id(c), "<recursive>") for c in pattern_children(p)]
        done[id(p)] = _one(p, kids)
    return done[id(root)]


def _one(p: DFPattern, kids: list[str]) -> str:
    if isinstance(p, ExprPattern):
        if isinstance(p.expr, Op):
            return p.expr.name
        return f"expr({type(p.expr).__name__})"
    if isinstance(p, VarPattern):
        return f"%{p.name}" if p.name else "%_"
    if isinstance(p, ConstantPattern):
        return "const"
    if isinstance(p, WildcardPattern):
        return "*" if p.pattern is None else kids[0]
    if isinstance(p, CallPattern):
        args = "..." if p.args is None else ", ".join(kids[1:])
        return f"{kids[0]}({args})"
    if isinstance(p, FunctionPattern):
        params = "..." if p.params is None else ", ".join(kids[:-1])
        return f"fn ({params}) {{ {kids[-1]} }}"
    if isinstance(p, TuplePattern):
        return "(...)" if p.fields is None else "(" + ", ".join(kids) + \
            ("," if len(kids) == 1 else "") + ")"
    if isinstance(p, TupleGetItemPattern):
        return f"{kids[0]}.{'*' if p.index == -1 else p.index}"
    if isinstance(p, IfPattern):
        return f"if ({kids[0]}) {{ {kids[1]} }} else {{ {kids[2]} }}"
    if isinstance(p, LetPattern):
        return f"let {kids[0]} = {kids[1]}; {kids[2]}"
    if isinstance(p, AltPattern):
        return f"({kids[0]} | {kids[1]})"
    if isinstance(p, TypePattern):
        return f"{kids[0]}.has_type({p.type})"
    if isinstance(p, DataTypePattern):
        return f'{kids[0]}.has_dtype("{p.dtype}")'
    if isinstance(p, ShapePattern):
        return f"{kids[0]}.has_shape({list(p.shape)})"
    if isinstance(p, AttrPattern):
        return f"{kids[0]}.has_attr({p.attrs!r})"
    if isinstance(p, DominatorPattern):
        return f"dominates({kids[0]}, {kids[1]}, {kids[2]})"
    return type(p).__name__


_ENGINE["text"] = pattern_text
