"""The transform family: shape, layout, indexing and tensor-creation operators.

Mirrors TVM's src/relay/op/tensor/transform.cc (patterns, arities) and the
schemas of include/tvm/relay/attrs/transform.h. Where transform.cc sets no
TOpPattern, the pattern comes from python/tvm/relay/op/_transform.py
(layout_transform, zeros, ones). The type relations live in
`shape_relations.py`, `slice_relations.py`, `index_relations.py`,
`scan_relations.py` and `sparse_relations.py`; the NumPy kernels in `numpy_kernels.py`.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from . import index_relations as ix
from . import shape_relations as sh
from . import slice_relations as sl
from .scan_relations import scan_rel
from .sparse_relations import sparse_to_dense_rel

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
R, F, O = OpPattern.COMM_REDUCE, OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.OPAQUE


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
class ScanopAttrs(Attrs):
    # TVM: Integer axis (NullValue: scan the flattened input), DataType dtype (void: the
    # input's), Bool exclusive; all three ObjectRefs, so None is accepted for each.
    axis: int | None = None
    dtype: DType = DType("")
    exclusive: bool | None = False

    type_key: ClassVar[str] = "relay.attrs.ScanopAttrs"


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


# ---------------------------------------------------------------- the ops
# inputs: TVM's `.add_argument`s (their count is the arity); concatenate and stack take
# one input, a tuple. scale_axis="shape": FoldScaleAxis sees a positive constant through
# these (TVM's IsAllPositiveConstant).

declare_op("reshape", inputs=("data",), attrs=ReshapeAttrs, rel=sh.reshape_rel, pattern=I,
           scale_axis="shape")
declare_op("reshape_like", inputs=("data", "shape_like"), attrs=ReshapeLikeAttrs,
           rel=sh.reshape_like_rel, pattern=I)
declare_op("transpose", inputs=("data",), attrs=TransposeAttrs, rel=sh.transpose_rel,
           pattern=I, layout="transpose", scale_axis="shape")
declare_op("expand_dims", inputs=("data",), attrs=ExpandDimsAttrs, rel=sh.expand_dims_rel,
           pattern=B, scale_axis="shape")
declare_op("squeeze", inputs=("data",), attrs=SqueezeAttrs, rel=sh.squeeze_rel, pattern=I,
           scale_axis="shape", layout="squeeze")
declare_op("concatenate", inputs=("data",), attrs=ConcatenateAttrs, rel=sl.concatenate_rel,
           pattern=I, layout="concatenate")
declare_op("stack", inputs=("data",), attrs=StackAttrs, rel=sl.stack_rel, pattern=I)
declare_op("split", inputs=("data",), attrs=SplitAttrs, rel=sl.split_rel, pattern=I,
           layout="split")
declare_op("take", inputs=("data", "indices"), attrs=TakeAttrs, rel=ix.take_rel, pattern=I)
declare_op("strided_slice", inputs=("data",), attrs=StridedSliceAttrs,
           rel=sl.strided_slice_rel, pattern=I, layout="strided_slice")
declare_op("slice_like", inputs=("data", "shape_like"), attrs=SliceLikeAttrs,
           rel=sl.slice_like_rel, pattern=I, layout="slice_like")
declare_op("broadcast_to", inputs=("data",), attrs=InitOpAttrs, rel=sh.broadcast_to_rel,
           pattern=B)
declare_op("broadcast_to_like", inputs=("data", "broadcast_type"),
           rel=sh.broadcast_to_like_rel, pattern=B)
declare_op("collapse_sum_like", inputs=("data", "collapse_type"),
           rel=sh.collapse_sum_like_rel, pattern=R)
declare_op("tile", inputs=("data",), attrs=TileAttrs, rel=sh.tile_rel, pattern=B)
declare_op("repeat", inputs=("data",), attrs=RepeatAttrs, rel=sh.repeat_rel, pattern=B,
           scale_axis="shape")
declare_op("reverse", inputs=("data",), attrs=ReverseAttrs, rel=sh.reverse_rel, pattern=I)
declare_op("reverse_sequence", inputs=("data", "seq_lengths"), attrs=ReverseSequenceAttrs,
           rel=sh.reverse_sequence_rel, pattern=I)
declare_op("layout_transform", inputs=("data",), attrs=LayoutTransformAttrs,
           rel=sh.layout_transform_rel, pattern=I, layout="layout_transform")
declare_op("gather", inputs=("data", "indices"), attrs=GatherAttrs, rel=ix.gather_rel,
           pattern=I)
declare_op("gather_nd", inputs=("data", "indices"), attrs=GatherNDAttrs, rel=ix.gather_nd_rel,
           pattern=I)
declare_op("zeros", inputs=(), attrs=InitOpAttrs, rel=ix.init_rel, pattern=E)
declare_op("ones", inputs=(), attrs=InitOpAttrs, rel=ix.init_rel, pattern=E)
declare_op("full", inputs=("fill_value",), attrs=InitOpAttrs, rel=ix.full_rel, pattern=E)
declare_op("full_like", inputs=("data", "fill_value"), rel=ix.full_like_rel, pattern=E)
declare_op("arange", inputs=("start", "stop", "step"), attrs=ArangeAttrs, rel=ix.arange_rel,
           pattern=O)                                   # TVM: opaque
declare_op("one_hot", inputs=("indices", "on_value", "off_value"), attrs=OneHotAttrs,
           rel=ix.one_hot_rel, pattern=F)
declare_op("shape_of", inputs=("data",), attrs=ShapeOfAttrs, rel=sh.shape_of_rel, pattern=O)
# TVM registers the scans kOpaque (src/relay/op/tensor/transform.cc).
declare_op("cumsum", inputs=("data",), attrs=ScanopAttrs, rel=scan_rel, pattern=O,
           doc="Cumulative sum of the elements along `axis` (of the flattened input when "
               "`axis` is None), computed in `dtype` (default: the input's). With `exclusive`, "
               "each element excludes itself: the first is 0.")
declare_op("cumprod", inputs=("data",), attrs=ScanopAttrs, rel=scan_rel, pattern=O,
           doc="Cumulative product of the elements along `axis` (of the flattened input when "
               "`axis` is None), computed in `dtype` (default: the input's). With `exclusive`, "
               "each element excludes itself: the first is 1.")


@attrs_schema
class SparseToDenseAttrs(Attrs):
    output_shape: tuple[int, ...]

    type_key: ClassVar[str] = "relay.attrs.SparseToDenseAttrs"


# TVM: kOpaque (src/relay/op/tensor/transform.cc)
declare_op("sparse_to_dense", inputs=("sparse_indices", "sparse_values", "default_value"),
           attrs=SparseToDenseAttrs, rel=sparse_to_dense_rel, pattern=O,
           doc="A dense tensor of output_shape filled with default_value, sparse_values "
               "written at sparse_indices (0-D or 1-D: positions on axis 0; 2-D: rows of "
               "leading coordinates; a later index wins; indices outside the shape are "
               "ignored, as topi's compute never matches them).")
