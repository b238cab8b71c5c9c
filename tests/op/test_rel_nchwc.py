"""nn.contrib_conv2d_NCHWc (TVM's channel-blocked convolution): its relation (shapes,
blocks, errors) and its kernel against the plain nn.conv2d kernel on the unblocked
tensors."""
from __future__ import annotations

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl

L = {"data_layout": "NCHW16c", "kernel_layout": "OIHW16i32o", "out_layout": "NCHW32c"}


def test_relation_shapes():
    out = rel("nn.contrib_conv2d_NCHWc", T((1, 4, 56, 56, 16)), T((2, 4, 3, 3, 16, 32)),
              padding=(1, 1), **L)
    assert out.shape == (1, 2, 56, 56, 32) and out.dtype == "float32"
    out = rel("nn.contrib_conv2d_NCHWc", T((2, 1, 9, 8, 3)), T((1, 1, 7, 7, 3, 64)),
              strides=(2, 2), padding=(3, 3), data_layout="NCHW3c",
              kernel_layout="OIHW3i64o", out_layout="NCHW64c", channels=64,
              kernel_size=(7, 7))
    assert out.shape == (2, 1, 5, 4, 64)
    # an empty out_layout is the data layout (its block the weight's output block)
    out = rel("nn.contrib_conv2d_NCHWc", T((1, 1, 4, 4, 8), "float16"),
              T((3, 1, 1, 1, 8, 8), "float16"), data_layout="NCHW8c",
              kernel_layout="OIHW8i8o")
    assert out.shape == (1, 3, 4, 4, 8) and out.dtype == "float16"


def test_relation_errors():
    op = "nn.contrib_conv2d_NCHWc"
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "is not supported: "
              "expected NCHW with its C axis blocked last", None, data_layout="NCHW",
              kernel_layout="OIHW16i32o", out_layout="NCHW32c")
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "kernel_layout "
              "'OIHW32o16i' is not supported", None, data_layout="NCHW16c",
              kernel_layout="OIHW32o16i", out_layout="NCHW32c")
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "blocks input channels "
              "by 8 but data_layout 'NCHW16c' by 16", None, data_layout="NCHW16c",
              kernel_layout="OIHW8i32o", out_layout="NCHW32c")
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "blocks output channels "
              "by 32 but the output layout 'NCHW16c' by 16", None, data_layout="NCHW16c",
              kernel_layout="OIHW16i32o", out_layout="NCHW16c")
    rel_error(op, [T((1, 4, 8, 8, 8)), T((2, 4, 1, 1, 16, 32))], "holds 16 channels in its "
              "last axis but data has 8", 0, **L)
    rel_error(op, [T((1, 3, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "data has 3 blocks of "
              "input channels", 1, **L)
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "groups=1", None,
              groups=2, **L)
    rel_error(op, [T((1, 4, 2, 2, 16)), T((2, 4, 3, 3, 16, 32))], "the input is too small",
              0, **L)
    rel_error(op, [T((1, 4, 8, 8, 16)), T((2, 4, 1, 1, 16, 32))], "channels is 48", 1,
              channels=48, **L)


def _block_data(x, k):
    n, c, h, w = x.shape
    return np.ascontiguousarray(x.reshape(n, c // k, k, h, w).transpose(0, 1, 3, 4, 2))


def _block_weight(w, i, o):
    oc, ic, kh, kw = w.shape
    return np.ascontiguousarray(
        w.reshape(oc // o, o, ic // i, i, kh, kw).transpose(0, 2, 4, 5, 3, 1))


@pytest.mark.parametrize("c, o, i_blk, o_blk, hw, kw", [
    (16, 32, 16, 32, (9, 7), {"padding": (1, 1), "kernel_size": (3, 3)}),
    (3, 8, 3, 8, (5, 5), {"strides": (2, 2), "padding": (0, 1, 2, 0)}),
    (8, 16, 4, 8, (1, 1), {}),
    (16, 16, 8, 16, (6, 5), {"dilation": (2, 1), "padding": (2, 1)}),
])
def test_kernel_matches_conv2d(c, o, i_blk, o_blk, hw, kw):
    rng = np.random.default_rng(c + o)
    k = kw.get("kernel_size", (3, 3) if "padding" in kw else (1, 1))
    x = rng.standard_normal((2, c) + hw).astype("float32")
    w = rng.standard_normal((o, c) + k).astype("float32")
    attrs = {key: v for key, v in kw.items() if key != "kernel_size"}
    expected = run("nn.conv2d", x, w, **attrs)
    got = run("nn.contrib_conv2d_NCHWc", _block_data(x, i_blk), _block_weight(w, i_blk, o_blk),
              data_layout=f"NCHW{i_blk}c", kernel_layout=f"OIHW{i_blk}i{o_blk}o",
              out_layout=f"NCHW{o_blk}c", **attrs)
    np.testing.assert_allclose(got, _block_data(expected, o_blk), rtol=1e-5, atol=1e-5)


def test_text_round_trip_and_interpreter():
    text = ('#[version = "0.0.5"]\ndef @main(%x: Tensor[(1, 1, 4, 4, 8), float32], '
            '%w: Tensor[(1, 1, 3, 3, 8, 16), float32]) {\n  nn.contrib_conv2d_NCHWc(%x, %w, '
            'padding=[1, 1, 1, 1], channels=16, kernel_size=[3, 3], data_layout="NCHW8c", '
            'kernel_layout="OIHW8i16o", out_layout="NCHW16c")\n}\n')
    mod = rl.parse(text)
    assert rl.structural_equal(rl.parse(mod.astext() if hasattr(mod, "astext") else str(mod)),
                               mod)
    x = np.ones((1, 1, 4, 4, 8), "float32")
    w = np.ones((1, 1, 3, 3, 8, 16), "float32")
    out = np.asarray(rl.evaluate(mod, x, w))
    assert out.shape == (1, 1, 4, 4, 16)
    assert out[0, 0, 1, 1, 0] == 72.0 and out[0, 0, 0, 0, 5] == 32.0
