"""Type relations of the dyn family (TVM v0.19's src/relay/op/dyn/tensor/transform.cc:
ReshapeRel, TileRel, BroadCastToRel, InitOpRel, FullRel, OneHotRel, StridedSliceRel,
ExpandDimsRel, DynSqueezeRel, SparseToDenseRel; src/relay/op/dyn/nn/pad.cc: PadRel;
dyn/nn/upsampling.cc: UpSamplingRel, UpSampling3DRel; dyn/image/resize.cc: Resize2DRel;
dyn/algorithm/topk.cc: TopKRel).

As in TVM, the values of a shape-like argument are unknown to the type checker: only
its static length fixes the rank of the result, and each dimension the values decide
is `?` (`ANY`). A shape-like argument whose length is itself `?` is an error (TVM:
"doesn't support dynamic rank"). Beyond TVM's checks, shape-like arguments must be
integer tensors and scalar ones (the axis of expand_dims, the depth of one_hot, the
fill and pad values) must be scalars, so that a wrong argument is reported where it is
written rather than when the kernel runs. The result dtypes are TVM's, with the static
twins' defaults where TVM leaves a dtype unset (zeros/ones: float32; full and one_hot:
the fill/on value's dtype).
"""
from __future__ import annotations

from typing import Any

from ...ir.node import ANY
from ...ir.types import TensorType, TupleType, Type
from ..layouts import axis_positions, check_rank
from ..nn.resample_relations import PAD_MODES
from ..relation import TypeRelError, choice, shape_str, tensor
from ..shape_rules import (
    all_known,
    axis_of,
    expect_int_dtype,
    expect_rank,
    expect_scalar,
    is_int,
)
from ..shape_rules import int_dtype as is_int_dtype


def shape_length(args: list[Type], i: int, what: str) -> int:
    """The static length of the 1-D integer tensor argument `i` (a shape, reps, axes)."""
    t = tensor(args, i, what)
    expect_rank(t, 1, what, i)
    expect_int_dtype(t, what, i)
    n = t.shape[0]
    if not is_int(n):
        raise TypeRelError(f"{what} must have a static length (a dynamic rank is not "
                           f"supported), got shape {shape_str(t.shape)}", arg=i, dim=0)
    return n


def _any(rank: int) -> tuple:
    return (ANY,) * rank


def reshape_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    return TensorType(_any(shape_length(args, 1, "newshape")), data.dtype)


def broadcast_to_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    rank = shape_length(args, 1, "shape")
    if rank < len(data.shape):
        raise TypeRelError(f"cannot broadcast data of rank {len(data.shape)} to a shape of "
                           f"{rank} dimensions", arg=1)
    return TensorType(_any(rank), data.dtype)


def tile_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    return TensorType(_any(max(len(data.shape), shape_length(args, 1, "reps"))), data.dtype)


def init_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.zeros, dyn.ones: InitOpRel; dtype float32 when unset, as the static ops."""
    if not all_known(args[:1]):
        return None
    return TensorType(_any(shape_length(args, 0, "shape")), attrs.dtype or "float32")


def full_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    fill = tensor(args, 0, "fill_value")
    expect_scalar(fill, "fill_value", 0)
    return TensorType(_any(shape_length(args, 1, "shape")), attrs.dtype or fill.dtype)


def strided_slice_rel(args: list[Type], attrs: Any) -> Type | None:
    """The leading axes that begin/end/strides cover are `?`; the others keep their size."""
    if not all_known(args[:4]):
        return None
    data = tensor(args, 0, "data")
    choice(attrs.slice_mode, ("end", "size"), "slice_mode")
    lengths = [shape_length(args, k, name) for k, name in
               ((1, "begin"), (2, "end"), (3, "strides"))]
    if len(set(lengths)) != 1:
        raise TypeRelError("begin, end and strides must have the same length, got "
                           f"{lengths[0]}, {lengths[1]} and {lengths[2]}", arg=2)
    n = lengths[0]
    if n > len(data.shape):
        raise TypeRelError(f"begin has {n} values but data has rank {len(data.shape)}", arg=1)
    return TensorType(_any(n) + tuple(data.shape[n:]), data.dtype)


def expand_dims_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    axis = tensor(args, 1, "axis")
    expect_scalar(axis, "axis", 1)
    expect_int_dtype(axis, "axis", 1)
    if attrs.num_newaxis < 0:
        raise TypeRelError(f"num_newaxis must be non-negative, got {attrs.num_newaxis}")
    return TensorType(_any(len(data.shape) + attrs.num_newaxis), data.dtype)


def squeeze_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    n = shape_length(args, 1, "axes")
    if n > len(data.shape):
        raise TypeRelError(f"cannot squeeze {n} axes from a tensor of rank {len(data.shape)}",
                           arg=1)
    return TensorType(_any(len(data.shape) - n), data.dtype)


def one_hot_rel(args: list[Type], attrs: Any) -> Type | None:
    """The indices' shape with a `?` (the depth) inserted at `axis`."""
    if not all_known(args[:4]):
        return None
    indices = tensor(args, 0, "indices")
    on, off = tensor(args, 1, "on_value"), tensor(args, 2, "off_value")
    depth = tensor(args, 3, "depth")
    expect_int_dtype(indices, "indices", 0)
    expect_scalar(on, "on_value", 1)
    expect_scalar(off, "off_value", 2)
    expect_scalar(depth, "depth", 3)
    expect_int_dtype(depth, "depth", 3)
    rank = len(indices.shape)
    axis = rank if attrs.axis == -1 else axis_of(attrs.axis, rank + 1)
    shape = indices.shape[:axis] + (ANY,) + indices.shape[axis:]
    return TensorType(shape, attrs.dtype or on.dtype)


