"""A multilayer perceptron on 28x28 images (TVM's `relay.testing.mlp`, narrower).

    data (batch, 1, 28, 28) -> nn.batch_flatten -> 784
      -> nn.dense + nn.bias_add -> nn.relu       (one per hidden width; 128 by default)
      -> nn.dense + nn.bias_add -> nn.softmax     (num_classes)

Weights `fc1_weight`, `fc1_bias`, ... follow `%data` in `@main`, in that order.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ...ir.module import IRModule
from ...op import make as _make
from .layers import Net, Params, check_image_shape


def get_workload(batch_size: int = 1, dtype: str = "float32", num_classes: int = 10,
                 hidden: int | Sequence[int] = 128,
                 image_shape: Sequence[int] = (1, 28, 28),
                 seed: int = 0) -> tuple[IRModule, Params]:
    """(mod, params) of the MLP; `hidden` is one width or a list of them (TVM's is
    (128, 64))."""
    widths = [hidden] if isinstance(hidden, int) else list(hidden)
    image = check_image_shape(image_shape)
    net = Net(dtype)
    x = _make.nn.batch_flatten(net.input("data", (batch_size, *image)))
    size = math.prod(image)
    for i, width in enumerate(widths):
        x = net.dense_add_bias(x, size, width, name=f"fc{i + 1}", relu_follows=True)
        x = _make.nn.relu(x)
        size = width
    x = net.dense_add_bias(x, size, num_classes, name=f"fc{len(widths) + 1}")
    return net.workload(_make.nn.softmax(x), seed)
