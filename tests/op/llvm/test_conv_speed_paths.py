"""The convolution paths chosen for speed (issue 18, item 2) against the interpreter.

- depthwise, multiplier 1, unit strides, output at least `DEPTHWISE_DIRECT_MIN_WIDTH`
  wide: the direct form (each parallel iteration pads its own channel);
- other depthwise (strided, narrow, multiplier 2): blocks of channels or the generic
  direct reduction;
- the scheduler's prologue rule (the knob `schedule.prologue_share`): a blocked depthwise layer's input
  re-layout is shared by channel blocks, not repeated by every thread;
- blocked convolutions with outputs at most `FLAT_PIXELS_MAX_WIDTH` wide and at least
  `FLAT_PIXELS_MIN_BLOCKS` (batch x channel blocks): the output pixels flattened, the
  epilogue (bias, residual add, relu) looped in the flattened order;
- dense / grouped convolutions at strides 1 and 2, one-sided padding, channel counts
  that are not a multiple of the vector width, 1x1 spatial, batch 2;
- a whole ONNX block (depthwise + BN + Relu, pointwise + BN + Relu) built with constant
  weights (packed at build time, batch norm folded) against onnxruntime's values are in
  benchmarks/conv.py; here the same graph as Relay with the weights bound as params.
"""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter, fused_module, primitive_kernels

import relaylang as rl
from relaylang.op.nn import conv_lowering as NL

HEAD = '#[version = "0.0.5"]\n'


def _conv_text(ds: tuple, ws: tuple, attrs: str, bias: int = 0) -> str:
    decl = f"%x: Tensor[{ds}, float32], %w: Tensor[{ws}, float32]"
    call = f"nn.conv2d(%x, %w, {attrs})"
    if bias:
        decl += f", %b: Tensor[({bias}), float32]"
        axis = 3 if 'out_layout="NHWC"' in attrs or 'data_layout="NHWC"' in attrs else 1
        call = f"nn.relu(nn.bias_add({call}, %b, axis={axis}))"
    return HEAD + f"def @main({decl}) {{ {call} }}\n"


