"""ONNX image and vision operators against onnxruntime, on both backends: GridSample,
AffineGrid, RoiAlign, MaxUnpool, MaxPool's Indices, NonMaxSuppression, DeformConv."""
from __future__ import annotations

import itertools
import zlib

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper
from onnx_check import check_model, make_model, run_relay

from relaylang.frontend.onnx import OnnxImportError


def _rng(*key: object) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _grid(key: object, shape: tuple[int, ...]) -> np.ndarray:
    g = _rng("grid", key, shape).standard_normal(shape) * 1.6
    flat = g.reshape(-1)
    edge = [1.0, -1.0, 0.5, 4.25][:flat.size]
    flat[:len(edge)] = edge
    return g.astype("float32")


# ---------------------------------------------------------------- GridSample

@pytest.mark.parametrize("opset, mode", [(16, "bilinear"), (16, "nearest"), (16, "bicubic"),
                                         (20, "linear"), (20, "nearest"), (22, "cubic")])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d(opset, mode, padding, align):
    x = _rng(mode, padding).standard_normal((2, 3, 5, 4)).astype("float32")
    grid = _grid((mode, padding, align), (2, 3, 7, 2))
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding,
                            align_corners=align)
    model = make_model([node], {"x": (x.shape, "float32"), "g": (grid.shape, "float32")},
                       ["y"], opset=opset)
    check_model(model, {"x": x, "g": grid})


@pytest.mark.parametrize("xshape, gshape", [((1, 1, 1, 1), (1, 2, 3, 2)),
                                            ((1, 2, 1, 5), (1, 1, 1, 2))])
def test_grid_sample_size_one(xshape, gshape):
    x = _rng(xshape).standard_normal(xshape).astype("float32")
    grid = _grid(xshape, gshape)
    for mode, padding, align in itertools.product(["linear", "nearest", "cubic"],
                                                  ["zeros", "border", "reflection"], [0, 1]):
        node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                                padding_mode=padding, align_corners=align)
        model = make_model([node], {"x": (xshape, "float32"), "g": (gshape, "float32")},
                           ["y"], opset=20)
        check_model(model, {"x": x, "g": grid})


@pytest.mark.parametrize("mode", ["linear", "nearest"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
def test_grid_sample_3d(mode, padding):
    x = _rng(mode, padding, 3).standard_normal((1, 2, 3, 1, 4)).astype("float32")
    grid = _grid((mode, padding), (1, 2, 3, 1, 3))
    for align in (0, 1):
        node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                                padding_mode=padding, align_corners=align)
        model = make_model([node], {"x": (x.shape, "float32"), "g": (grid.shape, "float32")},
                           ["y"], opset=20)
        check_model(model, {"x": x, "g": grid})


def test_grid_sample_errors():
    x, g = ((1, 1, 2, 2), "float32"), ((1, 2, 2, 2), "float32")
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode="linear")
    model = make_model([node], {"x": x, "g": g}, ["y"], opset=16)
    with pytest.raises(OnnxImportError, match="mode must be one of bilinear"):
        run_relay(model, {"x": np.zeros((1, 1, 2, 2), "float32"),
                          "g": np.zeros((1, 2, 2, 2), "float32")})


# ---------------------------------------------------------------- AffineGrid

@pytest.mark.parametrize("size", [(2, 3, 4, 5), (1, 1, 1, 3), (2, 1, 3, 1), (1, 2, 3, 1, 4),
                                  (2, 1, 1, 2, 1)])
@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid(size, align):
    nd = len(size) - 2
    theta = _rng(size).standard_normal((size[0], nd, nd + 1)).astype("float32")
    node = helper.make_node("AffineGrid", ["theta", "size"], ["grid"], align_corners=align)
    model = make_model([node], {"theta": (theta.shape, "float32")}, ["grid"],
                       initializers={"size": np.array(size, "int64")}, opset=20)
    if align and 1 in size[2:]:
        # one position along an axis: onnxruntime puts it at 1, ONNX's reference at -1,
        # PyTorch (and relaylang) at 0, the centre
        (got,) = run_relay(model, {"theta": theta})
        axes = [np.zeros(1) if n == 1 else np.linspace(-1, 1, n) for n in size[2:]]
        base = np.stack(list(np.meshgrid(*axes, indexing="ij"))[::-1] + [np.ones(size[2:])], -1)
        want = np.einsum("...j,ncj->n...c", base, theta)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        return
    check_model(model, {"theta": theta})


