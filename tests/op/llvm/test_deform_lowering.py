"""The LLVM lowerings of nn.deformable_conv2d and nn.modulated_deformable_conv2d against
the interpreter: strides, padding, dilation, groups, deformable groups, offsets reaching
outside the data, size-1 and odd sizes, per dtype."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
# (data, weight, attrs, deformable groups, output (oh, ow))
CASES = [((1, 2, 5, 6), (3, 2, 3, 3), "", 1, (3, 4)),
         ((2, 4, 5, 5), (4, 2, 2, 3), ("strides=[2, 1], padding=[1, 0, 0, 2], groups=2, "
          "deformable_groups=2"), 2, (3, 5)),
         ((1, 3, 4, 7), (2, 3, 2, 2), "dilation=[2, 3], padding=[1, 1], deformable_groups=3",
          3, (4, 6)),
         ((1, 1, 1, 1), (2, 1, 1, 1), "", 1, (1, 1)),
         ((1, 2, 1, 3), (1, 2, 3, 1), "padding=[1, 0]", 1, (1, 3))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_deformable_conv2d(dtype, case):
    dshape, wshape, attrs, dg, (oh, ow) = CASES[case]
    rng = np.random.default_rng(case)
    kh, kw = wshape[2:]
    x = rng.standard_normal(dshape).astype(dtype)
    wt = rng.standard_normal(wshape).astype(dtype)
    off = (rng.standard_normal((dshape[0], dg * kh * kw * 2, oh, ow)) * 1.5).astype(dtype)
    flat = off.reshape(-1)
    flat[:min(3, flat.size)] = [0.5, -7.0, 2.0][:flat.size]
    mask = rng.random((dshape[0], dg * kh * kw, oh, ow)).astype(dtype)
    sep = ", " if attrs else ""
    text = HEAD + (
        f"def @main(%x: Tensor[{dshape}, {dtype}], %o: Tensor[{off.shape}, {dtype}], "
        f"%w: Tensor[{wshape}, {dtype}], %m: Tensor[{mask.shape}, {dtype}]) {{ "
        f"(nn.deformable_conv2d(%x, %o, %w{sep}{attrs}), "
        f"nn.modulated_deformable_conv2d(%x, %o, %w, %m{sep}{attrs})) }}\n")
    tol = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-9}[dtype]
    assert_matches_interpreter(text, x, off, wt, mask, rtol=tol, atol=tol)
