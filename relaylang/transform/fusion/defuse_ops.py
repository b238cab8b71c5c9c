"""DefuseOps: inline the functions FuseOps made (TVM's src/relay/transforms/defuse_ops.cc).

Every call whose callee is a function literal, `fn (%p0, ...) { body }(a0, ...)`, becomes
`body` with `a0, ...` put for `%p0, ...`; the `Primitive=1` functions of FuseOps are such
calls, so this gives back the graph FuseOps started from (structurally equal to it):

    %0 = fn (%p0: Tensor[(4), float32], Primitive=1) {
      %1 = add(%p0, 1f); exp(%1)                  ==>     %0 = add(%x, 1f);
    };                                                    exp(%0)
    %0(%x)

As in TVM, any function literal called directly is inlined, whatever its attributes
(TVM's test_defuse_complex inlines plain functions); a function bound by `let` or passed
around as a value is left alone. Parameters are replaced by identity (TVM's by name,
which refuses two parameters of one name). A polymorphic literal is left alone: its body
would mention type variables nothing binds any more. Opt level 0 (TVM's: 3), as FuseOps,
whose inverse it is: `-p FuseOps,DefuseOps` runs at every level.
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
    """Inline every directly called function literal of each global function."""

    name: ClassVar[str] = "DefuseOps"
    opt_level: ClassVar[int] = 0

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        out = defuse_ops(fn)
        assert isinstance(out, Function)
        return out


def defuse_ops(expr: Expr) -> Expr:
    """`expr` with the body of each directly called function literal put in its place."""
    return rewrite(expr, _inline_call)


def _inline_call(old: Expr, new: Expr) -> Expr | None:
    if not (isinstance(new, Call) and isinstance(new.op, Function)
            and not new.op.type_params and len(new.op.params) == len(new.args)):
        return None
    fn = new.op
    bound = {id(p): a for p, a in zip(fn.params, new.args)}
    # The body was rewritten already (it is a child of the function): substitute only.
    return rewrite(fn.body, lambda node, _: bound.get(id(node)))
