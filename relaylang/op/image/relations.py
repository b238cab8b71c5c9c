"""Type relations of the image family: Resize1DRel, Resize2DRel (src/relay/op/image/resize.cc)."""
from __future__ import annotations

from typing import Any

from ...ir.types import TensorType, Type
from ..layouts import axis_positions, check_rank
from ..relation import TypeRelError, choice, shape_str, tensor
from ..shape_rules import all_known, is_int, out_dtype, spatial

RESIZE_METHODS = ("nearest_neighbor", "linear", "cubic")
COORDINATE_MODES = ("half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
                    "tf_half_pixel_for_nn", "half_pixel_symmetric", "tf_crop_and_resize")
ROUNDING = ("", "round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil")


def resize2d_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    choice(attrs.method, RESIZE_METHODS, "method")
    choice(attrs.coordinate_transformation_mode, COORDINATE_MODES,
            "coordinate_transformation_mode")
    choice(attrs.rounding_method, ROUNDING, "rounding_method")
    h, w = axis_positions(attrs.layout, "HW", "layout")
    check_rank(data, attrs.layout)
    if attrs.size is None:
        raise TypeRelError("resize2d needs a size")
    size = spatial(attrs.size, 2, "size")
    if attrs.scales is not None and (len(attrs.scales) != 2
                                     or any(float(v) <= 0 for v in attrs.scales)):
        raise TypeRelError(f"scales must be two positive numbers (H, W), got "
                           f"{list(attrs.scales)}")
    if attrs.coordinate_transformation_mode == "tf_crop_and_resize" and (
            attrs.roi is None or len(attrs.roi) != 4):
        raise TypeRelError("tf_crop_and_resize needs roi = [start_h, start_w, end_h, end_w]")
    for d in size:
        if is_int(d) and d <= 0:
            raise TypeRelError(f"size must be positive, got {shape_str(size)}")
    shape = list(data.shape)
    shape[h], shape[w] = size
    return TensorType(tuple(shape), out_dtype(attrs.out_dtype, data.dtype))


def resize1d_rel(args: list[Type], attrs: Any) -> Type | None:
    """Resize1DRel: the W axis of the layout becomes size[0]."""
    if not all_known(args[:1]):
        return None
    data = tensor(args, 0, "data")
    choice(attrs.method, RESIZE_METHODS, "method")
    choice(attrs.coordinate_transformation_mode, COORDINATE_MODES,
           "coordinate_transformation_mode")
    choice(attrs.rounding_method, ROUNDING, "rounding_method")
    (w,) = axis_positions(attrs.layout, "W", "layout")
    check_rank(data, attrs.layout)
    if attrs.size is None:
        raise TypeRelError("resize1d needs a size")
    size = spatial(attrs.size, 1, "size")
    if attrs.coordinate_transformation_mode == "tf_crop_and_resize" and (
            attrs.roi is None or len(attrs.roi) != 2):
        raise TypeRelError("tf_crop_and_resize needs roi = [start_w, end_w]")
    if is_int(size[0]) and size[0] <= 0:
        raise TypeRelError(f"size must be positive, got {shape_str(size)}")
    shape = list(data.shape)
    shape[w] = size[0]
    return TensorType(tuple(shape), out_dtype(attrs.out_dtype, data.dtype))
