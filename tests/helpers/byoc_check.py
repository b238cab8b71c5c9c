"""What the external-target tests (tests/backend/test_byoc_*.py) share."""
from __future__ import annotations

from pathlib import Path

import numpy as np

import relaylang as rl

ROOT = Path(__file__).resolve().parents[2]
# The examples whose tensor ops the targets take (each is built with and without them).
EXAMPLES = ["attention.relay", "conv_bn_relu.relay", "digits_mlp.relay", "mlp.relay",
            "train_mlp.relay"]


def example_module(name: str) -> tuple[rl.IRModule, list[np.ndarray]]:
    """examples/`name` parsed, and float32 inputs for @main's parameters: small normal
    values, positive ones for batch-norm variances (parameters named *var*)."""
    path = ROOT / "examples" / name
    mod = rl.parse(path.read_text(), str(path))
    rng = np.random.default_rng(3)
    inputs = []
    for p in mod["main"].params:
        shape = [int(d) for d in p.type_annotation.shape]
        if "var" in p.name_hint:
            inputs.append((1 + rng.random(shape)).astype("float32"))
        else:
            inputs.append((rng.standard_normal(shape) * 0.2).astype("float32"))
    return mod, inputs
