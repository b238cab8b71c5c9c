"""DefuseOps: inline the `Primitive=1` functions FuseOps made (TVM's src/relay/transforms/defuse_ops.cc).

Every call `fn (%p0, ..., Primitive=1) { body }(a0, ...)` whose callee is the function
literal itself becomes `body` with `a0, ...` put for `%p0, ...`, giving back the graph
FuseOps started from (structurally equal to it):

    %0 = fn (%p0: Tensor[(4), float32], Primitive=1) {
      %1 = add(%p0, 1f); exp(%1)                  ==>     %0 = add(%x, 1f);
    };                                                    exp(%0)
    %0(%x)

A Primitive function bound by `let` or passed around as a value is left alone, as in
TVM, which only inlines direct calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Call, Expr, Function
from ...ir.module import IRModule
from ...ir.traverse import rewrite
from ..pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class DefuseOps(FunctionPass):
    """Inline every directly called `Primitive=1` function of each global function."""

    name: ClassVar[str] = "DefuseOps"
    opt_level: ClassVar[int] = 0

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        out = defuse_ops(fn)
        assert isinstance(out, Function)
        return out


def defuse_ops(expr: Expr) -> Expr:
    """`expr` with the body of each directly called Primitive function put in its place."""
    return rewrite(expr, _inline_primitive)


def _inline_primitive(old: Expr, new: Expr) -> Expr | None:
    if not (isinstance(new, Call) and _is_primitive(new.op)):
        return None
    prim = new.op
    assert isinstance(prim, Function)
    bound = {id(p): a for p, a in zip(prim.params, new.args)}
    # The body was rewritten already (it is a child of the function): substitute only.
    return rewrite(prim.body, lambda node, _: bound.get(id(node)))


def _is_primitive(op: Expr) -> bool:
    return isinstance(op, Function) and op.attrs is not None \
        and bool(op.attrs.get("Primitive", 0))
