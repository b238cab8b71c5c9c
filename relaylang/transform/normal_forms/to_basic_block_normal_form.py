"""ToBasicBlockNormalForm: bind what several blocks share at their common block.

Mirrors apache/tvm: src/relay/transforms/to_basic_block_normal_form.cc (its
`Fill` with an include set, in to_a_normal_form.cc). Scopes come from
`relaylang.ir.block_forms.block_scopes`: a computation used in more than one
scope (two branches, a branch and the code around the `if`, a closure body
and its surroundings) is bound by a `let` at the lowest common ancestor of its
uses; everything used in one scope only stays where it is, in graph form.

    def @f(%c: bool, %x: float32) {          def @f(%c: bool, %x: float32) {
      %0 = add(%x, 1f);                        let %x1 = add(%x, 1f);
      if (%c) { %0 } else {             ==>    if (%c) { %x1 } else {
        %1 = multiply(%0, 2f);                   %0 = multiply(%x1, 2f);
        %1                                       %0
      }                                        }
    }                                        }

The rebuild is one explicit-stack walk in evaluation order. Each scope keeps
its list of bindings; when the walk finishes the expression that opens a scope
(a branch, a clause, a function body, a `let`), the list is wrapped around it.
A `let` pushes its own binding into its scope between the walk of its value
and of its body, so bindings placed there come after what they use.

Preconditions: none beyond well-formedness (every variable used in scope); no
type information is needed, and the output is not typed (run InferType).
Shared computations with effects (`ref_write`) are evaluated once at their
binding, which is the graph-form meaning of sharing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.block_forms import ATOMIC, BlockScopes, Scope, block_scopes, scope_children
from ...ir.expr import Expr, Function, Let, Var
from ...ir.module import IRModule
from ..pass_infra import ModulePass, PassContext, register_pass


def wrap(scope: Scope, body: Expr) -> Expr:
    """`let`s of the scope's bindings around `body`, innermost last."""
    for var, value, span in reversed(scope.bindings):
        body = Let(var, value, body, span=span)     # type: ignore[arg-type]
    scope.bindings.clear()
    return body


class _Fill:
    """Rebuild `root` with lifted computations bound in their scopes' lists."""

    def __init__(self, root: Expr, info: BlockScopes):
        self.root = root
        self.info = info
        self.memo: dict[int, Expr] = {}
        self.fresh = 0

    def run(self) -> Expr:
        stack: list[tuple[Expr, int]] = [(self.root, 0)]
        while stack:
            node, phase = stack.pop()
            if phase == 0 and id(node) in self.memo:
                continue
            if isinstance(node, ATOMIC) or not scope_children(node):
                self.memo[id(node)] = self.finish(node, node)
            elif isinstance(node, Let):
                self.let_step(node, phase, stack)
            elif phase == 0:
                stack.append((node, 1))
                stack.extend((c, 0) for c in reversed(scope_children(node)))
            else:
                self.memo[id(node)] = self.finish(node, self.rebuild(node))
        return self.memo[id(self.root)]

    def let_step(self, node: Let, phase: int, stack: list[tuple[Expr, int]]) -> None:
        inner = self.info.sub[id(node)][0]
        if phase == 0:
            stack += [(node, 1), (node.value, 0)]
        elif phase == 1:
            inner.bindings.append((node.var, self.memo[id(node.value)], node.span))
            stack += [(node, 2), (node.body, 0)]
        else:
            self.memo[id(node)] = self.finish(node, wrap(inner, self.memo[id(node.body)]))

    def rebuild(self, node: Expr) -> Expr:
        """`node` from its rebuilt children, each new scope's bindings wrapped around."""
        subs = self.info.sub[id(node)]
        outer = self.info.scope[id(node)]
        kids = [self.memo[id(c)] if s is outer else wrap(s, self.memo[id(c)])
                for c, s in zip(scope_children(node), subs)]
        return node.with_children(kids)

    def finish(self, node: Expr, now: Expr) -> Expr:
        """Bind `now` in the node's scope if the node is lifted; else use it in place."""
        if id(node) not in self.info.lifted:
            return now
        self.fresh += 1
        var = Var(f"x{self.fresh}", span=node.span)
        self.info.scope[id(node)].bindings.append((var, now, node.span))
        return var


def to_basic_block_normal_form(expr: Expr) -> Expr:
    """`expr` in basic block normal form; `expr` itself when it already is."""
    info = block_scopes(expr)
    if not info.lifted:
        return expr
    out = _Fill(expr, info).run()
    return wrap(info.scope[id(expr)], out)


@register_pass
@dataclass(frozen=True)
class ToBasicBlockNormalForm(ModulePass):
    name: ClassVar[str] = "ToBasicBlockNormalForm"
    opt_level: ClassVar[int] = 1

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = mod.copy()
        for gv, fn in mod.functions.items():
            new = to_basic_block_normal_form(fn)
            assert isinstance(new, Function)
            out.functions[gv] = new
        return out
