"""The dyn family: TVM's dynamic-shape operators, whose shape-like arguments are tensors.

Mirrors TVM v0.19's src/relay/op/dyn/tensor/transform.cc (dyn.reshape, dyn.tile,
dyn.broadcast_to, dyn.zeros, dyn.ones, dyn.full, dyn.one_hot, dyn.strided_slice,
dyn.expand_dims, dyn.squeeze, dyn.sparse_to_dense), src/relay/op/dyn/nn/pad.cc
(dyn.nn.pad), dyn/nn/upsampling.cc (dyn.nn.upsampling, dyn.nn.upsampling3d),
dyn/image/resize.cc (dyn.image.resize2d) and dyn/algorithm/topk.cc (dyn.topk): the same
names, inputs (TVM's `.add_argument`s), attribute types and fusion patterns (dyn.zeros
and dyn.ones take theirs from python/tvm/relay/op/dyn/_tensor.py). Each op is the
dynamic twin of a static op whose attribute became an input: `dyn.reshape(%x, %s)` is
`reshape(%x, newshape=<value of %s>)`. The attribute types are the static ops' (TVM
registers the same ones; `DynExpandDimsAttrs` is the family's own, and so are
`DynUpSamplingAttrs` and `DynUpSampling3DAttrs` (relaylang's names; a type key names one
schema): TVM's UpSampling(3D)Attrs with the scales left out, since relaylang's schemas
require them), so the fields that became inputs stay unset.

Relations (`relations.py`): the rank of the result follows from the static length of
the shape-like tensor; every dimension it sets is `?` (TVM's `Any()`). The NumPy
kernels (`numpy_kernels.py`) read the values and run the static op's kernel on them,
so a dyn op computes exactly what its static twin does. `DynamicToStatic`
(relaylang/transform/dynamic_to_static.py) turns calls whose shape-like arguments are
constants into the static ops.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..algorithm import TopKAttrs
from ..image import Resize2DAttrs
from ..nn import PadAttrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from ..transform import (
    InitOpAttrs,
    OneHotAttrs,
    ReshapeAttrs,
    SqueezeAttrs,
    StridedSliceAttrs,
    TileAttrs,
)
from . import relations as r

E, B, I = OpPattern.ELEMWISE, OpPattern.BROADCAST, OpPattern.INJECTIVE
F = OpPattern.OUT_ELEMWISE_FUSABLE


@attrs_schema
class DynExpandDimsAttrs(Attrs):
    num_newaxis: int = 1

    type_key: ClassVar[str] = "relay.attrs.DynExpandDimsAttrs"


@attrs_schema
class DynUpSamplingAttrs(Attrs):
    layout: str = "NCHW"
    method: str = "nearest_neighbor"
    align_corners: bool = False

    type_key: ClassVar[str] = "relay.attrs.DynUpSamplingAttrs"


@attrs_schema
class DynUpSampling3DAttrs(Attrs):
    layout: str = "NCDHW"
    method: str = "nearest_neighbor"
    coordinate_transformation_mode: str = "half_pixel"

    type_key: ClassVar[str] = "relay.attrs.DynUpSampling3DAttrs"


# TVM's TOpPattern for each (dyn/tensor/transform.cc, dyn/nn/pad.cc; dyn/_tensor.py for
# zeros and ones).
declare_op("dyn.reshape", inputs=("data", "newshape"), attrs=ReshapeAttrs,
           rel=r.reshape_rel, pattern=I,
           doc="reshape with the new shape as a 1-D integer tensor (0 copies an input "
               "dimension unless allowzero, -1 is inferred, -3 merges two; -2 and -4 would "
               "make the rank dynamic and are errors).")
declare_op("dyn.broadcast_to", inputs=("data", "shape"), attrs=InitOpAttrs,
           rel=r.broadcast_to_rel, pattern=B,
           doc="broadcast_to with the target shape as a 1-D integer tensor.")
declare_op("dyn.tile", inputs=("data", "reps"), attrs=TileAttrs, rel=r.tile_rel, pattern=I,
           doc="tile with the repetitions per axis as a 1-D integer tensor.")
declare_op("dyn.zeros", inputs=("shape",), attrs=InitOpAttrs, rel=r.init_rel, pattern=E,
           doc="zeros of the shape held by a 1-D integer tensor.")
declare_op("dyn.ones", inputs=("shape",), attrs=InitOpAttrs, rel=r.init_rel, pattern=E,
           doc="ones of the shape held by a 1-D integer tensor.")
declare_op("dyn.full", inputs=("fill_value", "shape"), attrs=InitOpAttrs, rel=r.full_rel,
           pattern=E,
           doc="full: a tensor of the shape held by a 1-D integer tensor, filled with the "
               "scalar fill_value.")
declare_op("dyn.strided_slice", inputs=("data", "begin", "end", "strides"),
           attrs=StridedSliceAttrs, rel=r.strided_slice_rel, pattern=I,
           doc="strided_slice with begin, end and strides as 1-D integer tensors of one "
               "length (the leading axes they slice).")
declare_op("dyn.expand_dims", inputs=("data", "axis"), attrs=DynExpandDimsAttrs,
           rel=r.expand_dims_rel, pattern=I,
           doc="expand_dims with the axis as a scalar integer tensor.")
declare_op("dyn.squeeze", inputs=("data", "axes"), attrs=SqueezeAttrs, rel=r.squeeze_rel,
           pattern=I,
           doc="squeeze with the axes to remove as a 1-D integer tensor.")
declare_op("dyn.one_hot", inputs=("indices", "on_value", "off_value", "depth"),
           attrs=OneHotAttrs, rel=r.one_hot_rel, pattern=F,
           doc="one_hot with the depth as a scalar integer tensor.")
declare_op("dyn.nn.pad", inputs=("data", "pad_width", "pad_val"), attrs=PadAttrs,
           rel=r.pad_rel, pattern=I,
           doc="nn.pad with the [before, after] widths per axis as a 2-D integer tensor.")
# dyn.topk: TVM sets no pattern (kOpaque), as the static topk
declare_op("dyn.topk", inputs=("data", "k"), attrs=TopKAttrs, rel=r.topk_rel,
           pattern=OpPattern.OPAQUE,
           doc="topk with k as a scalar integer tensor (k < 1: the whole axis).")
declare_op("dyn.image.resize2d", inputs=("data", "size", "roi"), attrs=Resize2DAttrs,
           rel=r.resize2d_rel, pattern=I,
           doc="image.resize2d with the output size (H, W) and the roi as 1-D tensors.")
declare_op("dyn.nn.upsampling", inputs=("data", "scale_h", "scale_w"),
           attrs=DynUpSamplingAttrs, rel=r.upsampling_rel, pattern=I, layout="upsampling",
           doc="nn.upsampling with scale_h and scale_w as scalar tensors.")
declare_op("dyn.nn.upsampling3d", inputs=("data", "scale_d", "scale_h", "scale_w"),
           attrs=DynUpSampling3DAttrs, rel=r.upsampling3d_rel, pattern=I,
           layout="upsampling",
           doc="nn.upsampling3d with scale_d, scale_h and scale_w as scalar tensors.")
declare_op("dyn.sparse_to_dense",
           inputs=("sparse_indices", "sparse_values", "default_value", "output_shape"),
           rel=r.sparse_to_dense_rel, pattern=OpPattern.OPAQUE,
           doc="sparse_to_dense with the output shape as a 1-D integer tensor (last input, "
               "as TVM).")
