"""The convolution knobs (conv.block, conv.flat_pixels in relaylang/op/nn/conv_lowering.py):
every value a kernel offers gives the interpreter's values."""
from __future__ import annotations

import numpy as np
import pytest
from llvm_check import assert_matches_interpreter

from relaylang.backend.llvm import knobs

HEAD = '#[version = "0.0.5"]\n'


def _conv(data, weight, attrs):
    d = ", ".join(str(x) for x in data)
    w = ", ".join(str(x) for x in weight)
    return (HEAD + f"def @main(%x: Tensor[({d}), float32], %w: Tensor[({w}), float32]) "
            f"{{ nn.conv2d(%x, %w, {attrs}) }}\n")


CASES = [
    # (data, weight, attrs): blocked 3x3 (64 channels: blocks 64/32/16/8/4), narrow
    # outputs (7 and 20 wide: flattened pixels or not), a depthwise layer, one-sided
    # padding and a stride
    ((1, 8, 9, 9), (64, 8, 3, 3), "padding=[1, 1, 1, 1], channels=64, kernel_size=[3, 3]"),
    ((2, 16, 7, 7), (32, 16, 3, 3), "padding=[0, 1, 1, 0], channels=32, kernel_size=[3, 3]"),
    ((1, 16, 20, 20), (16, 16, 3, 3), "strides=[2, 2], padding=[1, 1, 1, 1], channels=16, "
                                      "kernel_size=[3, 3]"),
    ((1, 32, 11, 11), (32, 1, 3, 3), "padding=[1, 1, 1, 1], groups=32, channels=32, "
                                     "kernel_size=[3, 3]"),
    ((1, 16, 7, 7), (256, 16, 3, 3), "padding=[1, 1, 1, 1], channels=256, kernel_size=[3, 3]"),
]


@pytest.mark.parametrize("data, weight, attrs", CASES)
@pytest.mark.parametrize("knob, value", [("conv.block", 4), ("conv.block", 8),
                                         ("conv.block", 16), ("conv.block", 32),
                                         ("conv.flat_pixels", 0), ("conv.flat_pixels", 1)])
def test_every_knob_value_keeps_the_values(data, weight, attrs, knob, value):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(data).astype("float32")
    w = rng.standard_normal(weight).astype("float32")
    with knobs.using(knobs.Settings(every={knob: value})):
        assert_matches_interpreter(_conv(data, weight, attrs), x, w, rtol=1e-4, atol=1e-4)


def test_the_knobs_are_offered_where_they_apply():
    import relaylang as rl
    from relaylang.backend.tuning import extract_tasks
    data, weight = (1, 16, 7, 7), (256, 16, 3, 3)       # 4 blocks of 64 channels, 7 wide
    attrs = "padding=[1, 1, 1, 1], channels=256, kernel_size=[3, 3]"
    w = np.ones(weight, "float32")
    (task,) = extract_tasks(rl.parse(_conv(data, weight, attrs)), {"w": w})
    assert set(task.space["conv.block"]) >= {8, 16, 32}
    assert set(task.space["conv.flat_pixels"]) == {0, 1}
