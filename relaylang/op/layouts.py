"""Layout strings and what relations derive from them.

A layout names a tensor's axes in order: upper case letters are primal axes
(`N`, `C`, `H`, `W`, `O`, `I`), a lower case letter with a factor is a
sub-axis split off its primal axis (`NCHW16c`: C is split, the last axis holds
16 channels). Mirrors TVM's `Layout` and `BijectiveLayout`
(src/tir/ir/data_layout.cc): `layout_transform` shapes follow its shape rule,
in which an axis split by a factor that does not divide it is padded (ceil).
The relation of `layout_transform` itself is in the transform family.
"""
from __future__ import annotations

import re
from typing import Any

from ..ir.node import ANY
from ..ir.types import TensorType
from .relation import TypeRelError
from .shape_rules import is_int

Axis = tuple[str, int | None]          # ("C", None), ("c", 16)
_AXIS = re.compile(r"(\d*)([A-Za-z])")


def parse_layout(name: str, what: str = "layout") -> tuple[Axis, ...]:
    """`NCHW16c` -> (("N", None), ("C", None), ("H", None), ("W", None), ("c", 16))."""
    axes: list[Axis] = []
    pos = 0
    for m in _AXIS.finditer(name):
        if m.start() != pos:
            break
        pos = m.end()
        digits, letter = m.groups()
        if letter.isupper() and digits:
            raise TypeRelError(f"{what} {name!r}: primal axis {letter} cannot have a factor")
        if letter.islower() and not digits:
            raise TypeRelError(f"{what} {name!r}: sub-axis {letter} needs a factor, "
                               f"as in 16{letter}")
        axes.append((letter, int(digits) if digits else None))
    letters = [a for a, _ in axes]
    if pos != len(name) or not name:
        raise TypeRelError(f"{what} {name!r} is not a layout")
    if len(set(letters)) != len(letters):
        raise TypeRelError(f"{what} {name!r} names an axis twice")
    for letter in letters:
        if letter.islower() and letter.upper() not in letters:
            raise TypeRelError(f"{what} {name!r} splits axis {letter.upper()}, which it lacks")
    return tuple(axes)


def axis_positions(name: str, letters: str, what: str, plain: bool = False) -> list[int]:
    """Where each of `letters` sits in layout `name`. The listed axes must not be split;
    with `plain`, the layout must hold exactly these letters (no other or sub-axes)."""
    axes = parse_layout(name, what)
    order = [a for a, _ in axes]
    if plain and sorted(order) != sorted(letters):
        raise TypeRelError(f"{what} {name!r} is not supported: expected the axes {letters} "
                           "in some order")
    out = []
    for letter in letters:
        if letter not in order:
            raise TypeRelError(f"{what} {name!r} has no {letter} axis")
        if letter.lower() in order:
            raise TypeRelError(f"{what} {name!r} splits the {letter} axis, which is not "
                               "supported here")
        out.append(order.index(letter))
    return out


# ------------------------------------------------------------ layout_transform

def primal_sizes(shape: tuple, axes: tuple[Axis, ...], what: str = "data") -> dict[str, Any]:
    """Size of each primal axis of a tensor in layout `axes` (C = C_outer * factor)."""
    sizes: dict[str, Any] = {}
    for (letter, factor), d in zip(axes, shape):
        if letter.isupper():
            sub = dict(axes).get(letter.lower())
            sizes[letter] = d * sub if is_int(d) and sub else (d if not sub else ANY)
        elif is_int(d) and d != factor:
            raise TypeRelError(f"{what} has {d} in its sub-axis {factor}{letter}, which the "
                               f"layout fixes at {factor}", arg=0)
    return sizes


def transformed_shape(sizes: dict[str, Any], axes: tuple[Axis, ...]) -> tuple:
    """Shape in layout `axes` of a tensor with primal `sizes` (splits round up)."""
    factors = {letter.upper(): f for letter, f in axes if f is not None}
    out: list[Any] = []
    for letter, factor in axes:
        if factor is not None:
            out.append(factor)
        else:
            d, f = sizes[letter], factors.get(letter)
            out.append(d if not f else (-(-d // f) if is_int(d) else ANY))
    return tuple(out)


def check_rank(data: TensorType, layout: str) -> None:
    """TypeRelError unless `data` has one axis per axis of `layout`."""
    rank = sum(ch.isalpha() for ch in layout)
    if len(data.shape) != rank:
        raise TypeRelError(f"layout {layout} has {rank} axes but data has rank "
                           f"{len(data.shape)}", arg=0)
