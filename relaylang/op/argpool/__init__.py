"""The argpool family: nn.max_pool2d_with_argmax, 2-D max pooling that also gives where
each maximum was.

TVM's Relay has no such op (its ONNX frontend refused MaxPool's Indices output); the name
follows TensorFlow's MaxPoolWithArgmax (tf.nn.max_pool_with_argmax) and the attributes
are TVM's MaxPool2DAttrs plus ONNX's `storage_order`. It belongs with the pools
(`op/pool/`); it has a folder of its own only to keep clear of their files.

    nn.max_pool2d_with_argmax(data, pool_size, strides, dilation, padding, layout="NCHW",
                              ceil_mode=False, storage_order=0)
      -> (values, indices: int64), both of nn.max_pool2d's output shape

`indices` are flat positions in `data` (NCHW only): ((n * C + c) * H + h) * W + w, or
with storage_order=1 (column major inside a plane) (n * C + c) * H * W + w * H + h.
Padding never wins: the maximum is over the window's positions inside the data, the
first (row major over the window) when several are equal; a window with no position
inside the data gives value 0 and index -1 (ONNX's MaxPool reference).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import max_pool2d_with_argmax_rel


@attrs_schema
class MaxPool2DWithArgmaxAttrs(Attrs):
    pool_size: tuple[IndexExpr, ...] | None
    strides: tuple[IndexExpr, ...] | None = (1, 1)
    dilation: tuple[IndexExpr, ...] | None = (1, 1)
    padding: tuple[IndexExpr, ...] | None = (0, 0)
    layout: str = "NCHW"
    out_layout: str = ""
    ceil_mode: bool = False
    storage_order: int = 0

    type_key: ClassVar[str] = "relay.attrs.MaxPool2DWithArgmaxAttrs"


declare_op("nn.max_pool2d_with_argmax", inputs=("data",), attrs=MaxPool2DWithArgmaxAttrs,
           rel=max_pool2d_with_argmax_rel, pattern=OpPattern.OPAQUE,
           doc="2-D max pooling giving (values, int64 flat indices of the maxima in data).")
