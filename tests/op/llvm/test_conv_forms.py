"""Which convolution form conv_lowering.py picks for short reductions and odd channel
counts, and the forms themselves, against the interpreter (issue 18, item 2):

- a short reduction (input channels x window <= `_DIRECT_REDUCTION`) takes the blocked
  form when its block of output channels is wider than `_DIRECT_MAX_BLOCK` (the MobileNet
  stem, a 1x1 32 -> 64 convolution) or it has a stride along W (`_DIRECT_UNIT_STRIDE`),
  the direct form otherwise;
- one group whose output channels have no block of `PADDED_BLOCK_MIN` (20, 24, 5, 36):
  the blocked form with a last block of zero-weight channels (`_padded_block`), the
  epilogue skipping them (also with the pixels flattened, NHWC data, HWIO weights,
  float16, int32, 1-D and 3-D);
- the direct forms compute rows `_direct_width` wide (56 -> 64, 28 -> 32, 100 -> 112),
  the extra columns reading zero padding that the lowering adds on the right (also when
  the convolution has no padding of its own), dilated, batch 2; at a stride along W
  the direct forms read the input split into phases (`PHASE_SPLIT`: grouped ones, the
  strided depthwise form behind `DEPTHWISE_DIRECT_STRIDED`, groups == 1 without
  `_DIRECT_UNIT_STRIDE`); empty and tiny shapes;
- the scheduler's row blocks over vectors moving with both the row and the column
  (`schedule.ROW_BLOCK_ELEMENTWISE`): blocked depthwise layers with widths that leave a
  shorter last block, and the channels-last direct depthwise form.
"""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module, primitive_kernels

from relaylang.backend.llvm.lower import lower_primitive
from relaylang.op.nn import conv_lowering as CL

HEAD = '#[version = "0.0.5"]\n'


def _text(ds: tuple, ws: tuple, attrs: str, bias: int, dtype: str = "float32",
          nd: int = 2, clip: bool = False) -> str:
    decl = (f"%x: Tensor[{ds}, {dtype}], %w: Tensor[{ws}, {dtype}], "
            f"%b: Tensor[({bias}), {dtype}]")
    axis = 1
    if 'data_layout="NHWC"' in attrs and "out_layout" not in attrs or 'out_layout="NHWC"' in attrs:
        axis = 3
    call = f"nn.bias_add(nn.conv{nd}d(%x, %w, {attrs}), %b, axis={axis})"
    call = f"clip({call}, a_min=0f, a_max=6f)" if clip else f"nn.relu({call})"
    return HEAD + f"def @main({decl}) {{ {call} }}\n"


def _args(ds: tuple, ws: tuple, bias: int, dtype: str, seed: int) -> list:
    rng = np.random.default_rng(seed)
    if dtype.startswith("int"):
        return [rng.integers(-4, 5, s).astype(dtype) for s in (ds, ws, (bias,))]
    return [rng.standard_normal(s).astype(dtype) for s in (ds, ws, (bias,))]


def _check(ds: tuple, ws: tuple, attrs: str, dtype: str = "float32", nd: int = 2,
           seed: int = 0, clip: bool = False) -> str:
    """Native == interpreter; returns the kernels' unoptimised LLVM IR."""
    o = ws[-1] if "HWIO" in attrs else ws[0]
    text = _text(ds, ws, attrs, o, dtype, nd, clip)
    tol = {"float32": (1e-5, 1e-4), "float16": (1e-2, 2e-2)}.get(dtype, (None, 0.0))
    assert_matches_interpreter(text, *_args(ds, ws, o, dtype, seed), rtol=tol[0], atol=tol[1])
    kernels = primitive_kernels(fused_module(text))
    return "".join(k.module.get_source("ll-raw") for k in kernels.values())


# ---------------------------------------------------------------- short reductions

