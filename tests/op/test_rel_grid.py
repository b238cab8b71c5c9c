"""The grid family (image.grid_sample, image.affine_grid): relations, and kernels checked
against a point-by-point sampler written here (PyTorch's grid sampler as ONNX states it)
and against ONNX's reference GridSample / AffineGrid."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType

RNG = np.random.default_rng(7)


def arr(shape, dtype="float32", scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


AGREEMENT = [
    ("image.grid_sample", [T((1, 2, 3, 5)), T((1, 2, 4, 1))], {}),
    ("image.grid_sample", [T((2, 1, 1, 1), "float64"), T((2, 2, 3, 3), "float64")],
     {"method": "bicubic", "padding_mode": "reflection", "align_corners": False}),
    ("image.grid_sample", [T((1, 2, 3, 4, 5), "float16"), T((1, 3, 2, 1, 3), "float16")],
     {"layout": "NCDHW", "method": "nearest", "padding_mode": "border"}),
    ("image.affine_grid", [T((2, 2, 3))], {"target_shape": (3, 5)}),
    ("image.affine_grid", [T((1, 3, 4), "float64")], {"target_shape": (1, 2, 3),
                                                      "align_corners": False}),
    ("image.affine_grid", [T((3, 2, 3), "float16")], {"target_shape": (1, 1)}),
]


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    value = run(op, *[arr(t.shape, t.dtype) for t in types], **kw)
    assert value.shape == out.shape and str(value.dtype) == out.dtype


# ---------------------------------------------------------------- relations

def eq(a, b):
    return rl.structural_equal(a, b)


def test_relations():
    assert eq(rel("image.grid_sample", T((2, 3, 5, 6)), T((2, 2, 7, 1))), T((2, 3, 7, 1)))
    assert eq(rel("image.grid_sample", T((ANY, 3, 5, 6)), T((4, 2, 7, 1))), T((4, 3, 7, 1)))
    assert eq(rel("image.grid_sample", T((1, 3, 2, 5, 6)), T((1, 3, 4, 7, 1)),
                  layout="NCDHW"), T((1, 3, 4, 7, 1)))
    assert rel("image.grid_sample", IncompleteType(), T((1, 2, 1, 1))) is None
    assert eq(rel("image.affine_grid", T((4, 2, 3)), target_shape=(5, 1)), T((4, 2, 5, 1)))
    assert eq(rel("image.affine_grid", T((ANY, 3, 4)), target_shape=(2, 5, 1)),
              T((ANY, 3, 2, 5, 1)))


def test_relation_errors():
    rel_error("image.grid_sample", [T((2, 3, 5, 6)), T((3, 2, 7, 1))], "batch", arg=1)
    rel_error("image.grid_sample", [T((2, 3, 5, 6)), T((2, 3, 7, 1))], "grid must be", arg=1)
    rel_error("image.grid_sample", [T((2, 3, 5)), T((2, 2, 7, 1))], "rank 4", arg=0)
    rel_error("image.grid_sample", [T((2, 3, 5, 6), "int32"), T((2, 2, 7, 1))], "float",
              arg=0)
    rel_error("image.grid_sample", [T((2, 3, 5, 6)), T((2, 2, 7, 1))], "method",
              method="linear")
    rel_error("image.grid_sample", [T((2, 3, 5, 6)), T((2, 2, 7, 1))], "padding_mode",
              padding_mode="wrap")
    rel_error("image.grid_sample", [T((2, 3, 5, 6)), T((2, 2, 7, 1))], "layouts",
              layout="NHWC")
    rel_error("image.affine_grid", [T((2, 2, 3))], "(N, 3, 4)", arg=0, target_shape=(1, 2, 3))
    rel_error("image.affine_grid", [T((2, 2, 3))], "2 or 3", target_shape=(4,))
    rel_error("image.affine_grid", [T((2, 2, 3))], "positive", target_shape=(0, 3))
    rel_error("image.affine_grid", [T((2, 2, 3))], "needs a target_shape")


# ---------------------------------------------------------------- values

def _reflect(x, lo, hi):
    span = hi - lo
    if span <= 0:
        return lo
    if x < lo:
        d = lo - x
        k = int(d / span)
        r = d - k * span
        return lo + r if k % 2 == 0 else hi - r
    if x > hi:
        d = x - hi
        k = int(d / span)
        r = d - k * span
        return hi - r if k % 2 == 0 else lo + r
    return x


def _cubic(t):
    a = -0.75
    def k(s):
        s = abs(s)
        if s <= 1:
            return (a + 2) * s ** 3 - (a + 3) * s ** 2 + 1
        if s < 2:
            return a * s ** 3 - 5 * a * s ** 2 + 8 * a * s - 4 * a
        return 0.0
    return [k(t + 1), k(t), k(1 - t), k(2 - t)]


def naive_grid_sample(x, grid, method, padding, align):
    """Point by point: x (N, C, *S), grid (N, nd, *O) channel 0 = x (innermost)."""
    nd = x.ndim - 2
    dims = x.shape[2:]
    out = np.zeros(x.shape[:2] + grid.shape[2:])
    bounds = [(0.0, n - 1.0) if align else (-0.5, n - 0.5) for n in dims]

    def pixel(n, c, idx):
        pos = []
        for k, i in enumerate(idx):
            if padding == "zeros":
                if not 0 <= i < dims[k]:
                    return 0.0
            elif padding == "border":
                i = min(max(i, 0), dims[k] - 1)
            else:
                i = int(_reflect(i, *bounds[k]))
            pos.append(i)
        return float(x[(n, c, *pos)])

    for n in range(x.shape[0]):
        for o in itertools.product(*[range(d) for d in grid.shape[2:]]):
            coords = []
            for k in range(nd):
                g = float(grid[(n, nd - 1 - k, *o)])
                v = (g + 1) / 2 * (dims[k] - 1) if align else ((g + 1) * dims[k] - 1) / 2
                if method == "nearest":
                    v = float(np.rint(v))
                lo, hi = bounds[k]
                if method != "bicubic" and (v < lo or v > hi):
                    if padding == "border":
                        v = min(max(v, 0), dims[k] - 1)
                    elif padding == "reflection":
                        v = _reflect(v, lo, hi)
                coords.append(v)
            for c in range(x.shape[1]):
                if method == "nearest":
                    out[(n, c, *o)] = pixel(n, c, [int(v) for v in coords])
                    continue
                taps = []
                for v in coords:
                    f = math.floor(v)
                    t = v - f
                    if method == "bilinear":
                        taps.append([(f, 1 - t), (f + 1, t)])
                    else:
                        taps.append([(f + j - 1, w) for j, w in enumerate(_cubic(t))])
                total = 0.0
                for combo in itertools.product(*taps):
                    w = math.prod(p[1] for p in combo)
                    total += w * pixel(n, c, [p[0] for p in combo])
                out[(n, c, *o)] = total
    return out


METHODS = ["nearest", "bilinear", "bicubic"]
PADDINGS = ["zeros", "border", "reflection"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("padding", PADDINGS)
@pytest.mark.parametrize("align", [True, False])
def test_grid_sample_2d_matches_point_by_point(method, padding, align):
    x = arr((2, 3, 4, 5))
    grid = arr((2, 2, 3, 7), scale=1.6)
    grid[0, :, 0, 0] = [1.0, -1.0]          # corners and exact half-way points
    grid[0, :, 0, 1] = [0.25, 0.5]
    got = run("image.grid_sample", x, grid, method=method, padding_mode=padding,
              align_corners=align)
    want = naive_grid_sample(x, grid, method, padding, align)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("padding", PADDINGS)
def test_grid_sample_3d_and_size_one(method, padding):
    x = arr((1, 2, 3, 1, 4))
    grid = arr((1, 3, 2, 3, 1), scale=1.4)
    for align in (True, False):
        got = run("image.grid_sample", x, grid, method=method, padding_mode=padding,
                  align_corners=align, layout="NCDHW")
        want = naive_grid_sample(x, grid, method, padding, align)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_identity_grid_returns_the_data():
    x = arr((1, 2, 3, 4))
    theta = np.array([[[1, 0, 0], [0, 1, 0]]], "float32")
    for align in (True, False):
        grid = run("image.affine_grid", theta, target_shape=(3, 4), align_corners=align)
        for method in METHODS:
            got = run("image.grid_sample", x, grid, method=method, align_corners=align)
            np.testing.assert_allclose(got, x, rtol=1e-5, atol=1e-5)


def test_affine_grid_values():
    theta = arr((2, 2, 3))
    for align in (True, False):
        got = run("image.affine_grid", theta, target_shape=(3, 1), align_corners=align)
        ys = np.array([-1, 0, 1.0]) if align else np.array([-2 / 3, 0, 2 / 3])
        xs = np.array([0.0])                   # one position: the centre either way
        for n, c, i, j in itertools.product(range(2), range(2), range(3), range(1)):
            want = theta[n, c, 0] * xs[j] + theta[n, c, 1] * ys[i] + theta[n, c, 2]
            assert abs(got[n, c, i, j] - want) < 1e-6
    theta3 = arr((1, 3, 4), "float64")
    got = run("image.affine_grid", theta3, target_shape=(2, 1, 3))
    zs, ys, xs = np.array([-1, 1.0]), np.array([0.0]), np.array([-1, 0, 1.0])
    for c, d, h, w in itertools.product(range(3), range(2), range(1), range(3)):
        want = (theta3[0, c, 0] * xs[w] + theta3[0, c, 1] * ys[h] + theta3[0, c, 2] * zs[d]
                + theta3[0, c, 3])
        assert abs(got[0, c, d, h, w] - want) < 1e-12


def test_against_onnx_reference():
    pytest.importorskip("onnx")
    from onnx.reference.ops.op_grid_sample import GridSample
    x = arr((1, 2, 5, 3))
    grid = arr((1, 4, 6, 2), scale=1.5)
    names = {"bilinear": "linear", "bicubic": "cubic", "nearest": "nearest"}
    for method, padding, align in itertools.product(METHODS, PADDINGS, (0, 1)):
        if method == "bicubic" and padding != "zeros":
            continue    # the reference also pads bicubic's coordinate; PyTorch does not
        ref = GridSample.__new__(GridSample)
        ref.mode, ref.padding_mode, ref.align_corners = names[method], padding, align
        want = ref._run(x, grid)[0]
        got = run("image.grid_sample", x, grid.transpose(0, 3, 1, 2).copy(), method=method,
                  padding_mode=padding, align_corners=bool(align))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                   err_msg=f"{method} {padding} {align}")