def test_affine_grid_into_grid_sample():
    theta = np.array([[[0.8, -0.3, 0.1], [0.4, 1.1, -0.2]]], "float32")
    x = _rng("ag").standard_normal((1, 2, 5, 6)).astype("float32")
    nodes = [helper.make_node("AffineGrid", ["theta", "size"], ["grid"]),
             helper.make_node("GridSample", ["x", "grid"], ["y"], padding_mode="border")]
    model = make_model(nodes, {"theta": (theta.shape, "float32"), "x": (x.shape, "float32")},
                       ["y"], initializers={"size": np.array([1, 2, 4, 3], "int64")}, opset=20)
    check_model(model, {"theta": theta, "x": x})


# ---------------------------------------------------------------- RoiAlign

ROIS = np.array([[0.5, 1.0, 4.0, 3.5], [-2, -1, 9, 8], [3, 2, 3.2, 2.1], [6.5, 4.5, 7, 5],
                 [0, 0, 0.4, 0.3]], "float32")
BATCH = np.array([0, 1, 1, 0, 1], "int64")


@pytest.mark.parametrize("opset, ctm", [(10, None), (16, "half_pixel"),
                                        (16, "output_half_pixel")])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("ratio", [0, 1, 2])
def test_roi_align(opset, ctm, mode, ratio):
    x = _rng("roi", mode).standard_normal((2, 3, 5, 7)).astype("float32")
    kw = {} if ctm is None else {"coordinate_transformation_mode": ctm}
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], mode=mode,
                            output_height=2, output_width=3, sampling_ratio=ratio,
                            spatial_scale=0.8, **kw)
    model = make_model([node], {"x": (x.shape, "float32"), "rois": (ROIS.shape, "float32"),
                                "batch": (BATCH.shape, "int64")}, ["y"], opset=opset)
    check_model(model, {"x": x, "rois": ROIS, "batch": BATCH})


def test_roi_align_one_pixel_image_and_one_bin():
    x = _rng("roi1").standard_normal((2, 1, 1, 1)).astype("float32")
    node = helper.make_node("RoiAlign", ["x", "rois", "batch"], ["y"], sampling_ratio=2)
    model = make_model([node], {"x": (x.shape, "float32"), "rois": (ROIS.shape, "float32"),
                                "batch": (BATCH.shape, "int64")}, ["y"], opset=16)
    check_model(model, {"x": x, "rois": ROIS, "batch": BATCH})


# ---------------------------------------------------------------- NonMaxSuppression

BOXES = np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9], [0, 10, 1, 11],
                   [0, 10.1, 1, 11.1], [0, 100, 1, 101], [1, 1, 0, 0]]], "float32")


def _nms_model(inputs: dict, center: int = 0, opset: int = 11):
    names = ["boxes", "scores", "limit", "iou", "score"]
    given = [n if n in inputs else "" for n in names]
    while given and not given[-1]:
        given.pop()
    node = helper.make_node("NonMaxSuppression", given, ["sel"], center_point_box=center)
    return make_model([node], {n: (v.shape, str(v.dtype)) for n, v in inputs.items()},
                      {"sel": (["selected", 3], "int64")}, opset=opset)


@pytest.mark.parametrize("limit, iou, score", [(3, 0.5, 0.0), (2, 0.5, None), (10, 0.0, 0.4),
                                               (0, 0.5, 0.0), (1, 0.9, None), (7, 1.0, -1.0)])
