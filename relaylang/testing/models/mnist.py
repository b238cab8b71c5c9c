"""A small convolutional network for 28x28 digits (LeNet-5 as Caffe's MNIST example).

    data (batch, 1, 28, 28)
      -> nn.conv2d 5x5 + nn.bias_add -> nn.relu -> nn.max_pool2d 2x2/2     (20 channels)
      -> nn.conv2d 5x5 + nn.bias_add -> nn.relu -> nn.max_pool2d 2x2/2     (50 channels)
      -> nn.batch_flatten -> nn.dense + nn.bias_add -> nn.relu             (500)
      -> nn.dense + nn.bias_add -> nn.softmax                              (num_classes)

Convolutions are unpadded (28 -> 24 -> 12 -> 8 -> 4), so the flattened size is
channels[1] * 4 * 4 = 800.
"""
from __future__ import annotations

from collections.abc import Sequence

from ...ir.expr import Expr
from ...ir.module import IRModule
from ...op import make as _make
from .layers import Init, Net, Params, check_image_shape


def _conv_relu_pool(net: Net, x: Expr, size: tuple[int, int, int], channels: int,
                    name: str) -> tuple[Expr, tuple[int, int, int]]:
    c, h, w = size
    x = net.conv2d(x, c, channels, 5, name=name)
    bias = net.weight(f"{name}_bias", (channels,), Init("normal", 0.0, 0.01))
    x = _make.nn.relu(_make.nn.bias_add(x, bias, axis=1))
    x = _make.nn.max_pool2d(x, pool_size=(2, 2), strides=(2, 2))
    h, w = h - 4, w - 4
    if h < 2 or w < 2:
        raise ValueError("mnist: the image is too small for two 5x5 convolutions and pools")
    return x, (channels, h // 2, w // 2)


def get_workload(batch_size: int = 1, dtype: str = "float32", num_classes: int = 10,
                 channels: Sequence[int] = (20, 50), hidden: int = 500,
                 image_shape: Sequence[int] = (1, 28, 28),
                 seed: int = 0) -> tuple[IRModule, Params]:
    """(mod, params) of the CNN; `channels` are the two convolutions' widths."""
    c1, c2 = (int(c) for c in channels)
    size = check_image_shape(image_shape)
    net = Net(dtype)
    x: Expr = net.input("data", (batch_size, *size))
    x, size = _conv_relu_pool(net, x, size, c1, "conv1")
    x, size = _conv_relu_pool(net, x, size, c2, "conv2")
    flat = size[0] * size[1] * size[2]
    x = _make.nn.batch_flatten(x)
    x = _make.nn.relu(net.dense_add_bias(x, flat, hidden, name="fc1", relu_follows=True))
    x = net.dense_add_bias(x, hidden, num_classes, name="fc2")
    return net.workload(_make.nn.softmax(x), seed)
