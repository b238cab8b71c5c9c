"""CanonicalizeCast: give every elementwise user of a shared upcast its own copy of the cast
(TVM's src/relay/transforms/canonicalize_cast.cc).

    def @main(%x: Tensor[(4), int8]) {               def @main(%x: Tensor[(4), int8]) {
      %0 = cast(%x, dtype="float32");                  %0 = cast(%x, dtype="float32");
      %1 = exp(%0);                        ==>         %1 = exp(%0);
      %2 = log(%0);                                    %2 = cast(%x, dtype="float32");
      (%1, %2)                                         %3 = log(%2);
    }                                                  (%1, %3)
                                                     }

Why: FuseOps puts an elementwise op into the group of its producer only when that
producer has one user. A shared `cast` to a wider dtype would become a group of its own
whose output, in the wide dtype, is written to memory and read back; with a copy per
user each `exp`/`log` group reads the narrow input and casts as it goes.

Exactly TVM's rule: a `cast` to more bits than its input (an upcast; a downcast is left
shared, it makes the data smaller) that is an argument of an operator with pattern
ELEMWISE or BROADCAST keeps the original for the first such use, in TVM's visiting order
(depth first, arguments left to right), and each later use gets a fresh copy. Uses by
other operators, tuples and so on keep sharing the original. The results are identical.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..ir.dtype import canonical_dtype, dtype_bits
from ..ir.expr import Call, Expr, Function, Op
from ..ir.module import IRModule
from ..ir.normal_forms import map_unfused_functions, opaque_children
from ..ir.traverse import post_order
from ..ir.types import TensorType
from ..op import get_op_def
from ..op.registry import OpPattern
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class CanonicalizeCast(ModulePass):
    """Copy shared upcasts into each of their elementwise/broadcast users."""

    name: ClassVar[str] = "CanonicalizeCast"
    opt_level: ClassVar[int] = 3
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return map_unfused_functions(mod, canonicalize_cast)


def canonicalize_cast(fn: Function) -> Function:
    copies = _uses_needing_a_copy(fn)
    if not copies:
        return fn
    done: dict[int, Expr] = {}
    for node in post_order(fn, opaque_children):
        kids = opaque_children(node)
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        if isinstance(node, Call) and isinstance(rebuilt, Call) and id(node) in copies:
            args = list(rebuilt.args)
            for i in copies[id(node)]:
                cast = node.args[i]
                assert isinstance(cast, Call)
                args[i] = Call(cast.op, (done[id(cast.args[0])],), cast.attrs, cast.type_args,
                               span=cast.span)
            rebuilt = Call(rebuilt.op, tuple(args), rebuilt.attrs, rebuilt.type_args,
                           span=rebuilt.span)
        done[id(node)] = rebuilt
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


def _uses_needing_a_copy(fn: Function) -> dict[int, list[int]]:
    """For each elementwise call, the argument positions where it gets a copy of an upcast.

    Replays TVM's recursive mutator with a stack: a node's children are visited in order,
    each once, and the use of argument i counts right after argument i is visited."""
    seen_upcast_uses: dict[int, int] = {}
    upcast: dict[int, bool] = {}
    copies: dict[int, list[int]] = {}
    visited = {id(fn)}
    stack: list[tuple[Expr, tuple[Expr, ...], int]] = [(fn, opaque_children(fn), 0)]
    while stack:
        node, kids, i = stack[-1]
        if i >= 2 and isinstance(node, Call):      # child i-1 is done; child 0 is the operator
            arg = node.args[i - 2]
            if id(arg) not in upcast:
                upcast[id(arg)] = _is_upcast(arg)
            if upcast[id(arg)] and _elementwise(node):
                seen_upcast_uses[id(arg)] = seen_upcast_uses.get(id(arg), 0) + 1
                if seen_upcast_uses[id(arg)] > 1:
                    copies.setdefault(id(node), []).append(i - 2)
        if i < len(kids):
            stack[-1] = (node, kids, i + 1)
            child = kids[i]
            if id(child) not in visited:
                visited.add(id(child))
                stack.append((child, opaque_children(child), 0))
        else:
            stack.pop()
    return copies


def _elementwise(call: Call) -> bool:
    opdef = get_op_def(call.op.name) if isinstance(call.op, Op) else None
    return opdef is not None and opdef.pattern <= OpPattern.BROADCAST


def _is_upcast(e: Expr) -> bool:
    if not (isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == "cast"):
        return False
    source = e.args[0].checked_type
    attrs: Any = e.attrs
    target = canonical_dtype(str(attrs.dtype))
    return isinstance(source, TensorType) and target is not None \
        and dtype_bits(source.dtype) < dtype_bits(target)
