"""Shape, layout, indexing and tensor-creation operators.

Mirrors TVM's src/relay/op/tensor/transform.cc (patterns, arities) and the
schemas of include/tvm/relay/attrs/transform.h. Where transform.cc sets no
TOpPattern, the pattern comes from python/tvm/relay/op/_transform.py
(layout_transform, zeros, ones). The type relations live in `shape_rels.py`,
`slice_rels.py`, `index_rels.py` and `layouts.py`; the NumPy kernels in
`transform_kernels.py`, bound lazily by op name.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from ..ir.attrs import Attrs, DType
from . import index_rels as ix
from . import shape_rels as sh
from . import slice_rels as sl
from .layouts import layout_transform_rel
from .registry import OpDef, OpPattern, register_op
from .schema import attrs_schema
from .shape_rules import lazy_kernel

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
R, F, O = OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE
Rel = Callable[..., Any]


@attrs_schema
class ReshapeAttrs(Attrs):
    newshape: tuple[int, ...] | None
    allowzero: bool = False

    type_key: ClassVar[str] = "relay.attrs.ReshapeAttrs"


@attrs_schema
class ReshapeLikeAttrs(Attrs):
    lhs_begin: int = 0
    lhs_end: int | None = None
    rhs_begin: int = 0
    rhs_end: int | None = None

    type_key: ClassVar[str] = "relay.attrs.ReshapeLikeAttrs"


@attrs_schema
class TransposeAttrs(Attrs):
    axes: tuple[int, ...] | None            # None: reverse the axes

    type_key: ClassVar[str] = "relay.attrs.TransposeAttrs"


@attrs_schema
class ExpandDimsAttrs(Attrs):
    axis: int
    num_newaxis: int = 1

    type_key: ClassVar[str] = "relay.attrs.ExpandDimsAttrs"


@attrs_schema
class SqueezeAttrs(Attrs):
    axis: tuple[int, ...] | None = None

    type_key: ClassVar[str] = "relay.attrs.SqueezeAttrs"


@attrs_schema
class ConcatenateAttrs(Attrs):
    axis: int = 0

    type_key: ClassVar[str] = "relay.attrs.ConcatenateAttrs"


@attrs_schema
class StackAttrs(Attrs):
    axis: int = 0

    type_key: ClassVar[str] = "relay.attrs.StackAttrs"


@attrs_schema
class SplitAttrs(Attrs):
    # TVM: Variant<Int, Array<Int>> -- a number of sections, or the split indices.
    indices_or_sections: int | tuple[int, ...]
    axis: int = 0

    type_key: ClassVar[str] = "relay.attrs.SplitAttrs"


@attrs_schema
class TakeAttrs(Attrs):
    batch_dims: int = 0
    axis: int | None = None                 # None: take from the flattened input
    mode: str = "clip"

    type_key: ClassVar[str] = "relay.attrs.TakeAttrs"


@attrs_schema
class StridedSliceAttrs(Attrs):
    begin: tuple[int, ...] | None
    end: tuple[int, ...] | None
    strides: tuple[int, ...] | None
    slice_mode: str = "end"
    axes: tuple[int, ...] | None

    type_key: ClassVar[str] = "relay.attrs.StridedSliceAttrs"


@attrs_schema
class SliceLikeAttrs(Attrs):
    axes: tuple[int, ...] | None

    type_key: ClassVar[str] = "relay.attrs.SliceLikeAttrs"


@attrs_schema
class InitOpAttrs(Attrs):
    shape: tuple[int, ...] | None
    dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.InitOpAttrs"


@attrs_schema
class ArangeAttrs(Attrs):
    # TVM duplicates the three inputs as attributes (expressions, printed as values).
    start: object
    stop: object
    step: object
    dtype: DType

    type_key: ClassVar[str] = "relay.attrs.ArangeAttrs"


@attrs_schema
class TileAttrs(Attrs):
    reps: tuple[int, ...] | None

    type_key: ClassVar[str] = "relay.attrs.TileAttrs"


@attrs_schema
class RepeatAttrs(Attrs):
    repeats: int | None
    axis: int | None = None

    type_key: ClassVar[str] = "relay.attrs.RepeatAttrs"


@attrs_schema
class ReverseAttrs(Attrs):
    axis: int | None = None

    type_key: ClassVar[str] = "relay.attrs.ReverseAttrs"


@attrs_schema
class ReverseSequenceAttrs(Attrs):
    seq_axis: int = 1
    batch_axis: int = 0

    type_key: ClassVar[str] = "relay.attrs.ReverseSequenceAttrs"


@attrs_schema
class LayoutTransformAttrs(Attrs):
    src_layout: str
    dst_layout: str

    type_key: ClassVar[str] = "relay.attrs.LayoutTransformAttrs"


@attrs_schema
class ShapeOfAttrs(Attrs):
    dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.ShapeOfAttrs"


@attrs_schema
class GatherAttrs(Attrs):
    axis: int | None = None

    type_key: ClassVar[str] = "relay.attrs.GatherAttrs"


@attrs_schema
class GatherNDAttrs(Attrs):
    batch_dims: int = 0
    index_rank: int | None = None

    type_key: ClassVar[str] = "relay.attrs.GatherNDAttrs"


@attrs_schema
class OneHotAttrs(Attrs):
    depth: int = 1
    axis: int = -1
    dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.OneHotAttrs"


# name, input names (TVM's `.add_argument`s; their count is the arity; concatenate/stack take
# one input: a tuple), schema, TVM pattern, relation; each kernel is
# transform_kernels.KERNELS[name].
TRANSFORM: tuple[tuple[str, tuple[str, ...], type[Attrs] | None, OpPattern, Rel], ...] = (
    ("reshape", ("data",), ReshapeAttrs, I, sh.reshape_rel),
    ("reshape_like", ("data", "shape_like"), ReshapeLikeAttrs, I, sh.reshape_like_rel),
    ("transpose", ("data",), TransposeAttrs, I, sh.transpose_rel),
    ("expand_dims", ("data",), ExpandDimsAttrs, B, sh.expand_dims_rel),
    ("squeeze", ("data",), SqueezeAttrs, I, sh.squeeze_rel),
    ("concatenate", ("data",), ConcatenateAttrs, I, sl.concatenate_rel),
    ("stack", ("data",), StackAttrs, I, sl.stack_rel),
    ("split", ("data",), SplitAttrs, I, sl.split_rel),
    ("take", ("data", "indices"), TakeAttrs, I, ix.take_rel),
    ("strided_slice", ("data",), StridedSliceAttrs, I, sl.strided_slice_rel),
    ("slice_like", ("data", "shape_like"), SliceLikeAttrs, I, sl.slice_like_rel),
    ("broadcast_to", ("data",), InitOpAttrs, B, sh.broadcast_to_rel),
    ("broadcast_to_like", ("data", "broadcast_type"), None, B, sh.broadcast_to_like_rel),
    ("collapse_sum_like", ("data", "collapse_type"), None, R, sh.collapse_sum_like_rel),
    ("tile", ("data",), TileAttrs, B, sh.tile_rel),
    ("repeat", ("data",), RepeatAttrs, B, sh.repeat_rel),
    ("reverse", ("data",), ReverseAttrs, I, sh.reverse_rel),
    ("reverse_sequence", ("data", "seq_lengths"), ReverseSequenceAttrs, I, sh.reverse_sequence_rel),
    ("layout_transform", ("data",), LayoutTransformAttrs, I, layout_transform_rel),
    ("gather", ("data", "indices"), GatherAttrs, I, ix.gather_rel),
    ("gather_nd", ("data", "indices"), GatherNDAttrs, I, ix.gather_nd_rel),
    ("zeros", (), InitOpAttrs, E, ix.init_rel),
    ("ones", (), InitOpAttrs, E, ix.init_rel),
    ("full", ("fill_value",), InitOpAttrs, E, ix.full_rel),
    ("full_like", ("data", "fill_value"), None, E, ix.full_like_rel),
    ("arange", ("start", "stop", "step"), ArangeAttrs, O, ix.arange_rel),  # TVM: opaque
    ("one_hot", ("indices", "on_value", "off_value"), OneHotAttrs, F, ix.one_hot_rel),
    ("shape_of", ("data",), ShapeOfAttrs, O, sh.shape_of_rel),
)

for _name, _inputs, _schema, _pattern, _rel in TRANSFORM:
    register_op(OpDef(_name, len(_inputs), attrs=_schema, type_rel=_rel,
                      kernel=lazy_kernel("transform_kernels", _name), pattern=_pattern,
                      input_names=_inputs))
