"""Standard model families as Relay programs with random weights (TVM's `relay.testing`).

Each module builds its network with the IR builder and has
`get_workload(batch_size=1, dtype="float32", **options) -> (mod, params)`:
`mod` is a type-checked IRModule whose `@main` takes the input(s) (`%data`, or
`%input_ids` for gpt2) followed by every weight, `params` maps each weight's name
to a NumPy array drawn from a generator seeded by `seed` (0). Bind them with
`BindParams(params)` or pass them after the inputs:

    from relaylang.testing import models
    mod, params = models.get_workload("resnet50", image_shape=(3, 32, 32))
    out = rl.evaluate(mod, image, *models.params_in_order(mod, params))

  mlp.py        784-128-10 perceptron             resnet.py     ResNet-18/34/50/101/152
  mnist.py      LeNet-style CNN on 1x28x28        resnext.py    ResNeXt-50 32x4d
  mobilenet.py  MobileNet v1 (depthwise convs)    gpt2.py       GPT-2-style decoder
  layers.py     the layer DSL (`Net`) and initialisers

`dtype="float16"` builds the whole model, weights included, in float16.
`MODELS` names standard configurations; each has `small` options, a size the
reference interpreter runs in well under a second, for tests.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .layers import input_vars, params_in_order

if TYPE_CHECKING:
    import numpy as np

    from ...ir.module import IRModule

__all__ = ["MODELS", "Model", "example_inputs", "get_workload", "input_vars",
           "params_in_order"]


@dataclass(frozen=True)
class Model:
    """A named configuration: `family` is the module (`resnet`), `options` fix the
    configuration (`num_layers=50`), `small` are extra options for a test-sized model."""

    name: str
    family: str
    summary: str
    options: dict[str, Any] = field(default_factory=dict)
    small: dict[str, Any] = field(default_factory=dict)

    def get_workload(self, small: bool = False, **kw: Any
                     ) -> tuple[IRModule, dict[str, np.ndarray]]:
        module = importlib.import_module(f"{__name__}.{self.family}")
        options = {**self.options, **(self.small if small else {}), **kw}
        return module.get_workload(**options)


MODELS: dict[str, Model] = {m.name: m for m in (
    Model("mlp", "mlp", "multilayer perceptron 784-128-10 on 1x28x28",
          small={"hidden": 16}),
    Model("mnist", "mnist", "LeNet-style CNN: two 5x5 convs with max pools, two dense",
          small={"channels": (4, 8), "hidden": 16}),
    Model("resnet18", "resnet", "ResNet-18, basic units (2, 2, 2, 2)",
          {"num_layers": 18}, {"image_shape": (3, 32, 32), "units": (1, 1, 1, 1),
                               "base_channels": 8, "num_classes": 10}),
    Model("resnet50", "resnet", "ResNet-50, bottleneck units (3, 4, 6, 3)",
          {"num_layers": 50}, {"image_shape": (3, 32, 32), "units": (1, 1, 1, 1),
                               "base_channels": 8, "num_classes": 10}),
    Model("resnext50", "resnext", "ResNeXt-50 32x4d: grouped 3x3 convs in the bottlenecks",
          {"num_layers": 50}, {"image_shape": (3, 32, 32), "units": (1, 1, 1, 1),
                               "base_channels": 16, "groups": 4, "width_per_group": 8,
                               "num_classes": 10}),
    Model("mobilenet", "mobilenet", "MobileNet v1, depthwise separable convs",
          small={"image_shape": (3, 32, 32), "alpha": 0.25, "num_classes": 10}),
    Model("gpt2", "gpt2", "GPT-2 small: 12 blocks, hidden 768, 12 heads, 64 tokens",
          small={"layers": 2, "seq": 8, "hidden": 32, "heads": 4, "vocab": 64,
                 "n_ctx": 8}),
)}


def get_workload(name: str, small: bool = False, **kw: Any
                 ) -> tuple[IRModule, dict[str, np.ndarray]]:
    """`MODELS[name].get_workload(...)`: the model's options, then `small`'s, then `kw`."""
    if name not in MODELS:
        raise KeyError(f"no model {name!r}; models: {', '.join(MODELS)}")
    return MODELS[name].get_workload(small=small, **kw)


def example_inputs(mod: IRModule, params: dict[str, np.ndarray], seed: int = 1,
                   int_high: int = 16) -> list[np.ndarray]:
    """Random values for `@main`'s inputs (its parameters not in `params`), in order:
    floats normal(0, 1), integers uniform in [0, int_high) (token ids)."""
    import numpy as np

    from ...ir.types import TensorType
    rng = np.random.default_rng(seed)
    values = []
    for var in input_vars(mod, params):
        ty = var.type_annotation
        if not isinstance(ty, TensorType) or not all(isinstance(d, int) for d in ty.shape):
            raise ValueError(f"input %{var.name_hint} has no static tensor type")
        shape = tuple(ty.shape)
        if np.dtype(ty.dtype).kind == "f":
            values.append(rng.standard_normal(shape).astype(ty.dtype))
        else:
            values.append(rng.integers(0, int_high, size=shape).astype(ty.dtype))
    return values
