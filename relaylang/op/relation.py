"""What op type relations share: the error they raise and the shape rules they reuse.

A type relation is `rel(args: list[Type], attrs) -> Type | None`. It receives the
argument types as far as inference knows them and returns the call's result type,
or None to say "not yet": an argument is still unknown (`IncompleteType`, a
`TypeVar`), and inference will call again when it learns more. It raises
`TypeRelError` when the arguments cannot fit; `arg` names the argument at fault
(index), so the diagnostic can point at it, and `dim` the dimension involved.

Dimensions are `int`, `ANY` (`?`, known only at run time) or a `MetaObject`
(a symbolic dimension): rules must accept all three.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ir.dtype import dtype_kind
from ..ir.node import ANY, AnyDim
from ..ir.types import IncompleteType, TensorType, TupleType, Type, TypeVar

Dim = Any


class TypeRelError(Exception):
    """The arguments of an op call do not fit its relation."""

    def __init__(self, message: str, arg: int | None = None, dim: int | None = None):
        super().__init__(message)
        self.message = message
        self.arg = arg
        self.dim = dim


def is_known(t: Type | None) -> bool:
    """False while inference still has to fill something in."""
    if t is None or isinstance(t, (IncompleteType, TypeVar)):
        return False
    if isinstance(t, TupleType):
        return all(is_known(f) for f in t.fields)
    return True


def tensor(args: Sequence[Type], i: int, what: str = "") -> TensorType:
    """Argument `i` as a tensor type, or TypeRelError naming it."""
    t = args[i]
    if not isinstance(t, TensorType):
        name = what or f"argument {i + 1}"
        raise TypeRelError(f"{name} must be a tensor, got {type_str(t)}", arg=i)
    return t


def type_str(t: Type) -> str:
    from ..ir.text import astext  # printing is only needed for messages
    return astext(t)


def dim_str(d: Dim) -> str:
    return "?" if isinstance(d, AnyDim) else str(d) if isinstance(d, int) else "a symbolic dim"


def dims_equal(a: Dim, b: Dim) -> bool | None:
    """True/False when decidable now; None when a `?` makes it a run-time question."""
    if isinstance(a, AnyDim) or isinstance(b, AnyDim):
        return None
    return a == b


def broadcast_dim(a: Dim, b: Dim) -> Dim | None:
    """NumPy's rule for one dimension pair; None when they cannot broadcast."""
    if isinstance(a, int) and isinstance(b, int):
        if a == b or b == 1:
            return a
        if a == 1:
            return b
        return None
    if a == b:
        return a
    if isinstance(a, AnyDim):
        return b if isinstance(b, int) and b != 1 else ANY
    if isinstance(b, AnyDim):
        return a if isinstance(a, int) and a != 1 else ANY
    if a == 1:
        return b
    if b == 1:
        return a
    return ANY     # two different symbolic dimensions: decided at run time


def broadcast_shapes(x: Sequence[Dim], y: Sequence[Dim]) -> tuple[Dim, ...]:
    """NumPy broadcasting of two shapes; TypeRelError (with `dim`, counted from the
    left of the result) when a pair of dimensions cannot broadcast."""
    rank = max(len(x), len(y))
    xs = (1,) * (rank - len(x)) + tuple(x)
    ys = (1,) * (rank - len(y)) + tuple(y)
    out = []
    for i, (a, b) in enumerate(zip(xs, ys)):
        d = broadcast_dim(a, b)
        if d is None:
            raise TypeRelError(f"shapes {shape_str(x)} and {shape_str(y)} do not broadcast: "
                               f"dimension {i} is {dim_str(a)} against {dim_str(b)}", dim=i)
        out.append(d)
    return tuple(out)


def shape_str(shape: Sequence[Dim]) -> str:
    return "(" + ", ".join(dim_str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def normalize_axis(axis: int, rank: int, arg: int = 0) -> int:
    """A possibly negative axis as an index into a rank-`rank` shape."""
    if not -rank <= axis < max(rank, 1) or (rank == 0 and axis not in (0, -1)):
        raise TypeRelError(f"axis {axis} is out of range for a tensor of rank {rank}", arg=arg)
    return axis + rank if axis < 0 else axis


def choice(value: str, options: tuple[str, ...], what: str) -> None:
    """TypeRelError unless the string attribute `what` is one of `options`."""
    if value not in options:
        raise TypeRelError(f"{what} must be one of {', '.join(o for o in options if o)}, "
                           f"got {value!r}")


# A dtype rule: (predicate on the dtype, what to call the accepted tensors).
DTypeRule = tuple[Callable[[str], bool], str]
ANY_DTYPE: DTypeRule = (lambda d: True, "")
BOOL: DTypeRule = (lambda d: dtype_kind(d) == "bool", "a bool tensor")
BITS: DTypeRule = (lambda d: dtype_kind(d) in ("int", "uint", "bool"), "an integer or bool tensor")
INTEGER: DTypeRule = (lambda d: dtype_kind(d) in ("int", "uint"), "an integer tensor")


def check_dtype(t: TensorType, rule: DTypeRule, what: str, arg: int) -> None:
    accepts, description = rule
    if not accepts(t.dtype):
        raise TypeRelError(f"{what} must be {description}, got dtype {t.dtype}", arg=arg)


def same_dtype(a: TensorType, b: TensorType, names: tuple[str, str], arg: int) -> None:
    if a.dtype != b.dtype:
        raise TypeRelError(f"{names[0]} has dtype {a.dtype} but {names[1]} has dtype {b.dtype}",
                           arg=arg)
