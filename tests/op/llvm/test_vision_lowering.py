"""The LLVM lowering of vision.roi_align against the interpreter: every mode, aligned or
not, NCHW and NHWC, rois reaching outside the image, degenerate and one-pixel rois, size-1
images, per dtype. (vision.all_class_non_max_suppression has no lowering: its selection
is sequential and data-dependent.)"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
ROIS = [[0, 0.5, 1.0, 4.0, 3.5], [1, -2, -1, 9, 8], [1, 3, 2, 3.2, 2.1], [0, 6.5, 4.5, 7, 5],
        [1, 20, 20, 30, 30], [0, 2, 2, 2, 2]]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_roi_align(dtype):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((2, 3, 5, 7)).astype(dtype)
    one = rng.standard_normal((2, 1, 1, 1)).astype(dtype)
    rois = np.array(ROIS, dtype)
    calls = []
    for mode, aligned, ratio in itertools.product(["avg", "max", "onnx_max"],
                                                  ["True", "False"], [1, 2]):
        calls.append(f'vision.roi_align(%x, %r, pooled_size=[2, 3], spatial_scale=0.9f, '
                     f'sample_ratio={ratio}, mode="{mode}", aligned={aligned})')
        calls.append(f'vision.roi_align(%one, %r, pooled_size=[1, 1], sample_ratio={ratio}, '
                     f'mode="{mode}", aligned={aligned})')
    calls.append('vision.roi_align(%h, %r, pooled_size=[3, 1], sample_ratio=3, layout="NHWC")')
    calls.append('vision.roi_align(%h, %r, pooled_size=[1, 2], sample_ratio=1, layout="NHWC", '
                 'mode="max")')
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 5, 7), {dtype}], %one: Tensor[(2, 1, 1, 1), "
                   f"{dtype}], %h: Tensor[(2, 5, 7, 3), {dtype}], %r: Tensor[(6, 5), {dtype}]) "
                   f"{{ ({', '.join(calls)}) }}\n")
    tol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-9}[dtype]
    assert_matches_interpreter(text, x, one, x.transpose(0, 2, 3, 1).copy(), rois, rtol=tol,
                               atol=tol)


def test_roi_align_fused_with_its_consumer():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((1, 2, 4, 4)).astype("float32")
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 2.5, 3]], "float32")
    text = HEAD + ("def @main(%x: Tensor[(1, 2, 4, 4), float32], %r: Tensor[(2, 5), float32]) "
                   "{ nn.relu(vision.roi_align(%x, %r, pooled_size=[2, 2], sample_ratio=2)) }\n")
    assert_matches_interpreter(text, x, rois, rtol=1e-5, atol=1e-6)


def test_adaptive_sample_ratio_has_no_lowering():
    from llvm_check import fused_module

    import relaylang as rl
    from relaylang.backend.llvm.lower import lower_primitive
    text = HEAD + ("def @main(%x: Tensor[(1, 2, 4, 4), float32], %r: Tensor[(2, 5), float32]) "
                   "{ vision.roi_align(%x, %r, pooled_size=[2, 2]) }\n")
    mod = fused_module(text)
    prim = mod["main"].body.op
    with pytest.raises(Exception, match="adaptive sample_ratio"):
        lower_primitive(prim, "f")
    # the whole program still runs natively, the op through its NumPy kernel
    x = np.ones((1, 2, 4, 4), "float32")
    rois = np.array([[0, 0, 0, 3, 3], [0, 1, 1, 2.5, 3]], "float32")
    want = rl.evaluate(rl.parse(text), x, rois)
    got = rl.evaluate(rl.parse(text), x, rois, target="llvm")
    np.testing.assert_allclose(got, want, rtol=1e-6)
