"""ResNeXt (Xie et al. 2017): `resnet.py`'s bottleneck network with grouped 3x3
convolutions. The defaults are ResNeXt-50 32x4d: units (3, 4, 6, 3), 32 groups of
4 channels in the first stage's bottleneck (128 wide), doubling per stage."""
from __future__ import annotations

from typing import Any

from ...ir.module import IRModule
from . import resnet
from .layers import Params


def get_workload(batch_size: int = 1, dtype: str = "float32", num_layers: int = 50,
                 groups: int = 32, width_per_group: int = 4,
                 **options: Any) -> tuple[IRModule, Params]:
    """(mod, params) of a ResNeXt; other options as `resnet.get_workload`."""
    if num_layers < 50:
        raise ValueError(f"ResNeXt has bottleneck units: num_layers >= 50, got {num_layers}")
    return resnet.get_workload(batch_size, dtype, num_layers=num_layers, groups=groups,
                               width_per_group=width_per_group, **options)
