"""nn.contrib_depthwise_conv2d_NCHWc (TVM's channel-blocked depthwise convolution,
channel multiplier 1): its relation (shapes, blocks, errors), its kernel against the
plain depthwise nn.conv2d kernel on the unblocked tensors, and its text form."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl

OP = "nn.contrib_depthwise_conv2d_NCHWc"
L = {"data_layout": "NCHW16c", "kernel_layout": "OIHW1i16o", "out_layout": "NCHW16c"}


def test_relation_shapes():
    out = rel(OP, T((1, 4, 56, 56, 16)), T((4, 1, 3, 3, 1, 16)), padding=(1, 1), groups=64,
              **L)
    assert out.shape == (1, 4, 56, 56, 16) and out.dtype == "float32"
    out = rel(OP, T((2, 2, 9, 8, 8)), T((2, 1, 3, 3, 1, 8)), strides=(2, 2), padding=(1, 1),
              groups=16, channels=16, kernel_size=(3, 3), data_layout="NCHW8c",
              kernel_layout="OIHW1i8o", out_layout="NCHW8c")
    assert out.shape == (2, 2, 5, 4, 8)
    # an empty out_layout is the data layout
    out = rel(OP, T((1, 1, 4, 4, 8), "float16"), T((1, 1, 3, 3, 1, 8), "float16"),
              groups=8, data_layout="NCHW8c", kernel_layout="OIHW1i8o")
    assert out.shape == (1, 1, 2, 2, 8) and out.dtype == "float16"


def test_relation_errors():
    d, w = T((1, 4, 8, 8, 16)), T((4, 1, 3, 3, 1, 16))
    rel_error(OP, [d, w], "is not supported: expected NCHW with its C axis blocked last",
              None, groups=64, data_layout="NCHW", kernel_layout="OIHW1i16o",
              out_layout="NCHW16c")
    rel_error(OP, [d, w], "kernel_layout 'OIHW16i16o' is not supported", None, groups=64,
              data_layout="NCHW16c", kernel_layout="OIHW16i16o", out_layout="NCHW16c")
    rel_error(OP, [d, w], "blocks output channels by 8 but the output layout 'NCHW16c'",
              None, groups=64, data_layout="NCHW16c", kernel_layout="OIHW1i8o",
              out_layout="NCHW16c")
    rel_error(OP, [d, w], "keeps its channel blocks", None, groups=64,
              data_layout="NCHW16c", kernel_layout="OIHW1i8o", out_layout="NCHW8c")
    rel_error(OP, [T((1, 4, 8, 8, 8)), w], "holds 16 channels in its last axis but data "
              "has 8", 0, groups=64, **L)
    rel_error(OP, [d, T((4, 2, 3, 3, 1, 16))], "its axis 1 must be 1", 1, groups=64, **L)
    rel_error(OP, [d, T((3, 1, 3, 3, 1, 16))], "data has 4 blocks of channels", 1,
              groups=64, **L)
    rel_error(OP, [d, w], "one group per channel: groups is 1", None, **L)
    rel_error(OP, [d, w], "channels is 32", 1, groups=64, channels=32, **L)
    rel_error(OP, [T((1, 4, 2, 2, 16)), w], "the input is too small", 0, groups=64, **L)


def _block(x, k):
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // k, k, h, w).transpose(0, 1, 3, 4, 2))


def _block_weight(w, k):
    c, _, kh, kw = w.shape
    return np.ascontiguousarray(w.reshape(c // k, k, 1, kh, kw, 1).transpose(0, 2, 3, 4, 5, 1))


@pytest.mark.parametrize("c, k, hw, kw", [
    (32, 16, (9, 7), {"padding": (1, 1)}),
    (8, 8, (5, 5), {"strides": (2, 2), "padding": (0, 1, 2, 0)}),
    (16, 4, (1, 1), {"padding": (1, 1)}),
    (16, 8, (6, 5), {"dilation": (2, 1), "padding": (2, 1)}),
])
def test_kernel_matches_conv2d(c, k, hw, kw):
    rng = np.random.default_rng(c + k)
    x = rng.standard_normal((2, c) + hw).astype("float32")
    w = rng.standard_normal((c, 1, 3, 3)).astype("float32")
    expected = run("nn.conv2d", x, w, groups=c, **kw)
    got = run(OP, _block(x, k), _block_weight(w, k), groups=c, data_layout=f"NCHW{k}c",
              kernel_layout=f"OIHW1i{k}o", out_layout=f"NCHW{k}c", **kw)
    np.testing.assert_allclose(got, _block(expected, k), rtol=1e-5, atol=1e-5)


def test_text_round_trip_and_interpreter():
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 1, 4, 4, 8), float32], '
            '%w: Tensor[(1, 1, 3, 3, 1, 8), float32]) {\n  nn.contrib_depthwise_conv2d_NCHWc('
            '%x, %w, padding=[1, 1, 1, 1], groups=8, channels=8, kernel_size=[3, 3], '
            'data_layout="NCHW8c", kernel_layout="OIHW1i8o", out_layout="NCHW8c")\n}\n')
    mod = rl.parse(text)
    assert rl.structural_equal(rl.parse(str(mod)), mod)
    out = np.asarray(rl.evaluate(mod, np.ones((1, 1, 4, 4, 8), "float32"),
                                 np.ones((1, 1, 3, 3, 1, 8), "float32")))
    assert out.shape == (1, 1, 4, 4, 8)
    assert out[0, 0, 1, 1, 0] == 9.0 and out[0, 0, 0, 0, 5] == 4.0
