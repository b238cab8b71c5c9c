"""DeadCodeElimination: drop `let`s nobody uses (TVM's src/relay/transforms/dead_code.cc).

    def @f(%x: float32) {                     def @f(%x: float32) {
      let %a = add(%x, 1f);                     let %r = ref(%x);
      let %b = multiply(%a, 2f);    ==>         %x
      let %r = ref(%x);                       }
      %x
    }

A `let` goes when its variable is not used by what remains and its value has no
effect (`pure_value` of relaylang/ir/normal_forms.py, conservative: references,
stateful operators, calls of globals or closures, `match?` and nested `let`s count
as effects; building a closure does not). Dropping `%b` above leaves `%a` unused,
so it goes too: uses are counted once, then a dead value's uses are taken back
(reference counting with a worklist), innermost `let` first. A recursive closure whose
only uses are its own calls is dead as well.

`inline_once=True` also replaces a variable used exactly once by its pure value
(TVM's `inline_once`), unless the use is inside a closure defined in the body
(inlined, the value would be computed at every call: a loop is a closure) or the
`let` is recursive:

    let %a = add(%x, 1f); multiply(%a, 2f)   ==>   multiply(add(%x, 1f), 2f)

`ignore_impurity=True` (TVM's option) treats every value as pure: an unused `let` goes
whatever its value does, and `inline_once` inlines effects too.

Functions marked `Primitive=1` (or `Compiler=...`) are left alone.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..analysis import op_is_stateful
from ..ir.expr import Expr, Function, Let, Var
from ..ir.module import IRModule
from ..ir.normal_forms import LetFacts, is_opaque, opaque_children, pure_value
from .pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class DeadCodeElimination(FunctionPass):
    """Remove unused pure `let`s of each global function; optionally inline single uses."""

    name: ClassVar[str] = "DeadCodeElimination"
    opt_level: ClassVar[int] = 1
    inline_once: bool = False          # -p DeadCodeElimination{inline_once=true}
    ignore_impurity: bool = False      # TVM's option: every value counts as pure

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        out = dead_code_elimination(fn, self.inline_once, self.ignore_impurity)
        assert isinstance(out, Function)
        return out


def dead_code_elimination(expr: Expr, inline_once: bool = False,
                          ignore_impurity: bool = False) -> Expr:
    """`expr` without its dead `let`s (and with single-use pure ones inlined if asked)."""
    facts = LetFacts(expr, op_is_stateful)

    def pure(value: Expr) -> bool:
        return ignore_impurity or pure_value(value, op_is_stateful, facts.pure)
    uses = _use_counts(facts.order, expr)
    dropped: set[int] = set()           # id(let): dead, or inlined
    for node in facts.order:            # innermost let first: its death may kill outer ones
        if not isinstance(node, Let) or uses.get(id(node), 0) == 0:
            continue                    # not a let, or already unreachable
        if not pure(node.value):
            continue
        if uses.get(id(node.var), 0) == 0:
            dropped.add(id(node))
            _release(node.value, uses)
        elif facts.recursive(node):
            # a recursive closure used only by itself is dead too (TVM's
            # test_dead_recursion): release its value on a copy of the counts; if that
            # takes every use of the variable, the uses were all its own
            trial = dict(uses)
            _release(node.value, trial)
            if trial.get(id(node.var), 0) == 0:
                dropped.add(id(node))
                uses = trial
    inlined: dict[int, Let] = {}        # id(var) -> its let, for lets inlined at the use
    if inline_once:
        for node in facts.order:
            if isinstance(node, Let) and id(node) not in dropped and uses.get(id(node), 0) \
                    and _inlinable(node, facts, uses) and pure(node.value):
                inlined[id(node.var)] = node
                dropped.add(id(node))
    return _rebuild(facts.order, expr, dropped, inlined)


def _use_counts(order: list[Expr], root: Expr) -> dict[int, int]:
    """How many edges point at each node (a variable's count is its number of uses)."""
    uses: dict[int, int] = {id(root): 1}
    for node in order:
        for child in opaque_children(node):
            uses[id(child)] = uses.get(id(child), 0) + 1
    return uses


def _release(value: Expr, uses: dict[int, int]) -> None:
    """Take back the edge to `value`; whatever it alone kept alive loses its edges too."""
    work = [value]
    while work:
        node = work.pop()
        uses[id(node)] -= 1
        if uses[id(node)] == 0:
            work.extend(opaque_children(node))


def _inlinable(let: Let, facts: LetFacts, uses: dict[int, int]) -> bool:
    return uses.get(id(let.var), 0) == 1 and not facts.recursive(let) \
        and not facts.captured(let)


def _rebuild(order: list[Expr], root: Expr, dropped: set[int], inlined: dict[int, Let]) -> Expr:
    done: dict[int, Expr] = {}
    for node in order:                  # children first; a let's value before its body
        if isinstance(node, Var) and id(node) in inlined:
            done[id(node)] = done[id(inlined[id(node)].value)]
        elif isinstance(node, Let) and id(node) in dropped:
            done[id(node)] = done[id(node.body)]
        else:
            kids = opaque_children(node)
            done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
    return done[id(root)]
