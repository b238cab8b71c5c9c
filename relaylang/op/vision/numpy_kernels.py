"""NumPy reference kernels of the vision family (registered with `@implement`).

roi_align follows Detectron's (and onnxruntime's) RoiAlign, computed in float32 (float64
for float64 data) like onnxruntime, coordinates included (the sample count of an
adaptive grid is the ceiling of a float32 quotient):
per roi, bins of (roi size / pooled size), each sampled on a grid of g_h x g_w points
at ((i + 0.5) * bin / g) inside the bin. A sample with y outside [-1, H] or x outside
[-1, W] contributes 0; otherwise it is clamped at 0, and its low corner is its integer
part (the last row / column when that is the image's last: the sample then sits on it).
all_class_non_max_suppression follows ONNX's NonMaxSuppression: boxes are compared in
their dtype; a box is suppressed when its intersection with a kept box is positive on
both axes and the IoU exceeds the threshold.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement


def roi_geometry(roi: np.ndarray, pooled: tuple[int, int], scale: float, sample_ratio: int,
                 aligned: bool, ct: type) -> tuple[Any, Any, Any, Any, int, int]:
    """(y_start, x_start, bin_h, bin_w, grid_h, grid_w) of one roi row [b, x1, y1, x2, y2],
    in the compute dtype `ct` (as onnxruntime computes them, in the rois' type)."""
    offset = ct(0.5 if aligned else 0.0)
    x1, y1, x2, y2 = (ct(v) * ct(scale) - offset for v in roi[1:5])
    rw, rh = x2 - x1, y2 - y1
    if not aligned:
        rw, rh = max(rw, ct(1)), max(rh, ct(1))
    bh, bw = rh / ct(pooled[0]), rw / ct(pooled[1])
    gh = sample_ratio if sample_ratio > 0 else int(np.ceil(rh / ct(pooled[0])))
    gw = sample_ratio if sample_ratio > 0 else int(np.ceil(rw / ct(pooled[1])))
    return y1, x1, bh, bw, max(gh, 0), max(gw, 0)


def _axis(c: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                             np.ndarray]:
    """(low index, high index, low weight, high weight, in range) of sample coordinates."""
    t = c.dtype.type
    valid = (c >= t(-1)) & (c <= t(size))
    c = np.maximum(c, t(0))
    lo = np.trunc(c)
    last = lo >= t(size - 1)
    lo = np.where(last, t(size - 1), lo)
    hi = np.where(last, t(size - 1), lo + t(1))
    c = np.where(last, lo, c)
    frac = c - lo
    return lo.astype(np.int64), hi.astype(np.int64), t(1) - frac, frac, valid


@implement("vision.roi_align", float16=IN_FLOAT32)
def roi_align(inputs: list, attrs: Any) -> np.ndarray:
    data, rois = np.asarray(inputs[0]), np.asarray(inputs[1])
    nhwc = attrs.layout == "NHWC"
    x = data.transpose(0, 3, 1, 2) if nhwc else data
    batch, channels, height, width = x.shape
    pooled = tuple(int(p) for p in attrs.pooled_size)
    if len(pooled) == 1:
        pooled = pooled * 2
    ph, pw = pooled
    ct = np.float64 if data.dtype == np.float64 else np.float32
    out = np.zeros((rois.shape[0], channels, ph, pw), ct)
    for r in range(rois.shape[0]):
        b = int(rois[r, 0])
        if not 0 <= b < batch:
            raise ValueError(f"roi {r} names batch {b}, but data has a batch of {batch}")
        y0, x0, bh, bw, gh, gw = roi_geometry(rois[r], pooled, float(attrs.spatial_scale),
                                              int(attrs.sample_ratio), bool(attrs.aligned), ct)
        if gh * gw == 0 or height == 0 or width == 0:
            continue
        ys = (y0 + np.arange(ph, dtype=ct)[:, None] * bh
              + (np.arange(gh, dtype=ct)[None, :] + ct(0.5)) * bh / ct(gh))
        xs = (x0 + np.arange(pw, dtype=ct)[:, None] * bw
              + (np.arange(gw, dtype=ct)[None, :] + ct(0.5)) * bw / ct(gw))
        ylo, yhi, hy, ly, vy = (a[:, :, None, None] for a in _axis(ys, height))
        xlo, xhi, hx, lx, vx = (a[None, None] for a in _axis(xs, width))
        valid = vy & vx                                    # (ph, gh, pw, gw)
        img = x[b].astype(ct)
        zero = ct(0)
        terms = [np.where(valid, hy * hx, zero) * img[:, ylo, xlo],
                 np.where(valid, hy * lx, zero) * img[:, ylo, xhi],
                 np.where(valid, ly * hx, zero) * img[:, yhi, xlo],
                 np.where(valid, ly * lx, zero) * img[:, yhi, xhi]]
        if attrs.mode == "avg":
            out[r] = (terms[0] + terms[1] + terms[2] + terms[3]).sum(axis=(2, 4)) / ct(gh * gw)
        elif attrs.mode == "max":
            out[r] = (terms[0] + terms[1] + terms[2] + terms[3]).max(axis=(2, 4))
        else:
            out[r] = np.maximum(np.maximum(terms[0], terms[1]),
                                np.maximum(terms[2], terms[3])).max(axis=(2, 4))
    if nhwc:
        out = out.transpose(0, 2, 3, 1)
    return np.ascontiguousarray(out).astype(data.dtype)


def _corners(boxes: np.ndarray, center_point_box: int) -> tuple[np.ndarray, ...]:
    """(x_min, x_max, y_min, y_max) of boxes (..., 4), in their dtype."""
    if center_point_box:
        half_w, half_h = boxes[..., 2] / 2, boxes[..., 3] / 2
        return (boxes[..., 0] - half_w, boxes[..., 0] + half_w,
                boxes[..., 1] - half_h, boxes[..., 1] + half_h)
    return (np.minimum(boxes[..., 1], boxes[..., 3]), np.maximum(boxes[..., 1], boxes[..., 3]),
            np.minimum(boxes[..., 0], boxes[..., 2]), np.maximum(boxes[..., 0], boxes[..., 2]))


def _suppressed(corners: tuple[np.ndarray, ...], i: int, kept: list[int],
                threshold: Any) -> bool:
    x1, x2, y1, y2 = corners
    k = np.asarray(kept)
    ix1, ix2 = np.maximum(x1[i], x1[k]), np.minimum(x2[i], x2[k])
    iy1, iy2 = np.maximum(y1[i], y1[k]), np.minimum(y2[i], y2[k])
    inter = (ix2 - ix1) * (iy2 - iy1)
    a1 = (x2[i] - x1[i]) * (y2[i] - y1[i])
    a2 = (x2[k] - x1[k]) * (y2[k] - y1[k])
    union = a1 + a2 - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / union
    hit = ((ix2 > ix1) & (iy2 > iy1) & (inter > 0) & (a1 > 0) & (a2 > 0) & (union > 0)
           & (iou > threshold))
    return bool(hit.any())


@implement("vision.all_class_non_max_suppression")
def all_class_non_max_suppression(inputs: list, attrs: Any) -> tuple[np.ndarray, np.ndarray]:
    boxes, scores = np.asarray(inputs[0]), np.asarray(inputs[1])
    limit = max(int(np.asarray(inputs[2]).reshape(-1)[0]), 0)
    dtype = boxes.dtype.type
    iou_threshold = dtype(np.asarray(inputs[3]).reshape(-1)[0])
    score_threshold = np.asarray(inputs[4]).reshape(-1)[0]
    n_batch, n_boxes = boxes.shape[:2]
    n_class = scores.shape[1]
    selected = np.zeros((n_batch * n_class * n_boxes, 3), np.int64)
    count = 0
    for b in range(n_batch):
        corners = _corners(boxes[b], int(attrs.center_point_box))
        for c in range(n_class):
            s = scores[b, c]
            candidates = np.nonzero(s > score_threshold)[0]
            order = candidates[np.lexsort((candidates, -s[candidates]))]
            kept: list[int] = []
            for i in order:
                if len(kept) >= limit:
                    break
                if kept and _suppressed(corners, int(i), kept, iou_threshold):
                    continue
                kept.append(int(i))
                selected[count] = (b, c, i)
                count += 1
    return selected, np.array([count], np.int64)


def roi_pool_bins(rois: np.ndarray, pooled: tuple[int, int], spatial_scale: float,
                  height: int, width: int) -> np.ndarray:
    """topi.vision.rcnn.roi_pool_nchw's bin bounds: (R, ph, pw, 4) int64 rows
    [hstart, hend, wstart, wend] (clamped to the image; empty when start >= end),
    computed in the rois' dtype."""
    dt = rois.dtype
    ph, pw = pooled
    scale = dt.type(spatial_scale)

    def rnd(v: np.ndarray) -> np.ndarray:           # te.round: half away from zero
        return (np.sign(v) * np.floor(np.abs(v) + dt.type(0.5))).astype(np.int64)
    start_w, start_h = rnd(rois[:, 1] * scale), rnd(rois[:, 2] * scale)
    end_w, end_h = rnd(rois[:, 3] * scale), rnd(rois[:, 4] * scale)
    roi_h = np.maximum(end_h - start_h + 1, 1)
    roi_w = np.maximum(end_w - start_w + 1, 1)
    bin_h = roi_h.astype(dt) / dt.type(ph)
    bin_w = roi_w.astype(dt) / dt.type(pw)
    eps = dt.type(1e-5)
    out = np.empty((rois.shape[0], ph, pw, 4), np.int64)
    for p in range(ph):
        hs = np.floor(dt.type(p) * bin_h + eps).astype(np.int64) + start_h
        he = np.ceil(dt.type(p + 1) * bin_h - eps).astype(np.int64) + start_h
        out[:, p, :, 0] = np.clip(hs, 0, height)[:, None]
        out[:, p, :, 1] = np.clip(he, 0, height)[:, None]
    for q in range(pw):
        ws = np.floor(dt.type(q) * bin_w + eps).astype(np.int64) + start_w
        we = np.ceil(dt.type(q + 1) * bin_w - eps).astype(np.int64) + start_w
        out[:, :, q, 2] = np.clip(ws, 0, width)[:, None]
        out[:, :, q, 3] = np.clip(we, 0, width)[:, None]
    return out


def roi_batch_index(rois: np.ndarray, batch: int) -> np.ndarray:
    """The rois' batch indices (truncated, as topi's cast); ValueError outside the batch."""
    idx = rois[:, 0].astype(np.int64)
    bad = (idx < 0) | (idx >= batch)
    if bad.any():
        r = int(np.argmax(bad))
        raise ValueError(f"roi {r} has batch index {rois[r, 0]}, outside the batch of {batch}")
    return idx


@implement("vision.roi_pool", float16=IN_FLOAT32)
def roi_pool(inputs: list, attrs: Any) -> np.ndarray:
    data, rois = inputs
    x = data if attrs.layout == "NCHW" else data.transpose(0, 3, 1, 2)
    pooled = tuple(int(p) for p in attrs.pooled_size)
    if len(pooled) == 1:
        pooled = pooled * 2
    _, c, h, w = x.shape
    bins = roi_pool_bins(rois, pooled, float(attrs.spatial_scale), h, w)
    batch = roi_batch_index(rois, x.shape[0])
    out = np.zeros((rois.shape[0], c, *pooled), x.dtype)
    for r in range(rois.shape[0]):
        for p in range(pooled[0]):
            for q in range(pooled[1]):
                hs, he, ws, we = bins[r, p, q]
                if hs < he and ws < we:
                    out[r, :, p, q] = x[batch[r], :, hs:he, ws:we].max(axis=(1, 2))
    return out if attrs.layout == "NCHW" else np.ascontiguousarray(out.transpose(0, 2, 3, 1))
