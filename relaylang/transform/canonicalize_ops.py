"""CanonicalizeOps: write `nn.bias_add` as a broadcasting `add`
(TVM's src/relay/transforms/canonicalize_ops.cc).

`nn.bias_add(x, b, axis=a)` adds the 1-D bias `b` along axis `a` of `x`. The
same value is `add(x, b')` where `b'` is `b` with one unit axis appended for
every axis of `x` after `a`, so that it broadcasts along `a` (TVM's
`ExpandBiasToMatchAxis`). Later passes then only know `add`.

    def @main(%x: Tensor[(1, 4, 8, 8), float32], %b: Tensor[(4), float32]) {
      nn.bias_add(%x, %b)                    ==>   %0 = expand_dims(%b, axis=1, num_newaxis=2);
    }                                              add(%x, %0)

When `a` is the last axis no `expand_dims` is needed: `add(x, b)`. The pass
type-checks the module first when it is not typed (it needs the rank of `x`),
and returns it typed.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.expr import Call, Expr, Op
from ..ir.module import IRModule
from ..ir.normal_forms import map_unfused_functions
from ..ir.traverse import rewrite
from ..ir.types import TensorType
from ..op import get as get_op
from ..op.transform import ExpandDimsAttrs
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class CanonicalizeOps(ModulePass):
    """Rewrite every `nn.bias_add` of each global function as an `add`."""

    name: ClassVar[str] = "CanonicalizeOps"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return map_unfused_functions(mod, lambda fn: rewrite(fn, _canonicalize))


def _canonicalize(old: Expr, new: Expr) -> Expr | None:
    if not (isinstance(new, Call) and isinstance(new.op, Op) and new.op.name == "nn.bias_add"):
        return None
    ty = old.checked_type          # bias_add's result has the type of its first argument
    if not isinstance(ty, TensorType):
        return None
    x, bias = new.args
    ndim = len(ty.shape)
    axis = new.attrs.axis if new.attrs is not None else 1        # type: ignore[attr-defined]
    axis = axis + ndim if axis < 0 else axis
    pad = ndim - axis - 1                   # unit axes after the bias axis
    if pad > 0:
        bias = Call(get_op("expand_dims"), (bias,), ExpandDimsAttrs(axis=1, num_newaxis=pad),
                    span=new.span)
    return Call(get_op("add"), (x, bias), span=new.span)
