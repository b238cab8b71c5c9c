"""`example` and `example_elemwise`: demonstration targets with no codegen.

They exist so the BYOC passes can be tried and tested from text
(`relay opt -p 'MergeComposite{pattern_table=example},AnnotateTarget{targets=example}'`),
as TVM's tests use their `ccompiler`/`dnnl` tables. A partitioned function of these
targets still runs: the interpreter evaluates it as an ordinary function.

`example` takes convolutions, dense layers, bias additions and ReLU, and has three
composites in the manner of TVM's DNNL table: `example.conv2d_bias_relu` (conv2d, then
optionally bias_add or add of a bias, then relu: one pattern with optional parts),
`example.dense_bias` (dense, then bias_add or add) and `example.add_relu`.
`example_elemwise` takes `add`, `subtract`, `multiply` (TVM's ccompiler tests).
"""
from __future__ import annotations

from ....dataflow_pattern import DFPattern, is_op, wildcard
from ..registry import register_pattern_table, register_target_op

for _op in ("nn.conv2d", "nn.dense", "nn.bias_add", "nn.relu"):
    register_target_op("example", _op)

for _op in ("add", "subtract", "multiply"):
    register_target_op("example_elemwise", _op)


def conv2d_bias_relu() -> DFPattern:
    """conv2d, optionally followed by bias_add or add (a bias), then relu."""
    conv = is_op("nn.conv2d")(wildcard(), wildcard())
    bias = conv.optional(lambda x: is_op("nn.bias_add")(x, wildcard())) \
        | is_op("add")(conv, wildcard())
    return is_op("nn.relu")(bias)


def dense_bias() -> DFPattern:
    dense = is_op("nn.dense")(wildcard(), wildcard())
    return is_op("nn.bias_add")(dense, wildcard()) | is_op("add")(dense, wildcard())


def add_relu() -> DFPattern:
    return is_op("nn.relu")(is_op("add")(wildcard(), wildcard()))


@register_pattern_table("example")
def _table() -> list[tuple[str, DFPattern]]:
    return [("example.conv2d_bias_relu", conv2d_bias_relu()),
            ("example.dense_bias", dense_bias()),
            ("example.add_relu", add_relu())]
