"""The LLVM lowerings of the pool family (and the annotation identities) against the
interpreter: max/avg pools with padding, ceil_mode, dilation and count_include_pad,
global and adaptive pools, 1d/2d/3d, NCHW and NHWC, per dtype. One program per case
group keeps the compiles few."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'

POOL2D = [
    "pool_size=[3, 3], strides=[2, 2], padding=[1, 1]",
    "pool_size=[3, 2], strides=[2, 3], padding=[1, 0, 2, 1], ceil_mode=True, dilation=[2, 1]",
    "pool_size=[2, 2], strides=[2, 2], ceil_mode=True",
    "pool_size=[1, 1]",
    "pool_size=[3, 3], strides=[1, 1], padding=[2, 2], dilation=[2, 2]",
]


def _values(shape: tuple, dtype: str, rng: np.random.Generator) -> np.ndarray:
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("float"):
        # whole numbers plus quarters: window sums are exact whatever the summation order
        return (rng.integers(-400, 400, shape) / 4).astype(dtype)
    lo = 0 if dtype.startswith("uint") else -100
    return rng.integers(lo, 100, shape).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8", "int32", "uint8"])
def test_pool2d(dtype: str) -> None:
    rng = np.random.default_rng(1)
    x = _values((2, 3, 9, 11), dtype, rng)
    if dtype == "float32":
        x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    calls = []
    for attrs in POOL2D:
        calls.append(f"nn.max_pool2d(%x, {attrs})")
        calls.append(f"nn.avg_pool2d(%x, {attrs})")
        calls.append(f"nn.avg_pool2d(%x, {attrs}, count_include_pad=True)")
    calls += [("nn.max_pool2d(%h, pool_size=[3, 3], strides=[2, 2], padding=[1, 1], "
              "layout=\"NHWC\")"),
              ("nn.avg_pool2d(%h, pool_size=[2, 3], strides=[1, 2], padding=[0, 1], "
              "layout=\"NHWC\", count_include_pad=True)"),
              "nn.global_avg_pool2d(%x)", "nn.global_max_pool2d(%x)",
              "nn.global_avg_pool2d(%h, layout=\"NHWC\")", ("nn.global_max_pool2d(%h, "
              "layout=\"NHWC\")"),
              "nn.adaptive_avg_pool2d(%x, output_size=[4, 3])",
              "nn.adaptive_max_pool2d(%x, output_size=[4, 3])",
              "nn.adaptive_avg_pool2d(%x, output_size=[3])",
              "nn.adaptive_max_pool2d(%x, output_size=[9, 11])",
              "nn.adaptive_avg_pool2d(%x, output_size=[1, 1])",
              "nn.adaptive_avg_pool2d(%h, output_size=[2, 5], layout=\"NHWC\")",
              "nn.max_pool2d(%e, pool_size=[2, 2])", "nn.avg_pool2d(%e, pool_size=[2, 2])"]
    h = _values((1, 7, 6, 5), dtype, rng)
    e = _values((0, 2, 4, 4), dtype, rng)
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 9, 11), {dtype}], %h: Tensor[(1, 7, 6, 5), "
                   f"{dtype}], %e: Tensor[(0, 2, 4, 4), {dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, h, e)


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_pool1d_pool3d(dtype: str) -> None:
    rng = np.random.default_rng(2)
    a = _values((2, 3, 13), dtype, rng)
    c = _values((1, 2, 5, 6, 7), dtype, rng)
    calls = ["nn.max_pool1d(%a, pool_size=[3], strides=[2], padding=[1], ceil_mode=True)",
             "nn.avg_pool1d(%a, pool_size=[4], strides=[3], padding=[2, 1])",
             ("nn.avg_pool1d(%a, pool_size=[2], dilation=[3], count_include_pad=True, "
             "padding=[1])"),
             "nn.adaptive_max_pool1d(%a, output_size=[5])",
             "nn.adaptive_avg_pool1d(%a, output_size=[4])",
             "nn.max_pool3d(%c, pool_size=[2, 3, 2], strides=[2, 1, 2], padding=[1, 1, 0])",
             ("nn.avg_pool3d(%c, pool_size=[3, 2, 2], strides=[1, 2, 3], padding=[1, 0, 1], "
             "ceil_mode=True)"),
             "nn.adaptive_avg_pool3d(%c, output_size=[2, 4, 3])",
             "nn.adaptive_max_pool3d(%c, output_size=[3, 1, 5])"]
    text = HEAD + (f"def @main(%a: Tensor[(2, 3, 13), {dtype}], %c: Tensor[(1, 2, 5, 6, 7), "
                   f"{dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, a, c)


def test_annotations_are_identities() -> None:
    rng = np.random.default_rng(3)
    x = _values((3, 5), "float32", rng)
    text = HEAD + ("def @main(%x: Tensor[(3, 5), float32]) { (on_device(%x), "
                   "annotation.stop_fusion(%x), annotation.checkpoint(add(%x, 1f)), "
                   "nn.relu(on_device(%x))) }\n")
    assert_matches_interpreter(text, x)
