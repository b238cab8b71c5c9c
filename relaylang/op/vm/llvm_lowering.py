"""LLVM lowerings of the vm family: `vm.shape_of` as `shape_of` (a constant tensor of
the static shape), `vm.reshape_tensor` as `reshape` when its type is static.
`vm.invoke_tvm_op` has none (only the VM can run it; the NumPy kernel raises).

`vm.reshape_tensor` takes its output shape from the type (`newshape`); its `shape`
argument is not read. The NumPy kernel also checks that the values of `shape` agree
with `newshape`, which the native code cannot report (the kernel status has no such
code): natively a disagreeing `shape` tensor is ignored. A `newshape` whose element
count differs from the data's is left to the NumPy kernel (NotImplementedError), which
raises its error.
"""
from __future__ import annotations

import math
from typing import Any

from ..llvm_rules import out_shape_dtype
from ..registry import implement
from ..transform.llvm_lowering import _reshape_to
from ..transform.llvm_lowering import shape_of as _shape_of


@implement("vm.shape_of", target="llvm")
def shape_of(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    return _shape_of(b, inputs, attrs, out_type)


@implement("vm.reshape_tensor", target="llvm")
def reshape_tensor(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    data = inputs[0]
    shape, _ = out_shape_dtype(out_type)
    if math.prod(shape) != math.prod(data.shape):
        raise NotImplementedError(
            f"vm.reshape_tensor of {data.shape} ({math.prod(data.shape)} elements) to "
            f"{shape}: the NumPy kernel reports the mismatch")
    return _reshape_to(b, data, out_type, "reshape_tensor")
