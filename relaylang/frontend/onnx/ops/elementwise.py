"""Elementwise ONNX operators: unary math, binary arithmetic with NumPy broadcasting
(ONNX's multidirectional broadcasting is NumPy's), comparisons and logic, activations."""
from __future__ import annotations

from typing import Any

from ....op import make as op
from ..registry import converter


def _unary(op_type: str, build: Any, since: int = 1) -> None:
    converter(op_type, since=since)(lambda ctx, node: build(node.inputs[0]))


def _binary(op_type: str, build: Any, since: int = 1) -> None:
    converter(op_type, since=since)(lambda ctx, node: build(node.inputs[0], node.inputs[1]))


for _name, _build in {"Relu": op.nn.relu, "Exp": op.exp, "Log": op.log, "Sqrt": op.sqrt,
                      "Neg": op.negative, "Abs": op.abs, "Tanh": op.tanh,
                      "Sigmoid": op.sigmoid}.items():
    _unary(_name, _build)

for _name, _build in {"Add": op.add, "Sub": op.subtract, "Mul": op.multiply,
                      "Div": op.divide}.items():
    _binary(_name, _build)
