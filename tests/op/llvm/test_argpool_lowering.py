"""The LLVM lowering of nn.max_pool2d_with_argmax against the interpreter: padding,
strides, dilation, ceil_mode, both storage orders, ties, size-1 and odd sizes, per dtype."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
CALLS = ["pool_size=[2, 2], strides=[2, 2]",
         "pool_size=[3, 3], padding=[1, 1]",
         "pool_size=[5, 5], padding=[2, 2, 2, 2]",
         "pool_size=[2, 3], strides=[2, 1], dilation=[2, 1], padding=[1, 0, 0, 2]",
         "pool_size=[3, 2], strides=[2, 2], ceil_mode=True",
         "pool_size=[2, 2], strides=[2, 2], storage_order=1",
         "pool_size=[1, 1]",
         "pool_size=[3, 3], strides=[3, 3], padding=[2, 2], ceil_mode=True, storage_order=1"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32"])
def test_max_pool2d_with_argmax(dtype):
    rng = np.random.default_rng(12)
    if dtype.startswith("int"):
        x = rng.integers(-5, 5, (2, 3, 5, 7)).astype(dtype)          # many ties
    else:
        x = rng.standard_normal((2, 3, 5, 7)).astype(dtype)
        x[0, 0, :2, :2] = 1.5                                         # a tie
    if dtype.startswith("float"):
        x[1, 2, :3, :] = -np.inf           # windows whose every value is the lowest
    one = x[:1, :1, :1, :1].copy()
    calls = [f"nn.max_pool2d_with_argmax(%x, {c})" for c in CALLS]
    calls.append("nn.max_pool2d_with_argmax(%one, pool_size=[3, 3], padding=[1, 1])")
    calls.append("nn.max_pool2d_with_argmax(%one, pool_size=[1, 1], storage_order=1)")
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 5, 7), {dtype}], %one: Tensor[(1, 1, 1, 1), "
                   f"{dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, one)


def test_argmax_outputs_feed_other_ops():
    rng = np.random.default_rng(13)
    x = rng.standard_normal((1, 2, 6, 6)).astype("float32")
    pool = "nn.max_pool2d_with_argmax(nn.relu(%x), pool_size=[2, 2], strides=[2, 2])"
    text = HEAD + ("def @main(%x: Tensor[(1, 2, 6, 6), float32]) { "
                   f"(exp({pool}.0), add({pool}.1, 1i64)) }}\n")
    assert_matches_interpreter(text, x, rtol=1e-5)
    import relaylang as rl
    want = rl.evaluate(rl.parse(text), x)
    got = rl.evaluate(rl.parse(text), x, target="llvm")
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    np.testing.assert_array_equal(got[1], want[1])
