"""The vision family (vision.roi_align, vision.roi_pool, vision.all_class_non_max_suppression):
relations, and kernels checked against loops written here (roi_align, roi_pool: TVM's
roi_pool_nchw_python with topi's rounding) and small cases worked by hand (non-maximum
suppression), plus ONNX's reference RoiAlign."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType, TupleType

RNG = np.random.default_rng(11)


def arr(shape, dtype="float32"):
    return RNG.standard_normal(shape).astype(dtype)


ROIS = np.array([[0, 0.5, 1.0, 4.0, 3.5], [1, -2, -1, 9, 8], [1, 3, 2, 3.2, 2.1]], "float32")
I64, F32 = T((1,), "int64"), T((1,), "float32")

AGREEMENT = [
    ("vision.roi_align", [T((2, 3, 5, 7)), T((3, 5))], {"pooled_size": (2, 3)}),
    ("vision.roi_align", [T((2, 5, 7, 1), "float64"), T((3, 5), "float64")],
     {"pooled_size": (1, 1), "layout": "NHWC", "mode": "max", "sample_ratio": 2}),
    ("vision.roi_align", [T((2, 1, 4, 4), "float16"), T((3, 5), "float16")],
     {"pooled_size": (3,), "mode": "onnx_max", "aligned": True}),
    ("vision.roi_pool", [T((2, 3, 5, 7)), T((3, 5))], {"pooled_size": (2, 3),
                                                       "spatial_scale": 1.0}),
    ("vision.roi_pool", [T((2, 5, 7, 1), "float64"), T((3, 5), "float64")],
     {"pooled_size": (1, 1), "spatial_scale": 0.5, "layout": "NHWC"}),
    ("vision.roi_pool", [T((2, 1, 4, 4), "float16"), T((3, 5), "float16")],
     {"pooled_size": (3,), "spatial_scale": 1.0}),
    ("vision.all_class_non_max_suppression",
     [T((2, 4, 4)), T((2, 3, 4)), I64, F32, F32], {}),
    ("vision.all_class_non_max_suppression",
     [T((1, 1, 4), "float64"), T((1, 2, 1), "float64"), T((), "int32"), T((), "float64"),
      T((), "float64")], {"center_point_box": 1}),
]


def _inputs(op, types):
    if op in ("vision.roi_align", "vision.roi_pool"):
        return [arr(types[0].shape, types[0].dtype), ROIS.astype(types[1].dtype)]
    limit = np.full(types[2].shape, 2, types[2].dtype)
    return [np.abs(arr(types[0].shape, types[0].dtype)), arr(types[1].shape, types[1].dtype),
            limit, np.full(types[3].shape, 0.3, types[3].dtype),
            np.full(types[4].shape, -0.5, types[4].dtype)]


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    value = run(op, *_inputs(op, types), **kw)
    if isinstance(out, TupleType):
        assert isinstance(value, tuple) and len(value) == len(out.fields)
        for v, t in zip(value, out.fields):
            assert v.shape == t.shape and str(v.dtype) == t.dtype
    else:
        assert value.shape == out.shape and str(value.dtype) == out.dtype


def eq(a, b):
    return rl.structural_equal(a, b)


def test_relations():
    assert eq(rel("vision.roi_align", T((2, 3, 5, 7)), T((4, 5)), pooled_size=(2, 1)),
              T((4, 3, 2, 1)))
    assert eq(rel("vision.roi_align", T((2, 5, 7, 3)), T((ANY, 5)), pooled_size=(2,),
                  layout="NHWC"), T((ANY, 2, 2, 3)))
    assert rel("vision.roi_align", IncompleteType(), T((4, 5)), pooled_size=(1, 1)) is None
    out = rel("vision.all_class_non_max_suppression", T((2, 5, 4)), T((2, 3, 5)), I64, F32, F32)
    assert eq(out, TupleType((T((30, 3), "int64"), T((1,), "int64"))))


def test_relation_errors():
    rel_error("vision.roi_align", [T((2, 3, 5, 7)), T((4, 4))], "(R, 5)", arg=1,
              pooled_size=(1, 1))
    rel_error("vision.roi_align", [T((2, 3, 5)), T((4, 5))], "rank 4", arg=0,
              pooled_size=(1, 1))
    rel_error("vision.roi_align", [T((2, 3, 5, 7)), T((4, 5))], "pooled_size",
              pooled_size=(0, 1))
    rel_error("vision.roi_align", [T((2, 3, 5, 7)), T((4, 5))], "mode", pooled_size=(1, 1),
              mode="min")
    rel_error("vision.roi_align", [T((2, 3, 5, 7), "int8"), T((4, 5))], "float", arg=0,
              pooled_size=(1, 1))
    nms = "vision.all_class_non_max_suppression"
    rel_error(nms, [T((2, 5, 4)), T((3, 3, 5)), I64, F32, F32], "batch", arg=1)
    rel_error(nms, [T((2, 5, 4)), T((2, 3, 4)), I64, F32, F32], "number of boxes", arg=1)
    rel_error(nms, [T((2, 5, 3)), T((2, 3, 5)), I64, F32, F32], "(B, N, 4)", arg=0)
    rel_error(nms, [T((2, 5, 4)), T((2, 3, 5)), F32, F32, F32], "integer", arg=2)
    rel_error(nms, [T((2, 5, 4)), T((2, 3, 5)), I64, T((2,)), F32], "1-element", arg=3)
    rel_error(nms, [T((2, 5, 4)), T((2, 3, 5)), I64, F32, F32], "not supported",
              output_format="tensorflow")


# ---------------------------------------------------------------- roi_align values

def naive_roi_align(x, rois, pooled, scale, ratio, mode, aligned):
    _n, c, h, w = x.shape
    ph, pw = pooled
    out = np.zeros((len(rois), c, ph, pw))
    for r, row in enumerate(rois):
        off = 0.5 if aligned else 0.0
        x1, y1, x2, y2 = (float(v) * scale - off for v in row[1:])
        rw, rh = x2 - x1, y2 - y1
        if not aligned:
            rw, rh = max(rw, 1.0), max(rh, 1.0)
        bh, bw = rh / ph, rw / pw
        gh = ratio if ratio > 0 else math.ceil(rh / ph)
        gw = ratio if ratio > 0 else math.ceil(rw / pw)
        for ch, i, j in itertools.product(range(c), range(ph), range(pw)):
            vals = []
            for sy, sx in itertools.product(range(gh), range(gw)):
                y = y1 + i * bh + (sy + 0.5) * bh / gh
                xx = x1 + j * bw + (sx + 0.5) * bw / gw
                if y < -1 or y > h or xx < -1 or xx > w:
                    vals.append([0.0] * 4)
                    continue
                y, xx = max(y, 0.0), max(xx, 0.0)
                yl, xl = int(y), int(xx)
                if yl >= h - 1:
                    yl = yh = h - 1
                    y = float(yl)
                else:
                    yh = yl + 1
                if xl >= w - 1:
                    xl = xh = w - 1
                    xx = float(xl)
                else:
                    xh = xl + 1
                ly, lx = y - yl, xx - xl
                img = x[int(row[0]), ch]
                vals.append([(1 - ly) * (1 - lx) * img[yl, xl], (1 - ly) * lx * img[yl, xh],
                             ly * (1 - lx) * img[yh, xl], ly * lx * img[yh, xh]])
            if not vals:
                continue
            if mode == "avg":
                out[r, ch, i, j] = sum(sum(v) for v in vals) / len(vals)
            elif mode == "max":
                out[r, ch, i, j] = max(sum(v) for v in vals)
            else:
                out[r, ch, i, j] = max(max(v) for v in vals)
    return out


@pytest.mark.parametrize("mode", ["avg", "max", "onnx_max"])
@pytest.mark.parametrize("aligned", [False, True])
@pytest.mark.parametrize("ratio", [0, 1, 3])
def test_roi_align_matches_loops(mode, aligned, ratio):
    x = arr((2, 2, 5, 6))
    got = run("vision.roi_align", x, ROIS, pooled_size=(2, 3), spatial_scale=0.8,
              sample_ratio=ratio, mode=mode, aligned=aligned)
    want = naive_roi_align(x, ROIS, (2, 3), 0.8, ratio, mode, aligned)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    nhwc = run("vision.roi_align", x.transpose(0, 2, 3, 1).copy(), ROIS, pooled_size=(2, 3),
               spatial_scale=0.8, sample_ratio=ratio, mode=mode, aligned=aligned,
               layout="NHWC")
    np.testing.assert_allclose(nhwc, got.transpose(0, 2, 3, 1), rtol=1e-6)


def test_roi_align_bad_batch_index():
    with pytest.raises(ValueError, match="batch 2"):
        run("vision.roi_align", arr((2, 1, 3, 3)), np.array([[2, 0, 0, 1, 1]], "float32"),
            pooled_size=(1, 1))


def test_roi_align_against_onnx_reference():
    pytest.importorskip("onnx")
    from onnx.reference.ops.op_roi_align import RoiAlign
    x = arr((2, 3, 6, 5))
    for mode, half, ratio in itertools.product(["avg", "max"], [False, True], [0, 2]):
        ref = RoiAlign.__new__(RoiAlign)
        ref.sampling_ratio = ref.spatial_scale = 0     # what the reference falls back to
        want = ref._run(x, ROIS[:, 1:], ROIS[:, 0].astype(np.int64),
                        coordinate_transformation_mode="half_pixel" if half
                        else "output_half_pixel", mode=mode, output_height=3,
                        output_width=2, sampling_ratio=ratio, spatial_scale=0.7)[0]
        got = run("vision.roi_align", x, ROIS, pooled_size=(3, 2), spatial_scale=0.7,
                  sample_ratio=ratio, mode="avg" if mode == "avg" else "onnx_max",
                  aligned=half)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- NMS values

def nms(boxes, scores, limit, iou, score, **kw):
    sel, count = run("vision.all_class_non_max_suppression", np.asarray(boxes, "float32"),
                     np.asarray(scores, "float32"), np.array([limit], "int64"),
                     np.array([iou], "float32"), np.array([score], "float32"), **kw)
    n = int(count[0])
    assert not sel[n:].any()
    return sel[:n].tolist()


def test_nms_cases():
    boxes = [[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
              [0, 10.1, 1, 11.1], [0, 100, 1, 101]]]
    scores = [[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3]]]
    assert nms(boxes, scores, 3, 0.5, 0.0) == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]
    assert nms(boxes, scores, 2, 0.5, 0.0) == [[0, 0, 3], [0, 0, 0]]
    assert nms(boxes, scores, 10, 0.5, 0.4) == [[0, 0, 3], [0, 0, 0]]
    assert nms(boxes, scores, 0, 0.5, 0.0) == []
    assert nms(boxes, scores, -1, 0.5, 0.0) == []
    # flipped corners read the same
    flipped = [[[b[2], b[3], b[0], b[1]] for b in boxes[0]]]
    assert nms(flipped, scores, 3, 0.5, 0.0) == [[0, 0, 3], [0, 0, 0], [0, 0, 5]]
    # ties: the lower index first; identical boxes suppress each other at any threshold < 1
    same = [[[0, 0, 1, 1]] * 4]
    assert nms(same, [[[0.5, 0.9, 0.9, 0.1]]], 4, 0.99, 0.0) == [[0, 0, 1]]
    # IoU exactly the threshold is not suppressed (strictly greater)
    half = [[[0, 0, 1, 2], [0, 1, 1, 3]]]           # intersection 1, union 3
    assert nms(half, [[[0.9, 0.8]]], 2, 1 / 3 + 1e-3, 0.0) == [[0, 0, 0], [0, 0, 1]]
    assert nms(half, [[[0.9, 0.8]]], 2, 0.3, 0.0) == [[0, 0, 0]]
    # centre format: [xc, yc, w, h]
    centred = [[[0.5, 0.5, 1, 1], [0.5, 0.6, 1, 1], [0.5, 10.5, 1, 1]]]
    assert nms(centred, [[[0.9, 0.8, 0.7]]], 3, 0.5, 0.0, center_point_box=1) == \
        [[0, 0, 0], [0, 0, 2]]
    # batches and classes in order
    two = nms([[[0, 0, 1, 1], [0, 0, 1, 1]]] * 2, [[[0.1, 0.2], [0.4, 0.3]]] * 2, 1, 0.5, 0.0)
    assert two == [[0, 0, 1], [0, 1, 0], [1, 0, 1], [1, 1, 0]]
    # empty-area boxes never suppress
    flat = [[[0, 0, 0, 1], [0, 0, 0, 1]]]
    assert nms(flat, [[[0.9, 0.8]]], 2, 0.0, 0.0) == [[0, 0, 0], [0, 0, 1]]


# ---------------------------------------------------------------- roi_pool

def naive_roi_pool(x, rois, pooled, scale):
    """TVM's topi.testing.roi_pool_nchw_python, with topi's own rounding (llvm.round: half
    away from zero; the Python reference's round() is half to even) and its 1e-5 epsilon
    on the bin edges."""
    def rnd(v):
        return int(math.copysign(math.floor(abs(v) + 0.5), v))
    _, c, h, w = x.shape
    ph_, pw_ = pooled
    out = np.zeros((rois.shape[0], c, ph_, pw_), x.dtype)
    for i, roi in enumerate(rois):
        b = int(roi[0])
        sw, sh, ew, eh = (rnd(float(np.float32(roi[k]) * np.float32(scale))) for k in range(1, 5))
        bin_h = max(eh - sh + 1, 1) / ph_
        bin_w = max(ew - sw + 1, 1) / pw_
        for ph in range(ph_):
            for pw in range(pw_):
                hs = min(max(math.floor(ph * bin_h + 1e-5) + sh, 0), h)
                he = min(max(math.ceil((ph + 1) * bin_h - 1e-5) + sh, 0), h)
                ws = min(max(math.floor(pw * bin_w + 1e-5) + sw, 0), w)
                we = min(max(math.ceil((pw + 1) * bin_w - 1e-5) + sw, 0), w)
                if he > hs and we > ws:
                    out[i, :, ph, pw] = x[b, :, hs:he, ws:we].max(axis=(1, 2))
    return out


def test_roi_pool_relation():
    assert rel("vision.roi_pool", T((2, 3, 8, 8)), T((4, 5)), pooled_size=(2, 3),
               spatial_scale=0.5).shape == (4, 3, 2, 3)
    assert rel("vision.roi_pool", T((2, 8, 8, 3)), T((ANY, 5)), pooled_size=(2,),
               spatial_scale=0.5, layout="NHWC").shape == (ANY, 2, 2, 3)
    rel_error("vision.roi_pool", [T((2, 3, 8)), T((4, 5))], "rank", 0, pooled_size=(2, 2),
              spatial_scale=1.0)
    rel_error("vision.roi_pool", [T((2, 3, 8, 8)), T((4, 4))], "rois must be (R, 5)", 1,
              pooled_size=(2, 2), spatial_scale=1.0)
    rel_error("vision.roi_pool", [T((2, 3, 8, 8)), T((4, 5))], "supports layouts NCHW and NHWC",
              None, pooled_size=(2, 2), spatial_scale=1.0, layout="HWCN")
    rel_error("vision.roi_pool", [T((2, 3, 8, 8)), T((4, 5))], "pooled_size must be two",
              None, pooled_size=(0, 2), spatial_scale=1.0)
    rel_error("vision.roi_pool", [T((2, 3, 8, 8), "int32"), T((4, 5))], "must be a float",
              0, pooled_size=(2, 2), spatial_scale=1.0)


@pytest.mark.parametrize("pooled, scale", [((3, 3), 1.0), ((2, 5), 0.5), ((1, 1), 0.25),
                                           ((7, 7), 0.0625)])
def test_roi_pool_matches_loops(pooled, scale):
    x = arr((2, 3, 9, 11))
    rois = np.array([[0, 0, 0, 20, 20], [1, 3, 5, 10, 8], [0, 10, 10, 4, 4],
                     [1, 30, 30, 40, 40], [1, -6, -3, 2, 1], [0, 2.5, 4.5, 7.5, 9.5]], "float32")
    got = run("vision.roi_pool", x, rois, pooled_size=pooled, spatial_scale=scale)
    np.testing.assert_array_equal(got, naive_roi_pool(x, rois, pooled, scale))
    nhwc = run("vision.roi_pool", x.transpose(0, 2, 3, 1).copy(), rois, pooled_size=pooled,
               spatial_scale=scale, layout="NHWC")
    np.testing.assert_array_equal(nhwc, got.transpose(0, 2, 3, 1))


def test_roi_pool_bad_batch_index():
    rois = np.array([[2, 0, 0, 1, 1]], "float32")
    with pytest.raises(ValueError, match="batch index"):
        run("vision.roi_pool", arr((2, 1, 3, 3)), rois, pooled_size=(1, 1), spatial_scale=1.0)