@pytest.mark.parametrize("ds,ws,attrs", [
    # the MobileNet stem, odd input sizes (3 x 3 x 3 = 27 <= 32, 32 channels)
    ((1, 3, 33, 35), (32, 3, 3, 3),
     "strides=[2, 2], padding=[1, 1], channels=32, kernel_size=[3, 3]"),
    ((2, 3, 16, 17), (32, 3, 3, 3),
     "strides=[2, 2], padding=[0, 0, 1, 1], channels=32, kernel_size=[3, 3]"),
    # 1x1 32 -> 64 (32 <= 32), odd width, batch 2
    ((2, 32, 9, 13), (64, 32, 1, 1), "channels=64, kernel_size=[1, 1]"),
    # MNIST-like 1 -> 16 5x5 pad 2, one-sided padding, dilation
    ((1, 1, 28, 27), (16, 1, 5, 5), "padding=[2, 2], channels=16, kernel_size=[5, 5]"),
    ((1, 2, 11, 19), (16, 2, 3, 3),
     "padding=[2, 0, 0, 1], dilation=[2, 1], channels=16, kernel_size=[3, 3]"),
    ((1, 3, 1, 1), (32, 3, 3, 3), "padding=[1, 1], channels=32, kernel_size=[3, 3]"),
])
def test_short_reduction_with_a_wide_block_is_blocked(ds, ws, attrs) -> None:
    assert CL._block(ws[0], ws[0], ws[1], 1) > CL._DIRECT_MAX_BLOCK
    src = _check(ds, ws, attrs, seed=1)
    assert "conv_weight_b" in src


# ---------------------------------------------------------------- padded channel blocks

@pytest.mark.parametrize("ds,ws,attrs", [
    ((1, 16, 13, 11), (20, 16, 3, 3), "padding=[1, 1], channels=20, kernel_size=[3, 3]"),
    ((2, 8, 9, 7), (12, 8, 3, 3),
     "strides=[2, 2], padding=[0, 1, 1, 0], channels=12, kernel_size=[3, 3]"),
    ((1, 6, 14, 15), (24, 6, 3, 3), "padding=[1, 1], channels=24, kernel_size=[3, 3]"),
    # pixels flattened (narrow output, batch x blocks >= 4): blocks of 16 over 40
    ((2, 6, 7, 7), (40, 6, 3, 3), "padding=[1, 1], channels=40, kernel_size=[3, 3]"),
    ((1, 10, 1, 1), (5, 10, 3, 3), "padding=[1, 1], channels=5, kernel_size=[3, 3]"),
    ((1, 4, 12, 13), (36, 4, 3, 3),
     "padding=[2, 2], dilation=[2, 2], channels=36, kernel_size=[3, 3]"),
    ((1, 9, 10, 6), (3, 3, 6, 20), ('padding=[1, 1], channels=20, kernel_size=[3, 3], '
                                    'data_layout="NHWC", kernel_layout="HWIO"')),
    ((1, 8, 5, 9), (20, 8, 3, 3), ('padding=[1, 1], channels=20, kernel_size=[3, 3], '
                                   'out_layout="NHWC"')),
    ((1, 16, 9, 9), (4, 16, 3, 3), "channels=4, kernel_size=[3, 3]"),
])
def test_padded_output_channel_blocks(ds, ws, attrs) -> None:
    o = ws[-1] if "HWIO" in attrs else ws[0]
    assert o % CL.PADDED_BLOCK_MIN
    src = _check(ds, ws, attrs, seed=2)
    assert "conv_weight_b" in src


@pytest.mark.parametrize("dtype", ["float16", "int32"])
def test_padded_output_channel_blocks_other_dtypes(dtype: str) -> None:
    _check((2, 6, 8, 9), (20, 6, 3, 3), "padding=[1, 1], channels=20, kernel_size=[3, 3]",
           dtype=dtype, seed=3)


def test_padded_output_channel_blocks_1d_and_3d() -> None:
    _check((2, 5, 17), (6, 5, 3), "padding=[1, 1], channels=6, kernel_size=[3]", nd=1)
    _check((1, 4, 5, 6, 7), (12, 4, 3, 3, 3),
           "padding=[1, 1, 1], channels=12, kernel_size=[3, 3, 3]", nd=3)


