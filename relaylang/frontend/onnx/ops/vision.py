"""Image and vision ONNX operators: GridSample, AffineGrid, RoiAlign, MaxUnpool, MaxPool
with its Indices output, NonMaxSuppression, DeformConv.

- GridSample (16: bilinear / nearest / bicubic, 4-D; 20+: linear / nearest / cubic, 4-D
  and 5-D) and AffineGrid (20) map to image.grid_sample / image.affine_grid, whose grids
  are channel first (TVM's (N, nd, *spatial)); ONNX's (N, *spatial, nd) grids are
  transposed on the way in and out.
- RoiAlign (10, 16) is vision.roi_align on rows [batch, x1, y1, x2, y2] (the batch
  indices put in front of the boxes, as TVM's converter does); half_pixel (16's default)
  is `aligned=True`; ONNX's max mode is onnxruntime's ("onnx_max").
- MaxPool from opset 8 is converted here: without the Indices output by nn.py's
  converter, with it (2-D only) by nn.max_pool2d_with_argmax.
- MaxUnpool (9, 11) is TVM's decomposition: scatter_elements into zeros, reshape, and a
  zero pad when output_shape is larger than the unpooled shape.
- NonMaxSuppression (10, 11) is vision.all_class_non_max_suppression (TVM's "onnx"
  format) and a dyn.strided_slice of its padded rows to their count: the result's
  length is known only at run time. An absent score_threshold is -inf (a box scoring
  -inf or NaN is never selected).
- DeformConv (19, 2-D) is nn.deformable_conv2d, or nn.modulated_deformable_conv2d with
  the mask input, then nn.bias_add.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....ir.expr import TupleGetItem
from ....op import make as op
from ..registry import converter

# ---------------------------------------------------------------- GridSample

_GRID_METHODS = {"bilinear": "bilinear", "linear": "bilinear", "nearest": "nearest",
                 "bicubic": "bicubic", "cubic": "bicubic"}


def _grid_sample(ctx: Any, node: Any, modes: tuple[str, ...], default: str) -> Any:
    x, grid = node.inputs[0], node.inputs[1]
    rank = len(ctx.shape(x))
    if rank not in (4, 5) or (rank == 5 and node.opset < 20):
        allowed = "4-D" if node.opset < 20 else "4-D or 5-D"
        raise node.error(f"expects {allowed} input data, got rank {rank}")
    if len(ctx.shape(grid)) != rank:
        raise node.error(f"grid must have rank {rank} like the input, got rank "
                         f"{len(ctx.shape(grid))}")
    mode = node.attr("mode", default)
    if mode not in modes:
        raise node.error(f"mode must be one of {', '.join(modes)}, got {mode!r}")
    padding = node.attr("padding_mode", "zeros")
    if padding not in ("zeros", "border", "reflection"):
        raise node.error(f"padding_mode must be zeros, border or reflection, got {padding!r}")
    align = int(node.attr("align_corners", 0))
    if align not in (0, 1):
        raise node.error(f"align_corners must be 0 or 1, got {align}")
    nd = rank - 2
    g = op.transpose(grid, axes=(0, rank - 1, *range(1, rank - 1)))
    return op.image.grid_sample(x, g, method=_GRID_METHODS[mode],
                                layout="NCHW" if nd == 2 else "NCDHW",
                                padding_mode=padding, align_corners=bool(align))


@converter("GridSample", since=16)
def grid_sample_16(ctx: Any, node: Any) -> Any:
    return _grid_sample(ctx, node, ("bilinear", "nearest", "bicubic"), "bilinear")


@converter("GridSample", since=20)
def grid_sample_20(ctx: Any, node: Any) -> Any:
    return _grid_sample(ctx, node, ("linear", "nearest", "cubic"), "linear")


# ---------------------------------------------------------------- AffineGrid

@converter("AffineGrid", since=20)
def affine_grid(ctx: Any, node: Any) -> Any:
    theta, size = node.inputs[0], node.inputs[1]
    sizes = [int(s) for s in ctx.constant(size, node, "the size input").reshape(-1)]
    if len(sizes) not in (4, 5):
        raise node.error(f"size must be (N, C, H, W) or (N, C, D, H, W), got {sizes}")
    if any(s <= 0 for s in sizes):
        raise node.error(f"size must be positive, got {sizes}")
    nd = len(sizes) - 2
    shape = ctx.shape(theta)
    if len(shape) != 3 or shape[1:] != (nd, nd + 1):
        raise node.error(f"theta must be (N, {nd}, {nd + 1}) for a size of {len(sizes)} "
                         f"entries, got {tuple(shape)}")
    if isinstance(shape[0], int) and shape[0] != sizes[0]:
        raise node.error(f"theta has batch {shape[0]} but size says {sizes[0]}")
    align = int(node.attr("align_corners", 0))
    if align not in (0, 1):
        raise node.error(f"align_corners must be 0 or 1, got {align}")
    grid = op.image.affine_grid(theta, target_shape=tuple(sizes[2:]),
                                align_corners=bool(align))
    return op.transpose(grid, axes=(0, *range(2, nd + 2), 1))


# ---------------------------------------------------------------- RoiAlign

def _roi_align(ctx: Any, node: Any, aligned: bool) -> Any:
    x, rois, batch = node.inputs[0], node.inputs[1], node.inputs[2]
    if len(ctx.shape(x)) != 4:
        raise node.error(f"expects 4-D input data, got rank {len(ctx.shape(x))}")
    mode = node.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise node.error(f"mode must be avg or max, got {mode!r}")
    size = (int(node.attr("output_height", 1)), int(node.attr("output_width", 1)))
    if min(size) <= 0:
        raise node.error(f"output_height and output_width must be positive, got {size}")
    ratio = int(node.attr("sampling_ratio", 0))
    if ratio < 0:
        raise node.error(f"sampling_ratio must be >= 0, got {ratio}")
    index = op.cast(op.expand_dims(batch, axis=1), dtype=ctx.dtype(rois))
    rows = op.concatenate([index, rois], axis=1)
    # ONNX's max mode is onnxruntime's: the largest weighted corner value of any sample
    return op.vision.roi_align(x, rows, pooled_size=size,
                               spatial_scale=float(node.attr("spatial_scale", 1.0)),
                               sample_ratio=ratio, layout="NCHW",
                               mode="avg" if mode == "avg" else "onnx_max", aligned=aligned)


@converter("RoiAlign", since=10)
def roi_align_10(ctx: Any, node: Any) -> Any:
    return _roi_align(ctx, node, aligned=False)


@converter("RoiAlign", since=16)
def roi_align_16(ctx: Any, node: Any) -> Any:
    mode = node.attr("coordinate_transformation_mode", "half_pixel")
    if mode not in ("half_pixel", "output_half_pixel"):
        raise node.error("coordinate_transformation_mode must be half_pixel or "
                         f"output_half_pixel, got {mode!r}")
    return _roi_align(ctx, node, aligned=mode == "half_pixel")


# ---------------------------------------------------------------- NonMaxSuppression

@converter("NonMaxSuppression", since=10)
def non_max_suppression(ctx: Any, node: Any) -> Any:
    boxes, scores = node.inputs[0], node.inputs[1]
    center = int(node.attr("center_point_box", 0))
    if center not in (0, 1):
        raise node.error(f"center_point_box must be 0 or 1, got {center}")
    fdtype = ctx.dtype(boxes)
    # absent inputs: no boxes per class, IoU threshold 0, no score threshold
    limit = node.input(2)
    limit = ctx.const(np.array([0], "int64")) if limit is None else limit
    iou = node.input(3)
    iou = ctx.const(np.array([0], fdtype)) if iou is None else iou
    score = node.input(4)
    score = ctx.const(np.array([-np.inf], fdtype)) if score is None else score
    out = op.vision.all_class_non_max_suppression(boxes, scores, limit, iou, score,
                                                  output_format="onnx",
                                                  center_point_box=center)
    return op.dyn.strided_slice(TupleGetItem(out, 0), ctx.const(np.array([0], "int64")),
                                TupleGetItem(out, 1), ctx.const(np.array([1], "int64")))


# ---------------------------------------------------------------- MaxPool's Indices

# ---------------------------------------------------------------- MaxUnpool

@converter("MaxUnpool", since=9)
def max_unpool(ctx: Any, node: Any) -> Any:
    """TVM's way: X scattered at the flat positions I (scatter_elements on flattened
    tensors) into zeros of the shape the pool came from, (in - 1) * stride - pads +
    kernel per axis; an output_shape larger than that pads it with zeros at the end of
    each axis (ONNX's reference: the unpooled block sits at the start)."""
    x, indices = node.inputs[0], node.inputs[1]
    shape = ctx.static_shape(x)
    if shape is None or len(shape) < 3:
        raise node.error(f"expects input data of static shape and rank >= 3, got "
                         f"{tuple(ctx.shape(x))}")
    nd = len(shape) - 2
    kernel = tuple(int(k) for k in node.attr("kernel_shape"))
    if len(kernel) != nd:
        raise node.error(f"kernel_shape {list(kernel)} does not have {nd} entries")
    strides = tuple(int(s) for s in (node.attr("strides", None) or (1,) * nd))
    pads = tuple(int(p) for p in (node.attr("pads", None) or (0,) * (2 * nd)))
    if len(strides) != nd or len(pads) != 2 * nd:
        raise node.error(f"strides {list(strides)} / pads {list(pads)} do not fit {nd} "
                         "spatial axes")
    if ctx.static_shape(indices) != shape:
        raise node.error(f"indices must have the shape of the input {shape}, got "
                         f"{tuple(ctx.shape(indices))}")
    unpooled = [(shape[2 + i] - 1) * strides[i] - pads[i] - pads[nd + i] + kernel[i]
                for i in range(nd)]
    if any(u <= 0 for u in unpooled):
        raise node.error(f"the unpooled shape {unpooled} is not positive")
    full = (shape[0], shape[1], *unpooled)
    total = int(np.prod(full))
    dtype = ctx.dtype(x)
    flat = op.scatter_elements(op.zeros(shape=(total,), dtype=dtype),
                               op.reshape(indices, newshape=(-1,)),
                               op.reshape(x, newshape=(-1,)), axis=0)
    out = op.reshape(flat, newshape=full)
    given = node.input(2)
    if given is None:
        return out
    target = [int(v) for v in ctx.constant(given, node, "output_shape").reshape(-1)]
    if len(target) != len(full):
        raise node.error(f"output_shape {target} must have {len(full)} entries")
    if target[:2] != list(full[:2]) or any(t < u for t, u in zip(target[2:], unpooled)):
        raise node.error(f"output_shape {target} is smaller than the unpooled shape "
                         f"{list(full)} or changes its batch or channels")
    if tuple(target) == full:
        return out
    return op.nn.pad(out, ctx.const(np.zeros((), dtype)),
                     pad_width=tuple((0, t - u) for t, u in zip(target, full)))


# ---------------------------------------------------------------- DeformConv

@converter("DeformConv", since=19)
def deform_conv(ctx: Any, node: Any) -> Any:
    x, w, offset = node.inputs[0], node.inputs[1], node.inputs[2]
    if len(ctx.shape(x)) != 4:
        raise node.error(f"only 2-D DeformConv (4-D input) is supported, got rank "
                         f"{len(ctx.shape(x))}")
    wshape = ctx.static_shape(w)
    if wshape is None or len(wshape) != 4:
        raise node.error(f"the weight needs a static 4-D shape, got {tuple(ctx.shape(w))}")
    kernel = tuple(int(k) for k in node.attr("kernel_shape", wshape[2:]))
    if kernel != tuple(wshape[2:]):
        raise node.error(f"kernel_shape {list(kernel)} differs from the weight's "
                         f"{list(wshape[2:])}")

    def ints(name: str, n: int, default: int) -> tuple[int, ...]:
        v = node.attr(name, None)
        v = (default,) * n if not v else tuple(int(i) for i in v)
        if len(v) != n:
            raise node.error(f"attribute `{name}` has {len(v)} entries, expected {n}")
        return v
    strides, dilations, pads = ints("strides", 2, 1), ints("dilations", 2, 1), ints("pads", 4, 0)
    kw = {"strides": strides, "padding": pads, "dilation": dilations,
          "deformable_groups": int(node.attr("offset_group", 1)),
          "groups": int(node.attr("group", 1)), "channels": int(wshape[0]),
          "kernel_size": kernel}
    mask = node.input(4)
    if mask is None:
        out = op.nn.deformable_conv2d(x, offset, w, **kw)
    else:
        out = op.nn.modulated_deformable_conv2d(x, offset, w, mask, **kw)
    bias = node.input(3)
    return out if bias is None else op.nn.bias_add(out, bias, axis=1)
