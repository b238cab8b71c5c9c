"""The LLVM lowering of image.resize2d (and nn.upsampling, which shares its resampling)
against the interpreter: every method and coordinate transformation mode, the rounding
methods, NCHW and NHWC, up and down sampling, per dtype."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

HEAD = '#[version = "0.0.5"]\n'
MODES = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel",
         "tf_half_pixel_for_nn"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "float64", "int8"])
def test_resize2d(dtype: str) -> None:
    rng = np.random.default_rng(1)
    if dtype.startswith("float"):
        x = (rng.standard_normal((1, 2, 5, 7)) * 3).astype(dtype)
    else:
        x = rng.integers(-100, 100, (1, 2, 5, 7)).astype(dtype)
    calls = []
    for mode in MODES:
        calls.append(f'image.resize2d(%x, size=[8, 3], method="nearest_neighbor", '
                     f'coordinate_transformation_mode="{mode}", rounding_method="")')
        calls.append(f'image.resize2d(%x, size=[3, 11], method="linear", '
                     f'coordinate_transformation_mode="{mode}")')
    for rounding in ["round", "floor", "ceil", "round_prefer_floor", "round_prefer_ceil"]:
        calls.append(f'image.resize2d(%x, size=[10, 14], method="nearest_neighbor", '
                     f'coordinate_transformation_mode="half_pixel", '
                     f'rounding_method="{rounding}")')
    calls += ['image.resize2d(%x, size=[9, 4], method="cubic")',
              ('image.resize2d(%x, size=[4, 9], method="cubic", cubic_exclude=1, '
              'cubic_alpha=-0.75f, coordinate_transformation_mode="align_corners")'),
              'image.resize2d(%h, size=[6, 2], layout="NHWC")',
              ('image.resize2d(%x, size=[1, 1], method="nearest_neighbor", '
              'coordinate_transformation_mode="asymmetric")'),
              ('image.resize2d(%x, size=[10, 14], method="nearest_neighbor", '
              'coordinate_transformation_mode="asymmetric", rounding_method="")'),
              'nn.upsampling(%x, scale_h=2f, scale_w=3f)',
              ('nn.upsampling(%x, scale_h=2f, scale_w=1.5f, method="bilinear", '
              'align_corners=True)'),
              'nn.upsampling(%h, scale_h=1.5f, scale_w=2f, layout="NHWC", method="bicubic")']
    if dtype.startswith("float"):
        calls.append('image.resize2d(%x, size=[6, 6], out_dtype="float64")')
    else:       # interpolation to integers runs in NumPy (see image/llvm_lowering.py)
        calls = [c for c in calls if "nearest" in c or "upsampling(%x, scale_h=2f, scale_w=3f)" in c]
    h = x.transpose(0, 2, 3, 1).copy()
    text = HEAD + (f"def @main(%x: Tensor[(1, 2, 5, 7), {dtype}], %h: Tensor[(1, 5, 7, 2), "
                   f"{dtype}]) {{ ({', '.join(calls)}) }}\n")
    rtol = {"float16": 1e-2, "float32": 1e-5, "float64": 1e-5}.get(dtype)
    assert_matches_interpreter(text, x, h, rtol=rtol, atol=1e-5 if rtol else 0)


@pytest.mark.parametrize("dtype", ["float32", "int8"])
def test_resize2d_onnx_extensions(dtype: str) -> None:
    # the given scales (coordinates map with them, not out/in), half_pixel_symmetric,
    # tf_crop_and_resize (a box, the extrapolation value outside it) and antialiasing
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((1, 2, 5, 7)) * 3).astype("float32") if dtype == "float32" \
        else rng.integers(-100, 100, (1, 2, 5, 7)).astype(dtype)
    calls = [
        'image.resize2d(%x, size=[6, 4], method="nearest_neighbor", scales=[1.3f, 0.6f], '
        'rounding_method="round_prefer_ceil")',
        'image.resize2d(%x, size=[1, 9], method="nearest_neighbor", '
        'coordinate_transformation_mode="tf_crop_and_resize", roi=[0.1f, -0.3f, 0.9f, 1.2f], '
        'extrapolation_value=-4f, rounding_method="round_prefer_floor")',
    ]
    if dtype == "float32":
        calls += [
            'image.resize2d(%x, size=[6, 4], scales=[1.3f, 0.6f])',
            'image.resize2d(%x, size=[8, 3], coordinate_transformation_mode="half_pixel_symmetric", '
            'scales=[1.7f, 0.5f])',
            'image.resize2d(%x, size=[4, 9], coordinate_transformation_mode="tf_crop_and_resize", '
            'roi=[0.1f, -0.3f, 0.9f, 1.2f], extrapolation_value=2.5f)',
            'image.resize2d(%x, size=[2, 3], antialias=True)',
            'image.resize2d(%x, size=[3, 2], method="cubic", antialias=True, cubic_exclude=1, '
            'cubic_alpha=-0.75f)',
            'image.resize2d(%x, size=[1, 1], method="cubic", antialias=True, scales=[0.25f, 0.2f])',
        ]
    text = HEAD + (f"def @main(%x: Tensor[(1, 2, 5, 7), {dtype}]) {{ ({', '.join(calls)}) }}\n")
    assert_matches_interpreter(text, x, rtol=1e-5 if dtype == "float32" else None,
                               atol=1e-5 if dtype == "float32" else 0)


def test_resize2d_antialias_matches_onnx_reference() -> None:
    # the NumPy kernel's antialiasing filter is ONNX's (onnx.reference), exactly
    onnx_ops = pytest.importorskip("onnx.reference.ops.op_resize")
    import relaylang as rl
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, 1, 9, 11)).astype("float32")
    for method, onnx_mode in (("linear", "linear"), ("cubic", "cubic")):
        mod = rl.parse(HEAD + "def @main(%x: Tensor[(1, 1, 9, 11), float32]) { "
                       f'image.resize2d(%x, size=[4, 3], method="{method}", antialias=True, '
                       "cubic_alpha=-0.75f) }\n")
        got = rl.evaluate(mod, x)
        want = onnx_ops._interpolate_nd(
            x, (onnx_ops._linear_coeffs_antialias if method == "linear"
                else onnx_ops._cubic_coeffs_antialias),
            output_size=[1, 1, 4, 3], scale_factors=[1, 1, 4 / 9, 3 / 11])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6, err_msg=method)
