"""PartialEvaluate: run at compile time what is known then (TVM: transforms/partial_eval.cc).

    def @sum_to(%n: int32, %acc: int32) -> int32 {
      if (equal(%n, 0)) { %acc } else { @sum_to(subtract(%n, 1), add(%acc, %n)) }
    }
    def @main(%x: int32) -> (int32, int32) {           def @main(%x: int32) -> (int32, int32) {
      let %f = fn (%y: int32) -> int32 { add(%y, 1) };    %0 = add(%x, 1);
      (@sum_to(3, 0), %f(%x))                   ==>       (6, %0)
    }                                                   }
                                                        (@sum_to stays, in A-normal form)

An online partial evaluator (`machine.py`) over the
A-normal form of each global. Every value is partially static: what is known at
compile time, plus an atom of the residual program for the rest. Rules:

  * an operator (or a `Primitive=1` function) applied to static tensors is run by
    its kernel, through FoldConstant's folding (same limits: `max_elements`,
    stateful operators and failing kernels stay calls);
  * tuples, projections of static tuples, constructors with their fields are static;
  * `if` on a static condition is the chosen branch; `match` on a static value is
    the clause it certainly takes (its pattern variables bound statically);
    otherwise both branches / all clauses are partially evaluated on their own;
  * a call of a known function (global or closure) is unfolded: its body is
    evaluated with the arguments' values. Recursion is unfolded again only while
    the arguments make progress (fuel, TVM's FTime/FTValue: a static non-negative
    integer that decreases, or an argument older than all before, such as the tail
    of a static list). So a loop with a static bound unrolls completely, and one
    with a dynamic bound unfolds one level and stays a call;
  * references have a static store: `ref_read` of a cell whose contents are known
    is that value. A call of unknown code, a write through an unknown reference,
    a dynamic `if`/`match`, forget everything known (it may have been written);
    writes in a branch or a function body are forgotten outside it;
  * each function (closure or global) also gets residual code specialised to what
    it captured, for the calls that stay.

Afterwards DeadCodeElimination (with `inline_once`, as TVM's tests run it after
PartialEvaluate) removes the residual code only static uses needed; references
created or written stay (effects). Every binder of the output is a fresh variable
(TVM's DeDup + Remap). Unfolding inlines every non-recursive call: code may grow.
The pass is idempotent only up to fuel: a second run may unfold a residual
recursive call one more level (TVM's behaviour too).

Differences from TVM: registered as `PartialEvaluate` (TVM's Python name; its C++
pass is named `PartialEval`); a call left residual because the fuel ran out also
forgets the store (TVM keeps it, though the callee may write); each global is
specialised in a fresh fuel context, so its residual code does not depend on where
it was first mentioned; `Primitive=1` functions on static arguments are folded by
FoldConstant rather than run by the interpreter (a transform cannot import the
backend); a static `match` no clause takes stays residual (TVM aborts).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Function
from ...ir.module import IRModule
from ..dead_code_elimination import dead_code_elimination
from ..infer_type import InferType
from ..pass_infra import ModulePass, PassContext, register_pass
from .machine import evaluate_module


@register_pass
@dataclass(frozen=True)
class PartialEvaluate(ModulePass):
    """Evaluate what is static in each global; leave residual code for the rest."""

    name: ClassVar[str] = "PartialEvaluate"
    opt_level: ClassVar[int] = 1
    max_elements: int = 1 << 16        # largest tensor an operator is folded into

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        # Typed first: ill-typed input gets its type errors (with spans), not a failure of
        # evaluation; typed after, so the new nodes print with their types, like TVM's.
        infer = InferType()
        typed = infer.transform_module(mod, ctx)
        return infer.transform_module(partial_evaluate(typed, self.max_elements), ctx)


def partial_evaluate(mod: IRModule, max_elements: int = 1 << 16) -> IRModule:
    """`mod` with every global partially evaluated and its dead residual code removed."""
    out = mod.copy()
    for gv, fn in evaluate_module(mod, max_elements).items():
        cleaned = dead_code_elimination(fn, inline_once=True)
        assert isinstance(cleaned, Function)
        out.functions[gv] = cleaned
    return out
