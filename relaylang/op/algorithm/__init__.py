"""The algorithm family: sorting and searching operators whose results are orders or
positions of the input's values.

Mirrors TVM v0.19's src/relay/op/algorithm/ (argsort.cc, sort.cc, topk.cc, unique.cc:
`argsort`, `sort`, `topk`, `unique`) and `argwhere` (src/relay/op/tensor/transform.cc),
with the schemas of include/tvm/relay/attrs/algorithm.h (ArgsortAttrs, TopKAttrs,
UniqueAttrs; `sort` takes ArgsortAttrs, as in TVM) and TVM's patterns (all kOpaque).

Semantics (`numpy_kernels.py`): every order is stable, so equal values keep the order
of their positions; an ascending order puts NaN last and a descending one first (NaN is
the largest value), and a descending order still lists equal values lower position
first (ONNX TopK's tie rule). `topk` with `k < 1` takes the whole axis (TVM).

`unique` and `argwhere` have results whose length depends on the values: their
relations give `?` there (TVM's unique pads to the input's length and reports the count;
here the results have exactly `num_unique` elements, which is also returned as TVM does).
`unique` takes an `axis` beyond TVM's attributes (None: the flattened input, TVM's only
case; an axis: unique slices along it, as ONNX's Unique does). Those two have no LLVM
lowering (a value-dependent shape); `sort`, `argsort` and `topk` do (`llvm_lowering.py`).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from . import relations as r

O = OpPattern.OPAQUE


@attrs_schema
class ArgsortAttrs(Attrs):
    axis: int = -1
    is_ascend: bool = True
    dtype: DType = DType("int32")

    type_key: ClassVar[str] = "relay.attrs.ArgsortAttrs"


@attrs_schema
class TopKAttrs(Attrs):
    # TVM: Optional<Integer> k (None or < 1: the whole axis).
    k: int | None = None
    axis: int = -1
    ret_type: str = "both"
    is_ascend: bool = False
    dtype: DType = DType("int32")

    type_key: ClassVar[str] = "relay.attrs.TopkAttrs"


@attrs_schema
class UniqueAttrs(Attrs):
    sorted: bool = True
    return_counts: bool = False
    axis: int | None = None        # beyond TVM: None flattens (TVM's 1-D case)

    type_key: ClassVar[str] = "relay.attrs.UniqueAttrs"


declare_op("argsort", inputs=("data",), attrs=ArgsortAttrs, rel=r.argsort_rel, pattern=O,
           doc="The positions along `axis` that sort the data (stable; NaN largest), as "
               "`dtype` indices.")
declare_op("sort", inputs=("data",), attrs=ArgsortAttrs, rel=r.sort_rel, pattern=O,
           doc="The data sorted along `axis` (stable; NaN largest).")
declare_op("topk", inputs=("data",), attrs=TopKAttrs, rel=r.topk_rel, pattern=O, layout="topk",
           doc="The k largest (smallest with is_ascend) values along `axis` and their "
               "positions, in order; ret_type 'both' (a tuple), 'values' or 'indices'. "
               "Equal values: the lower position first.")
declare_op("unique", inputs=("data",), attrs=UniqueAttrs, rel=r.unique_rel, pattern=O,
           doc="The distinct values (of the flattened data, or slices along `axis`): a "
               "tuple (values, first positions, inverse indices, num_unique[, counts]), "
               "sorted or in order of first occurrence.")
declare_op("argwhere", inputs=("condition",), rel=r.argwhere_rel, pattern=O,
           doc="The coordinates of the nonzero elements, one row each in row-major order: "
               "shape (?, rank), int32.")