def pad_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.nn.pad: pad_width is (rank, 2); every dimension of the result is `?`."""
    if not all_known(args[:3]):
        return None
    data = tensor(args, 0, "data")
    width, value = tensor(args, 1, "pad_width"), tensor(args, 2, "pad_val")
    expect_rank(width, 2, "pad_width", 1)
    expect_int_dtype(width, "pad_width", 1)
    rank = len(data.shape)
    rows, cols = width.shape
    if (is_int(rows) and rows != rank) or (is_int(cols) and cols != 2):
        raise TypeRelError(f"pad_width must have shape ({rank}, 2) for data of rank {rank}, "
                           f"got ({rows if is_int(rows) else '?'}, "
                           f"{cols if is_int(cols) else '?'})", arg=1)
    expect_scalar(value, "pad_val", 2)
    choice(attrs.pad_mode, PAD_MODES, "pad_mode")
    return TensorType(_any(rank), data.dtype)


def topk_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.topk: k a scalar (or a (1,) tensor) of integers; the axis becomes `?`."""
    if not all_known(args[:2]):
        return None
    data = tensor(args, 0, "data")
    k = tensor(args, 1, "k")
    if len(k.shape) > 1 or (len(k.shape) == 1 and k.shape[0] != 1):
        raise TypeRelError(f"k must be a scalar or a tensor of shape (1,), got shape "
                           f"{shape_str(k.shape)}", arg=1)
    expect_int_dtype(k, "k", 1)
    choice(attrs.ret_type, ("both", "values", "indices"), "ret_type")
    axis = axis_of(attrs.axis, len(data.shape))
    shape = data.shape[:axis] + (ANY,) + data.shape[axis + 1:]
    values = TensorType(shape, data.dtype)
    index_dtype = attrs.dtype or "int32"
    if not is_int_dtype(index_dtype):      # as the static topk's relation
        raise TypeRelError(f"dtype of the indices must be an integer dtype, got {index_dtype}")
    indices = TensorType(shape, index_dtype)
    if attrs.ret_type == "values":
        return values
    if attrs.ret_type == "indices":
        return indices
    return TupleType((values, indices))


def _spatial_any(data: TensorType, layout: str, letters: str) -> tuple:
    """data's shape with the layout's `letters` axes `?` (TVM: via the NCHW/NCDHW form)."""
    check_rank(data, layout)
    shape = list(data.shape)
    for axis in axis_positions(layout, letters, "layout"):
        shape[axis] = ANY
    return tuple(shape)


def resize2d_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.image.resize2d: size a (2,) tensor (integers, or floats truncated as TVM's
    ToVector), roi a 1-D float tensor; H and W become `?`."""
    from ..image.relations import COORDINATE_MODES, RESIZE_METHODS, ROUNDING
    if not all_known(args[:3]):
        return None
    data = tensor(args, 0, "data")
    size, roi = tensor(args, 1, "size"), tensor(args, 2, "roi")
    expect_rank(size, 1, "size", 1)
    if is_int(size.shape[0]) and size.shape[0] != 2:
        raise TypeRelError(f"size must hold 2 values (H, W), got shape "
                           f"{shape_str(size.shape)}", arg=1)
    expect_rank(roi, 1, "roi", 2)
    choice(attrs.method, RESIZE_METHODS, "method")
    choice(attrs.coordinate_transformation_mode, COORDINATE_MODES,
           "coordinate_transformation_mode")
    choice(attrs.rounding_method, ROUNDING, "rounding_method")
    return TensorType(_spatial_any(data, attrs.layout, "HW"), attrs.out_dtype or data.dtype)


def _scales(args: list[Type], names: tuple[str, ...]) -> None:
    for i, name in enumerate(names, start=1):
        expect_scalar(tensor(args, i, name), name, i)


def upsampling_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.nn.upsampling: scale_h and scale_w scalars; H and W become `?`."""
    from ..nn.resample_relations import UPSAMPLING_METHODS
    if not all_known(args[:3]):
        return None
    data = tensor(args, 0, "data")
    _scales(args, ("scale_h", "scale_w"))
    choice(attrs.method, UPSAMPLING_METHODS, "method")
    return TensorType(_spatial_any(data, attrs.layout, "HW"), data.dtype)


def upsampling3d_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.nn.upsampling3d: scale_d, scale_h and scale_w scalars; D, H and W become `?`."""
    from ..nn.resample_relations import UPSAMPLING3D_METHODS, UPSAMPLING3D_MODES
    if not all_known(args[:4]):
        return None
    data = tensor(args, 0, "data")
    _scales(args, ("scale_d", "scale_h", "scale_w"))
    choice(attrs.method, UPSAMPLING3D_METHODS, "method")
    choice(attrs.coordinate_transformation_mode, UPSAMPLING3D_MODES,
           "coordinate_transformation_mode")
    return TensorType(_spatial_any(data, attrs.layout, "DHW"), data.dtype)


def sparse_to_dense_rel(args: list[Type], attrs: Any) -> Type | None:
    """dyn.sparse_to_dense(sparse_indices, sparse_values, default_value, output_shape):
    the rank from output_shape's static length, every dimension `?`."""
    from ..transform.sparse_relations import check_sparse_inputs
    if not all_known(args[:4]):
        return None
    rank = shape_length(args, 3, "output_shape")
    values = check_sparse_inputs(args, rank)
    return TensorType(_any(rank), values.dtype)
