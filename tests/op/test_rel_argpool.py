"""nn.max_pool2d_with_argmax: its relation (nn.max_pool2d's shape for both outputs, int64
indices) and its kernel against a window-by-window loop written here."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from rel_helpers import T, rel, rel_error, run

import relaylang as rl
from relaylang.ir.types import TupleType

RNG = np.random.default_rng(21)

AGREEMENT = [
    ("nn.max_pool2d_with_argmax", [T((1, 2, 5, 5))], {"pool_size": (2, 2), "strides": (2, 2)}),
    ("nn.max_pool2d_with_argmax", [T((2, 1, 4, 7), "int8")],
     {"pool_size": (3, 2), "padding": (1, 0), "ceil_mode": True, "storage_order": 1}),
    ("nn.max_pool2d_with_argmax", [T((1, 1, 1, 1), "float16")], {"pool_size": (1, 1)}),
]


@pytest.mark.parametrize("op, types, kw", AGREEMENT,
                         ids=[f"{a[0]}-{i}" for i, a in enumerate(AGREEMENT)])
def test_kernel_agrees_with_relation(op, types, kw):
    out = rel(op, *types, **kw)
    x = RNG.integers(-9, 9, types[0].shape).astype(types[0].dtype)
    value = run(op, x, **kw)
    assert isinstance(out, TupleType) and len(value) == 2
    for v, t in zip(value, out.fields):
        assert v.shape == t.shape and str(v.dtype) == t.dtype


def test_relation():
    out = rel("nn.max_pool2d_with_argmax", T((1, 3, 5, 7)), pool_size=(3, 3), strides=(2, 2),
              padding=(1, 1))
    assert rl.structural_equal(out, TupleType((T((1, 3, 3, 4)), T((1, 3, 3, 4), "int64"))))
    rel_error("nn.max_pool2d_with_argmax", [T((1, 3, 5, 7))], "NCHW only", pool_size=(2, 2),
              layout="NHWC")
    rel_error("nn.max_pool2d_with_argmax", [T((1, 3, 5, 7))], "storage_order",
              pool_size=(2, 2), storage_order=2)
    rel_error("nn.max_pool2d_with_argmax", [T((1, 3, 2, 2))], "too small", arg=0,
              pool_size=(3, 3))


def naive(x, k, s, d, pads, ceil_mode, order):
    n, c, h, w = x.shape
    outs = []
    for size, kk, ss, dd, (pb, pa) in zip((h, w), k, s, d, pads):
        span = size + pb + pa - (kk - 1) * dd - 1
        outs.append((span + (ss - 1 if ceil_mode else 0)) // ss + 1)
    val = np.zeros((n, c, *outs), x.dtype)
    idx = np.full((n, c, *outs), -1, np.int64)
    for b, ch, i, j in itertools.product(range(n), range(c), range(outs[0]), range(outs[1])):
        best = None
        for a, e in itertools.product(range(k[0]), range(k[1])):
            y, z = i * s[0] - pads[0][0] + a * d[0], j * s[1] - pads[1][0] + e * d[1]
            if 0 <= y < h and 0 <= z < w and (best is None or x[b, ch, y, z] > best):
                best = x[b, ch, y, z]
                flat = y * w + z if order == 0 else y + z * h
                idx[b, ch, i, j] = (b * c + ch) * h * w + flat
        val[b, ch, i, j] = 0 if best is None else best
    return val, idx


@pytest.mark.parametrize("k, s, d, pads, ceil_mode", [
    ((2, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), False),
    ((3, 3), (1, 1), (1, 1), ((1, 1), (1, 1)), False),
    ((2, 3), (2, 1), (2, 1), ((1, 0), (0, 2)), False),
    ((3, 2), (2, 2), (1, 1), ((0, 0), (0, 0)), True),
    ((3, 3), (3, 3), (1, 1), ((2, 2), (2, 2)), True),
    ((1, 1), (1, 1), (1, 1), ((0, 0), (0, 0)), False)])
@pytest.mark.parametrize("order", [0, 1])
def test_kernel_matches_loops(k, s, d, pads, ceil_mode, order):
    x = RNG.integers(-4, 4, (2, 3, 5, 7)).astype("float32")        # ties everywhere
    got = run("nn.max_pool2d_with_argmax", x, pool_size=k, strides=s, dilation=d,
              padding=(pads[0][0], pads[1][0], pads[0][1], pads[1][1]), ceil_mode=ceil_mode,
              storage_order=order)
    want = naive(x, k, s, d, pads, ceil_mode, order)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])
    if not ceil_mode:
        pooled = run("nn.max_pool2d", x, pool_size=k, strides=s, dilation=d,
                     padding=(pads[0][0], pads[1][0], pads[0][1], pads[1][1]))
        np.testing.assert_array_equal(got[0], pooled)
