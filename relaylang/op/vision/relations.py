"""Type relations of the vision family: ROIAlignRel, ROIPoolRel (src/relay/op/vision/rcnn_op.cc) and
AllClassNMSRel (src/relay/op/vision/nms.cc)."""
from __future__ import annotations

from typing import Any

from ...ir.dtype import dtype_kind
from ...ir.types import TensorType, TupleType, Type
from ..relation import TypeRelError, choice, shape_str, tensor
from ..shape_rules import all_known, dim_mul, expect_dim, expect_rank, ints

ROI_MODES = ("avg", "max", "onnx_max")


def _float(t: TensorType, what: str, arg: int) -> None:
    if dtype_kind(t.dtype) != "float":
        raise TypeRelError(f"{what} must be a float tensor, got dtype {t.dtype}", arg=arg)


def roi_align_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:2]):
        return None
    choice(attrs.mode, ROI_MODES, "mode")
    return _roi_rel(args, attrs, "roi_align", "x1, y1, x2, y2")


def roi_pool_rel(args: list[Type], attrs: Any) -> Type | None:
    """ROIPoolRel: (R, C, ph, pw) for NCHW, (R, ph, pw, C) for NHWC."""
    if not all_known(args[:2]):
        return None
    return _roi_rel(args, attrs, "roi_pool", "w_start, h_start, w_end, h_end")


def _roi_rel(args: list[Type], attrs: Any, op: str, corners: str) -> Type:
    """What roi_align and roi_pool share: float data (4-D, NCHW or NHWC) and rois
    (R, 5) rows [batch, `corners`]; the result (R, C, ph, pw) or (R, ph, pw, C)."""
    data = tensor(args, 0, "data")
    rois = tensor(args, 1, "rois")
    if attrs.layout not in ("NCHW", "NHWC"):
        raise TypeRelError(f"{op} supports layouts NCHW and NHWC, got {attrs.layout!r}")
    _float(data, "data", 0)
    _float(rois, "rois", 1)
    expect_rank(data, 4, "data", 0)
    expect_rank(rois, 2, "rois", 1)
    expect_dim(rois.shape[1], 5, f"rois must be (R, 5) rows [batch, {corners}], got "
               f"{shape_str(rois.shape)}", 1, 1)
    pooled = ints(attrs.pooled_size, "pooled_size")
    if len(pooled) == 1:
        pooled = pooled * 2
    if len(pooled) != 2 or any(p <= 0 for p in pooled):
        raise TypeRelError(f"pooled_size must be two positive integers, got {list(pooled)}")
    if attrs.layout == "NCHW":
        shape = (rois.shape[0], data.shape[1], *pooled)
    else:
        shape = (rois.shape[0], *pooled, data.shape[3])
    return TensorType(shape, data.dtype)


def all_class_nms_rel(args: list[Type], attrs: Any) -> Type | None:
    if not all_known(args[:5]):
        return None
    boxes = tensor(args, 0, "boxes")
    scores = tensor(args, 1, "scores")
    if attrs.output_format != "onnx":
        raise TypeRelError(f"output_format {attrs.output_format!r} is not supported (only "
                           "\"onnx\")")
    if attrs.center_point_box not in (0, 1):
        raise TypeRelError(f"center_point_box must be 0 or 1, got {attrs.center_point_box}")
    _float(boxes, "boxes", 0)
    _float(scores, "scores", 1)
    expect_rank(boxes, 3, "boxes", 0)
    expect_rank(scores, 3, "scores", 1)
    expect_dim(boxes.shape[2], 4, f"boxes must be (B, N, 4), got {shape_str(boxes.shape)}",
               0, 2)
    expect_dim(scores.shape[0], boxes.shape[0], f"scores {shape_str(scores.shape)} and boxes "
               f"{shape_str(boxes.shape)} differ in batch", 1, 0)
    expect_dim(scores.shape[2], boxes.shape[1], f"scores {shape_str(scores.shape)} and boxes "
               f"{shape_str(boxes.shape)} differ in the number of boxes", 1, 2)
    for i, what in ((2, "max_output_boxes_per_class"), (3, "iou_threshold"),
                    (4, "score_threshold")):
        t = tensor(args, i, what)
        if len(t.shape) > 1 or (t.shape and t.shape[0] != 1):
            raise TypeRelError(f"{what} must be a scalar or a 1-element tensor, got shape "
                               f"{shape_str(t.shape)}", arg=i)
        kind = dtype_kind(t.dtype)
        if (i == 2) != (kind in ("int", "uint")) or (i > 2 and kind != "float"):
            raise TypeRelError(f"{what} must be {'an integer' if i == 2 else 'a float'} "
                               f"tensor, got dtype {t.dtype}", arg=i)
    rows = dim_mul(dim_mul(boxes.shape[0], scores.shape[1]), boxes.shape[1])
    return TupleType((TensorType((rows, 3), "int64"), TensorType((1,), "int64")))
