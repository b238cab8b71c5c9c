"""The small layer DSL the models are written in, and their random weights.

TVM's `tvm.relay.testing` creates an unannotated `relay.var` per weight and
learns its shape by type inference before filling it (`init.create_workload`).
Here a `Net` knows every weight's shape when it creates it: each weight is a
`Tensor[(shape), dtype]` parameter with an initialiser attached, so the module
is annotated as built and the arrays can be drawn without a type check.

    net = Net("float32")
    x = net.input("data", (1, 784))
    y = net.dense_add_bias(x, 10, name="fc1")
    mod, params = net.workload(rl_nn.softmax(y))

`workload` makes `@main(%data, <weights in order of creation>)`, type-checks it
(TVM's create_workload does too), and draws the weights from one seeded NumPy
generator in parameter order, so the same options and seed give the same bytes.
Weights are drawn in float32 (NumPy's float32 generators, twice as fast as
float64 for ResNet's 25M weights) and rounded once to the model's dtype, so a
float16 model's weights are its float32 twin's, rounded.

Initialisers keep activations of order one through a whole network, in float16
too: He-normal convolutions and hidden dense layers (fan-in counts a group's
input channels only), Xavier-like classifiers, batch-norm statistics near the
identity (moving variance in [0.75, 1.25], never zero), and a `gain` the models
use to damp the last layer of each residual branch.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...ir import builder as _b
from ...ir.expr import Expr, Var
from ...ir.module import IRModule
from ...op import make as _make

if TYPE_CHECKING:
    import numpy as np

Params = dict[str, "np.ndarray"]

FLOAT_DTYPES = ("float32", "float16", "float64")


@dataclass(frozen=True)
class Init:
    """How a weight is drawn: `normal` (mean `a`, std `b`), `uniform` on [a, b), or
    `fill` with `a`."""

    kind: str
    a: float = 0.0
    b: float = 0.0

    def draw(self, rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
        import numpy as np
        if self.kind == "normal":
            data = rng.standard_normal(shape, dtype=np.float32)
            data *= np.float32(self.b)
            data += np.float32(self.a)
        elif self.kind == "uniform":
            data = rng.random(shape, dtype=np.float32)
            data *= np.float32(self.b - self.a)
            data += np.float32(self.a)
        elif self.kind == "fill":
            data = np.full(shape, self.a, dtype=np.float32)
        else:
            raise ValueError(f"unknown initialiser {self.kind!r}")
        return data if data.dtype == np.dtype(dtype) else data.astype(dtype)


def he_normal(fan_in: int, gain: float = 1.0) -> Init:
    """For a layer followed by ReLU: variance 2 / fan_in keeps the second moment."""
    return Init("normal", 0.0, gain * math.sqrt(2.0 / max(fan_in, 1)))


def xavier_normal(fan_in: int, fan_out: int, gain: float = 1.0) -> Init:
    return Init("normal", 0.0, gain * math.sqrt(2.0 / max(fan_in + fan_out, 1)))


@dataclass(frozen=True)
class Weight:
    var: Var
    shape: tuple[int, ...]
    init: Init


class Net:
    """Collects a model's inputs and weights while it is built, then makes the workload."""

    def __init__(self, dtype: str = "float32") -> None:
        if dtype not in FLOAT_DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(FLOAT_DTYPES)}, got {dtype!r}")
        self.dtype = dtype
        self.inputs: list[Var] = []
        self.weights: list[Weight] = []
        self._names: set[str] = set()

    # ------------------------------------------------------------ leaves

    def _name(self, name: str) -> str:
        if name in self._names:
            raise ValueError(f"two parameters named {name!r}")
        self._names.add(name)
        return name

    def input(self, name: str, shape: Sequence[int], dtype: str | None = None) -> Var:
        v = _b.var(self._name(name), shape=tuple(shape), dtype=dtype or self.dtype)
        self.inputs.append(v)
        return v

    def weight(self, name: str, shape: Sequence[int], init: Init) -> Var:
        shape = tuple(int(d) for d in shape)
        v = _b.var(self._name(name), shape=shape, dtype=self.dtype)
        self.weights.append(Weight(v, shape, init))
        return v

    def scalar(self, value: float) -> Expr:
        """A scalar constant in the model's dtype (printed inline: `0.5f16`)."""
        return _b.const(value, self.dtype)

    # ------------------------------------------------------------ layers

    def conv2d(self, data: Expr, in_channels: int, channels: int, kernel: int, *,
               name: str, strides: int = 1, padding: int = 0, groups: int = 1,
               gain: float = 1.0) -> Expr:
        """NCHW / OIHW convolution without bias; `{name}_weight` is He-normal."""
        if in_channels % groups or channels % groups:
            raise ValueError(f"{name}: {in_channels} -> {channels} channels do not divide "
                             f"into {groups} groups")
        fan_in = in_channels // groups * kernel * kernel
        w = self.weight(f"{name}_weight", (channels, in_channels // groups, kernel, kernel),
                        he_normal(fan_in, gain))
        return _make.nn.conv2d(data, w, strides=(strides, strides), padding=(padding, padding),
                               groups=groups, channels=channels, kernel_size=(kernel, kernel))

    def batch_norm_infer(self, data: Expr, channels: int, *, name: str, epsilon: float = 1e-5,
                         scale: bool = True, axis: int = 1, gain: float = 1.0) -> Expr:
        """nn.batch_norm's normalised output (`.0`), TVM's `layers.batch_norm_infer`;
        gamma, beta, moving mean and moving variance are parameters in that order."""
        gamma = self.weight(f"{name}_gamma", (channels,), Init("uniform", 0.9 * gain, 1.1 * gain))
        beta = self.weight(f"{name}_beta", (channels,), Init("normal", 0.0, 0.05))
        mean = self.weight(f"{name}_moving_mean", (channels,), Init("normal", 0.0, 0.05))
        var = self.weight(f"{name}_moving_var", (channels,), Init("uniform", 0.75, 1.25))
        bn = _make.nn.batch_norm(data, gamma, beta, mean, var, axis=axis, epsilon=epsilon,
                                 scale=scale)
        return _b.TupleGetItem(bn, 0)

    def dense_add_bias(self, data: Expr, in_units: int, units: int, *, name: str,
                       relu_follows: bool = False, gain: float = 1.0) -> Expr:
        """nn.dense + nn.bias_add(axis=-1), TVM's `layers.dense_add_bias`."""
        init = he_normal(in_units, gain) if relu_follows else \
            xavier_normal(in_units, units, gain)
        w = self.weight(f"{name}_weight", (units, in_units), init)
        b = self.weight(f"{name}_bias", (units,), Init("normal", 0.0, 0.01))
        return _make.nn.bias_add(_make.nn.dense(data, w, units=units), b, axis=-1)

    def layer_norm(self, data: Expr, size: int, *, name: str, epsilon: float = 1e-5) -> Expr:
        gamma = self.weight(f"{name}_gamma", (size,), Init("uniform", 0.9, 1.1))
        beta = self.weight(f"{name}_beta", (size,), Init("normal", 0.0, 0.02))
        return _make.nn.layer_norm(data, gamma, beta, axis=-1, epsilon=epsilon)

    # ------------------------------------------------------------ the workload

    def function(self, body: Expr) -> Expr:
        return _b.Function([*self.inputs, *(w.var for w in self.weights)], body)

    def params(self, seed: int = 0) -> Params:
        import numpy as np
        rng = np.random.default_rng(seed)
        return {w.var.name_hint: w.init.draw(rng, w.shape, self.dtype) for w in self.weights}

    def workload(self, body: Expr, seed: int = 0, infer_type: bool = True
                 ) -> tuple[IRModule, Params]:
        """(module with `@main(inputs..., weights...)`, weights by name)."""
        mod = IRModule.from_expr(self.function(body))
        if infer_type:
            from ...transform.infer_type import InferType
            mod = InferType()(mod)
        return mod, self.params(seed)


def params_in_order(mod: IRModule, params: Params) -> list[np.ndarray]:
    """The weights in the order of `@main`'s parameters (those named in `params`), for
    `evaluate(mod, *inputs, *params_in_order(mod, params))`."""
    return [params[p.name_hint] for p in mod["main"].params if p.name_hint in params]


def input_vars(mod: IRModule, params: Params) -> list[Var]:
    """The parameters of `@main` that are inputs, not weights."""
    return [p for p in mod["main"].params if p.name_hint not in params]


def check_image_shape(image_shape: Any, channels: int | None = None) -> tuple[int, int, int]:
    shape = tuple(int(d) for d in image_shape)
    if len(shape) != 3:
        raise ValueError(f"image_shape is (channels, height, width), got {image_shape!r}")
    if channels is not None and shape[0] != channels:
        raise ValueError(f"image_shape must have {channels} channel(s), got {shape[0]}")
    return shape
