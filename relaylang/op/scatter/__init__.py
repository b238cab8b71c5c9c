"""The scatter family: a copy of `data` with `updates` written (or combined) at the
places `indices` name.

Mirrors TVM v0.19's `scatter_elements` (src/relay/op/tensor/transform.cc,
ScatterElementsAttrs: axis, reduction) and `scatter_nd` (ScatterNDAttrs: mode), both
kOpaque. Reductions: "update" (the last update in row-major order of `indices` wins),
"add", "mul", "min", "max" (every update at a place is combined with the data there);
TVM's "mean" of scatter_elements is not supported (an error).

Indices may be negative (counted from the end of their axis, once); an index out of
range is a ValueError in the NumPy kernel. The LLVM lowerings (`llvm_lowering.py`)
never write through an index: each output element gathers the updates aimed at it, so
an out-of-range update is simply never applied there.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from . import relations as r

O = OpPattern.OPAQUE


@attrs_schema
class ScatterElementsAttrs(Attrs):
    axis: int = 0
    reduction: str = "update"

    type_key: ClassVar[str] = "relay.attrs.ScatterElementsAttrs"


@attrs_schema
class ScatterNDAttrs(Attrs):
    mode: str = "update"

    type_key: ClassVar[str] = "relay.attrs.ScatterNDAttrs"


declare_op("scatter_elements", inputs=("data", "indices", "updates"),
           attrs=ScatterElementsAttrs, rel=r.scatter_elements_rel, pattern=O,
           doc="data with updates[i] put at i with its `axis` coordinate replaced by "
               "indices[i] (indices and updates of one shape, data's rank), combined by "
               "`reduction` (update, add, mul, min, max).")
declare_op("scatter_nd", inputs=("data", "indices", "updates"), attrs=ScatterNDAttrs,
           rel=r.scatter_nd_rel, pattern=O,
           doc="data with the slices updates[y] put at data[indices[:, y]] (indices of "
               "shape (M, Y...), updates (Y..., data.shape[M:])), combined by `mode` "
               "(update, add, mul, min, max).")
