"""The deform family (nn.deformable_conv2d, nn.modulated_deformable_conv2d): relations,
and kernels against a sample-by-sample loop written here and ONNX's reference
DeformConv."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY

RNG = np.random.default_rng(31)


def arr(shape, dtype="float32", scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


AGREEMENT = [
    ("nn.deformable_conv2d", [T((1, 2, 5, 6)), T((1, 18, 3, 4)), T((3, 2, 3, 3))], {}),
    ("nn.deformable_conv2d", [T((2, 4, 5, 5), "float64"), T((2, 24, 3, 5), "float64"),
                              T((4, 2, 2, 3), "float64")],
     {"strides": (2, 1), "padding": (1, 0, 0, 2), "groups": 2, "deformable_groups": 2}),
    ("nn.modulated_deformable_conv2d", [T((1, 1, 1, 1), "float16"), T((1, 2, 1, 1), "float16"),
                                        T((2, 1, 1, 1), "float16"), T((1, 1, 1, 1), "float16")],
     {}),
    ("nn.modulated_deformable_conv2d", [T((1, 3, 4, 7)), T((1, 24, 4, 6)), T((2, 3, 2, 2)),
                                        T((1, 12, 4, 6))],
     {"dilation": (2, 3), "padding": (1, 1), "deformable_groups": 3}),
]


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    value = run(op, *[arr(t.shape, t.dtype) for t in types], **kw)
    assert value.shape == out.shape and str(value.dtype) == out.dtype


def test_relations():
    out = rel("nn.deformable_conv2d", T((ANY, 4, 7, 9)), T((ANY, 18, 4, 5)), T((6, 2, 3, 3)),
              strides=(2, 2), padding=(1, 1), groups=2)
    assert rl.structural_equal(out, T((ANY, 6, 4, 5)))
    out = rel("nn.modulated_deformable_conv2d", T((1, 2, 5, 6)), T((1, 18, 3, 4)),
              T((3, 2, 3, 3)), T((1, 9, 3, 4)), out_dtype="float64")
    assert rl.structural_equal(out, T((1, 3, 3, 4), "float64"))


def test_relation_errors():
    d, w = T((1, 2, 5, 6)), T((3, 2, 3, 3))
    rel_error("nn.deformable_conv2d", [d, T((1, 16, 3, 4)), w], "offset must be", arg=1)
    rel_error("nn.deformable_conv2d", [d, T((1, 18, 3, 5)), w], "offset must be", arg=1)
    rel_error("nn.deformable_conv2d", [d, T((1, 18, 3, 4)), T((3, 1, 3, 3))], "channels",
              arg=2)
    rel_error("nn.deformable_conv2d", [d, T((1, 18, 3, 4)), w], "deformable groups", arg=0,
              deformable_groups=3)
    rel_error("nn.deformable_conv2d", [d, T((1, 18, 3, 4)), w], "kernel_size", arg=2,
              kernel_size=(2, 2))
    rel_error("nn.deformable_conv2d", [d, T((1, 18, 3, 4)), w], "NCHW",
              data_layout="NHWC")
    rel_error("nn.deformable_conv2d", [T((1, 2, 2, 2)), T((1, 18, 1, 1)), w], "too small",
              arg=0)
    rel_error("nn.modulated_deformable_conv2d", [d, T((1, 18, 3, 4)), w, T((1, 18, 3, 4))],
              "mask must be", arg=3)


def naive(x, off, w, mask, strides, pads, dil, groups, dg):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    oh, ow = off.shape[2:]
    out = np.zeros((n, o, oh, ow))

    def bilinear(img, y, xx):
        total = 0.0
        y0, x0 = math.floor(y), math.floor(xx)
        for yy, xc in itertools.product((y0, y0 + 1), (x0, x0 + 1)):
            if 0 <= yy < h and 0 <= xc < wd:
                total += (1 - abs(y - yy)) * (1 - abs(xx - xc)) * img[yy, xc]
        return total

    for b, oo, i, j in itertools.product(range(n), range(o), range(oh), range(ow)):
        g = oo // (o // groups)
        for r, a, e in itertools.product(range(ci), range(kh), range(kw)):
            ch = g * ci + r
            t = ((ch // (c // dg)) * kh + a) * kw + e
            y = i * strides[0] - pads[0] + a * dil[0] + off[b, 2 * t, i, j]
            xx = j * strides[1] - pads[1] + e * dil[1] + off[b, 2 * t + 1, i, j]
            m = 1.0 if mask is None else mask[b, t, i, j]
            out[b, oo, i, j] += w[oo, r, a, e] * m * bilinear(x[b, ch], float(y), float(xx))
    return out


@pytest.mark.parametrize("case", [
    ((1, 2, 5, 6), (3, 2, 3, 3), (1, 1), (0, 0, 0, 0), (1, 1), 1, 1),
    ((2, 4, 5, 5), (4, 2, 2, 3), (2, 1), (1, 0, 0, 2), (1, 1), 2, 2),
    ((1, 3, 4, 7), (2, 3, 2, 2), (1, 1), (1, 1, 1, 1), (2, 3), 1, 3),
    ((1, 1, 1, 1), (2, 1, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), 1, 1)])
@pytest.mark.parametrize("modulated", [False, True])
def test_kernel_matches_loops(case, modulated):
    dshape, wshape, strides, pads, dil, groups, dg = case
    kh, kw = wshape[2:]
    oh = (dshape[2] + pads[0] + pads[2] - (kh - 1) * dil[0] - 1) // strides[0] + 1
    ow = (dshape[3] + pads[1] + pads[3] - (kw - 1) * dil[1] - 1) // strides[1] + 1
    x, w = arr(dshape), arr(wshape)
    off = arr((dshape[0], dg * kh * kw * 2, oh, ow), scale=1.5)
    mask = RNG.random((dshape[0], dg * kh * kw, oh, ow)).astype("float32") if modulated \
        else None
    kw_ = {"strides": strides, "padding": pads, "dilation": dil, "groups": groups,
           "deformable_groups": dg}
    got = (run("nn.modulated_deformable_conv2d", x, off, w, mask, **kw_) if modulated
           else run("nn.deformable_conv2d", x, off, w, **kw_))
    want = naive(x, off, w, mask, strides, pads[:2], dil, groups, dg)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_zero_offsets_are_a_convolution():
    x, w = arr((1, 4, 6, 5)), arr((6, 2, 3, 2))
    off = np.zeros((1, 2 * 3 * 2 * 2, 3, 6), "float32")
    got = run("nn.deformable_conv2d", x, off, w, strides=(2, 1), padding=(1, 1), groups=2,
              deformable_groups=2)
    want = run("nn.conv2d", x, w, strides=(2, 1), padding=(1, 1), groups=2)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_against_onnx_reference():
    pytest.importorskip("onnx")
    from onnx.reference.ops.op_deform_conv import _deform_conv_implementation
    x, w = arr((1, 4, 5, 5)), arr((2, 2, 2, 2))
    off = arr((1, 2 * 2 * 2 * 2, 5, 5), scale=1.2)
    mask = RNG.random((1, 2 * 4, 5, 5)).astype("float32")
    want = _deform_conv_implementation(x, w, off, None, mask, [1, 1], 2, [2, 2], 2,
                                       [1, 1, 0, 0], [1, 1])
    got = run("nn.modulated_deformable_conv2d", x, off, w, mask, padding=(1, 1, 0, 0),
              groups=2, deformable_groups=2)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
