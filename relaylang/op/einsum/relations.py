"""The type relation of einsum and the plan of an equation (shared with the kernel and
the LLVM lowering): every axis gets a label (a letter, or `.k` for the k-th broadcast
axis counted so that all operands align from the right)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, dim_str, is_known, type_str
from ..shape_rules import is_int

Dim = Any


@dataclass(frozen=True)
class EinsumPlan:
    inputs: tuple[tuple[str, ...], ...]     # the label of each axis of each operand
    output: tuple[str, ...]                 # the labels of the output's axes
    sizes: dict                             # label -> size (int, or ANY)

    @property
    def summed(self) -> tuple[str, ...]:
        """The labels summed over, in order of first appearance."""
        seen: list[str] = []
        for labels in self.inputs:
            for a in labels:
                if a not in self.output and a not in seen:
                    seen.append(a)
        return tuple(seen)


def _letters(part: str, what: str) -> tuple[list[str], bool]:
    """The letters of one subscript and whether it holds `...` (where: None)."""
    if part.count("...") > 1:
        raise TypeRelError(f"{what} has more than one ellipsis")
    out: list[str] = []
    ellipsis = False
    k = 0
    while k < len(part):
        if part.startswith("...", k):
            out.append("...")
            ellipsis = True
            k += 3
            continue
        c = part[k]
        if not (c.isascii() and c.isalpha()):
            raise TypeRelError(f"{what} holds {c!r}, not a letter or '...'")
        out.append(c)
        k += 1
    return out, ellipsis


def einsum_plan(equation: str, shapes: list[tuple]) -> EinsumPlan:
    """The labels of every operand's axes and of the output, with each label's size;
    TypeRelError for an equation that does not fit the shapes."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    parts = lhs.split(",")
    if len(parts) != len(shapes):
        raise TypeRelError(f"the equation {equation!r} has {len(parts)} operand(s) "
                           f"but {len(shapes)} were given", arg=0)
    parsed = [_letters(p, f"operand {k}'s subscript") for k, p in enumerate(parts)]
    n_broadcast = 0
    for (letters, ell), shape in zip(parsed, shapes):
        named = len(letters) - (1 if ell else 0)
        if (ell and named > len(shape)) or (not ell and named != len(shape)):
            raise TypeRelError(f"subscript {''.join(letters)!r} does not fit an "
                               f"operand of rank {len(shape)}", arg=0)
        if ell:
            n_broadcast = max(n_broadcast, len(shape) - named)
    inputs: list[tuple[str, ...]] = []
    sizes: dict[str, Dim] = {}
    for k, ((letters, ell), shape) in enumerate(zip(parsed, shapes)):
        e = len(shape) - (len(letters) - 1) if ell else 0
        labels: list[str] = []
        for a in letters:
            if a == "...":
                labels.extend(f".{n_broadcast - e + t}" for t in range(e))
            else:
                labels.append(a)
        for a, d in zip(labels, shape):
            old = sizes.get(a)
            if old is None or (is_int(old) and old == 1 and a.startswith(".")):
                sizes[a] = d
            elif is_int(old) and is_int(d) and old != d and not (a.startswith(".") and d == 1):
                raise TypeRelError(f"{a if not a.startswith('.') else 'a broadcast'} "
                                   f"axis has size {dim_str(old)} in one place and "
                                   f"{dim_str(d)} in operand {k}", arg=0)
            elif not is_int(d) and is_int(old) and old == 1:
                sizes[a] = ANY
        inputs.append(tuple(labels))
    broadcast = [f".{t}" for t in range(n_broadcast)]
    for t in broadcast:
        sizes.setdefault(t, 1)
    if arrow:
        letters, ell = _letters(rhs, "the output subscript")
        output: list[str] = []
        for a in letters:
            if a == "...":
                output.extend(broadcast)
                continue
            if a in output:
                raise TypeRelError(f"the output names {a!r} twice", arg=0)
            if a not in sizes:
                raise TypeRelError(f"the output names {a!r}, which no operand has",
                                   arg=0)
            output.append(a)
        if not ell and n_broadcast:
            raise TypeRelError("the operands have '...' axes but the output does not",
                               arg=0)
    else:
        counts: dict[str, int] = {}
        for labels in inputs:
            for a in labels:
                if not a.startswith("."):
                    counts[a] = counts.get(a, 0) + 1
        output = broadcast + sorted(a for a, c in counts.items() if c == 1)
    return EinsumPlan(tuple(inputs), tuple(output), sizes)


def einsum_rel(args: list[Type], attrs: Any) -> Type | None:
    if not is_known(args[0]):
        return None
    tup = args[0]
    if not isinstance(tup, TupleType) or not tup.fields:
        raise TypeRelError(f"einsum takes a non-empty tuple of tensors, got {type_str(tup)}",
                           arg=0)
    fields = []
    for k, f in enumerate(tup.fields):
        if not isinstance(f, TensorType):
            raise TypeRelError(f"field {k} of the tuple must be a tensor, got {type_str(f)}",
                               arg=0)
        if f.dtype != tup.fields[0].dtype:
            raise TypeRelError(f"tensor 0 has dtype {tup.fields[0].dtype} but tensor {k} has "
                               f"dtype {f.dtype}", arg=0)
        fields.append(f)
    plan = einsum_plan(attrs.equation, [tuple(f.shape) for f in fields])
    return TensorType(tuple(plan.sizes[a] for a in plan.output), fields[0].dtype)
