"""Converters of the ONNX-ML operators (domain ai.onnx.ml) that are tensor arithmetic:
Binarizer and ArrayFeatureExtractor. (String-valued ones need a string dtype, which
relaylang does not have.)
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ....op import make as op
from ..registry import converter

DOMAIN = "ai.onnx.ml"


@converter("Binarizer", since=1, domain=DOMAIN)
def binarizer(ctx: Any, node: Any) -> Any:
    """1 where x > threshold, else 0, in x's dtype."""
    x = node.inputs[0]
    dtype = ctx.dtype(x)
    threshold = ctx.const(np.asarray(float(node.attr("threshold", 0.0))).astype(dtype))
    return op.cast(op.greater(x, threshold), dtype=dtype)


@converter("ArrayFeatureExtractor", since=1, domain=DOMAIN)
def array_feature_extractor(ctx: Any, node: Any) -> Any:
    """The entries of the last axis at `indices` (all of them, flattened); a 1-D input
    gives one row (1, k), as onnxruntime does."""
    data, indices = node.inputs[0], node.inputs[1]
    if ctx.dtype(indices) != "int64":
        raise node.error(f"indices must be int64, got {ctx.dtype(indices)}")
    shape = ctx.shape(data)
    if not shape:
        raise node.error("the input must have at least one axis")
    k_shape = ctx.shape(indices)
    if not all(isinstance(d, int) for d in k_shape):
        raise node.error("the number of indices must be known at import")
    k = int(np.prod(k_shape)) if k_shape else 1
    flat = op.reshape(indices, newshape=(k,))
    picked = op.take(data, flat, axis=len(shape) - 1, mode="fast")
    if len(shape) == 1:
        return op.reshape(picked, newshape=(1, k))
    return picked
