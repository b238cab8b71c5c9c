"""The annotation family: annotation and device-placement operators.

Mirrors TVM's src/relay/op/memory/on_device.cc (`on_device`),
src/relay/op/memory/device_copy.cc (`device_copy`) and
src/relay/op/annotation/annotation.cc (`annotation.*`), with the schemas of
include/tvm/relay/attrs/{on_device,device_copy,annotation}.h. All are opaque
and, as in TVM, not stateful.

Virtual devices are metadata objects (`meta[VirtualDevice][i]`), carried as
`object`. `None` stands for TVM's `VirtualDevice::FullyUnconstrained()`, the
default of `on_device`; `device_copy` has no defaults, so TVM always prints
both of its devices.

`annotation.cast_hint` and `annotation.compiler_begin/_end` carry
CastHintAttrs / CompilerAttrs, but TVM registers no attribute type for these
ops, so their attributes print as a trailing `meta[relay.attrs.*][i]`
argument: the ops take no keyword attributes here either.

Every one of them is the identity, as TVM's IdentityRel makes them for type
checking: the result has the argument's type, whatever it is (a tensor, a
tuple, a function), and the kernel returns its input. They exist here so
that programs TVM printed after device planning or partitioning type-check
and run.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs, DType
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import identity_rel

O = OpPattern.OPAQUE


@attrs_schema
class OnDeviceAttrs(Attrs):
    virtual_device: object = None
    constrain_result: bool = False
    constrain_body: bool = True

    type_key: ClassVar[str] = "relay.attrs.OnDeviceAttrs"


@attrs_schema
class DeviceCopyAttrs(Attrs):
    src_virtual_device: object
    dst_virtual_device: object

    type_key: ClassVar[str] = "relay.attrs.DeviceCopyAttrs"


@attrs_schema
class CastHintAttrs(Attrs):
    dtype: DType

    type_key: ClassVar[str] = "relay.attrs.CastHintAttrs"


@attrs_schema
class CompilerAttrs(Attrs):
    compiler: str

    type_key: ClassVar[str] = "relay.attrs.CompilerAttrs"


ANNOTATIONS = {name: O for name in (
    "annotation.stop_fusion", "annotation.cast_hint", "annotation.checkpoint",
    "annotation.bitpack_start", "annotation.bitpack_end",
    "annotation.compiler_begin", "annotation.compiler_end",
)}


# TVM names on_device's input `body` (the annotated sub-expression), the others `data`.
# A placement and a transfer are no computation: FoldConstant leaves them in place (TVM's
# fold_constant.cc names both).
declare_op("on_device", inputs=("body",), attrs=OnDeviceAttrs, rel=identity_rel, pattern=O,
           non_computational=True)
declare_op("device_copy", inputs=("data",), attrs=DeviceCopyAttrs, rel=identity_rel, pattern=O,
           non_computational=True)
for _name, _pattern in ANNOTATIONS.items():
    declare_op(_name, inputs=("data",), rel=identity_rel, pattern=_pattern)
