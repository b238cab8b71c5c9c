"""The vision family: vision.roi_align, vision.roi_pool and
vision.all_class_non_max_suppression.

Mirrors ROIAlignAttrs and AllClassNonMaximumSuppressionAttrs of TVM's
include/tvm/relay/attrs/vision.h (src/relay/op/vision/rcnn_op.cc, nms.cc; both
kOpaque).

- `vision.roi_align(data, rois, pooled_size, spatial_scale, sample_ratio, layout, mode,
  aligned)`: data NCHW (or NHWC), rois (R, 5) rows [batch index, x1, y1, x2, y2] in
  input coordinates (scaled by spatial_scale); the result (R, C, ph, pw) (NHWC:
  (R, ph, pw, C)) pools each bin over a sample_ratio x sample_ratio grid of bilinear
  samples (sample_ratio <= 0: ceil(roi size / pooled size) per axis, per roi). A sample
  outside [-1, size] on either axis counts as 0; inside it is clamped to the image.
  mode "avg" averages the samples, "max" takes their largest (TVM), "onnx_max" the
  largest of the four weighted corner values over every sample (onnxruntime's and
  ONNX's RoiAlign max mode). `aligned` (torchvision's, not TVM's): shift the roi by -0.5
  pixel and do not stretch it to at least 1 pixel (ONNX's half_pixel mode).
- `vision.all_class_non_max_suppression(boxes, scores, max_output_boxes_per_class,
  iou_threshold, score_threshold, output_format="onnx")`: boxes (B, N, 4), scores
  (B, C, N); per batch and class, the boxes scoring above score_threshold, best first
  (ties: lower index first), each kept unless its IoU with a kept box exceeds
  iou_threshold, at most max_output_boxes_per_class of them. The result is TVM's for the
  "onnx" format: (selected (B * C * N, 3) int64 rows [batch, class, box], the first
  `count` of them filled and the rest 0; count (1,) int64). The attribute
  center_point_box (ONNX's) reads boxes as [x_center, y_center, width, height] instead
  of two corners [y1, x1, y2, x2] (in any order).

- `vision.roi_pool(data, rois, pooled_size, spatial_scale, layout)` (ROIPoolAttrs; topi's
  roi_pool_nchw): each roi [batch, w_start, h_start, w_end, h_end], scaled and rounded
  (half away from zero) to whole pixels, at least 1x1, is split into pooled_size bins
  (floor/ceil of bin edges with TVM's 1e-5 epsilon, in the rois' dtype); each output is
  the largest value of its bin, 0 for an empty bin. NHWC as well (TVM's relation takes
  it; its compute only NCHW).

Neither op is fused (TVM: kOpaque; roi_pool as roi_align). roi_align has an LLVM lowering for a fixed
sample_ratio; NMS is a sequential, data-dependent selection and runs its NumPy kernel.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import all_class_nms_rel, roi_align_rel, roi_pool_rel


@attrs_schema
class ROIAlignAttrs(Attrs):
    pooled_size: tuple[IndexExpr, ...] | None = None
    spatial_scale: float = 1.0
    sample_ratio: int = -1
    layout: str = "NCHW"
    mode: str = "avg"
    aligned: bool = False

    type_key: ClassVar[str] = "relay.attrs.ROIAlignAttrs"


@attrs_schema
class AllClassNonMaximumSuppressionAttrs(Attrs):
    output_format: str = "onnx"
    center_point_box: int = 0

    type_key: ClassVar[str] = "relay.attrs.AllClassNonMaximumSuppressionAttrs"


declare_op("vision.roi_align", inputs=("data", "rois"), attrs=ROIAlignAttrs, rel=roi_align_rel,
           pattern=OpPattern.OPAQUE, layout="roi",
           doc="pools each region of interest (rows [batch, x1, y1, x2, y2]) of data into "
               "pooled_size bins of bilinear samples.")
@attrs_schema
class ROIPoolAttrs(Attrs):
    pooled_size: tuple[IndexExpr, ...] | None = None
    spatial_scale: float = 0.0
    layout: str = "NCHW"

    type_key: ClassVar[str] = "relay.attrs.ROIPoolAttrs"


declare_op("vision.roi_pool", inputs=("data", "rois"), attrs=ROIPoolAttrs, rel=roi_pool_rel,
           pattern=OpPattern.OPAQUE, layout="roi",
           doc="max-pools each region of interest (rows [batch, w_start, h_start, w_end, "
               "h_end], scaled by spatial_scale and rounded to pixels) of data into "
               "pooled_size bins.")
declare_op("vision.all_class_non_max_suppression",
           inputs=("boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                   "score_threshold"),
           attrs=AllClassNonMaximumSuppressionAttrs, rel=all_class_nms_rel,
           pattern=OpPattern.OPAQUE,
           doc="non-maximum suppression per batch and class: (the selected [batch, class, "
               "box] rows padded to B * C * N, their count).")
