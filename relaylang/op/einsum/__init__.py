"""The einsum family: TVM v0.19's `einsum` (src/relay/op/tensor/math.cc: a tuple of
operands and EinsumAttrs' `equation`, kInjective), NumPy's summation convention.

An equation is `subscripts(,subscripts)*(->subscripts)?`: one letter per axis (a-z,
A-Z), `...` for the broadcast axes (aligned from the right, size 1 broadcasts); a letter
repeated within an operand takes its diagonal. Without `->` the output is the broadcast
axes then the letters used once, in alphabetical order. Letters that are not in the
output are summed over. The relation (`relations.py`) parses the equation against the
operands' shapes once (`einsum_plan`), and the kernel and the LLVM lowering follow the
same plan.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from . import relations as r


@attrs_schema
class EinsumAttrs(Attrs):
    equation: str

    type_key: ClassVar[str] = "relay.attrs.EinsumAttrs"


declare_op("einsum", inputs=("data",), attrs=EinsumAttrs, rel=r.einsum_rel,
           pattern=OpPattern.INJECTIVE,
           doc="Einstein summation of a tuple of tensors by `equation` (NumPy's einsum).")
