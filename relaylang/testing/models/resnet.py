"""ResNet-18/34/50/101/152 as TVM's `relay.testing.resnet` builds it, plus ResNeXt.

The pre-activation ("identity mappings", He et al. 2016) network of that file,
NCHW throughout, epsilon 2e-5:

    data -> batch_norm (bn_data, scale=False)
         -> conv0 7x7/2 -> bn0 -> relu -> max_pool2d 3x3/2     (images taller than 32)
            conv0 3x3/1                                         (32 or less, as CIFAR)
         -> stages of residual units (stage i's first unit strides by 2 for i > 1 and
            has a 1x1 projection `_sc` on its shortcut)
         -> bn1 -> relu -> global_avg_pool2d -> batch_flatten -> dense + bias_add
         -> softmax

A unit is batch_norm -> relu -> conv, two times (3x3, 3x3: "basic", 18 and 34
layers) or three times (1x1, 3x3, 1x1: "bottleneck", 50 layers and more), plus
the shortcut. The bottleneck's inner width is `planes * width_per_group / 64 *
groups` with `planes` a quarter of the unit's output, and its 3x3 convolution
has `groups` groups (torchvision's rule): `groups=32, width_per_group=4` is
ResNeXt-50 32x4d (`resnext.py`), the defaults are ResNet.

Sizes for tests: `image_shape=(3, 32, 32)`, `units=(1, 1, 1, 1)` (units per
stage instead of the `num_layers` table) and `base_channels` (64: the stem's
width; every other width scales with it). The last convolution of each residual
branch is damped by 1/sqrt(units in the network), so that the residual stream of
random weights grows by a bounded factor rather than doubling per unit.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

from ...ir.expr import Expr
from ...ir.module import IRModule
from ...op import make as _make
from .layers import Net, Params, check_image_shape

UNITS: dict[int, tuple[int, ...]] = {
    18: (2, 2, 2, 2), 34: (3, 4, 6, 3), 50: (3, 4, 6, 3), 101: (3, 4, 23, 3),
    152: (3, 8, 36, 3),
}
EPSILON = 2e-5


def _bn_relu(net: Net, x: Expr, channels: int, name: str) -> Expr:
    return _make.nn.relu(net.batch_norm_infer(x, channels, name=name, epsilon=EPSILON))


def residual_unit(net: Net, data: Expr, in_channels: int, num_filter: int, stride: int,
                  dim_match: bool, name: str, bottle_neck: bool = True, groups: int = 1,
                  width_per_group: int = 64, gain: float = 1.0) -> Expr:
    """One pre-activation unit: `num_filter` output channels, `gain` on its last conv."""
    act1 = _bn_relu(net, data, in_channels, f"{name}_bn1")
    if bottle_neck:
        mid = num_filter // 4 * width_per_group // 64 * groups
        if mid <= 0:
            raise ValueError(f"{name}: a bottleneck of {mid} channels (num_filter "
                             f"{num_filter}, groups {groups}, width_per_group {width_per_group})")
        conv1 = net.conv2d(act1, in_channels, mid, 1, strides=stride, name=f"{name}_conv1")
        conv2 = net.conv2d(_bn_relu(net, conv1, mid, f"{name}_bn2"), mid, mid, 3, padding=1,
                           groups=groups, name=f"{name}_conv2")
        body = net.conv2d(_bn_relu(net, conv2, mid, f"{name}_bn3"), mid, num_filter, 1,
                          name=f"{name}_conv3", gain=gain)
    else:
        conv1 = net.conv2d(act1, in_channels, num_filter, 3, strides=stride, padding=1,
                           name=f"{name}_conv1")
        body = net.conv2d(_bn_relu(net, conv1, num_filter, f"{name}_bn2"), num_filter,
                          num_filter, 3, padding=1, name=f"{name}_conv2", gain=gain)
    shortcut = data if dim_match else \
        net.conv2d(act1, in_channels, num_filter, 1, strides=stride, name=f"{name}_sc")
    return _make.add(body, shortcut)


def get_workload(batch_size: int = 1, dtype: str = "float32", num_classes: int = 1000,
                 num_layers: int = 18, image_shape: Sequence[int] = (3, 224, 224),
                 groups: int = 1, width_per_group: int = 64,
                 units: Sequence[int] | None = None, base_channels: int = 64,
                 seed: int = 0) -> tuple[IRModule, Params]:
    """(mod, params) of a ResNet (TVM's default `num_layers=18`); `units` overrides the
    units per stage of `num_layers`, which then only chooses basic (< 50) or bottleneck
    units."""
    if units is None:
        if num_layers not in UNITS:
            raise ValueError(f"num_layers must be one of {sorted(UNITS)}, got {num_layers}")
        units = UNITS[num_layers]
    units = tuple(int(u) for u in units)
    if not units or min(units) < 1:
        raise ValueError(f"units must be positive counts per stage, got {units!r}")
    bottle_neck = num_layers >= 50
    if not bottle_neck and (groups != 1 or width_per_group != 64):
        raise ValueError("groups and width_per_group need bottleneck units (num_layers >= 50)")
    image = check_image_shape(image_shape)
    base = int(base_channels)
    widths = [base * (4 if bottle_neck else 1) * 2 ** i for i in range(len(units))]
    gain = 1.0 / math.sqrt(sum(units))

    net = Net(dtype)
    data = net.input("data", (batch_size, *image))
    x = net.batch_norm_infer(data, image[0], name="bn_data", epsilon=EPSILON, scale=False)
    if image[1] <= 32:
        x = net.conv2d(x, image[0], base, 3, padding=1, name="conv0")
    else:
        x = net.conv2d(x, image[0], base, 7, strides=2, padding=3, name="conv0")
        x = _bn_relu(net, x, base, "bn0")
        x = _make.nn.max_pool2d(x, pool_size=(3, 3), strides=(2, 2), padding=(1, 1))
    channels = base
    for i, count in enumerate(units):
        for j in range(count):
            x = residual_unit(net, x, channels, widths[i], 2 if i > 0 and j == 0 else 1,
                              dim_match=j > 0, name=f"stage{i + 1}_unit{j + 1}",
                              bottle_neck=bottle_neck, groups=groups,
                              width_per_group=width_per_group, gain=gain)
            channels = widths[i]
    x = _bn_relu(net, x, channels, "bn1")
    x = _make.nn.batch_flatten(_make.nn.global_avg_pool2d(x))
    x = net.dense_add_bias(x, channels, num_classes, name="fc1")
    return net.workload(_make.nn.softmax(x), seed)
