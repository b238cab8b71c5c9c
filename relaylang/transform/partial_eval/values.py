"""What PartialEvaluate computes with: partially static values, the store, fuel, let lists.

Mirrors the data of TVM's src/relay/transforms/partial_eval.cc. A `PStatic` is a
value known at compile time in part: `static` (None when nothing is known) and
`dynamic`, an atom of the residual program that computes the same value at run
time. The residual program is built as a `LetList`, so every dynamic part is an
atom and no computation is duplicated.

References live in a `Store` of frames: a path that may or may not run (an `if`
or `match` branch, a function body) writes into a frame that is dropped when the
path is left, and an unknown effect (a call of unknown code) pushes an
"invalid" frame that hides everything older.

`Fuel` stops unfolding recursion: a function is unfolded again only if the
static knowledge about its arguments strictly decreases (TVM's FSeq of FTime and
FTValue): an argument created earlier (a field of a list being walked), or a
non-negative integer scalar that got smaller (a counter going down).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ...ir.expr import Constant, Constructor, Expr, Function, Let, Var
from ...ir.normal_forms import ATOMIC

# ---------------------------------------------------------------- static values


@dataclass(eq=False)
class STensor:
    """A tensor known at compile time; kept as its `Constant` (reused as the atom)."""

    const: Constant


@dataclass(eq=False)
class STuple:
    fields: list[PStatic]


@dataclass(eq=False)
class SConstructed:
    """An ADT value `ctor(fields...)` with its constructor known."""

    ctor: Constructor
    fields: list[PStatic]


@dataclass(eq=False)
class SRef:
    """A reference cell; its identity is the key of its contents in the `Store`."""


@dataclass(eq=False)
class SClosure:
    """A function value: its code (in ANF), the values of its free variables, and the
    `let` variable it is bound to (recursion refers to the closure through it)."""

    fn: Function
    captured: dict[int, PStatic]
    name: Var | None


@dataclass(eq=False)
class SOp:
    """A primitive operator: applied to static tensors, it is run by its kernel."""


@dataclass(eq=False)
class SConstructorFn:
    """A constructor with fields, used as a function."""

    ctor: Constructor


@dataclass(eq=False)
class SPrimitive:
    """A `Primitive=1` function: opaque, but run on static arguments by folding."""

    fn: Function


Static = STensor | STuple | SConstructed | SRef | SClosure | SOp | SConstructorFn | SPrimitive


@dataclass(eq=False, slots=True)
class PStatic:
    static: Static | None
    dynamic: Expr          # always an atom of the residual program
    time: int              # creation order: older arguments make progress (fuel)


# ---------------------------------------------------------------- fuel

# Per argument: (creation time, integer value); a function's fuel is the meet (minimum) of
# those of every unfolding in progress. None is TVM's FTop: not being unfolded.
Fuel = tuple[tuple[int, int], ...]


def arg_fuel(ps: PStatic) -> tuple[int, int]:
    """TVM's FSeq(FTime, FTValue) of one argument."""
    s = ps.static
    value = 0
    if isinstance(s, STensor) and s.const.data.shape == () \
            and str(s.const.data.dtype) in ("int32", "int64"):
        value = max(0, int(s.const.data))
    return ps.time, value


def meet(old: Fuel | None, new: Fuel) -> tuple[Fuel, bool]:
    """The smaller fuel and whether it is strictly smaller than `old` anywhere (progress)."""
    if old is None or len(old) != len(new):
        return new, True
    met = tuple((min(a[0], b[0]), min(a[1], b[1])) for a, b in zip(old, new))
    return met, any(m < o for pair_m, pair_o in zip(met, old) for m, o in zip(pair_m, pair_o))


# ---------------------------------------------------------------- the store


@dataclass(eq=False)
class _StoreFrame:
    cells: dict[int, tuple[SRef, PStatic]] = field(default_factory=dict)
    history_valid: bool = True     # False: frames below are outdated (an unknown effect)


class Store:
    """Reference contents with rollback (TVM's `Store`)."""

    def __init__(self) -> None:
        self.frames: list[_StoreFrame] = [_StoreFrame()]

    def enter(self) -> None:
        """Start a path that may not run; `leave` forgets what it wrote."""
        self.frames.append(_StoreFrame())

    def leave(self) -> None:
        while not self.frames[-1].history_valid:
            self.frames.pop()
        self.frames.pop()

    def write(self, ref: SRef, value: PStatic) -> None:
        self.frames[-1].cells[id(ref)] = (ref, value)

    def read(self, ref: SRef) -> PStatic | None:
        for frame in reversed(self.frames):
            found = frame.cells.get(id(ref))
            if found is not None:
                return found[1]
            if not frame.history_valid:
                return None
        return None

    def invalidate(self) -> None:
        """Unknown code ran: it may have written any reference."""
        top = self.frames[-1]
        if top.history_valid or top.cells:
            self.frames.append(_StoreFrame(history_valid=False))


# ---------------------------------------------------------------- residual code


class LetList:
    """The residual bindings of one scope, in evaluation order (TVM's `LetList`)."""

    def __init__(self) -> None:
        self.bindings: list[tuple[Var, Expr]] = []

    def push(self, expr: Expr, hint: str = "x") -> Expr:
        """An atom for `expr`: itself if atomic, else a fresh variable bound to it."""
        if isinstance(expr, ATOMIC):
            return expr
        var = Var(hint, span=expr.span)
        self.bindings.append((var, expr))
        return var

    def bind(self, var: Var, expr: Expr) -> None:
        self.bindings.append((var, expr))

    def wrap(self, result: Expr) -> Expr:
        bindings = self.bindings
        body = result
        if bindings and bindings[-1][0] is result and not isinstance(bindings[-1][1], Function):
            body = bindings[-1][1]            # `let %x = e; %x` is `e` (a function may recur)
            bindings = bindings[:-1]
        for var, value in reversed(bindings):
            body = Let(var, value, body)
        return body


def use(value: PStatic) -> Expr:
    """The atom of `value` for one more use in residual code. A constant is copied: a shared
    `Constant` node would print its inferred type at one use only."""
    d = value.dynamic
    return Constant(d.data, span=d.span) if type(d) is Constant else d


def dynamics(values: Sequence[PStatic]) -> tuple[Expr, ...]:
    return tuple(use(v) for v in values)
