"""SimplifyFCTranspose: `nn.dense(%x, transpose(%w))` reads a new parameter `%w.T` that
holds the weight already transposed (TVM's src/relay/transforms/simplify_fc_transpose.cc).

Models imported from frameworks that store fully-connected weights as (in, out) compute
`transpose` on every run; with the transposed weight supplied as a parameter (the caller
binds `w.T = w.transpose()` once, as TVM's `bsr_dense` flow does) the transpose is gone.

    def @main(%x: Tensor[(2, 3), float32], %w: Tensor[(3, 4), float32]) {
      nn.dense(%x, transpose(%w, axes=[1, 0]))
    }
        ==>
    def @main(%x: Tensor[(2, 3), float32], %w.T: Tensor[(4, 3), float32]) {
      nn.dense(%x, %w.T)
    }

Option `target_weights`: the weight names to rewrite, separated by `;` (Python: a list of
names or `Var`s), as TVM's, which takes them from `search_fc_transpose`; none (the default)
rewrites nothing. Beyond TVM, `*` stands for every weight `search_fc_transpose` finds
(`relay opt -p 'SimplifyFCTranspose{target_weights=*}'`). A weight qualifies when it is a 2-D parameter of the
function and the transpose swaps its two axes (TVM does not look at the axes: an identity
`transpose(%w, axes=[0, 1])` would be wrongly rewritten). As in TVM, the parameters the
rewrite leaves unused are removed and the new ones come last; one `%w.T` serves all uses
of `%w` (TVM makes a new variable per use, so the names would clash). Unlike TVM, a
global function that other functions call is left alone (its callers would no longer
type-check), and so is a function without a rewrite (TVM drops its unused parameters).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..ir.analysis import free_vars
from ..ir.expr import Call, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque
from ..ir.traverse import post_order, rewrite
from ..ir.types import TensorType
from ..typing import infer_types
from .change_batch import with_new_signatures
from .combine_parallel.common import is_call_of
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class SimplifyFCTranspose(ModulePass):
    """Replace `transpose` of dense weights by pre-transposed weight parameters."""

    name: ClassVar[str] = "SimplifyFCTranspose"
    opt_level: ClassVar[int] = 4
    required: ClassVar[tuple[str, ...]] = ("DeadCodeElimination",)
    target_weights: Any = ""           # "w1;w2" or a list of names

    def __post_init__(self) -> None:
        # Kept as one `;`-separated string: it prints back as a pipeline option.
        names = _names(self.target_weights)
        object.__setattr__(self, "target_weights", ";".join(names))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        wanted = set(_names(self.target_weights))
        every = "*" in wanted
        called = _called_globals(mod)
        changed: dict[GlobalVar, Function] = {}
        for gv, fn in mod.functions.items():
            if not is_opaque(fn) and gv.name_hint not in called:
                new = simplify_fc_transpose(fn, set(search_fc_transpose(fn)) if every else wanted)
                if new is not fn:
                    changed[gv] = new
        # Typed here, as ChangeBatch: the new weight parameters change the signature.
        return infer_types(with_new_signatures(mod, changed))


def _names(value: Any) -> list[str]:
    items: Iterable[Any] = value.replace(";", " ").split() if isinstance(value, str) else value
    return [(v.name_hint if isinstance(v, Var) else str(v)).lstrip("%") for v in items]


def _called_globals(mod: IRModule) -> set[str]:
    """Names of the global functions some function of `mod` refers to."""
    return {n.name_hint for fn in mod.functions.values() for n in post_order(fn)
            if isinstance(n, GlobalVar)}


def _transposed_param(call: Expr, params: dict[int, Var]) -> Var | None:
    """`%w` when `call` is `transpose(%w)` of a 2-D parameter swapping its axes."""
    if not (isinstance(call, Call) and is_call_of(call, "transpose")):
        return None
    axes = getattr(call.attrs, "axes", None)
    weight = call.args[0]
    if axes not in (None, (1, 0), (-1, -2), (1, -2), (-1, 0)) or not isinstance(weight, Var):
        return None
    ty = weight.type_annotation
    if id(weight) not in params or not isinstance(ty, TensorType) or len(ty.shape) != 2:
        return None
    return weight


def search_fc_transpose(expr: Expr) -> list[str]:
    """Names of the weights `%w` in `nn.dense(%x, transpose(%w))` (TVM's
    relay.analysis.search_fc_transpose), each once, in program order."""
    params = {id(p): p for p in expr.params} if isinstance(expr, Function) else {}
    found: list[str] = []
    for node in post_order(expr):
        if isinstance(node, Call) and is_call_of(node, "nn.dense"):
            w = _transposed_param(node.args[1], params)
            if w is not None and w.name_hint not in found:
                found.append(w.name_hint)
    return found


def simplify_fc_transpose(fn: Function, targets: set[str]) -> Function:
    """`fn` with `nn.dense(x, transpose(%w))` reading `%w.T` for each `w` in `targets`."""
    params = {id(p): p for p in fn.params if p.name_hint in targets}
    new_params: dict[int, Var] = {}

    def rule(old: Expr, new: Expr) -> Expr | None:
        if not (isinstance(old, Call) and isinstance(new, Call) and is_call_of(old, "nn.dense")):
            return None
        weight = _transposed_param(old.args[1], params)
        if weight is None:
            return None
        wt = new_params.get(id(weight))
        if wt is None:
            ty = weight.type_annotation
            assert isinstance(ty, TensorType)
            wt = Var(weight.name_hint + ".T", TensorType(ty.shape[::-1], ty.dtype))
            new_params[id(weight)] = wt
        return Call(new.op, (new.args[0], wt), new.attrs, new.type_args, span=new.span)

    body = rewrite(fn.body, rule)
    if not new_params:
        return fn
    used = {id(v) for v in free_vars(body)}
    # A weight the rewrite left unused goes; every other parameter stays where it was.
    kept = [p for p in fn.params if id(p) in used or id(p) not in new_params]
    return Function((*kept, *new_params.values()), body, fn.ret_type, fn.type_params,
                    fn.attrs, span=fn.span)
