"""The dataflow pattern language (TVM's `relay.dataflow_pattern`): build patterns,
match them, partition expressions by them, rewrite with callbacks.

    from relaylang.dataflow_pattern import is_op, wildcard, is_constant
    conv = is_op("nn.conv2d")(wildcard(), is_constant())
    pattern = is_op("nn.relu")(conv.optional(lambda x: is_op("nn.bias_add")(x, wildcard())))
    pattern.match(expr)                                   # bool
    pattern.partition(expr, attrs={"Composite": "x"})     # matches -> called functions
    rewrite(MyCallback(), expr)                           # DFPatternCallback subclasses

`pattern.py` holds the nodes and TVM's constructors, `matcher.py` the matcher,
`graph.py` the indexed dataflow graph with its post-dominator tree, `rewrite.py`
grouping, partitioning and rewriting, `printer.py` patterns as text. Nothing recurses
over expressions (nor over patterns): 10,000-node chains match and rewrite.
"""
from . import grouper, matcher, printer  # noqa: F401 -- install the engines
from .pattern import (
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DFPatternCallback,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    dominates,
    has_attr,
    has_dtype,
    has_shape,
    has_type,
    is_constant,
    is_expr,
    is_if,
    is_let,
    is_op,
    is_tuple,
    is_tuple_get_item,
    is_var,
    match,
    partition,
    rewrite,
    wildcard,
)

__all__ = ["AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
           "DFPatternCallback", "DataTypePattern", "DominatorPattern", "ExprPattern",
           "FunctionPattern", "IfPattern", "LetPattern", "ShapePattern", "TupleGetItemPattern",
           "TuplePattern", "TypePattern", "VarPattern", "WildcardPattern", "dominates",
           "has_attr", "has_dtype", "has_shape", "has_type", "is_constant", "is_expr", "is_if",
           "is_let", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match", "partition",
           "rewrite", "wildcard"]
