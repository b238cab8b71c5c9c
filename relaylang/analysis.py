"""`rl.analysis`: questions about programs (TVM's relay.analysis).

The checkers of the normal forms the passes produce, and variable analyses.
They live in `relaylang/ir/`; this namespace gathers them and supplies what
the IR layer cannot know itself (which operators have effects, from the op
registry).
"""
from __future__ import annotations

from .ir.analysis import all_type_vars, all_vars, bound_type_vars, bound_vars, free_type_vars, \
    free_vars
from .ir.block_forms import is_bbnf, is_cps
from .ir.expr import Expr, Op
from .ir.module import IRModule
from .ir.normal_forms import anf_violation, is_anf
from .ir.normal_forms import gnf_violation as _gnf_violation
from .ir.normal_forms import is_gnf as _is_gnf


def op_is_stateful(op: Op) -> bool:
    from .op import get_op_def
    opdef = get_op_def(op.name)
    return opdef is not None and bool(opdef.stateful)


def is_gnf(expr_or_module: Expr | IRModule) -> bool:
    """Whether only the lets graph form needs remain (effects, recursion, closures)."""
    return _is_gnf(expr_or_module, op_is_stateful)


def gnf_violation(expr_or_module: Expr | IRModule):   # noqa: ANN201
    return _gnf_violation(expr_or_module, op_is_stateful)


__all__ = ["all_type_vars", "all_vars", "anf_violation", "bound_type_vars", "bound_vars",
           "free_type_vars", "free_vars", "gnf_violation", "is_anf", "is_bbnf", "is_cps",
           "is_gnf", "op_is_stateful"]