def test_grouped_convolutions_are_not_padded() -> None:
    """A block must lie in one group: 3 groups of 6 output channels keep the generic
    direct form (no zero-weight channels)."""
    src = _check((1, 12, 7, 9), (18, 4, 3, 3),
                 "groups=3, padding=[1, 1], channels=18, kernel_size=[3, 3]")
    assert "conv_weight_b" not in src


# ---------------------------------------------------------------- widened direct rows

def _stage_shape(text: str, name: str) -> tuple[int, ...] | None:
    """The shape of the local stage `name` in the loop IR of the (only) kernel."""
    import re
    mod = fused_module(text)
    body = mod["main"].body
    prim = str(lower_primitive(body.op, "k"))
    m = re.search(rf"allocate {name}\w*: \w+\[([0-9, ]+)\]", prim)
    return tuple(int(d) for d in m.group(1).split(",")) if m else None


@pytest.mark.parametrize("width,wide", [(5, 5), (8, 8), (9, 16), (28, 32), (48, 64), (56, 64),
                                        (64, 64), (65, 80), (100, 112), (112, 112)])
def test_direct_width(width: int, wide: int) -> None:
    assert CL._direct_width(width) == wide


@pytest.mark.parametrize("ds,ws,attrs", [
    # direct (8 or fewer output channels, short reduction), rows widened
    ((1, 1, 28, 28), (8, 1, 5, 5), "padding=[2, 2], channels=8, kernel_size=[5, 5]"),
    ((2, 2, 5, 28), (4, 2, 3, 3), "channels=4, kernel_size=[3, 3]"),          # no padding
    ((1, 3, 7, 100), (8, 3, 3, 3), "padding=[1, 1], channels=8, kernel_size=[3, 3]"),
    ((1, 1, 9, 61), (4, 1, 5, 5),
     "strides=[2, 1], padding=[0, 0, 2, 1], channels=4, kernel_size=[5, 5]"),
    ((1, 2, 6, 45), (8, 2, 3, 3),
     "padding=[1, 2], dilation=[1, 2], channels=8, kernel_size=[3, 3]"),
    ((1, 3, 4, 17), (8, 3, 3, 3), "padding=[1, 0], channels=8, kernel_size=[3, 3]"),
    ((1, 1, 3, 66), (5, 1, 2, 2), "channels=5, kernel_size=[2, 2]"),
])
def test_direct_rows_widened(ds, ws, attrs) -> None:
    src = _check(ds, ws, attrs, seed=4)
    assert "conv_weight_b" not in src


def test_direct_rows_widened_stage_shape() -> None:
    text = _text((1, 1, 6, 28), (8, 1, 5, 5), "padding=[2, 2], channels=8, kernel_size=[5, 5]",
                 8)
    assert _stage_shape(text, "conv2d") is not None
    assert _stage_shape(text, "conv2d")[-1] == 32


@pytest.mark.parametrize("ds,ws,attrs", [
    # the direct depthwise form (unit strides, wide output): 56 -> 64, 50 -> 64, 100 -> 112
    ((1, 8, 5, 56), (8, 1, 3, 3), "groups=8, channels=8, kernel_size=[3, 3], padding=[1, 1]"),
    ((2, 5, 4, 50), (5, 1, 3, 3), "groups=5, channels=5, kernel_size=[3, 3]"),
    ((1, 3, 3, 100), (3, 1, 5, 5),
     "groups=3, channels=3, kernel_size=[5, 5], padding=[2, 0, 2, 1], dilation=[1, 2]"),
    # strided, wide (blocked unless DEPTHWISE_DIRECT_STRIDED)
    ((1, 8, 7, 101), (8, 1, 3, 3),
     "groups=8, channels=8, kernel_size=[3, 3], padding=[1, 1], strides=[2, 2]"),
    ((2, 5, 6, 100), (5, 1, 3, 3),
     "groups=5, channels=5, kernel_size=[3, 3], padding=[0, 0, 1, 1], strides=[2, 2]"),
    ((1, 3, 4, 151), (3, 1, 3, 5),
     "groups=3, channels=3, kernel_size=[3, 5], padding=[1, 2], strides=[1, 3], dilation=[1, 2]"),
    # grouped (not depthwise) generic direct form, widened
    ((1, 8, 5, 30), (8, 2, 3, 3), "groups=4, channels=8, kernel_size=[3, 3], padding=[1, 1]"),
])
def test_direct_depthwise_and_grouped_rows_widened(ds, ws, attrs) -> None:
    _check(ds, ws, attrs, seed=5, clip=True)


