"""The memory family: explicit allocation, as TVM's memory planning prints it.

Mirrors TVM's src/relay/op/memory/memory.cc (`memory.alloc_storage`,
`memory.alloc_tensor`, `memory.kill`) with the schemas of
include/tvm/relay/attrs/memory.h (AllocStorageAttrs, AllocTensorAttrs; field order
and defaults as there). As in TVM all three are opaque and non-computational
(FoldConstant leaves them in place); `memory.kill` is stateful.

`Storage` is the type `extern type Storage` of TVM's core.rly: a storage value is
`Storage[]`, a call of that global type (equal by name, so a module need not
define it). The parser knows the name without a definition
(`ir.types.BUILTIN_TYPE_NAMES`): a program a pass printed with a storage parameter
(FuseOps leaves these calls out of kernels, but ToCPS's continuations take them)
parses back; TVM's parser needs core.rly's declaration.

Reference semantics: `memory.kill` releases nothing the interpreter could see, so
it returns `()`; the two allocations hand out storage that only the VM's
instructions give meaning to, so evaluating them is an error that says so (see
numpy_kernels.py).
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType, IndexExpr
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import alloc_storage_rel, alloc_tensor_rel, kill_rel

O = OpPattern.OPAQUE


@attrs_schema
class AllocStorageAttrs(Attrs):
    dtype: DType = DType("float32")
    # TVM's default is VirtualDevice::FullyUnconstrained(); None stands for it (as on_device).
    virtual_device: object = None

    type_key: ClassVar[str] = "relay.attrs.AllocStorageAttrs"


@attrs_schema
class AllocTensorAttrs(Attrs):
    dtype: DType = DType("float32")
    # A relay.Constant (`meta[relay.Constant][i]`): the shape when it is known statically.
    const_shape: object | None
    # The result's shape when const_shape is None (dimensions may be `?`).
    assert_shape: tuple[IndexExpr, ...] | None

    type_key: ClassVar[str] = "relay.attrs.AllocTensorAttrs"


declare_op("memory.alloc_storage", inputs=("size", "shape", "alignment"),
           attrs=AllocStorageAttrs, rel=alloc_storage_rel, pattern=O, non_computational=True,
           doc="Allocate storage of `size` bytes aligned to `alignment` (int64 scalars) on "
               "`virtual_device`; only meaningful after lowering to the VM.")
declare_op("memory.alloc_tensor", inputs=("storage", "offset", "shape"),
           attrs=AllocTensorAttrs, rel=alloc_tensor_rel, pattern=O, non_computational=True,
           doc="A tensor of `dtype` at `offset` in `storage`, of shape `const_shape` (or "
               "`assert_shape`); only meaningful after lowering to the VM.")
declare_op("memory.kill", inputs=("to_free",), rel=kill_rel, pattern=O, stateful=True,
           non_computational=True,
           doc="Mark a value for release to the allocator; its result is `()`.")