def _run(ds: tuple, ws: tuple, attrs: str, bias: int = 0, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    args = [rng.standard_normal(ds).astype(np.float32),
            rng.standard_normal(ws).astype(np.float32)]
    if bias:
        args.append(rng.standard_normal((bias,)).astype(np.float32))
    assert_matches_interpreter(_conv_text(ds, ws, attrs, bias), *args, rtol=1e-5, atol=1e-4)


def _dw(c: int, k: int = 3, mult: int = 1, extra: str = "") -> str:
    return (f"groups={c}, channels={c * mult}, kernel_size=[{k}, {k}]"
            + (", " + extra if extra else ""))


W = NL.DEPTHWISE_DIRECT_MIN_WIDTH


@pytest.mark.parametrize("ds,ws,attrs", [
    # the direct depthwise form (unit strides, wide output)
    ((1, 16, 6, W), (16, 1, 3, 3), _dw(16, extra="padding=[1, 1]")),
    ((2, 20, 5, W + 3), (20, 1, 3, 3), _dw(20, extra="padding=[0, 0, 1, 2]")),
    ((1, 3, 4, W + 5), (3, 1, 5, 5), _dw(3, 5, extra="padding=[2, 2, 0, 1]")),
    ((1, 8, 3, W + 2), (8, 1, 3, 3), _dw(8, extra="dilation=[1, 2], padding=[1, 2]")),
    ((1, 7, 5, W), (7, 1, 3, 3), _dw(7)),                  # no padding, odd channels
    # blocked / generic depthwise: strided, narrow, multiplier 2
    ((1, 32, 9, W + 1), (32, 1, 3, 3), _dw(32, extra="strides=[2, 2], padding=[1, 1]")),
    ((2, 16, 9, 11), (16, 1, 3, 3), _dw(16, extra="padding=[1, 0, 0, 1]")),
    ((1, 12, 7, W), (24, 1, 3, 3), _dw(12, mult=2, extra="padding=[1, 1]")),
    ((1, 12, 7, 9), (24, 1, 3, 3), _dw(12, mult=2, extra="strides=[1, 2], padding=[1, 1]")),
    ((1, 16, 1, 1), (16, 1, 3, 3), _dw(16, extra="padding=[1, 1]")),       # 1x1 spatial
    ((2, 48, 14, 14), (48, 1, 3, 3), _dw(48, extra="strides=[2, 2], padding=[0, 0, 1, 1]")),
])
def test_depthwise(ds, ws, attrs) -> None:
    _run(ds, ws, attrs, bias=ws[0])


def test_depthwise_channels_last() -> None:
    """NHWC data and output with a wide output: the direct form's tile runs over the
    channels (the contiguous dim)."""
    _run((1, 5, W, 24), (24, 1, 3, 3),
         _dw(24, extra='padding=[1, 1], data_layout="NHWC", kernel_layout="OIHW", '
                       'out_layout="NHWC"'), bias=24)


def test_wide_depthwise_uses_the_direct_form() -> None:
    """The direct depthwise form re-lays out neither the weight nor the input."""
    text = _conv_text((1, 16, 8, W), (16, 1, 3, 3), _dw(16, extra="padding=[1, 1]"), 16)
    kernels = primitive_kernels(fused_module(text))
    src = "".join(k.module.get_source("ll-raw") for k in kernels.values())
    assert "conv_weight_b" not in src and "conv_input_b" not in src
    narrow = _conv_text((1, 16, 8, 8), (16, 1, 3, 3), _dw(16, extra="padding=[1, 1]"), 16)
    kernels = primitive_kernels(fused_module(narrow))
    src = "".join(k.module.get_source("ll-raw") for k in kernels.values())
    assert "conv_input_b" in src


@pytest.mark.parametrize("ds,ws,attrs", [
    ((1, 8, 13, 13), (16, 8, 3, 3),
     "strides=[2, 2], padding=[1, 1], channels=16, kernel_size=[3, 3]"),
    ((2, 6, 10, 9), (20, 6, 3, 3), "padding=[0, 1, 1, 0], channels=20, kernel_size=[3, 3]"),
    ((1, 12, 7, 7), (24, 4, 3, 3), "groups=3, padding=[1, 1], channels=24, kernel_size=[3, 3]"),
    ((2, 16, 9, 9), (32, 8, 1, 1), "groups=2, strides=[2, 2], channels=32, kernel_size=[1, 1]"),
    ((1, 40, 1, 1), (36, 40, 1, 1), "channels=36, kernel_size=[1, 1]"),
    ((1, 24, 1, 1), (64, 24, 3, 3), "padding=[1, 1], channels=64, kernel_size=[3, 3]"),
    ((2, 17, 7, 7), (64, 17, 3, 3),
     "strides=[2, 2], padding=[1, 1], channels=64, kernel_size=[3, 3]"),
])
def test_dense_and_grouped(ds, ws, attrs) -> None:
    _run(ds, ws, attrs, bias=ws[0], seed=3)


def test_mobilenet_block_with_bound_weights() -> None:
    """Depthwise + batch norm + relu, pointwise + batch norm + relu, weights bound at
    build time (packed, batch norm folded by the pipeline) against the interpreter."""
    rng = np.random.default_rng(5)
    c, h, w = 32, 6, W + 2
    text = HEAD + (
        f"def @main(%x: Tensor[(2, {c}, {h}, {w}), float32],"
        f" %dw: Tensor[({c}, 1, 3, 3), float32],"
        f" %pw: Tensor[(48, {c}, 1, 1), float32], %g1: Tensor[({c}), float32],"
        f" %b1: Tensor[({c}), float32], %m1: Tensor[({c}), float32], %v1: Tensor[({c}), float32],"
        f" %g2: Tensor[(48), float32], %b2: Tensor[(48), float32], %m2: Tensor[(48), float32],"
        f" %v2: Tensor[(48), float32]) {{\n"
        f"  %0 = nn.conv2d(%x, %dw, padding=[1, 1], groups={c}, channels={c},"
        f" kernel_size=[3, 3]);\n"
        f"  %1 = nn.batch_norm(%0, %g1, %b1, %m1, %v1);\n"
        f"  %2 = nn.relu(%1.0);\n"
        f"  %3 = nn.conv2d(%2, %pw, channels=48, kernel_size=[1, 1]);\n"
        f"  %4 = nn.batch_norm(%3, %g2, %b2, %m2, %v2);\n"
        f"  nn.relu(%4.0)\n}}\n")
    mod = rl.parse(text)
    x = rng.standard_normal((2, c, h, w)).astype(np.float32)
    params = {"dw": rng.standard_normal((c, 1, 3, 3)).astype(np.float32),
              "pw": rng.standard_normal((48, c, 1, 1)).astype(np.float32)}
    for k, n in (("1", c), ("2", 48)):
        params["g" + k] = rng.uniform(0.5, 1.5, n).astype(np.float32)
        params["b" + k] = rng.uniform(-0.5, 0.5, n).astype(np.float32)
        params["m" + k] = rng.uniform(-0.5, 0.5, n).astype(np.float32)
        params["v" + k] = rng.uniform(0.5, 1.5, n).astype(np.float32)
    expected = rl.evaluate(mod, x, *[params[k] for k in
                                     ("dw", "pw", "g1", "b1", "m1", "v1", "g2", "b2", "m2", "v2")])
    lib = rl.build(mod, target="llvm", params=params)
    got = np.asarray(lib(x))
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("ds,ws,attrs", [
    # blocked convolutions with outputs at most FLAT_PIXELS_MAX_WIDTH wide: pixels flattened
    ((1, 16, 7, 7), (256, 16, 3, 3), "padding=[1, 1], channels=256, kernel_size=[3, 3]"),
    ((2, 8, 14, 14), (128, 8, 3, 3),
     "strides=[2, 2], padding=[1, 1], channels=128, kernel_size=[3, 3]"),
    ((1, 12, 9, 13), (256, 12, 1, 1), "channels=256, kernel_size=[1, 1]"),
    ((1, 12, 10, 11), (48, 12, 3, 3), "padding=[0, 0, 1, 2], channels=48, kernel_size=[3, 3]"),
    ((1, 12, 10, 11), (256, 12, 3, 3), "padding=[0, 0, 1, 2], channels=256, kernel_size=[3, 3]"),
    ((2, 10, 8, 5), (128, 10, 3, 2),
     "strides=[1, 2], padding=[1, 0, 0, 1], channels=128, kernel_size=[3, 2]"),
    ((1, 16, 6, 6), (256, 8, 3, 3), "groups=2, padding=[1, 1], channels=256, kernel_size=[3, 3]"),
    # too few blocks of channels (batch x blocks < 4): not flattened
    ((2, 10, 8, 5), (16, 10, 3, 2),
     "strides=[1, 2], padding=[1, 0, 0, 1], channels=16, kernel_size=[3, 2]"),
    ((1, 16, 7, 7), (32, 16, 3, 3), "padding=[1, 1], channels=32, kernel_size=[3, 3]"),  # 1 block
    ((1, 16, 5, 7), (256, 16, 3, 3), ("padding=[1, 1], channels=256, kernel_size=[3, 3], "
                                      "out_layout=\"NHWC\"")),
    ((1, 16, 1, 9), (256, 16, 1, 3), "padding=[0, 1], channels=256, kernel_size=[1, 3]"),
])
def test_narrow_outputs_flatten_the_pixels(ds, ws, attrs) -> None:
    rng = np.random.default_rng(9)
    o = ws[0]
    args = [rng.standard_normal(ds).astype(np.float32), rng.standard_normal(ws).astype(np.float32),
            rng.standard_normal((o,)).astype(np.float32)]
    text = _conv_text(ds, ws, attrs, bias=o)
    assert_matches_interpreter(text, *args, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("batch", [1, 2])
def test_flattened_pixels_with_a_residual_add_epilogue(batch: int) -> None:
    """ResNet's 7x7 bottleneck end: conv + bias + residual add + relu in one kernel, the
    residual read at the flattened pixel's (h, w). Batch 1: the epilogue is looped in the
    flattened stage's order, sharing its parallel loop over the 4 blocks of 64 channels
    (batch 2 runs its images in parallel)."""
    rng = np.random.default_rng(10)
    n = batch
    text = HEAD + (
        f"def @main(%x: Tensor[({n}, 16, 7, 7), float32], %w: Tensor[(256, 16, 1, 1), float32], "
        f"%b: Tensor[(256, 1, 1), float32], %r: Tensor[({n}, 256, 7, 7), float32]) {{\n"
        "  nn.relu(add(add(nn.conv2d(%x, %w, channels=256, kernel_size=[1, 1]), %b), %r))\n}\n")
    args = [rng.standard_normal(s).astype(np.float32)
            for s in ((n, 16, 7, 7), (256, 16, 1, 1), (256, 1, 1), (n, 256, 7, 7))]
    assert_matches_interpreter(text, *args, rtol=1e-5, atol=1e-4, optimize=True)
    (k,) = primitive_kernels(fused_module(text, optimize=True)).values()
    assert k.parallel_extent == (4 if batch == 1 else 2)
