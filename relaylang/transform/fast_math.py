"""FastMath: replace exp, erf, tanh and softmax by their fast approximations
(TVM's src/relay/transforms/fast_math.cc).

    %0 = exp(%x);                                    %0 = fast_exp(%x);
    %1 = tanh(%0);                        ==>        %1 = fast_tanh(%0);
    nn.softmax(erf(%1), axis=1)                      nn.fast_softmax(fast_erf(%1), axis=1)

The fast ops compute TVM's approximations for float32 (fast_erf also float16) and the
exact functions otherwise; their worst errors, measured and tested, are listed in
relaylang/op/fast_math_kernels.py: float32 relative error below 5e-6 for fast_exp on
[-87, 88.37], absolute error below 5e-7 for fast_tanh and fast_erf. So programs agree
with the original within the golden tolerance (rtol=1e-5, atol=1e-6) unless what follows
amplifies the difference. `nn.fast_softmax` keeps softmax's axis; its kernel here is the
exact softmax (TVM's uses fast_exp inside).

Which op has a fast version is said where the op is declared (`OpDef.fast_math`, in its
family under relaylang/op/): the pass keeps no list of names.

Opt level 4, as in TVM: `-O3` does not run it; `--opt-level 4` or `-p FastMath` with
`--opt-level 4` does. The calls keep their spans, so diagnostics still point at the
source.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..ir.expr import Call, Expr, Function, Op
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque
from ..ir.traverse import rewrite
from ..op import get as get_op
from ..op import get_op_def
from .pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class FastMath(FunctionPass):
    """Call the fast, approximate version of exp, erf, tanh and softmax."""

    name: ClassVar[str] = "FastMath"
    opt_level: ClassVar[int] = 4

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        out = rewrite(fn, _fast)
        assert isinstance(out, Function)
        return out


def _fast(old: Expr, new: Expr) -> Expr | None:
    if not (isinstance(new, Call) and isinstance(new.op, Op)):
        return None
    opdef = get_op_def(new.op.name)
    fast = opdef.fast_math if opdef is not None else None
    if fast is None:
        return None
    # Same arguments and attributes (softmax's axis): only the operator changes.
    return Call(get_op(fast), new.args, new.attrs, new.type_args, span=new.span)
