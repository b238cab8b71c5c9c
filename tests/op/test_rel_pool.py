"""Type relations and NumPy kernels of the pools: max/avg pool 1d/2d/3d (padding
forms, dilation, ceil_mode, count_include_pad, layouts), global and adaptive
pools; kernels checked against window-by-window loops written here."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run, shape

from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType
from relaylang.op import get_op_def

RNG = np.random.default_rng(2)


def arr(shape, dtype="float32"):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-20, 20, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def naive_pool(x, kind, ksize, strides, dilation, pads, ceil_mode, include_pad):
    """Pool x (N, C, *S) window by window; pads = [(before, after)] per pooled axis."""
    nd = len(ksize)
    sizes = x.shape[2:]
    outs = [(sizes[j] + sum(pads[j]) - dilation[j] * (ksize[j] - 1) - 1
             + (strides[j] - 1 if ceil_mode else 0)) // strides[j] + 1 for j in range(nd)]
    out = np.zeros(x.shape[:2] + tuple(outs), dtype=np.float64)
    lowest = np.finfo(x.dtype).min if x.dtype.kind == "f" else np.iinfo(x.dtype).min
    for pos in itertools.product(*[range(o) for o in outs]):
        axes = [[pos[j] * strides[j] - pads[j][0] + k * dilation[j] for k in range(ksize[j])]
                for j in range(nd)]
        inside = [[p for p in a if 0 <= p < sizes[j]] for j, a in enumerate(axes)]
        values = [x[(slice(None), slice(None)) + idx] for idx in itertools.product(*inside)]
        if kind == "max":
            full = all(len(i) == ksize[j] for j, i in enumerate(inside))
            best = np.max(values, axis=0) if values else np.full(x.shape[:2], lowest)
            out[(slice(None), slice(None)) + pos] = best if full else np.maximum(best, lowest)
        else:
            count = np.prod([sum(-pads[j][0] <= p < sizes[j] + pads[j][1] for p in a)
                             for j, a in enumerate(axes)]) if include_pad else len(values)
            total = np.sum(values, axis=0) if values else 0
            if x.dtype.kind in "iu":
                out[(slice(None), slice(None)) + pos] = np.trunc(total / max(count, 1))
            else:
                out[(slice(None), slice(None)) + pos] = total / max(count, 1)
    return out.astype(x.dtype)


POOL2D = [
    # attrs, pads as (before, after) per axis
    ({"pool_size": (2, 2), "strides": (2, 2)}, [(0, 0), (0, 0)]),
    ({"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1)}, [(1, 1), (1, 1)]),
    ({"pool_size": (3, 2), "strides": (2, 3), "padding": (1, 0, 2, 1), "ceil_mode": True},
     [(1, 2), (0, 1)]),
    ({"pool_size": (2, 2), "dilation": (2, 3), "padding": (1,)}, [(1, 1), (1, 1)]),
    ({"pool_size": (3, 3), "strides": (3, 3), "ceil_mode": True, "padding": (1, 1)},
     [(1, 1), (1, 1)]),
]


@pytest.mark.parametrize("kind, include", [("max", False), ("avg", False), ("avg", True)])
@pytest.mark.parametrize("kw, pads", POOL2D)
def test_pool2d_against_naive(kind, include, kw, pads):
    x = arr((2, 3, 7, 8))
    extra = {"count_include_pad": include} if kind == "avg" else {}
    op = f"nn.{kind}_pool2d"
    want = naive_pool(x, kind, kw["pool_size"], kw.get("strides", (1, 1)),
                      kw.get("dilation", (1, 1)), pads, kw.get("ceil_mode", False), include)
    assert shape(op, T(x.shape), **kw, **extra) == want.shape
    np.testing.assert_allclose(run(op, x, **kw, **extra), want, rtol=1e-5, atol=1e-6)


def test_pool_nhwc_1d_3d_and_integers():
    x = arr((2, 7, 8, 3))
    kw = {"pool_size": (3, 3), "strides": (2, 2), "padding": (1, 1), "layout": "NHWC"}
    want = naive_pool(x.transpose(0, 3, 1, 2), "avg", (3, 3), (2, 2), (1, 1),
                      [(1, 1), (1, 1)], False, False).transpose(0, 2, 3, 1)
    assert shape("nn.avg_pool2d", T(x.shape), **kw) == want.shape
    np.testing.assert_allclose(run("nn.avg_pool2d", x, **kw), want, rtol=1e-5, atol=1e-6)
    x1 = arr((1, 2, 9))
    kw = {"pool_size": (3,), "strides": (2,), "padding": (1, 2), "ceil_mode": True}
    want = naive_pool(x1, "max", (3,), (2,), (1,), [(1, 2)], True, False)
    assert shape("nn.max_pool1d", T(x1.shape), **kw) == want.shape
    np.testing.assert_array_equal(run("nn.max_pool1d", x1, **kw), want)
    x3 = arr((1, 2, 4, 5, 3))
    kw = {"pool_size": (2, 2, 2), "padding": (1, 0, 1), "count_include_pad": True}
    want = naive_pool(x3, "avg", (2, 2, 2), (1, 1, 1), (1, 1, 1), [(1, 1), (0, 0), (1, 1)],
                      False, True)
    np.testing.assert_allclose(run("nn.avg_pool3d", x3, **kw), want, rtol=1e-5, atol=1e-6)
    xi = arr((1, 1, 5, 5), "int32")
    kw = {"pool_size": (2, 2), "padding": (1, 1)}
    got = run("nn.avg_pool2d", xi, **kw)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive_pool(xi, "avg", (2, 2), (1, 1), (1, 1),
                                                  [(1, 1), (1, 1)], False, False))
    got = run("nn.max_pool2d", xi, **kw)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive_pool(xi, "max", (2, 2), (1, 1), (1, 1),
                                                  [(1, 1), (1, 1)], False, False))


def test_pool_packed_layout():
    x = arr((1, 2, 6, 6, 4))                       # NCHW4c: pooled over H and W only
    got = run("nn.max_pool2d", x, pool_size=(2, 2), strides=(2, 2), layout="NCHW4c")
    assert shape("nn.max_pool2d", T(x.shape), pool_size=(2, 2), strides=(2, 2),
                 layout="NCHW4c") == got.shape == (1, 2, 3, 3, 4)
    np.testing.assert_array_equal(got, x.reshape(1, 2, 3, 2, 3, 2, 4).max(axis=(3, 5)))


def test_pool_relation_edge_cases():
    assert shape("nn.max_pool2d", T((ANY, 3, 32, ANY)), pool_size=(2, 2), strides=(2, 2)) \
        == (ANY, 3, 16, ANY)
    assert shape("nn.max_pool2d", T((1, 3, 5, 5)), pool_size=(2, 2), strides=(2, 2),
                 ceil_mode=True) == (1, 3, 3, 3)
    assert shape("nn.max_pool2d", T((1, 3, 5, 5)), pool_size=(2,), strides=(2,)) \
        == (1, 3, 2, 2)
    assert rel("nn.max_pool2d", IncompleteType(), pool_size=(2, 2)) is None
    assert rel("nn.avg_pool2d", T((1, 1, 4, 4), "float16"), pool_size=(2, 2)).dtype \
        == "float16"


def test_pool_relation_errors():
    x = [T((1, 3, 4, 4))]
    e = rel_error("nn.max_pool2d", x, "the input is too small: dimension 2 has size 4", 0,
                  pool_size=(5, 2))
    assert e.dim == 2
    rel_error("nn.max_pool2d", x, "pool_size is required", None)
    rel_error("nn.max_pool2d", x, "padding must have 1, 2, 4 values", None, pool_size=(2, 2),
              padding=(1, 1, 1))
    rel_error("nn.max_pool2d", x, "padding must be non-negative", None, pool_size=(2, 2),
              padding=(-1,))
    rel_error("nn.max_pool2d", x, "strides must be positive", None, pool_size=(2, 2),
              strides=(0, 1))
    rel_error("nn.max_pool2d", x, "pool_size must have 2 values, got 3", None,
              pool_size=(2, 2, 2))
    rel_error("nn.max_pool2d", [T((1, 3, 4))], "layout NCHW has 4 axes but data has rank 3", 0,
              pool_size=(2, 2))
    rel_error("nn.max_pool2d", x, "layout 'NCHW4h' splits the H axis", None, pool_size=(2, 2),
              layout="NCHW4h")
    rel_error("nn.max_pool1d", [T((1, 3, 4))], "layout 'NCH' has no W axis", None,
              pool_size=(2,), layout="NCH")
    rel_error("nn.max_pool3d", [T((1, 3, 4, 4, 4))], "padding must have 1, 3, 6 values",
              None, pool_size=(2, 2, 2), padding=(1, 1))


def test_global_pools():
    x = arr((2, 3, 4, 5))
    assert shape("nn.global_avg_pool2d", T(x.shape)) == (2, 3, 1, 1)
    assert shape("nn.global_max_pool2d", T((2, 4, 5, 3)), layout="NHWC") == (2, 1, 1, 3)
    assert shape("nn.global_max_pool2d", T((ANY, 3, ANY, ANY))) == (ANY, 3, 1, 1)
    np.testing.assert_allclose(run("nn.global_avg_pool2d", x), x.mean(axis=(2, 3),
                                                                       keepdims=True), rtol=1e-5)
    np.testing.assert_array_equal(run("nn.global_max_pool2d", x.transpose(0, 2, 3, 1),
                                      layout="NHWC"),
                                  x.max(axis=(2, 3), keepdims=True).transpose(0, 2, 3, 1))
    rel_error("nn.global_avg_pool2d", [T((2, 3, 4))], "layout NCHW has 4 axes", 0)


def naive_adaptive(x, kind, outs):
    """Adaptive pool of x (N, C, *S): window [floor(i*n/o), ceil((i+1)*n/o)) per axis."""
    sizes = x.shape[2:]
    out = np.zeros(x.shape[:2] + tuple(outs), dtype=np.float64)
    for pos in itertools.product(*[range(o) for o in outs]):
        index = tuple(slice(int(np.floor(i * n / o)), int(np.ceil((i + 1) * n / o)))
                      for i, n, o in zip(pos, sizes, outs))
        window = x[(slice(None), slice(None)) + index]
        axes = tuple(range(2, x.ndim))
        if kind == "max":
            out[(slice(None), slice(None)) + pos] = window.max(axis=axes)
        elif x.dtype.kind in "iu":
            out[(slice(None), slice(None)) + pos] = np.trunc(window.sum(axis=axes)
                                                             / window[0, 0].size)
        else:
            out[(slice(None), slice(None)) + pos] = window.mean(axis=axes)
    return out.astype(x.dtype)


@pytest.mark.parametrize("kind", ["max", "avg"])
def test_adaptive_pools_against_naive(kind):
    x = arr((2, 3, 7, 10))
    op = f"nn.adaptive_{kind}_pool2d"
    assert shape(op, T(x.shape), output_size=(3, 4)) == (2, 3, 3, 4)
    np.testing.assert_allclose(run(op, x, output_size=(3, 4)), naive_adaptive(x, kind, (3, 4)),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(run(op, x, output_size=(5,)), naive_adaptive(x, kind, (5, 5)),
                               rtol=1e-5, atol=1e-6)
    x1 = arr((1, 2, 11))
    np.testing.assert_allclose(run(f"nn.adaptive_{kind}_pool1d", x1, output_size=(4,)),
                               naive_adaptive(x1, kind, (4,)), rtol=1e-5, atol=1e-6)
    x3 = arr((1, 2, 5, 4, 6))
    np.testing.assert_allclose(run(f"nn.adaptive_{kind}_pool3d", x3, output_size=(2, 3, 4)),
                               naive_adaptive(x3, kind, (2, 3, 4)), rtol=1e-5, atol=1e-6)
    xi = arr((1, 2, 5, 7), "int32")
    got = run(op, xi, output_size=(2, 3))
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, naive_adaptive(xi, kind, (2, 3)))
    xh = arr((1, 5, 7, 2))
    np.testing.assert_allclose(run(op, xh, output_size=(2, 3), layout="NHWC"),
                               naive_adaptive(xh.transpose(0, 3, 1, 2), kind, (2, 3))
                               .transpose(0, 2, 3, 1), rtol=1e-5, atol=1e-6)


def test_adaptive_relation():
    assert shape("nn.adaptive_avg_pool2d", T((1, 3, 8, 9))) == (1, 3, 8, 9)   # no output_size
    assert shape("nn.adaptive_avg_pool2d", T((1, 3, ANY, 9)), output_size=(1,)) == (1, 3, 1, 1)
    assert shape("nn.adaptive_max_pool3d", T((1, 2, 5, 5, 5)), output_size=(1, 2, 3)) \
        == (1, 2, 1, 2, 3)
    assert shape("nn.adaptive_max_pool1d", T((1, 2, 5)), output_size=(ANY,)) == (1, 2, ANY)
    rel_error("nn.adaptive_avg_pool2d", [T((1, 3, 8, 8))], "output_size must have 1 or 2 "
              "values, got 3", None, output_size=(1, 2, 3))
    rel_error("nn.adaptive_avg_pool2d", [T((1, 3, 8, 8))], "output_size must be positive",
              None, output_size=(0, 2))


AGREEMENT = [
    ("nn.max_pool1d", [T((1, 2, 9))], {"pool_size": (3,), "strides": (2,), "ceil_mode": True}),
    ("nn.max_pool2d", [T((1, 2, 6, 7), "int8")], {"pool_size": (2, 3), "padding": (1,)}),
    ("nn.max_pool3d", [T((1, 2, 4, 4, 4))], {"pool_size": (2, 2, 2), "dilation": (2, 1, 1)}),
    ("nn.avg_pool1d", [T((1, 2, 9), "float64")], {"pool_size": (2,), "padding": (1,)}),
    ("nn.avg_pool2d", [T((1, 6, 7, 2))], {"pool_size": (3, 3), "layout": "NHWC",
                                          "count_include_pad": True, "padding": (1, 1)}),
    ("nn.avg_pool3d", [T((1, 2, 5, 4, 4))], {"pool_size": (2, 2, 2), "strides": (2, 2, 2),
                                             "ceil_mode": True}),
    ("nn.global_max_pool2d", [T((1, 2, 3, 4))], {}),
    ("nn.global_avg_pool2d", [T((1, 3, 4, 2), "int16")], {"layout": "NHWC"}),
    ("nn.adaptive_max_pool1d", [T((1, 2, 7))], {"output_size": (3,)}),
    ("nn.adaptive_avg_pool1d", [T((1, 2, 7))], {}),
    ("nn.adaptive_max_pool2d", [T((1, 2, 7, 5))], {"output_size": (2, 4)}),
    ("nn.adaptive_avg_pool2d", [T((1, 2, 7, 5))], {"output_size": (1,)}),
    ("nn.adaptive_max_pool3d", [T((1, 2, 3, 4, 5))], {"output_size": (2, 2, 2)}),
    ("nn.adaptive_avg_pool3d", [T((1, 3, 4, 5, 2))], {"output_size": (2, 3, 1),
                                                      "layout": "NDHWC"}),
]


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    value = run(op, *[arr(t.shape, t.dtype) for t in types], **kw)
    assert value.shape == out.shape and str(value.dtype) == out.dtype


def test_every_pool_has_relation_and_kernel():
    from relaylang.op.pool import POOLS
    covered = {a[0] for a in AGREEMENT}
    for name in POOLS:
        d = get_op_def(name)
        assert d.type_rel is not None and d.kernel is not None, name
        assert name in covered, name
