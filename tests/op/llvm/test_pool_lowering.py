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


# Windows written out (at most UNROLLED_WINDOW_MAX positions) and reduced in a loop
# (more), axes read unchecked (no padding before them, every window inside) beside
# checked ones (padding on one side only, a ceil_mode tail), windows that leave the
# last rows unread, MNIST's and a larger strided shape.
WINDOW_FORMS = [
    "pool_size=[2, 2], strides=[2, 2]",
    "pool_size=[3, 3], strides=[3, 3]",
    "pool_size=[5, 4], strides=[2, 3]",                         # 20 positions: a loop
    "pool_size=[5, 4], strides=[1, 2], padding=[2, 1, 0, 2]",   # a loop, padded
    "pool_size=[4, 4], strides=[1, 1]",                         # 16: written out
    "pool_size=[3, 2], strides=[2, 2], padding=[1, 0]",         # H checked, W not
    "pool_size=[2, 3], strides=[3, 2], padding=[0, 0, 1, 1]",   # padding after only
    "pool_size=[2, 2], strides=[2, 2], ceil_mode=True",         # a tail on odd sizes
    "pool_size=[1, 3], strides=[1, 1], dilation=[1, 2]",
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
def test_pool2d_window_forms(dtype: str) -> None:
    from relaylang.op.pool.llvm_lowering import UNROLLED_WINDOW_MAX
    assert 4 * 4 <= UNROLLED_WINDOW_MAX < 5 * 4      # the table covers both forms
    rng = np.random.default_rng(4)
    x = _values((2, 3, 11, 9), dtype, rng)
    m = _values((1, 8, 28, 28), dtype, rng)
    s = _values((1, 16, 14, 14), dtype, rng)
    o = _values((1, 1, 1, 7), dtype, rng)
    if dtype == "float32":
        x[1, 2, 4, 2:5] = [np.nan, -np.inf, np.inf]
        m[0, 3, 27, 26] = np.nan
    calls = []
    for attrs in WINDOW_FORMS:
        calls.append(f"nn.max_pool2d(%x, {attrs})")
        calls.append(f"nn.avg_pool2d(%x, {attrs})")
        calls.append(f"nn.avg_pool2d(%x, {attrs}, count_include_pad=True)")
    calls += ["nn.max_pool2d(%m, pool_size=[2, 2], strides=[2, 2])",
              "nn.relu(nn.max_pool2d(%m, pool_size=[2, 2], strides=[2, 2]))",
              "nn.avg_pool2d(%m, pool_size=[2, 2], strides=[2, 2])",
              "nn.max_pool2d(%s, pool_size=[3, 3], strides=[3, 3])",
              "nn.max_pool2d(%s, pool_size=[3, 3], strides=[2, 2], padding=[1, 1])",
              "nn.max_pool2d(%o, pool_size=[1, 3], strides=[1, 2])",
              "nn.avg_pool2d(%o, pool_size=[1, 4], strides=[1, 4], ceil_mode=True)"]
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 11, 9), {dtype}], %m: Tensor[(1, 8, 28, 28), "
                   f"{dtype}], %s: Tensor[(1, 16, 14, 14), {dtype}], %o: Tensor[(1, 1, 1, 7), "
                   f"{dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, m, s, o)


def test_pool_unchecked_axes_are_chosen_statically() -> None:
    """The lowering reads an axis unchecked only when every window lies inside it: the
    kernel of a pool without padding has no select; padding on one side keeps one."""
    import relaylang as rl
    from relaylang.backend.native import kernels as nk

    def kernel_text(attrs: str) -> str:
        src = HEAD + ("def @main(%x: Tensor[(1, 2, 9, 9), float32]) { "
                      f"nn.max_pool2d(%x, {attrs}) }}\n")
        seen: list[str] = []
        orig = nk.lower

        def record(fn, name, consts=frozenset()):
            prim = orig(fn, name, consts)
            seen.append(str(prim))
            return prim
        nk.lower = record
        try:
            rl.build(rl.parse(src), target="llvm")
        finally:
            nk.lower = orig
        return "\n".join(seen)
    assert "select" not in kernel_text("pool_size=[2, 2], strides=[2, 2]")
    # padding after that no window reaches (the last one is 6..7 of 9), and one reached
    assert "select" not in kernel_text("pool_size=[2, 2], strides=[3, 3], padding=[0, 0, 1, 1]")
    assert "select" in kernel_text("pool_size=[2, 2], strides=[2, 2], padding=[0, 0, 0, 1]")
    assert "select" in kernel_text("pool_size=[2, 2], strides=[2, 2], ceil_mode=True")
