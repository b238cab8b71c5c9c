"""Coverage of `match` clauses: Maranget's usefulness algorithm.

A pattern matrix has one row per clause. `_useful(rows, row)` asks whether some
value matches `row` but no row of `rows`; a complete match is exhaustive when
the all-wildcard row is not useful, and clause i is unreachable when it is not
useful against clauses 0..i-1. Recursion here follows the nesting depth of the
patterns as written (a handful of levels), never the size of the program;
patterns nested deeper than `MAX_DEPTH` are not checked.
"""
from __future__ import annotations

from typing import Any

from ..ir.expr import Match, Pattern, PatternConstructor, PatternTuple, PatternWildcard

MAX_DEPTH = 200
_WILD = PatternWildcard()

Row = list[Pattern]


def _head(p: Pattern) -> Any:
    """What a pattern's head constructor is: a Constructor, ("tuple", n), or None (wildcard)."""
    if isinstance(p, PatternConstructor):
        return p.constructor
    if isinstance(p, PatternTuple):
        return ("tuple", len(p.patterns))
    return None


def _signature(heads: list[Any], types: dict) -> list[Any] | None:
    """All head constructors of the column's type, if `heads` shows what the type is."""
    for h in heads:
        if isinstance(h, tuple):
            return [h]
        data = types.get(h.belong_to)
        return list(data.constructors) if data is not None else None
    return None


def _arity(head: Any) -> int:
    return head[1] if isinstance(head, tuple) else len(head.inputs)


def _same(a: Any, b: Any) -> bool:
    return a == b if isinstance(a, tuple) else (not isinstance(b, tuple) and a.name == b.name)


def _specialize(rows: list[Row], head: Any) -> list[Row]:
    out = []
    for row in rows:
        h = _head(row[0])
        if h is None:
            out.append([_WILD] * _arity(head) + row[1:])
        elif _same(h, head):
            out.append(list(row[0].patterns) + row[1:])
    return out


def _default(rows: list[Row]) -> list[Row]:
    return [row[1:] for row in rows if _head(row[0]) is None]


def _useful(rows: list[Row], row: Row, types: dict, depth: int = 0) -> bool:
    if depth > MAX_DEPTH:
        return True
    if not row:
        return not rows
    head = _head(row[0])
    if head is not None:
        return _useful(_specialize(rows, head), list(row[0].patterns) + row[1:], types, depth + 1)
    heads = [h for h in (_head(r[0]) for r in rows) if h is not None]
    sig = _signature(heads, types)
    if sig is not None and all(any(_same(h, c) for h in heads) for c in sig):
        return any(_useful(_specialize(rows, c), [_WILD] * _arity(c) + row[1:], types, depth + 1)
                   for c in sig)
    return _useful(_default(rows), row[1:], types, depth + 1)


def _witness(rows: list[Row], width: int, types: dict, depth: int = 0) -> list[str] | None:
    """Patterns (as text) of a value no row matches, or None when the rows cover all."""
    if depth > MAX_DEPTH:
        return None
    if width == 0:
        return [] if not rows else None
    heads = [h for h in (_head(r[0]) for r in rows) if h is not None]
    sig = _signature(heads, types)
    if sig is not None and all(any(_same(h, c) for h in heads) for c in sig):
        for c in sig:
            n = _arity(c)
            w = _witness(_specialize(rows, c), n + width - 1, types, depth + 1)
            if w is not None:
                return [_show(c, w[:n])] + w[n:]
        return None
    w = _witness(_default(rows), width - 1, types, depth + 1)
    if w is None:
        return None
    if sig is None:
        return ["_"] + w
    absent = next(c for c in sig if not any(_same(h, c) for h in heads))
    return [_show(absent, ["_"] * _arity(absent))] + w


def _show(head: Any, fields: list[str]) -> str:
    if isinstance(head, tuple):
        return "(" + ", ".join(fields) + ("," if len(fields) == 1 else "") + ")"
    return head.name + ("(" + ", ".join(fields) + ")" if fields else "")


def _arities_agree(node: Match) -> bool:
    """Whether every constructor pattern of `node` has its constructor's number of fields
    (a mismatch is reported by the checker as an arity error; coverage is then
    meaningless, and the matrix rows would have different lengths)."""
    stack: list[Pattern] = [c.lhs for c in node.clauses]
    while stack:
        p = stack.pop()
        if isinstance(p, PatternConstructor):
            if len(p.patterns) != len(p.constructor.inputs):
                return False
            stack.extend(p.patterns)
        elif isinstance(p, PatternTuple):
            stack.extend(p.patterns)
    return True


def missing_value(node: Match, types: dict) -> str | None:
    """A value (as a pattern) that no clause of `node` matches, or None (also when a
    pattern has the wrong number of fields: that is an error of its own)."""
    if not _arities_agree(node):
        return None
    w = _witness([[c.lhs] for c in node.clauses], 1, types)
    return w[0] if w is not None else None


def unreachable_clauses(node: Match, types: dict) -> list[int]:
    if not _arities_agree(node):
        return []
    rows: list[Row] = []
    out = []
    for i, clause in enumerate(node.clauses):
        if not _useful(rows, [clause.lhs], types):
            out.append(i)
        rows.append([clause.lhs])
    return out

