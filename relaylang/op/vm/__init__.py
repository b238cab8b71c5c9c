"""The vm family: operators of TVM's VM lowering.

Mirrors TVM's src/relay/op/vm/vm.cc (`vm.shape_of`, `vm.invoke_tvm_op`,
`vm.reshape_tensor`) with the schemas of include/tvm/relay/attrs/vm.h
(ShapeFuncAttrs, ReshapeTensorAttrs). `vm.shape_of` carries ShapeOfAttrs, the
schema of `shape_of` (TVM registers the same attrs type). All are opaque and
non-computational, as in TVM; `vm.invoke_tvm_op` is stateful (it writes its
output buffers).

Reference semantics: `vm.shape_of` is the input's shape as a tensor of `dtype`,
`vm.reshape_tensor` a reshape to `newshape`; `vm.invoke_tvm_op` calls a lowered
primitive on preallocated outputs, which only the VM can do: evaluating it is an
error that says so. TVM registers `vm.invoke_tvm_op` with attrs type DictAttrs (the
primitive function's attributes, printed as plain `key=value`s); so does this.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DictAttrs, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from ..transform import ShapeOfAttrs
from .relations import invoke_tvm_op_rel, reshape_tensor_rel, vm_shape_of_rel

O = OpPattern.OPAQUE


@attrs_schema
class ShapeFuncAttrs(Attrs):
    # For each input of the primitive: 1 if its shape function needs the data, else 0.
    is_input: tuple[int, ...] | None

    type_key: ClassVar[str] = "relay.attrs.ShapeFuncAttrs"


@attrs_schema
class ReshapeTensorAttrs(Attrs):
    newshape: tuple[IndexExpr, ...] | None

    type_key: ClassVar[str] = "relay.attrs.ReshapeTensorAttrs"


declare_op("vm.shape_of", inputs=("tensor",), attrs=ShapeOfAttrs, rel=vm_shape_of_rel,
           pattern=O, non_computational=True,
           doc="The shape of `tensor` as a 1-d tensor of `dtype` (int64 when unset).")
declare_op("vm.invoke_tvm_op", inputs=("op", "ins", "outs"), attrs=DictAttrs,
           rel=invoke_tvm_op_rel, pattern=O, stateful=True, non_computational=True,
           doc="Call the lowered primitive `op` on the tuple `ins`, writing the tuple `outs`; "
               "only meaningful after lowering to the VM.")
declare_op("vm.reshape_tensor", inputs=("data", "shape"), attrs=ReshapeTensorAttrs,
           rel=reshape_tensor_rel, pattern=O, non_computational=True,
           doc="`data` reshaped to `newshape` (`shape` holds the same shape as a tensor).")

__all__ = ["ReshapeTensorAttrs", "ShapeFuncAttrs", "ShapeOfAttrs"]
