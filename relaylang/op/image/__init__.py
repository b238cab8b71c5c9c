"""The image family.

Mirrors Resize1DAttrs and Resize2DAttrs of TVM's include/tvm/relay/attrs/image.h and
`image.resize1d`, `image.resize2d` of src/relay/op/image/resize.cc (one input each,
kInjective; resize1d resamples the W axis of an NCW-like layout as topi's resize1d).
The relation is in `relations.py`, the kernel in `numpy_kernels.py` (its
resampling, shared with nn.upsampling, is `op/resize_numpy.py`).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import resize1d_rel, resize2d_rel


@attrs_schema
class Resize1DAttrs(Attrs):
    size: tuple[IndexExpr, ...] | None = None
    roi: tuple[float, ...] | None = None
    layout: str = "NCW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round"
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: DType = DType("")

    type_key: ClassVar[str] = "relay.attrs.Resize1DAttrs"


@attrs_schema
class Resize2DAttrs(Attrs):
    size: tuple[IndexExpr, ...] | None = None
    roi: tuple[float, ...] | None = None
    layout: str = "NCHW"
    method: str = "linear"
    coordinate_transformation_mode: str = "half_pixel"
    rounding_method: str = "round"
    cubic_alpha: float = -0.5
    cubic_exclude: int = 0
    extrapolation_value: float = 0.0
    out_dtype: DType = DType("")
    # relaylang's additions for ONNX's Resize: the given scales (H, W), which map
    # coordinates instead of out/in, and antialiasing when downscaling
    scales: tuple[float, ...] | None = None
    antialias: bool = False

    type_key: ClassVar[str] = "relay.attrs.Resize2DAttrs"


declare_op("image.resize2d", inputs=("data",), attrs=Resize2DAttrs, rel=resize2d_rel,
           pattern=OpPattern.INJECTIVE, layout="spatial")
declare_op("image.resize1d", inputs=("data",), attrs=Resize1DAttrs, rel=resize1d_rel,
           pattern=OpPattern.INJECTIVE, layout="spatial",
           doc="resamples the W axis of data (layout NCW) to size [W'] by nearest, linear or "
               "cubic interpolation (roi [start, end] for tf_crop_and_resize).")