def test_nms(limit, iou, score):
    rng = _rng("nms", limit, iou)
    boxes = np.concatenate([BOXES, BOXES[:, ::-1]], axis=0)          # two batches
    scores = rng.random((2, 3, 7)).astype("float32")
    scores[0, 0, :3] = [0.9, 0.9, 0.5]                                # a tie
    inputs = {"boxes": boxes, "scores": scores, "limit": np.array([limit], "int64"),
              "iou": np.array([iou], "float32")}
    if score is not None:
        inputs["score"] = np.array([score], "float32")
    for opset in (10, 11):
        check_model(_nms_model(inputs, opset=opset), inputs)


def test_nms_center_point_box_and_scalar_inputs():
    boxes = np.array([[[0.5, 0.5, 1, 1], [0.5, 0.6, 1, 1], [0.5, 10.5, 1, 1], [0.5, 0.4, 1, 1]]],
                     "float32")
    scores = np.array([[[0.9, 0.8, 0.7, 0.95]]], "float32")
    inputs = {"boxes": boxes, "scores": scores, "limit": np.array(3, "int64"),
              "iou": np.array(0.5, "float32"), "score": np.array(0.0, "float32")}
    check_model(_nms_model(inputs, center=1), inputs)


def test_nms_only_boxes_and_scores_selects_nothing():
    inputs = {"boxes": BOXES, "scores": np.ones((1, 2, 7), "float32")}
    check_model(_nms_model(inputs), inputs)


# ---------------------------------------------------------------- MaxPool Indices, MaxUnpool

POOLS = [{"kernel_shape": [2, 2], "strides": [2, 2]},
         {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]},
         {"kernel_shape": [2, 3], "strides": [2, 1], "dilations": [2, 1], "pads": [1, 0, 0, 2]},
         {"kernel_shape": [3, 2], "strides": [2, 2], "ceil_mode": 1},
         {"kernel_shape": [3, 3], "strides": [2, 2], "auto_pad": "SAME_UPPER"},
         {"kernel_shape": [1, 1]}]


@pytest.mark.parametrize("attrs", POOLS)
@pytest.mark.parametrize("order", [0, 1])
@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_max_pool_with_indices(attrs, order, dtype):
    rng = _rng("pool", str(attrs), dtype)
    x = rng.integers(-5, 5, (2, 3, 5, 7)).astype(dtype)         # ties
    if dtype == "float32":
        x = x + rng.random(x.shape).astype(dtype) * (rng.random(x.shape) < 0.5)
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], storage_order=order, **attrs)
    model = make_model([node], {"x": (x.shape, dtype)}, ["y", "i"], opset=12)
    check_model(model, {"x": x})


def test_max_pool_without_indices_still_works_and_1d_indices_are_refused():
    x = _rng("p1").standard_normal((1, 2, 5, 5)).astype("float32")
    node = helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2])
    check_model(make_model([node], {"x": (x.shape, "float32")}, ["y"], opset=12), {"x": x})
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=[2])
    model = make_model([node], {"x": ((1, 2, 5), "float32")}, ["y", "i"], opset=12)
    with pytest.raises(OnnxImportError, match="2-D pooling only"):
        run_relay(model, {"x": np.zeros((1, 2, 5), "float32")})


@pytest.mark.parametrize("attrs, shape", [
    ({"kernel_shape": [2, 2], "strides": [2, 2]}, (1, 2, 6, 4)),
    ({"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1]}, (2, 1, 5, 7)),
    ({"kernel_shape": [2, 1], "strides": [1, 1]}, (1, 1, 3, 1))])
def test_max_pool_then_unpool(attrs, shape):
    x = _rng("unpool", shape).standard_normal(shape).astype("float32")
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs),
             helper.make_node("MaxUnpool", ["y", "i"], ["z"], **attrs)]
    model = make_model(nodes, {"x": (shape, "float32")}, ["z"], opset=11)
    check_model(model, {"x": x})


