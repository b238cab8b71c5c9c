"""ToGraphNormalForm: inline the `let`s whose removal keeps the meaning (the DAG form).

TVM's src/relay/transforms/to_graph_normal_form.cc replaces every `let` variable
by its value, so that a variable used twice becomes a node with two users. TVM
did so whatever the value did; here a `let` stays when removing it could change
what the program does or how often it does it (`LetFacts.keep_reason` in
relaylang/ir/normal_forms.py):

  * its value is recursive (`let %loop = fn (...) { ... %loop(...) }`),
  * its value has an effect (references, calls of globals or closures, `match?`,
    stateful operators): the `let` fixes when, and whether, it happens,
  * its variable is used inside a closure defined in its body: inlined, the
    value would be computed at every call of the closure.

    def @f(%x: float32) {                    def @f(%x: float32) {
      let %a = add(%x, 1f);                    %0 = add(%x, 1f);      <- %a, shared
      let %r = ref(%a);            ==>         let %r = ref(%0);
      multiply(%a, %a)                         multiply(%0, %0)
    }                                        }

(`ref(%a)` keeps its `let`: it allocates a cell. `let %v = e; %v` is always `e`.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...analysis import op_is_stateful
from ...ir.expr import Expr, Function, Let, Var
from ...ir.module import IRModule
from ...ir.normal_forms import LetFacts, is_opaque, opaque_children
from ..pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class ToGraphNormalForm(FunctionPass):
    """Inline every removable `let` of each global function (the module docstring says which)."""

    name: ClassVar[str] = "ToGraphNormalForm"
    opt_level: ClassVar[int] = 1

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        out = to_graph_normal_form(fn)
        assert isinstance(out, Function)
        return out




def to_graph_normal_form(expr: Expr) -> Expr:
    """`expr` with every removable `let` inlined; kept lets and sharing stay as they are."""
    facts = LetFacts(expr, op_is_stateful)
    binder = {id(n.var): n for n in facts.order if isinstance(n, Let)}
    done: dict[int, Expr] = {}
    inline: dict[int, bool] = {}       # id(let) -> decided

    def inlined(let: Let) -> bool:
        # Asked at the let or at its variable's first use; either way, unless the let is
        # recursive (decided without the value), its value is already rebuilt.
        if id(let) not in inline:
            inline[id(let)] = not facts.recursive(let) and \
                facts.keep_reason(let, done[id(let.value)]) is None
        return inline[id(let)]

    for node in facts.order:           # children first; a let's value before its body
        if isinstance(node, Var):
            let = binder.get(id(node))
            done[id(node)] = done[id(let.value)] if let is not None and inlined(let) else node
        elif isinstance(node, Let) and inlined(node):
            done[id(node)] = done[id(node.body)]
        else:
            kids = opaque_children(node)
            done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
    return done[id(expr)]
