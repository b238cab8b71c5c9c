"""Type relations and NumPy kernels of the nn ops (convolutions, dense layers,
activations, normalisations, padding, resampling) and image.resize2d: shape
rules, `?` dims, every error message, kernel output agreeing with the relation,
and kernels checked against direct implementations written here (the
convolutions against a naive sliding-window loop)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run, shape

from relaylang.ir.node import ANY
from relaylang.ir.types import IncompleteType, TupleType
from relaylang.op import get_op_def

RNG = np.random.default_rng(1)


def arr(shape, dtype="float32", high=None):
    if np.dtype(dtype).kind in "iu":
        return RNG.integers(-3 if np.dtype(dtype).kind == "i" else 0, high or 4,
                            size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


# ---------------------------------------------------------------- naive convolutions

def naive_conv(x, w, strides, pads, dilation, groups):
    """Direct convolution of x (N, C, *S) with w (O, C/g, *K); pads = [(before, after)]."""
    nd = x.ndim - 2
    xp = np.pad(x.astype(np.float64), [(0, 0), (0, 0)] + list(pads))
    ksize = w.shape[2:]
    out_sp = [(xp.shape[2 + j] - dilation[j] * (ksize[j] - 1) - 1) // strides[j] + 1
              for j in range(nd)]
    o_per_g, c_per_g = w.shape[0] // groups, w.shape[1]
    out = np.zeros((x.shape[0], w.shape[0], *out_sp))
    for n, o in itertools.product(range(x.shape[0]), range(w.shape[0])):
        g = o // o_per_g
        for pos in itertools.product(*[range(s) for s in out_sp]):
            window = xp[(n, slice(g * c_per_g, (g + 1) * c_per_g)) + tuple(
                slice(pos[j] * strides[j], pos[j] * strides[j] + dilation[j] * (ksize[j] - 1) + 1,
                      dilation[j]) for j in range(nd))]
            out[(n, o) + pos] = (window * w[o]).sum()
    return out


def naive_conv_transpose(x, w, strides, pads, dilation, groups, output_padding):
    """Scatter each input value through the kernel; w is (C, O/g, *K)."""
    nd = x.ndim - 2
    ksize = w.shape[2:]
    c_per_g, o_per_g = x.shape[1] // groups, w.shape[1]
    full = [(x.shape[2 + j] - 1) * strides[j] + dilation[j] * (ksize[j] - 1) + 1
            + output_padding[j] for j in range(nd)]
    out = np.zeros((x.shape[0], o_per_g * groups, *full))
    for n, c in itertools.product(range(x.shape[0]), range(x.shape[1])):
        g = c // c_per_g
        for pos in itertools.product(*[range(s) for s in x.shape[2:]]):
            for k in itertools.product(*[range(s) for s in ksize]):
                at = tuple(pos[j] * strides[j] + k[j] * dilation[j] for j in range(nd))
                out[(n, slice(g * o_per_g, (g + 1) * o_per_g)) + at] += \
                    x[(n, c) + pos] * w[(c, slice(None)) + k]
    crop = tuple(slice(pads[j][0], full[j] - pads[j][1]) for j in range(nd))
    return out[(slice(None), slice(None)) + crop]


CONV2D = [
    # data shape, weight shape (OIHW), attrs, pads as (before, after) per axis
    ((1, 3, 7, 6), (4, 3, 3, 3), {}, [(0, 0), (0, 0)]),
    ((2, 4, 8, 7), (6, 2, 3, 2), {"strides": (2, 1), "padding": (1, 2, 0, 1), "groups": 2},
     [(1, 0), (2, 1)]),
    ((1, 3, 9, 9), (3, 3, 3, 3), {"dilation": (2, 2), "padding": (2,)}, [(2, 2), (2, 2)]),
    ((1, 4, 6, 6), (8, 1, 3, 3), {"groups": 4, "padding": (1, 1), "strides": (2, 2)},
     [(1, 1), (1, 1)]),                                       # depthwise, multiplier 2
]


@pytest.mark.parametrize("dshape, wshape, kw, pads", CONV2D)
def test_conv2d_nchw_against_naive(dshape, wshape, kw, pads):
    x, w = arr(dshape), arr(wshape)
    want = naive_conv(x, w, kw.get("strides", (1, 1)), pads, kw.get("dilation", (1, 1)),
                      kw.get("groups", 1))
    assert shape("nn.conv2d", T(dshape), T(wshape), **kw) == want.shape
    np.testing.assert_allclose(run("nn.conv2d", x, w, **kw), want, rtol=1e-4, atol=1e-4)


def test_conv2d_nhwc_hwio_and_out_dtype():
    x = arr((2, 4, 6, 6))
    kw = {"padding": (1, 1), "strides": (2, 2), "groups": 2}
    rel_error("nn.conv2d", [T((2, 6, 6, 4)), T((3, 3, 2, 5))], "which groups=2 does not divide",
              1, data_layout="NHWC", kernel_layout="HWIO", **kw)
    w = arr((6, 2, 3, 3))
    want = naive_conv(x, w, (2, 2), [(1, 1), (1, 1)], (1, 1), 2)
    got = run("nn.conv2d", x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0),
              data_layout="NHWC", kernel_layout="HWIO", **kw)
    out = rel("nn.conv2d", T((2, 6, 6, 4)), T((3, 3, 2, 6)), data_layout="NHWC",
              kernel_layout="HWIO", **kw)
    assert out.shape == got.shape == (2, 3, 3, 6)
    np.testing.assert_allclose(got, want.transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
    xi, wi = arr((1, 2, 4, 4), "int8"), arr((3, 2, 2, 2), "int8")
    out = rel("nn.conv2d", T((1, 2, 4, 4), "int8"), T((3, 2, 2, 2), "int8"), out_dtype="int32",
              out_layout="NHWC")
    got = run("nn.conv2d", xi, wi, out_dtype="int32", out_layout="NHWC")
    assert (out.shape, out.dtype) == (got.shape, str(got.dtype)) == ((1, 3, 3, 3), "int32")
    np.testing.assert_array_equal(got, naive_conv(xi, wi, (1, 1), [(0, 0)] * 2, (1, 1), 1)
                                  .transpose(0, 2, 3, 1))


def test_depthwise_nhwc_hwoi_against_naive():
    x, w = arr((1, 6, 6, 4)), arr((3, 3, 4, 2))             # HWOI: O = channels, I = multiplier
    kw = {"groups": 4, "data_layout": "NHWC", "kernel_layout": "HWOI", "padding": (1, 1)}
    # TVM's depthwise weight with a multiplier: (C, M) in OIHW terms, 8 output channels
    want = naive_conv(x.transpose(0, 3, 1, 2), w.transpose(2, 3, 0, 1).reshape(8, 1, 3, 3),
                      (1, 1), [(1, 1), (1, 1)], (1, 1), 4)
    assert shape("nn.conv2d", T(x.shape), T(w.shape), **kw) == (1, 6, 6, 8)
    np.testing.assert_allclose(run("nn.conv2d", x, w, **kw), want.transpose(0, 2, 3, 1),
                               rtol=1e-4, atol=1e-4)
    # a multiplier weight whose O axis is not the channels is a grouped weight: an error
    rel_error("nn.conv2d", [T(x.shape), T((3, 3, 8, 2))], "data has 4 channels (dimension 3) "
              "but the weight takes 2 input channels (dimension 3) x 4 groups", 1, **kw)
    w = arr((3, 3, 4, 1))
    oihw = w.transpose(2, 3, 0, 1)
    want = naive_conv(x.transpose(0, 3, 1, 2), oihw, (1, 1), [(1, 1), (1, 1)], (1, 1), 4)
    assert shape("nn.conv2d", T(x.shape), T(w.shape), **kw) == (1, 6, 6, 4)
    np.testing.assert_allclose(run("nn.conv2d", x, w, **kw), want.transpose(0, 2, 3, 1),
                               rtol=1e-4, atol=1e-4)

def test_conv1d_and_conv3d_against_naive():
    x, w = arr((2, 3, 10)), arr((4, 3, 3))
    kw = {"strides": (2,), "padding": (1, 2), "dilation": (2,)}
    want = naive_conv(x, w, (2,), [(1, 2)], (2,), 1)
    assert shape("nn.conv1d", T((2, 3, 10)), T((4, 3, 3)), **kw) == want.shape
    np.testing.assert_allclose(run("nn.conv1d", x, w, **kw), want, rtol=1e-4, atol=1e-4)
    x, w = arr((1, 2, 4, 5, 4)), arr((2, 1, 2, 3, 2))
    kw = {"groups": 2, "padding": (1, 0, 1)}
    want = naive_conv(x, w, (1, 1, 1), [(1, 1), (0, 0), (1, 1)], (1, 1, 1), 2)
    assert shape("nn.conv3d", T(x.shape), T(w.shape), **kw) == want.shape
    np.testing.assert_allclose(run("nn.conv3d", x, w, **kw), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("kw, pads, extra", [
    ({}, [(0, 0), (0, 0)], (0, 0)),
    ({"strides": (2, 2), "padding": (1, 1)}, [(1, 1), (1, 1)], (0, 0)),
    ({"strides": (3, 2), "padding": (0, 1, 2, 0), "output_padding": (2, 1)},
     [(0, 2), (1, 0)], (2, 1)),
    ({"strides": (2, 2), "groups": 2, "dilation": (2, 1)}, [(0, 0), (0, 0)], (0, 0)),
])
def test_conv2d_transpose_against_naive(kw, pads, extra):
    x, w = arr((2, 4, 4, 3)), arr((4, 3, 3, 2))             # IOHW: 4 in, 3 out per group
    want = naive_conv_transpose(x, w, kw.get("strides", (1, 1)), pads,
                                kw.get("dilation", (1, 1)), kw.get("groups", 1), extra)
    assert shape("nn.conv2d_transpose", T(x.shape), T(w.shape), **kw) == want.shape
    np.testing.assert_allclose(run("nn.conv2d_transpose", x, w, **kw), want, rtol=1e-4,
                               atol=1e-4)


def test_conv1d_transpose_and_channels_check():
    x, w = arr((1, 2, 5)), arr((2, 3, 3))
    want = naive_conv_transpose(x, w, (2,), [(1, 1)], (1,), 1, (1,))
    kw = {"strides": (2,), "padding": (1,), "output_padding": (1,), "channels": 3}
    assert shape("nn.conv1d_transpose", T(x.shape), T(w.shape), **kw) == want.shape
    np.testing.assert_allclose(run("nn.conv1d_transpose", x, w, **kw), want, rtol=1e-4,
                               atol=1e-4)
    rel_error("nn.conv2d_transpose", [T((1, 4, 5, 5)), T((4, 3, 3, 3))], "channels is 4 but the "
              "weight makes 3 output channels", 1, channels=4)
    rel_error("nn.conv2d_transpose", [T((1, 4, 5, 5)), T((5, 3, 3, 3))], "data has 4 channels "
              "(dimension 1) but the weight takes 5 input channels (dimension 0)", 1)
    rel_error("nn.conv2d_transpose", [T((1, 4, 5, 5)), T((4, 3, 3, 3))], "output_padding [2, 0] "
              "must be smaller than strides", None, strides=(2, 2), output_padding=(2, 0))
    rel_error("nn.conv2d_transpose", [T((1, 3, 5, 5)), T((3, 3, 3, 3))], "which groups=2 does "
              "not divide", 0, groups=2)


def test_conv_relation_shapes_and_any():
    assert shape("nn.conv2d", T((ANY, 3, ANY, 32)), T((8, 3, 3, 3)), padding=(1, 1)) \
        == (ANY, 8, ANY, 32)
    assert shape("nn.conv2d", T((1, ANY, 8, 8)), T((8, 3, 3, 3))) == (1, 8, 6, 6)
    assert shape("nn.conv2d", T((1, 3, 8, 8)), T((ANY, 3, 3, 3)), channels=16) \
        == (1, 16, 6, 6)
    assert shape("nn.conv2d", T((1, 3, 8, 8)), T((4, 3, 3, 3)), out_layout="NHWC") \
        == (1, 6, 6, 4)
    assert rel("nn.conv2d", T((1, 3, 8, 8)), IncompleteType()) is None
    assert rel("nn.conv2d", T((1, 3, 8, 8), "float16"), T((4, 3, 1, 1), "float16")) \
        .dtype == "float16"


def test_conv_relation_errors():
    d, w = T((1, 3, 8, 8)), T((4, 3, 3, 3))
    e = rel_error("nn.conv2d", [d, T((4, 2, 3, 3))], "data has 3 channels (dimension 1) but the "
                  "weight takes 2 input channels (dimension 1)", 1)
    assert e.dim == 1
    rel_error("nn.conv2d", [T((1, 4, 8, 8)), T((4, 1, 3, 3))], "x 2 groups", 1, groups=2)
    rel_error("nn.conv2d", [d, w], "channels is 8 but the weight has 4 output channels", 1,
              channels=8)
    rel_error("nn.conv2d", [d, w], "kernel_size is (5, 5) but the weight's kernel is (3, 3)",
              1, kernel_size=(5, 5))
    rel_error("nn.conv2d", [T((1, 3, 2, 8)), w], "the input is too small: spatial axis 0 has "
              "size 2", 0)
    rel_error("nn.conv2d", [d, w], "padding must have 1, 2, 4 values", None, padding=(1, 1, 1))
    rel_error("nn.conv2d", [d, w], "strides must have 2 values, got 3", None, strides=(1, 1, 1))
    rel_error("nn.conv2d", [d, w], "strides must be positive", None, strides=(0, 1))
    rel_error("nn.conv2d", [d, w], "groups must be positive", None, groups=0)
    # a blocked layout is legal (test_conv_blocked_layouts.py), but not on a 4-D tensor
    rel_error("nn.conv2d", [d, w], "data_layout 'NCHW16c' has 5 axes but the tensor has "
              "rank 4", 0, data_layout="NCHW16c")
    rel_error("nn.conv2d", [d, w], "kernel_layout 'OIHWX' is not supported", None,
              kernel_layout="OIHWX")
    rel_error("nn.conv2d", [T((1, 3, 8)), w], "data must have rank 4, got rank 3", 0)
    rel_error("nn.conv1d", [T((1, 3, 8)), T((4, 3))], "weight must have rank 3", 1)
    rel_error("nn.conv2d", [T((1, 3, 8, 8)), TupleType(())], "weight must be a tensor", 1)


# ---------------------------------------------------------------- dense layers

def test_dense():
    assert shape("nn.dense", T((4, 128)), T((64, 128)), units=64) == (4, 64)
    assert shape("nn.dense", T((2, ANY, 16)), T((8, 16))) == (2, ANY, 8)
    assert shape("nn.dense", T((2, 16)), T((ANY, 16)), units=8) == (2, 8)
    assert rel("nn.dense", T((2, 3), "int8"), T((4, 3), "int8"), out_dtype="int32").dtype \
        == "int32"
    e = rel_error("nn.dense", [T((4, 128)), T((32, 64))], "input has 128 features (dimension 1) "
                  "but weight has 64 (dimension 1)", 1)
    assert e.dim == 1
    rel_error("nn.dense", [T((4, 8)), T((3, 8))], "units is 4 but weight has 3 rows", 1,
              units=4)
    rel_error("nn.dense", [T((4, 8)), T((8,))], "weight must have rank 2", 1)
    rel_error("nn.dense", [T(()), T((3, 8))], "data must have rank 1 or more", 0)
    x, w = arr((2, 3, 5)), arr((4, 5))
    np.testing.assert_allclose(run("nn.dense", x, w), np.einsum("abk,nk->abn", x, w),
                               rtol=1e-5, atol=1e-5)
    xi, wi = arr((2, 3), "int8"), arr((4, 3), "int8")
    got = run("nn.dense", xi, wi, out_dtype="int32")
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, xi.astype(int) @ wi.astype(int).T)


def test_matmul_and_batch_matmul():
    assert shape("nn.matmul", T((2, 3)), T((3, 4))) == (2, 4)
    assert shape("nn.matmul", T((3, 2)), T((4, 3)), transpose_a=True, transpose_b=True) \
        == (2, 4)
    rel_error("nn.matmul", [T((2, 3)), T((4, 5))], "tensor_a has 3 in its reduction dimension "
              "1 but tensor_b has 4 (dimension 0)", 1)
    rel_error("nn.matmul", [T((2, 3)), T((3, 5))], "units is 4 but tensor_b has 5", 1, units=4)
    a, b = arr((3, 2)), arr((4, 3))
    np.testing.assert_allclose(run("nn.matmul", a, b, transpose_a=True, transpose_b=True),
                               a.T @ b.T, rtol=1e-5)
    assert shape("nn.batch_matmul", T((1, 2, 3)), T((5, 4, 3)), transpose_b=True) == (5, 2, 4)
    assert shape("nn.batch_matmul", T((ANY, 2, 3)), T((5, 3, 4))) == (ANY, 2, 4)
    assert shape("nn.batch_matmul", T((5, 3, 2)), T((5, 3, 4)), transpose_a=True) == (5, 2, 4)
    rel_error("nn.batch_matmul", [T((2, 2, 3)), T((3, 3, 4))], "batch dimensions do not "
              "match: x has 2, y has 3", 1)
    rel_error("nn.batch_matmul", [T((2, 2, 3)), T((2, 4, 4))], "x has 3 in its reduction "
              "dimension but y has 4", 1)
    rel_error("nn.batch_matmul", [T((2, 3)), T((2, 3, 4))], "x must have rank 3", 0)
    x, y = arr((1, 2, 3)), arr((4, 5, 3))
    np.testing.assert_allclose(run("nn.batch_matmul", x, y, transpose_b=True),
                               np.einsum("ik,bjk->bij", x[0], y), rtol=1e-5, atol=1e-6)


def test_bias_add_and_prelu():
    assert shape("nn.bias_add", T((2, 3, 4)), T((3,))) == (2, 3, 4)
    assert shape("nn.bias_add", T((2, 3, ANY)), T((5,)), axis=-1) == (2, 3, ANY)
    rel_error("nn.bias_add", [T((2, 3)), T((4,))], "bias has 4 entries but data has 3 along "
              "axis 1", 1)
    rel_error("nn.bias_add", [T((2, 3)), T((3, 1))], "bias must have rank 1", 1)
    rel_error("nn.bias_add", [T((2, 3)), T((3,))], "axis 2 is out of range", 0, axis=2)
    x, b = arr((2, 3, 4)), arr((4,))
    np.testing.assert_allclose(run("nn.bias_add", x, b, axis=2), x + b)
    rel_error("nn.prelu", [T((2, 3)), T((2,))], "alpha has 2 entries but data has 3", 1)
    a = arr((3,))
    np.testing.assert_allclose(run("nn.prelu", x, a, axis=1),
                               np.where(x > 0, x, x * a[None, :, None]))


# ---------------------------------------------------------------- activations

def test_activations():
    x = arr((3, 5))
    assert shape("nn.relu", T((2, ANY))) == (2, ANY)
    np.testing.assert_array_equal(run("nn.relu", x), x * (x > 0))
    np.testing.assert_allclose(run("nn.leaky_relu", x, alpha=0.1), np.where(x < 0, 0.1 * x, x))
    e = np.exp(x)
    np.testing.assert_allclose(run("nn.softmax", x, axis=0), e / e.sum(0), rtol=1e-5)
    np.testing.assert_allclose(run("nn.fast_softmax", x), e / e.sum(1, keepdims=True),
                               rtol=1e-5)
    np.testing.assert_allclose(run("nn.log_softmax", x), np.log(e / e.sum(1, keepdims=True)),
                               rtol=1e-5, atol=1e-6)
    rel_error("nn.softmax", [T((2, 3))], "axis 2 is out of range for a tensor of rank 2", 0,
              axis=2)
    out = rel("nn.dropout", T((2, 3)))
    assert isinstance(out, TupleType) and [f.shape for f in out.fields] == [(2, 3), (2, 3)]
    rel_error("nn.dropout", [T((2,))], "rate must be in [0, 1)", None, rate=1.0)
    y, mask = run("nn.dropout", x, rate=0.3)
    np.testing.assert_array_equal(y, x)
    np.testing.assert_array_equal(mask, np.ones_like(x))
    assert shape("nn.batch_flatten", T((2, 3, 4))) == (2, 12)
    assert shape("nn.batch_flatten", T((ANY, 3, ANY))) == (ANY, ANY)
    rel_error("nn.batch_flatten", [T(())], "cannot flatten a scalar", 0)


# ---------------------------------------------------------------- normalisation

def test_batch_norm_returns_three_tuple():
    v = T((3,))
    out = rel("nn.batch_norm", T((2, 3, 4, 4)), v, v, v, v)
    assert isinstance(out, TupleType) and len(out.fields) == 3
    assert [f.shape for f in out.fields] == [(2, 3, 4, 4), (3,), (3,)]
    out = rel("nn.batch_norm", T((2, 4, 3)), v, v, v, v, axis=-1)
    assert out.fields[1].shape == (3,)
    assert rel("nn.batch_norm", T((2, ANY)), T((5,)), T((5,)), T((5,)), T((5,))) \
        .fields[0].shape == (2, ANY)
    rel_error("nn.batch_norm", [T((2, 3)), v, T((4,)), v, v], "beta has 4 entries but data has "
              "3 along axis 1", 2)
    rel_error("nn.batch_norm", [T((2, 3)), v, v, v, T((3, 1))], "moving_var must have rank 1",
              4)
    x, g, b, m, var = arr((2, 3, 4)), arr((3,)), arr((3,)), arr((3,)), np.abs(arr((3,)))
    got, mean, variance = run("nn.batch_norm", x, g, b, m, var, epsilon=1e-3)
    want = (x - m[:, None]) / np.sqrt(var[:, None] + 1e-3) * g[:, None] + b[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(mean, m)
    np.testing.assert_array_equal(variance, var)
    got, _, _ = run("nn.batch_norm", x, g, b, m, var, center=False, scale=False)
    np.testing.assert_allclose(got, (x - m[:, None]) / np.sqrt(var[:, None] + 1e-5), rtol=1e-4)


def test_layer_instance_group_norm():
    x, g, b = arr((2, 6, 5)), arr((6,)), arr((6,))
    assert shape("nn.layer_norm", T((2, 6, 5)), T((5,)), T((5,))) == (2, 6, 5)
    rel_error("nn.layer_norm", [T((2, 6, 5)), T((6,)), T((5,))], "gamma has 6 entries but data "
              "has 5 along axis 2", 1)
    got = run("nn.layer_norm", x, g, b, axis=1)
    mu, var = x.mean(1, keepdims=True), x.var(1, keepdims=True)
    np.testing.assert_allclose(got, (x - mu) / np.sqrt(var + 1e-5) * g[:, None] + b[:, None],
                               rtol=1e-4, atol=1e-5)
    got = run("nn.instance_norm", x, g, b)
    mu, var = x.mean(2, keepdims=True), x.var(2, keepdims=True)
    np.testing.assert_allclose(got, (x - mu) / np.sqrt(var + 1e-5) * g[:, None] + b[:, None],
                               rtol=1e-4, atol=1e-5)
    assert shape("nn.group_norm", T((2, 6, 5)), T((6,)), T((6,)), num_groups=3) == (2, 6, 5)
    rel_error("nn.group_norm", [T((2, 6, 5)), T((6,)), T((6,))], "data has 6 channels (axis 1), "
              "which num_groups=4 does not divide", 0, num_groups=4)
    rel_error("nn.group_norm", [T((2, 6)), T((6,)), T((6,))], "num_groups must be positive",
              None, num_groups=0)
    got = run("nn.group_norm", x, g, b, num_groups=3)
    grouped = x.reshape(2, 3, 2, 5)
    mu, var = grouped.mean((2, 3), keepdims=True), grouped.var((2, 3), keepdims=True)
    want = ((grouped - mu) / np.sqrt(var + 1e-5)).reshape(x.shape) * g[:, None] + b[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_lrn_and_l2_normalize():
    x = arr((1, 5, 2, 2))
    got = run("nn.lrn", x, size=3, alpha=0.1, beta=0.75, bias=1.0)
    want = np.empty_like(x)
    for c in range(5):
        lo, hi = max(c - 1, 0), min(c + 1, 4)
        s = (x[:, lo:hi + 1] ** 2).sum(axis=1)
        want[:, c] = x[:, c] / (1.0 + 0.1 * s / 3) ** 0.75
    np.testing.assert_allclose(got, want, rtol=1e-5)
    rel_error("nn.lrn", [T((1, 5))], "size must be positive", None, size=0)
    got = run("nn.l2_normalize", x, eps=1e-6, axis=(1,))
    np.testing.assert_allclose(got, x / np.sqrt((x * x).sum(1, keepdims=True)), rtol=1e-5)
    rel_error("nn.l2_normalize", [T((2, 3))], "axis 3 is out of range", 0, eps=1e-6, axis=(3,))


# ---------------------------------------------------------------- padding, resampling

def test_pad():
    s = T(())
    assert shape("nn.pad", T((2, 3)), s, pad_width=((1, 2), (0, 1))) == (5, 4)
    assert shape("nn.pad", T((ANY, 3)), s, pad_width=((1, 2), (0, 0))) == (ANY, 3)
    rel_error("nn.pad", [T((2, 3)), s], "pad_width has 1 entries but data has rank 2", 0,
              pad_width=((1, 1),))
    rel_error("nn.pad", [T((2,)), s], "must be non-negative", None, pad_width=((-1, 1),))
    rel_error("nn.pad", [T((2,)), s], "must be [before, after]", None, pad_width=((1,),))
    rel_error("nn.pad", [T((2,)), T((1,))], "pad_value must be a scalar", 1,
              pad_width=((1, 1),))
    rel_error("nn.pad", [T((2,)), s], "pad_mode must be one of", None, pad_width=((1, 1),),
              pad_mode="wrap")
    rel_error("nn.pad", [T((2,)), s], "reflect padding [2, 0] on axis 0", 0,
              pad_width=((2, 0),), pad_mode="reflect")
    x = np.array([1, 2, 3], "float32")
    v = np.array(9, "float32")
    np.testing.assert_array_equal(run("nn.pad", x, v, pad_width=((2, 1),)), [9, 9, 1, 2, 3, 9])
    np.testing.assert_array_equal(run("nn.pad", x, v, pad_width=((2, 1),), pad_mode="edge"),
                                  [1, 1, 1, 2, 3, 3])
    np.testing.assert_array_equal(run("nn.pad", x, v, pad_width=((2, 1),), pad_mode="reflect"),
                                  [3, 2, 1, 2, 3, 2])


def test_upsampling():
    assert shape("nn.upsampling", T((1, 2, 3, 4)), scale_h=2.0, scale_w=1.5) == (1, 2, 6, 6)
    assert shape("nn.upsampling", T((1, 3, 4, 2)), scale_h=2.0, scale_w=2.0, layout="NHWC") \
        == (1, 6, 8, 2)
    assert shape("nn.upsampling", T((1, 2, ANY, 4)), scale_h=2.0, scale_w=2.0) == (1, 2, ANY, 8)
    rel_error("nn.upsampling", [T((1, 2, 3))], "layout NCHW has 4 axes but data has rank 3", 0,
              scale_h=2.0, scale_w=2.0)
    rel_error("nn.upsampling", [T((1, 2, 3, 4))], "method must be one of", None, scale_h=2.0,
              scale_w=2.0, method="area")
    x = arr((1, 2, 3, 4))
    got = run("nn.upsampling", x, scale_h=2.0, scale_w=3.0)
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(3, axis=3))
    got = run("nn.upsampling", x, scale_h=2.0, scale_w=2.0, method="bilinear",
              align_corners=True)
    ys, xs = np.linspace(0, 2, 6), np.linspace(0, 3, 8)
    assert got.shape == (1, 2, 6, 8)
    np.testing.assert_allclose(got, bilinear_reference(x, ys, xs), rtol=1e-5, atol=1e-5)


def test_upsampling3d():
    assert shape("nn.upsampling3d", T((1, 2, 3, 4, 5)), scale_d=2.0, scale_h=1.5,
                 scale_w=0.5) == (1, 2, 6, 6, 2)       # round half to even: 2.5 -> 2
    assert shape("nn.upsampling3d", T((1, 3, 4, 5, 2)), scale_d=2.0, scale_h=2.0, scale_w=3.0,
                 layout="NDHWC") == (1, 6, 8, 15, 2)
    assert shape("nn.upsampling3d", T((1, 2, ANY, 4, 1)), scale_d=2.0, scale_h=2.0,
                 scale_w=2.0) == (1, 2, ANY, 8, 2)
    rel_error("nn.upsampling3d", [T((1, 2, 3, 4))], "layout NCDHW has 5 axes", 0,
              scale_d=2.0, scale_h=2.0, scale_w=2.0)
    rel_error("nn.upsampling3d", [T((1, 2, 3, 4, 5))], "method must be one of", None,
              scale_d=2.0, scale_h=2.0, scale_w=2.0, method="bilinear")
    rel_error("nn.upsampling3d", [T((1, 2, 3, 4, 5))], "coordinate_transformation_mode must",
              None, scale_d=2.0, scale_h=2.0, scale_w=2.0,
              coordinate_transformation_mode="tf_crop_and_resize")
    x = arr((1, 2, 3, 4, 2))
    # asymmetric nearest by whole scales repeats each element
    got = run("nn.upsampling3d", x, scale_d=2.0, scale_h=3.0, scale_w=1.0,
              coordinate_transformation_mode="asymmetric")
    np.testing.assert_array_equal(got, x.repeat(2, axis=2).repeat(3, axis=3))
    # half_pixel nearest (floor): output z reads floor((z + 0.5) / s - 0.5), clamped
    got = run("nn.upsampling3d", x, scale_d=2.0, scale_h=1.0, scale_w=1.0)
    src = np.clip(np.floor((np.arange(6) + 0.5) / 2 - 0.5 + 1e-5), 0, 2).astype(int)
    np.testing.assert_array_equal(got, x[:, :, src])
    # trilinear with align_corners on a linear ramp stays a ramp
    ramp = np.arange(3, dtype="float32").reshape(1, 1, 3, 1, 1) * np.ones((1, 1, 1, 2, 2),
                                                                          "float32")
    got = run("nn.upsampling3d", ramp, scale_d=5 / 3, scale_h=1.0, scale_w=1.0,
              method="trilinear", coordinate_transformation_mode="align_corners")
    np.testing.assert_allclose(got[0, 0, :, 0, 0], np.linspace(0, 2, 5), rtol=1e-6)


def test_resize1d():
    assert shape("image.resize1d", T((1, 3, 4)), size=(8,)) == (1, 3, 8)
    assert shape("image.resize1d", T((2, 4, 3)), size=(2,), layout="NWC") == (2, 2, 3)
    assert rel("image.resize1d", T((1, 3, 4), "uint8"), size=(8,),
               out_dtype="float32").dtype == "float32"
    rel_error("image.resize1d", [T((1, 3, 4))], "resize1d needs a size", None)
    rel_error("image.resize1d", [T((1, 3, 4))], "size must be positive", None, size=(0,))
    rel_error("image.resize1d", [T((1, 3, 4))], "size must have 1 value", None, size=(2, 2))
    rel_error("image.resize1d", [T((1, 3, 4))], "layout NCHW has 4 axes", 0, size=(2,),
              layout="NCHW")
    rel_error("image.resize1d", [T((1, 3, 4))], "tf_crop_and_resize needs roi", None,
              size=(2,), coordinate_transformation_mode="tf_crop_and_resize")
    x = arr((1, 2, 5))
    got = run("image.resize1d", x, size=(10,), method="nearest_neighbor",
              coordinate_transformation_mode="asymmetric")
    np.testing.assert_array_equal(got, x[:, :, np.arange(10) // 2])
    got = run("image.resize1d", x, size=(7,), method="linear")
    xs = (np.arange(7) + 0.5) * 5 / 7 - 0.5
    ref = bilinear_reference(x[:, :, None, :], [0.0], xs)[:, :, 0, :]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    # tf_crop_and_resize: the roi [start, end] of the width; outside, the extrapolation value
    got = run("image.resize1d", x, size=(3,), method="linear", roi=(0.25, 2.0),
              coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-1.0)
    src = 0.25 * 4 + np.arange(3) * (2.0 - 0.25) * 4 / 2     # TVM's get_inx: 1, 4.5, 8
    assert src[0] <= 4 < src[1]
    np.testing.assert_allclose(got[:, :, 0], x[:, :, 1], rtol=1e-5)
    np.testing.assert_array_equal(got[:, :, 1:], -1.0)


def bilinear_reference(x, ys, xs):
    """Sample x (N, C, H, W) at fractional rows ys and columns xs, clamping at the edges."""
    h, w = x.shape[2:]
    out = np.zeros(x.shape[:2] + (len(ys), len(xs)))
    for i, y in enumerate(ys):
        for j, xx in enumerate(xs):
            y0, x0 = int(np.floor(y)), int(np.floor(xx))
            ty, tx = y - y0, xx - x0
            acc = 0.0
            for dy, wy in ((0, 1 - ty), (1, ty)):
                for dx, wx in ((0, 1 - tx), (1, tx)):
                    yy, xc = min(max(y0 + dy, 0), h - 1), min(max(x0 + dx, 0), w - 1)
                    acc = acc + wy * wx * x[:, :, yy, xc]
            out[:, :, i, j] = acc
    return out


def test_resize2d():
    assert shape("image.resize2d", T((1, 3, 4, 4)), size=(8, 6)) == (1, 3, 8, 6)
    assert shape("image.resize2d", T((1, 4, 4, 3)), size=(2, 2), layout="NHWC") == (1, 2, 2, 3)
    out = rel("image.resize2d", T((1, 3, 4, 4), "uint8"), size=(8, 8), out_dtype="float32")
    assert out.dtype == "float32"
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "resize2d needs a size", None)
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "size must be positive", None, size=(0, 2))
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "coordinate_transformation_mode must be",
              None, size=(2, 2), coordinate_transformation_mode="bad")
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "layout 'NCW' has no H axis", None,
              size=(2, 2), layout="NCW")
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "scales must be two positive numbers",
              None, size=(2, 2), scales=(0.5, 0.0))
    rel_error("image.resize2d", [T((1, 3, 4, 4))], "tf_crop_and_resize needs roi", None,
              size=(2, 2), coordinate_transformation_mode="tf_crop_and_resize")
    x = arr((1, 2, 4, 5))
    got = run("image.resize2d", x, size=(8, 10), method="nearest_neighbor",
              coordinate_transformation_mode="asymmetric")
    np.testing.assert_array_equal(got, x[:, :, np.arange(8) // 2][:, :, :, np.arange(10) // 2])
    got = run("image.resize2d", x, size=(3, 7), method="linear")
    ys = (np.arange(3) + 0.5) * 4 / 3 - 0.5
    xs = (np.arange(7) + 0.5) * 5 / 7 - 0.5
    np.testing.assert_allclose(got, bilinear_reference(x, ys, xs), rtol=1e-5, atol=1e-5)
    got = run("image.resize2d", x, size=(2, 3), method="nearest_neighbor",
              coordinate_transformation_mode="align_corners")
    rows = np.floor(np.arange(2) * 3 / 1 + 0.5).astype(int)
    cols = np.floor(np.arange(3) * 4 / 2 + 0.5).astype(int)
    np.testing.assert_array_equal(got, x[:, :, rows][:, :, :, cols])
    cubic = run("image.resize2d", x, size=(8, 10), method="cubic")
    assert cubic.shape == (1, 2, 8, 10)
    flat = np.ones((1, 1, 3, 3), "float32")     # cubic weights sum to 1: constants stay
    np.testing.assert_allclose(run("image.resize2d", flat, size=(5, 4), method="cubic"),
                               np.ones((1, 1, 5, 4)), rtol=1e-5)


def test_depth_to_space_and_back():
    assert shape("nn.depth_to_space", T((1, 8, 2, 3)), block_size=2) == (1, 2, 4, 6)
    assert shape("nn.space_to_depth", T((1, 2, 4, 6)), block_size=2) == (1, 8, 2, 3)
    assert shape("nn.depth_to_space", T((1, 2, 3, 8)), block_size=2, layout="NHWC") \
        == (1, 4, 6, 2)
    rel_error("nn.depth_to_space", [T((1, 6, 2, 2))], "6 channels, not a multiple of "
              "block_size^2 = 4", 0, block_size=2)
    rel_error("nn.space_to_depth", [T((1, 2, 3, 4))], "dimension 2 of data is 3, not a multiple",
              0, block_size=2)
    rel_error("nn.depth_to_space", [T((1, 8, 2, 2))], "mode must be one of DCR, CRD", None,
              block_size=2, mode="XYZ")
    rel_error("nn.depth_to_space", [T((1, 8, 2, 2))], "layout must be NCHW or NHWC", None,
              block_size=2, layout="NCWH")
    x = arr((2, 8, 2, 3))
    bs = 2
    for mode in ("DCR", "CRD"):
        got = run("nn.depth_to_space", x, block_size=bs, mode=mode)
        n, c, y, xx = np.indices(got.shape)
        by, bx = y % bs, xx % bs
        ch = (by * bs + bx) * 2 + c if mode == "DCR" else c * bs * bs + by * bs + bx
        np.testing.assert_array_equal(got, x[n, ch, y // bs, xx // bs])
        got_nhwc = run("nn.depth_to_space", x.transpose(0, 2, 3, 1), block_size=bs, mode=mode,
                       layout="NHWC")
        np.testing.assert_array_equal(got_nhwc, got.transpose(0, 2, 3, 1))
    up = run("nn.depth_to_space", x, block_size=2)
    np.testing.assert_array_equal(run("nn.space_to_depth", up, block_size=2), x)
    np.testing.assert_array_equal(
        run("nn.space_to_depth", up.transpose(0, 2, 3, 1), block_size=2, layout="NHWC"),
        x.transpose(0, 2, 3, 1))


# ---------------------------------------------------------------- kernel agreement

V3 = T((3,))
AGREEMENT = [
    ("nn.conv1d", [T((1, 3, 8)), T((4, 3, 3))], {"padding": (1,)}),
    ("nn.conv2d", [T((1, 3, 8, 8)), T((4, 3, 3, 3))], {"strides": (2, 2), "padding": (1, 1)}),
    ("nn.conv2d", [T((1, 6, 6, 4)), T((3, 3, 1, 4))], {"groups": 4, "data_layout": "NHWC",
                                                       "kernel_layout": "HWIO"}),
    ("nn.conv2d", [T((1, 2, 5, 5), "int8"), T((2, 2, 3, 3), "int8")], {"out_dtype": "int32"}),
    ("nn.conv3d", [T((1, 2, 4, 4, 4)), T((3, 2, 2, 2, 2))], {"dilation": (1, 2, 1)}),
    ("nn.contrib_conv2d_NCHWc", [T((2, 2, 7, 6, 4)), T((3, 2, 3, 3, 4, 8))],
     {"padding": (1, 0, 0, 1), "strides": (2, 1), "data_layout": "NCHW4c",
      "kernel_layout": "OIHW4i8o", "out_layout": "NCHW8c"}),
    ("nn.contrib_depthwise_conv2d_NCHWc", [T((2, 3, 7, 6, 4)), T((3, 1, 3, 3, 1, 4))],
     {"padding": (1, 0, 0, 1), "strides": (2, 1), "groups": 12, "data_layout": "NCHW4c",
      "kernel_layout": "OIHW1i4o", "out_layout": "NCHW4c"}),
    ("nn.conv1d_transpose", [T((1, 2, 5)), T((2, 3, 3))], {"strides": (2,)}),
    ("nn.conv2d_transpose", [T((1, 4, 3, 3)), T((4, 2, 3, 3))],
     {"strides": (2, 2), "output_padding": (1, 1), "groups": 2}),
    ("nn.conv3d_transpose", [T((1, 2, 2, 3, 2)), T((2, 1, 2, 2, 2))], {"padding": (1, 0, 0)}),
    ("nn.dense", [T((2, 5)), T((4, 5))], {}),
    ("nn.matmul", [T((2, 5)), T((5, 4))], {}),
    ("nn.batch_matmul", [T((2, 3, 5)), T((1, 4, 5))], {"transpose_b": True}),
    ("nn.bias_add", [T((2, 3, 4)), V3], {}),
    ("nn.relu", [T((2, 3), "int32")], {}),
    ("nn.leaky_relu", [T((2, 3))], {"alpha": 0.2}),
    ("nn.prelu", [T((2, 3)), V3], {}),
    ("nn.softmax", [T((2, 3))], {}),
    ("nn.fast_softmax", [T((2, 3))], {"axis": 0}),
    ("nn.log_softmax", [T((2, 3), "float64")], {}),
    ("nn.dropout", [T((2, 3))], {}),
    ("nn.cross_entropy", [T((2, 3)), T((2, 3))], {}),
    ("nn.cross_entropy_with_logits", [T((2, 3), "float64"), T((2, 3), "float64")], {}),
    ("nn.nll_loss", [T((2, 4, 3)), T((2, 3), "int32"), T((4,))], {"reduction": "none"}),
    ("nn.nll_loss", [T((5,)), T((), "int64"), T((5,))], {}),
    ("nn.batch_flatten", [T((2, 3, 4))], {}),
    ("nn.batch_norm", [T((2, 3, 4)), V3, V3, V3, V3], {}),
    ("nn.layer_norm", [T((2, 3)), V3, V3], {}),
    ("nn.instance_norm", [T((2, 3, 4)), V3, V3], {}),
    ("nn.group_norm", [T((2, 6, 4)), T((6,)), T((6,))], {"num_groups": 2}),
    ("nn.lrn", [T((1, 4, 3, 3))], {"size": 2}),
    ("nn.l2_normalize", [T((2, 3))], {"eps": 1e-5, "axis": (0, 1)}),
    ("nn.pad", [T((2, 3), "int32"), T((), "int32")], {"pad_width": ((1, 0), (2, 2))}),
    ("nn.upsampling", [T((1, 2, 3, 3))], {"scale_h": 1.5, "scale_w": 2.0,
                                          "method": "bicubic"}),
    ("nn.depth_to_space", [T((1, 4, 2, 2))], {"block_size": 2, "mode": "CRD"}),
    ("nn.space_to_depth", [T((1, 4, 4, 1))], {"block_size": 2, "layout": "NHWC"}),
    ("image.resize2d", [T((1, 5, 6, 2), "uint8")], {"size": (3, 9), "layout": "NHWC",
                                                    "out_dtype": "float32"}),
    ("image.resize2d", [T((1, 2, 4, 4))], {"size": (7, 3), "method": "cubic",
                                           "cubic_exclude": 1}),
    ("nn.upsampling3d", [T((1, 2, 3, 1, 2))], {"scale_d": 2.0, "scale_h": 1.5, "scale_w": 1.0}),
    ("nn.upsampling3d", [T((1, 2, 3, 2, 1), "int8")],
     {"scale_d": 0.5, "scale_h": 2.0, "scale_w": 3.0, "layout": "NDHWC",
      "coordinate_transformation_mode": "asymmetric"}),
    ("nn.upsampling3d", [T((1, 1, 2, 3, 2))], {"scale_d": 2.0, "scale_h": 2.0, "scale_w": 2.0,
                                               "method": "trilinear"}),
    ("image.resize1d", [T((1, 3, 5))], {"size": (9,)}),
    ("image.resize1d", [T((2, 5, 3), "uint8")], {"size": (2,), "layout": "NWC",
                                                 "method": "nearest_neighbor",
                                                 "out_dtype": "float32"}),
    ("image.resize1d", [T((1, 1, 4))], {"size": (7,), "method": "cubic", "cubic_exclude": 1,
                                        "coordinate_transformation_mode": "align_corners"}),
]


def random_value(t):
    if isinstance(t, TupleType):
        return tuple(random_value(f) for f in t.fields)
    return arr(t.shape, t.dtype)


def assert_agrees(out, value):
    if isinstance(out, TupleType):
        assert isinstance(value, tuple) and len(value) == len(out.fields)
        for f, v in zip(out.fields, value):
            assert_agrees(f, v)
        return
    assert value.shape == out.shape and str(value.dtype) == out.dtype, \
        (value.shape, value.dtype, out.shape, out.dtype)


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    assert_agrees(out, run(op, *[random_value(t) for t in types], **kw))


def test_every_nn_op_has_relation_and_kernel():
    from relaylang.op import all_ops
    covered = {a[0] for a in AGREEMENT}
    family = [d.name for d in all_ops() if d.package in ("relaylang.op.nn", "relaylang.op.image")]
    assert "nn.conv2d" in family and "image.resize2d" in family
    for name in family:
        d = get_op_def(name)
        assert d.type_rel is not None and d.kernel is not None, name
        assert name in covered, name


def test_remaining_error_messages():
    rel_error("nn.conv2d_transpose", [T((1, 4, 1, 1)), T((4, 3, 1, 1))], "padding (1, 1) "
              "leaves no output on spatial axis 0", 0, padding=(1, 1))
    rel_error("nn.matmul", [T(()), T((3, 4))], "tensor_a has rank 0, too small for matmul", 0)
    rel_error("nn.pad", [T((0,)), T(())], "edge padding needs a non-empty axis 0", 0,
              pad_width=((1, 1),), pad_mode="edge")
    rel_error("nn.depth_to_space", [T((1, 4, 2, 2))], "block_size must be positive", None,
              block_size=0)
    rel_error("nn.conv2d", [T((1, 3, 8, 8)), T((4, 3, 3, 3))], "dilation must be positive",
              None, dilation=(1, 0))
