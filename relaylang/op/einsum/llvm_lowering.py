"""The LLVM lowering of einsum: one compute over the output's axes, a sum over the
summed labels (reduction axes) of the product of the operands, each indexed by its
labels (an axis of size 1 under a larger label reads index 0: broadcasting). float16 is
multiplied and summed in float32 and rounded once, as the NumPy kernel does; the sum's
order differs from NumPy's (floats agree to rounding). bool operands raise
NotImplementedError (the executor runs the NumPy kernel)."""
from __future__ import annotations

from typing import Any

from ..llvm_rules import out_shape_dtype
from ..registry import implement
from .relations import einsum_plan


@implement("einsum", target="llvm")
def einsum(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    operands = list(inputs[0])
    shape, dtype = out_shape_dtype(out_type)
    if dtype == "bool":
        raise NotImplementedError("einsum of bool tensors")
    plan = einsum_plan(attrs.equation, [t.shape for t in operands])
    work = "float32" if dtype == "float16" else dtype
    summed = plan.summed
    if any(plan.sizes[a] == 0 for a in summed) or any(t.size == 0 for t in operands):
        return b.compute(shape, lambda *i: b.const(0, dtype), name="einsum")

    def product(env: dict) -> Any:
        value = None
        for t, labels in zip(operands, plan.inputs):
            at = tuple(b.const(0, "int64") if d == 1 and plan.sizes[a] != 1 else env[a]
                       for a, d in zip(labels, t.shape))
            v = b.cast(t[at], work)
            value = v if value is None else value * v
        return value

    def fcompute(*i: Any) -> Any:
        env = dict(zip(plan.output, i))
        if not summed:
            return product(env)
        axes = [b.reduce_axis(plan.sizes[a], "r") for a in summed]
        env.update(zip(summed, axes))
        return b.reduce_sum(product(env), axes)
    out = b.compute(shape, fcompute, dtype=work, name="einsum")
    if work != dtype:
        return b.compute(shape, lambda *i: b.cast(out[i], dtype), dtype=dtype,
                         name="einsum_round")
    return out