@pytest.mark.parametrize("ds,ws,attrs", [
    # a stride along W: blocked, or direct with the input split into phases (PHASE_SPLIT)
    ((1, 3, 32, 40), (8, 3, 3, 3), "strides=[2, 2], padding=[1, 1], channels=8, kernel_size=[3, 3]"),
    ((2, 1, 9, 57), (8, 1, 5, 5), "strides=[2, 2], padding=[2, 2], channels=8, kernel_size=[5, 5]"),
    ((1, 2, 7, 31), (4, 2, 3, 3), "strides=[1, 2], channels=4, kernel_size=[3, 3]"),    # no pad
    ((1, 2, 5, 44), (4, 2, 3, 3),
     "strides=[1, 3], padding=[0, 2, 1, 0], channels=4, kernel_size=[3, 3]"),
    ((1, 1, 6, 50), (5, 1, 3, 4),
     "strides=[2, 2], padding=[1, 1], dilation=[1, 3], channels=5, kernel_size=[3, 4]"),
    ((1, 3, 4, 23), (8, 3, 1, 3), "strides=[1, 2], padding=[0, 1], channels=8, kernel_size=[1, 3]"),
    # grouped (multiplier 2, generic direct form), strided
    ((2, 6, 7, 35), (12, 1, 3, 3),
     "groups=6, channels=12, kernel_size=[3, 3], strides=[2, 2], padding=[1, 1]"),
])
@pytest.mark.parametrize("unit_stride", [1, 0])
def test_direct_strided_phases(ds, ws, attrs, unit_stride, monkeypatch) -> None:
    """groups == 1 takes the blocked form at a stride along W (`_DIRECT_UNIT_STRIDE`);
    without that rule, and for grouped convolutions always, the direct form with the
    input split into phases."""
    monkeypatch.setattr(CL, "_DIRECT_UNIT_STRIDE", unit_stride)
    src = _check(ds, ws, attrs, seed=8)
    grouped = "groups=" in attrs
    assert ("conv_phases" in src) == (grouped or not unit_stride)
    assert ("conv_weight_b" in src) == (not grouped and bool(unit_stride))


@pytest.mark.parametrize("ds,ws,attrs", [
    ((0, 2, 5, 20), (4, 2, 3, 3), "strides=[2, 2], padding=[1, 1], channels=4, kernel_size=[3, 3]"),
    ((1, 0, 5, 20), (4, 0, 3, 3), "padding=[1, 1], channels=4, kernel_size=[3, 3]"),
    ((1, 2, 5, 3), (4, 2, 3, 3), "strides=[2, 2], padding=[1, 1], channels=4, kernel_size=[3, 3]"),
    ((2, 4, 3, 2), (20, 4, 3, 3), "strides=[2, 2], padding=[1, 1], channels=20, kernel_size=[3, 3]"),
])
def test_empty_and_tiny(ds, ws, attrs) -> None:
    _check(ds, ws, attrs, seed=9)


@pytest.mark.parametrize("unit_stride", [1, 0])
def test_direct_strided_conv1d_phases(unit_stride: int, monkeypatch) -> None:
    monkeypatch.setattr(CL, "_DIRECT_UNIT_STRIDE", unit_stride)
    src = _check((2, 2, 41), (4, 2, 5), "strides=[3], padding=[2, 0], channels=4, kernel_size=[5]",
                 nd=1)
    assert ("conv_phases" in src) == (not unit_stride)


