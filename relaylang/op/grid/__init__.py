"""The grid family: image.grid_sample and image.affine_grid.

Mirrors GridSampleAttrs and AffineGridAttrs of TVM's include/tvm/relay/attrs/image.h
and src/relay/op/image/grid_sample.cc (both kInjective). The ops carry TVM's `image.`
names; they live in a folder of their own only to keep clear of the resize ops' files
(they belong with `image.resize2d` in `op/image/`).

Layouts are TVM's, channel first: a sampling grid is (N, nd, *out) with channel 0 the
x (innermost, W) coordinate, 1 the y (H) and 2 the z (D), in [-1, 1] normalised
coordinates; ONNX's (N, *out, nd) grids are its transpose.

- `image.affine_grid(data, target_shape, align_corners=True)`: data (N, nd, nd + 1)
  affine matrices, the result (N, nd, *target_shape) the grid sampling the transformed
  base grid. TVM's op is 2-D with the base coordinates -1 + 2 i / (n - 1)
  (align_corners); here also 3-D (target_shape of three), and `align_corners=False`
  takes pixel centres, -1 + (2 i + 1) / n (ONNX AffineGrid; an extension of TVM's attrs);
  an axis of one position is at 0 (PyTorch's affine_grid).
- `image.grid_sample(data, grid, method, layout, padding_mode, align_corners)`:
  data NCHW (grid (N, 2, H', W')) or NCDHW (grid (N, 3, D', H', W')), result
  (N, C, *grid's spatial dims). method nearest / bilinear / bicubic (bicubic: 2-D and
  3-D, Keys' kernel with alpha -0.75), padding_mode zeros / border / reflection,
  with PyTorch's semantics (ONNX GridSample): nearest rounds half to even, border and
  reflection move an out-of-range coordinate back in before sampling (not for
  bicubic) and then each sampled position again.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import affine_grid_rel, grid_sample_rel


@attrs_schema
class AffineGridAttrs(Attrs):
    target_shape: tuple[IndexExpr, ...] | None = None
    align_corners: bool = True

    type_key: ClassVar[str] = "relay.attrs.AffineGridAttrs"


@attrs_schema
class GridSampleAttrs(Attrs):
    method: str = "bilinear"
    layout: str = "NCHW"
    padding_mode: str = "zeros"
    align_corners: bool = True

    type_key: ClassVar[str] = "relay.attrs.GridSampleAttrs"


declare_op("image.affine_grid", inputs=("data",), attrs=AffineGridAttrs, rel=affine_grid_rel,
           pattern=OpPattern.INJECTIVE,
           doc="the sampling grid (N, nd, *target_shape) of the affine matrices data "
               "(N, nd, nd + 1) applied to the base grid in [-1, 1].")
declare_op("image.grid_sample", inputs=("data", "grid"), attrs=GridSampleAttrs,
           rel=grid_sample_rel, pattern=OpPattern.INJECTIVE,
           doc="samples data (NCHW / NCDHW) at the normalised positions of grid "
               "(N, nd, *out) by nearest, bilinear or bicubic interpolation.")
