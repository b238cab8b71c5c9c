"""Type relations of padding and resampling: nn.pad, nn.upsampling, nn.upsampling3d,
nn.depth_to_space, nn.space_to_depth.

Mirrors PadRel (src/relay/op/nn/pad.cc), UpSamplingRel and UpSampling3DRel
(upsampling.cc: H and W (and D) scaled and rounded half to even, as tvm::round folds;
topi's methods and coordinate modes), DepthToSpaceRel and
SpaceToDepthRel (nn.cc).
"""
from __future__ import annotations

from typing import Any

from ...ir.types import TensorType, Type
from ..layouts import axis_positions, check_rank
from ..relation import TypeRelError, choice, tensor
from ..shape_rules import all_known, dim_add, dim_div, dim_mul, expect_scalar, is_int, scaled

PAD_MODES = ("constant", "edge", "reflect")
UPSAMPLING_METHODS = ("nearest_neighbor", "bilinear", "bicubic")
UPSAMPLING3D_METHODS = ("nearest_neighbor", "trilinear")
# topi.image.resize3d's modes (upsampling3d documents the first three)
UPSAMPLING3D_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                      "tf_half_pixel_for_nn")


def pad_widths(pad_width: Any, shape: tuple, mode: str) -> list[tuple[int, int]]:
    """PadRel's checks: one [before, after] pair of non-negative ints per axis."""
    widths = pad_width or ()
    if len(widths) != len(shape):
        raise TypeRelError(f"pad_width has {len(widths)} entries but data has rank {len(shape)}",
                           arg=0)
    pairs = []
    for k, pair in enumerate(widths):
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(is_int(p) for p in pair)):
            raise TypeRelError(f"pad_width for axis {k} must be [before, after], got {pair}")
        if min(pair) < 0:
            raise TypeRelError(f"pad_width for axis {k} must be non-negative, got {list(pair)}")
        d = shape[k]
        if mode == "reflect" and is_int(d) and max(pair) >= d:
            raise TypeRelError(f"reflect padding {list(pair)} on axis {k} needs a dimension "
                               f"larger than {max(pair)}, got {d}", arg=0, dim=k)
        if mode == "edge" and d == 0 and max(pair) > 0:
            raise TypeRelError(f"edge padding needs a non-empty axis {k}", arg=0, dim=k)
        pairs.append((pair[0], pair[1]))
    return pairs


def pad_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    data, value = tensor(args, 0, "data"), tensor(args, 1, "pad_value")
    expect_scalar(value, "pad_value", 1)
    choice(attrs.pad_mode, PAD_MODES, "pad_mode")
    pairs = pad_widths(attrs.pad_width, data.shape, attrs.pad_mode)
    shape = tuple(dim_add(d, b + a) for d, (b, a) in zip(data.shape, pairs))
    return TensorType(shape, data.dtype)


def upsampling_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    choice(attrs.method, UPSAMPLING_METHODS, "method")
    h, w = axis_positions(attrs.layout, "HW", "layout")
    check_rank(data, attrs.layout)
    shape = list(data.shape)
    shape[h], shape[w] = scaled(shape[h], attrs.scale_h), scaled(shape[w], attrs.scale_w)
    return TensorType(tuple(shape), data.dtype)


def upsampling3d_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    choice(attrs.method, UPSAMPLING3D_METHODS, "method")
    choice(attrs.coordinate_transformation_mode, UPSAMPLING3D_MODES,
           "coordinate_transformation_mode")
    d, h, w = axis_positions(attrs.layout, "DHW", "layout")
    check_rank(data, attrs.layout)
    shape = list(data.shape)
    for axis, scale in ((d, attrs.scale_d), (h, attrs.scale_h), (w, attrs.scale_w)):
        shape[axis] = scaled(shape[axis], scale)
    return TensorType(tuple(shape), data.dtype)


def _subpixel(args: list[Type], attrs: Any) -> tuple[TensorType, list[int], int]:
    data = tensor(args, 0, "data")
    if attrs.layout not in ("NCHW", "NHWC"):
        raise TypeRelError(f"layout must be NCHW or NHWC, got {attrs.layout!r}")
    pos = axis_positions(attrs.layout, "NCHW", "layout")
    check_rank(data, attrs.layout)
    if attrs.block_size < 1:
        raise TypeRelError(f"block_size must be positive, got {attrs.block_size}")
    return data, pos, attrs.block_size


def depth_to_space_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data, (_, c, h, w), bs = _subpixel(args, attrs)
    choice(attrs.mode, ("DCR", "CRD"), "mode")
    shape = list(data.shape)
    if is_int(shape[c]) and shape[c] % (bs * bs):
        raise TypeRelError(f"data has {shape[c]} channels, not a multiple of block_size^2 = "
                           f"{bs * bs}", arg=0, dim=c)
    shape[c] = dim_div(shape[c], bs * bs)
    shape[h], shape[w] = dim_mul(shape[h], bs), dim_mul(shape[w], bs)
    return TensorType(tuple(shape), data.dtype)


def space_to_depth_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data, (_, c, h, w), bs = _subpixel(args, attrs)
    shape = list(data.shape)
    for axis in (h, w):
        if is_int(shape[axis]) and shape[axis] % bs:
            raise TypeRelError(f"dimension {axis} of data is {shape[axis]}, not a multiple of "
                               f"block_size {bs}", arg=0, dim=axis)
        shape[axis] = dim_div(shape[axis], bs)
    shape[c] = dim_mul(shape[c], bs * bs)
    return TensorType(tuple(shape), data.dtype)
