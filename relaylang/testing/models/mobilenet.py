"""MobileNet v1 (Howard et al. 2017) as TVM's `relay.testing.mobilenet` builds it, NCHW.

    data -> conv_block_1: conv 3x3/2 (32) -> batch_norm -> relu
         -> separable_conv_block_1..13: depthwise conv 3x3 (groups == channels, stride 2
            in blocks 2, 4, 6 and 12) -> batch_norm -> relu -> conv 1x1 -> batch_norm -> relu
            (64, 128, 128, 256, 256, 512 x 6, 1024, 1024 output channels)
         -> global_avg_pool2d -> batch_flatten -> dense + bias_add -> softmax

`alpha` multiplies every width (`int(c * alpha)`, at least 1). A depthwise weight
is (channels, 1, 3, 3); its He fan-in is the 9 taps of one channel.
"""
from __future__ import annotations

from collections.abc import Sequence

from ...ir.expr import Expr
from ...ir.module import IRModule
from ...op import make as _make
from .layers import Net, Params, check_image_shape

# (output channels at alpha 1, stride of the depthwise convolution) per separable block
BLOCKS: tuple[tuple[int, int], ...] = (
    (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2),
    (512, 1), (512, 1), (512, 1), (512, 1), (512, 1), (1024, 2), (1024, 1),
)
EPSILON = 1e-5


def _bn_relu(net: Net, x: Expr, channels: int, name: str) -> Expr:
    return _make.nn.relu(net.batch_norm_infer(x, channels, name=name, epsilon=EPSILON))


def separable_conv_block(net: Net, x: Expr, in_channels: int, out_channels: int, stride: int,
                         name: str) -> Expr:
    x = net.conv2d(x, in_channels, in_channels, 3, strides=stride, padding=1,
                   groups=in_channels, name=f"{name}_depthwise_conv1")
    x = _bn_relu(net, x, in_channels, f"{name}_bn1")
    x = net.conv2d(x, in_channels, out_channels, 1, name=f"{name}_conv2")
    return _bn_relu(net, x, out_channels, f"{name}_bn2")


def get_workload(batch_size: int = 1, dtype: str = "float32", num_classes: int = 1000,
                 image_shape: Sequence[int] = (3, 224, 224), alpha: float = 1.0,
                 seed: int = 0) -> tuple[IRModule, Params]:
    """(mod, params) of MobileNet v1 at width multiplier `alpha`."""
    if alpha <= 0:
        raise ValueError(f"alpha must be positive, got {alpha}")
    image = check_image_shape(image_shape)

    def width(c: int) -> int:
        return max(1, int(c * alpha))

    net = Net(dtype)
    x: Expr = net.input("data", (batch_size, *image))
    channels = width(32)
    x = net.conv2d(x, image[0], channels, 3, strides=2, padding=1, name="conv_block_1_conv")
    x = _bn_relu(net, x, channels, "conv_block_1_bn")
    for i, (out, stride) in enumerate(BLOCKS):
        x = separable_conv_block(net, x, channels, width(out), stride,
                                 f"separable_conv_block_{i + 1}")
        channels = width(out)
    x = _make.nn.batch_flatten(_make.nn.global_avg_pool2d(x))
    x = net.dense_add_bias(x, channels, num_classes, name="fc")
    return net.workload(_make.nn.softmax(x), seed)
