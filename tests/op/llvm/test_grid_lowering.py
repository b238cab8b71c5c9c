"""The LLVM lowerings of image.grid_sample and image.affine_grid against the interpreter:
every method, padding mode and align_corners, 2-D and 3-D, size-1 and odd sizes, grids
reaching far outside [-1, 1], per dtype."""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
RTOL = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-9}


def _grid(rng, shape, dtype):
    g = rng.standard_normal(shape) * 1.7
    g.reshape(-1)[:4] = [1.0, -1.0, 0.25, 5.5]        # edges, a half-way point, far out
    return g.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_grid_sample_2d(dtype):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 5, 4)).astype(dtype)
    one = rng.standard_normal((2, 1, 1, 1)).astype(dtype)
    g = _grid(rng, (2, 2, 3, 7), dtype)
    calls = []
    for m, p, a in itertools.product(["nearest", "bilinear", "bicubic"],
                                     ["zeros", "border", "reflection"], ["True", "False"]):
        calls.append(f'image.grid_sample(%x, %g, method="{m}", padding_mode="{p}", '
                     f'align_corners={a})')
        calls.append(f'image.grid_sample(%one, %g, method="{m}", padding_mode="{p}", '
                     f'align_corners={a})')
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 5, 4), {dtype}], %one: Tensor[(2, 1, 1, 1), "
                   f"{dtype}], %g: Tensor[(2, 2, 3, 7), {dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, one, g, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_grid_sample_3d():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 2, 3, 1, 4)).astype("float32")
    g = _grid(rng, (1, 3, 2, 3, 1), "float32")
    calls = [f'image.grid_sample(%x, %g, method="{m}", padding_mode="{p}", align_corners={a}, '
             f'layout="NCDHW")'
             for m, p, a in itertools.product(["nearest", "bilinear", "bicubic"],
                                              ["zeros", "border", "reflection"],
                                              ["True", "False"])]
    text = HEAD + ("def @main(%x: Tensor[(1, 2, 3, 1, 4), float32], "
                   "%g: Tensor[(1, 3, 2, 3, 1), float32]) { (" + ", ".join(calls) + ") }\n")
    assert_matches_interpreter(text, x, g, rtol=1e-5, atol=1e-5)


def test_grid_sample_fused_with_a_producer_and_consumer():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((1, 2, 4, 3)).astype("float32")
    t = rng.standard_normal((1, 2, 3)).astype("float32")
    text = HEAD + ("def @main(%x: Tensor[(1, 2, 4, 3), float32], %t: Tensor[(1, 2, 3), float32])"
                   " { nn.relu(image.grid_sample(exp(%x), image.affine_grid(%t, "
                   "target_shape=[5, 2]), align_corners=False)) }\n")
    assert_matches_interpreter(text, x, t, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_affine_grid(dtype):
    rng = np.random.default_rng(6)
    t2 = rng.standard_normal((3, 2, 3)).astype(dtype)
    t3 = rng.standard_normal((1, 3, 4)).astype(dtype)
    calls = ["image.affine_grid(%a, target_shape=[3, 4])",
             "image.affine_grid(%a, target_shape=[1, 5], align_corners=False)",
             "image.affine_grid(%a, target_shape=[1, 1])",
             "image.affine_grid(%b, target_shape=[2, 1, 3])",
             "image.affine_grid(%b, target_shape=[3, 2, 1], align_corners=False)"]
    text = HEAD + (f"def @main(%a: Tensor[(3, 2, 3), {dtype}], %b: Tensor[(1, 3, 4), {dtype}])"
                   f" {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, t2, t3, rtol=RTOL[dtype], atol=RTOL[dtype])
