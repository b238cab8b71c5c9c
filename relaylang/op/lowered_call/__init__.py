"""The lowered-call family: `call_lowered`, TVM's call of a lowered (TIR) function.

Mirrors TVM's src/relay/op/call/call.cc with CallLoweredAttrs of
include/tvm/relay/attrs/call.h (the folder is not named `call`: `relaylang.op.call`
is the registry's function that builds op calls). TVM prints it after LowerTE as
`call_lowered(@f, (%x, %y))`: the callee is a global (a PrimFunc in TVM's module)
and the arguments come as one tuple. Opaque and non-computational, as in TVM.

`metadata` is TVM's Map<String, ObjectRef> (default empty, written None here):
a map prints as a meta reference, so it is carried as one.

Reference semantics: when the callee is a Relay function of the module the call
is that function applied to the tuple's fields; the interpreter cannot reach the
callee from a kernel, so evaluating `call_lowered` is an error that says the op
is only meaningful after lowering.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import call_lowered_rel


@attrs_schema
class CallLoweredAttrs(Attrs):
    metadata: object = None

    type_key: ClassVar[str] = "relay.attrs.CallLoweredAttrs"


declare_op("call_lowered", inputs=("func", "call_args"), attrs=CallLoweredAttrs,
           rel=call_lowered_rel, pattern=OpPattern.OPAQUE, non_computational=True,
           doc="Call the lowered function `func` on the fields of the tuple `call_args`; "
               "only meaningful after lowering.")
