"""InferType: give every expression of a module its type (TVM's relay.transform.InferType).

    def @main(%x: float32) { add(%x, 1f) }   ==>   every node has checked_type;
                                                  @main : fn (float32) -> float32

Raises `DiagnosticError` listing every type error; warnings (unreachable match
clauses) do not stop it and are available from `relaylang.typing.check_module`.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.module import IRModule
from ..typing import infer_types, is_typed
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class InferType(ModulePass):
    name: ClassVar[str] = "InferType"
    opt_level: ClassVar[int] = 0

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return infer_types(mod)

    def already_holds(self, mod: IRModule) -> bool | None:
        return is_typed(mod)