def test_max_unpool_with_output_shape():
    # output_shape equal to the unpooled shape (onnxruntime and ONNX's reference agree)
    x = _rng("unpool-shape").standard_normal((1, 2, 4, 4)).astype("float32")
    attrs = {"kernel_shape": [2, 2], "strides": [2, 2]}
    nodes = [helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs),
             helper.make_node("MaxUnpool", ["y", "i", "shape"], ["z"], **attrs)]
    model = make_model(nodes, {"x": (x.shape, "float32")}, {"z": ((1, 2, 4, 4), "float32")},
                       initializers={"shape": np.array([1, 2, 4, 4], "int64")}, opset=11)
    check_model(model, {"x": x})
    # a larger shape: the unpooled block at the start, zeros after (ONNX's reference and
    # conformance test; onnxruntime instead reads the indices as positions in that shape)
    y = np.array([[[[5, 6], [7, 8]]]], "float32")
    i = np.array([[[[5, 7], [13, 15]]]], "int64")
    node = helper.make_node("MaxUnpool", ["y", "i", "shape"], ["z"], **attrs)
    model = make_model([node], {"y": (y.shape, "float32"), "i": (i.shape, "int64")},
                       {"z": ((1, 1, 5, 5), "float32")},
                       initializers={"shape": np.array([1, 1, 5, 5], "int64")}, opset=11)
    for target in ("interp", "llvm"):
        (got,) = run_relay(model, {"y": y, "i": i}, target=target)
        want = np.zeros((1, 1, 5, 5), "float32")
        want[0, 0, 1, 1], want[0, 0, 1, 3], want[0, 0, 3, 1], want[0, 0, 3, 3] = 5, 6, 7, 8
        np.testing.assert_array_equal(got, want)


# ---------------------------------------------------------------- DeformConv

# (x, w, attrs, offset groups)
DEFORM = [((1, 2, 5, 6), (3, 2, 3, 3), {}, 1),
          ((2, 4, 5, 5), (4, 2, 2, 3), {"strides": [2, 1], "pads": [1, 0, 0, 2], "group": 2,
                                            "offset_group": 2}, 2),
          ((1, 3, 4, 7), (2, 3, 2, 2), {"dilations": [2, 3], "pads": [1, 1, 1, 1],
                                            "offset_group": 3}, 3),
          ((1, 1, 1, 1), (2, 1, 1, 1), {}, 1)]


@pytest.mark.parametrize("case", range(len(DEFORM)))
@pytest.mark.parametrize("extras", ["", "bias", "mask", "bias+mask"])
def test_deform_conv(case, extras):
    xshape, wshape, attrs, dg = DEFORM[case]
    rng = _rng("deform", case, extras)
    kh, kw = wshape[2:]
    s, d = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    p = attrs.get("pads", [0, 0, 0, 0])
    oh = (xshape[2] + p[0] + p[2] - (kh - 1) * d[0] - 1) // s[0] + 1
    ow = (xshape[3] + p[1] + p[3] - (kw - 1) * d[1] - 1) // s[1] + 1
    feeds = {"x": rng.standard_normal(xshape).astype("float32"),
             "w": rng.standard_normal(wshape).astype("float32"),
             "off": (rng.standard_normal((xshape[0], dg * kh * kw * 2, oh, ow)) * 1.5
                     ).astype("float32")}
    names = ["x", "w", "off"]
    if "bias" in extras:
        feeds["b"] = rng.standard_normal((wshape[0],)).astype("float32")
    if "mask" in extras:
        feeds["m"] = rng.random((xshape[0], dg * kh * kw, oh, ow)).astype("float32")
    names += ["b" if "bias" in extras else ""] + (["m"] if "mask" in extras else [])
    while not names[-1]:
        names.pop()
    node = helper.make_node("DeformConv", names, ["y"], **attrs)
    model = make_model([node], {k: (v.shape, "float32") for k, v in feeds.items()}, ["y"],
                       opset=19)
    check_model(model, feeds)


def test_grid_sample_float64():
    x = _rng("f64").standard_normal((1, 2, 4, 3))
    grid = _grid("f64", (1, 5, 2, 2)).astype("float64")
    for mode in ("linear", "nearest", "cubic"):
        node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode,
                                padding_mode="reflection")
        model = make_model([node], {"x": (x.shape, "float64"), "g": (grid.shape, "float64")},
                           ["y"], opset=20)
        check_model(model, {"x": x, "g": grid}, rtol=1e-9, atol=1e-12)
