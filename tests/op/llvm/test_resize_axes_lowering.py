"""The LLVM lowerings of image.resize1d and nn.upsampling3d (image/llvm_lowering.py's
`resize_axes_lowering`, the kernel's own tap tables over any axes) against the
interpreter: every method and coordinate mode, rounding methods, both layouts, up and
down sampling, size-1 and odd sizes, per dtype."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
         "tf_half_pixel_for_nn"]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype.startswith("float"):
        return (rng.standard_normal(shape) * 3).astype(dtype)
    return rng.integers(-100, 100, shape).astype(dtype)


def _tol(dtype):
    rtol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-5}.get(dtype)
    return {"rtol": rtol, "atol": 1e-5 if rtol else 0}


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8"])
def test_resize1d(dtype: str) -> None:
    x = _data((2, 3, 7), dtype, 1)
    calls = []
    for mode in MODES:
        calls.append(f'image.resize1d(%x, size=[11], method="nearest_neighbor", '
                     f'coordinate_transformation_mode="{mode}", rounding_method="")')
        calls.append(f'image.resize1d(%x, size=[4], method="linear", '
                     f'coordinate_transformation_mode="{mode}")')
    for rounding in ["round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]:
        calls.append(f'image.resize1d(%x, size=[13], method="nearest_neighbor", '
                     f'rounding_method="{rounding}")')
    calls += ['image.resize1d(%x, size=[9], method="cubic")',
              ('image.resize1d(%x, size=[5], method="cubic", cubic_exclude=1, '
               'cubic_alpha=-0.75f, coordinate_transformation_mode="align_corners")'),
              'image.resize1d(%h, size=[3], layout="NWC")',
              'image.resize1d(%x, size=[1], method="nearest_neighbor")',
              'image.resize1d(%x, size=[1])',
              ('image.resize1d(%x, size=[6], method="nearest_neighbor", '
               'coordinate_transformation_mode="tf_crop_and_resize", roi=[0.2f, 1.3f], '
               'extrapolation_value=-4f)'),
              ('image.resize1d(%one, size=[5], method="nearest_neighbor", '
               'coordinate_transformation_mode="asymmetric")')]
    if dtype.startswith("float"):
        calls += ['image.resize1d(%x, size=[6], out_dtype="float64")',
                  ('image.resize1d(%x, size=[6], coordinate_transformation_mode='
                   '"tf_crop_and_resize", roi=[0.1f, 0.9f], extrapolation_value=2.5f)')]
    else:       # interpolation to integers runs in NumPy (image/llvm_lowering.py)
        calls = [c for c in calls if "nearest" in c]
    h = x.transpose(0, 2, 1).copy()
    one = x[:1, :1, :1].copy()
    text = HEAD + (f"def @main(%x: Tensor[(2, 3, 7), {dtype}], %h: Tensor[(2, 7, 3), {dtype}], "
                   f"%one: Tensor[(1, 1, 1), {dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, h, one, **_tol(dtype))


@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int32"])
def test_upsampling3d(dtype: str) -> None:
    x = _data((1, 2, 3, 1, 5), dtype, 2)
    calls = []
    for mode in MODES:
        calls.append(f'nn.upsampling3d(%x, scale_d=2f, scale_h=3f, scale_w=1.5f, '
                     f'coordinate_transformation_mode="{mode}")')
        calls.append(f'nn.upsampling3d(%x, scale_d=0.5f, scale_h=2f, scale_w=0.4f, '
                     f'method="trilinear", coordinate_transformation_mode="{mode}")')
    calls += ['nn.upsampling3d(%h, scale_d=2f, scale_h=2f, scale_w=1f, layout="NDHWC")',
              ('nn.upsampling3d(%h, scale_d=1.5f, scale_h=1f, scale_w=0.6f, layout="NDHWC", '
               'method="trilinear")')]
    if not dtype.startswith("float"):
        calls = [c for c in calls if "trilinear" not in c]
    h = np.moveaxis(x, 1, -1).copy()
    text = HEAD + (f"def @main(%x: Tensor[(1, 2, 3, 1, 5), {dtype}], "
                   f"%h: Tensor[(1, 3, 1, 5, 2), {dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, h, **_tol(dtype))


def test_dynamic_to_static_upsampling3d_builds() -> None:
    # TVM's test_dynamic_to_static_upsampling3d shapes, after DynamicToStatic, natively
    text = HEAD + ("def @main(%x: Tensor[(5, 7, 8, 10, 32), int8]) { "
                   "nn.upsampling3d(%x, scale_d=3f, scale_h=2f, scale_w=2f) }\n")
    x = _data((5, 7, 8, 10, 32), "int8", 3)
    out = assert_matches_interpreter(text, x)
    assert out.shape == (5, 7, 24, 20, 64)