def test_direct_strided_depthwise_phases(monkeypatch) -> None:
    """The direct depthwise form at a stride (off by default, DEPTHWISE_DIRECT_STRIDED)."""
    monkeypatch.setattr(CL, "DEPTHWISE_DIRECT_STRIDED", 1)
    for ds, attrs in (((1, 8, 7, 101), "padding=[1, 1], strides=[2, 2]"),
                      ((2, 5, 6, 100), "padding=[0, 0, 1, 1], strides=[2, 2]")):
        c = ds[1]
        src = _check(ds, (c, 1, 3, 3), f"groups={c}, channels={c}, kernel_size=[3, 3], {attrs}",
                     seed=10, clip=True)
        assert "conv_phases" in src and "conv_input_b" not in src


def test_direct_conv1d_rows_widened() -> None:
    _check((2, 3, 50), (4, 3, 5), "padding=[2, 1], channels=4, kernel_size=[5]", nd=1)


def test_direct_nhwc_output_is_not_widened() -> None:
    """The direct forms' tile is the output's contiguous W only for an NCHW-like output."""
    _check((1, 2, 6, 28), (4, 2, 3, 3),
           'padding=[1, 1], channels=4, kernel_size=[3, 3], out_layout="NHWC"')


# ---------------------------------------------------------------- elementwise row blocks

@pytest.mark.parametrize("ds,ws,attrs", [
    # blocked depthwise (strided or narrow): rows of 16-channel vectors share each weight
    ((1, 32, 9, 23), (32, 1, 3, 3), "groups=32, channels=32, kernel_size=[3, 3], "
                                    "strides=[2, 2], padding=[1, 1]"),
    ((2, 48, 15, 15), (48, 1, 3, 3), "groups=48, channels=48, kernel_size=[3, 3], "
                                     "strides=[2, 2], padding=[0, 0, 1, 1]"),
    ((1, 16, 13, 13), (16, 1, 3, 3), "groups=16, channels=16, kernel_size=[3, 3], "
                                     "padding=[1, 1]"),
    ((1, 8, 1, 1), (8, 1, 3, 3), "groups=8, channels=8, kernel_size=[3, 3], padding=[1, 1]"),
    ((1, 24, 6, 9), (24, 1, 3, 3), "groups=24, channels=24, kernel_size=[3, 3], "
                                   "padding=[1, 1], dilation=[2, 2], strides=[1, 2]"),
])
def test_blocked_depthwise_row_blocks(ds, ws, attrs) -> None:
    _check(ds, ws, attrs, seed=6, clip=True)


@pytest.mark.parametrize("width", [7, 13, 50])
def test_channels_last_depthwise_row_blocks(width: int) -> None:
    """NHWC depthwise, the direct form with the channels as the tile: the input vector
    moves with the pixel and the channel, the weight with the channel only."""
    _check((1, 5, width, 32), (32, 1, 3, 3),
           'groups=32, channels=32, kernel_size=[3, 3], padding=[1, 1], '
           'data_layout="NHWC", kernel_layout="OIHW", out_layout="NHWC"', seed=7)


def test_row_block_elementwise_rule() -> None:
    """`_row_block` blocks rows for x[i, k, j] * w[k, j] (a vector moving with both and
    one moving with the column) but not for a window without a weight (pooling-like)."""
    from relaylang.backend.llvm import loop_ir as L
    from relaylang.backend.llvm import schedule as S
    i, j, k = L.Var("i", extent=12), L.Var("j", extent=16), L.Var("k", extent=9)
    x = L.Buffer("x", (12, 9, 16), "float32")
    w = L.Buffer("w", (9, 16), "float32")
    prod = L.binary("mul", L.Load(x, (i, k, j)), L.Load(w, (k, j)))
    r = L.Reduce("sum", prod, (k,), "float32")
    assert S._row_block((i, j), r) > 1
    r2 = L.Reduce("sum", L.Load(x, (i, k, j)), (k,), "float32")
    assert S._row_block((i, j), r2) == 1
