"""DynamicToStatic: dynamic ops whose shape arguments are known become static ops
(TVM: src/relay/transforms/dynamic_to_static.cc).

    def @main(%x: Tensor[(2, 3, 4), float32]) {       def @main(%x: Tensor[(2, 3, 4), float32]) {
      %0 = shape_of(%x);                                reshape(%x, newshape=[6, 4])
      %1 = take(%0, [0, 1]);                  ==>     }
      %2 = (prod(%1, keepdims=True), [4i64]);
      dyn.reshape(%x, concatenate(%2))
    }

A call of a dyn op (relaylang/op/dyn/) whose shape-like arguments are constants is
replaced by its static twin with their values as attributes (`op/dyn/twins.py` says
which twin and how): dyn.reshape(x, [2, -1]) is reshape(x, newshape=[2, -1]),
dyn.full(v, [2, 3]) is full(v, shape=[2, 3]), dyn.one_hot(i, on, off, 4) is
one_hot(i, on, off, depth=4), dyn.nn.pad(x, w, v) is nn.pad(x, v, pad_width=w), and
so on for dyn.broadcast_to, dyn.tile, dyn.zeros, dyn.ones, dyn.strided_slice,
dyn.squeeze, dyn.expand_dims, dyn.topk (k), dyn.image.resize2d (size and roi, both
constant as TVM asks; a float size truncated as TVM's ToVector does), dyn.nn.upsampling
and dyn.nn.upsampling3d (every scale) and dyn.sparse_to_dense (output_shape).

Shapes computed from static shapes become constants first, as in TVM, where the pass
runs FoldConstant and InferType on each argument before looking at it: the pass
repeats (1) fold `shape_of` of a tensor whose type has a static shape (TVM's
FoldConstant does this; relaylang's FoldConstant does not, so this pass does it), then
FoldConstant, then InferType; (2) rewrite each dyn call whose shape arguments are now
constants; until (2) changes nothing. A rewrite makes the types after it static, which
can make further shapes constant, hence the repetition (each round removes at least
one dyn call). Like TVM's, the result is constant-folded throughout (a dyn.zeros of a
constant shape ends as a constant) and typed.

Differences from TVM, each on the side of leaving a program alone: a call whose values
the static op would reject (a -2 in a reshape, a shape of the wrong size, an axis out
of range) stays dynamic, and fails at run time as before, instead of becoming a type
error; dyn.nn.pad needs only its pad_width constant (TVM also wants the pad value,
which stays an argument of nn.pad anyway); dyn.expand_dims is rewritten too (TVM's
table misses it); and a function whose body changed loses its return type annotation
only when the pass changed that function (TVM drops every one).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from ..ir.expr import Call, Constant, Expr, Function, Op
from ..ir.module import IRModule
from ..ir.normal_forms import map_unfused_functions, opaque_children
from ..ir.traverse import post_order
from ..ir.types import TensorType
from ..op import get as get_op
from ..op import get_op_def
from ..op.dyn.twins import TWINS, same_rank_and_dtype
from ..op.relation import TypeRelError
from ..typing import infer_types
from .fold_constant import FoldConstant, fold_constant
from .pass_infra import ModulePass, PassContext, register_pass

# ops whose value is the static shape of their argument's type: TVM's FoldConstant
# evaluates them (EvaluateShapeOf) when that shape is static.
_SHAPE_OPS = ("shape_of",)
_MAX_ROUNDS = 10_000


@register_pass
@dataclass(frozen=True)
class DynamicToStatic(ModulePass):
    """Rewrite dyn ops with constant shape arguments into static ops (module docstring)."""

    name: ClassVar[str] = "DynamicToStatic"
    opt_level: ClassVar[int] = 2                 # TVM: CreateFunctionPass(..., 2, ...)
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    max_elements: int = FoldConstant.max_elements   # passed on to FoldConstant

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        # Each round that goes on removed a dyn call or folded something (FoldConstant may
        # evaluate a dyn call of constants itself); the folds are idempotent, so a round
        # that changes nothing ends the loop (the bound is a guard, never reached).
        for _ in range(_MAX_ROUNDS):
            folded = map_unfused_functions(mod, self._fold)
            refolded = any(folded.functions[g] is not fn for g, fn in mod.functions.items())
            if refolded:
                mod = infer_types(folded)
            changed: list[bool] = []
            out = map_unfused_functions(mod, lambda fn, c=changed: _to_static(fn, c))
            if any(changed):
                mod = infer_types(out)
            elif not refolded:
                break
        return mod

    def _fold(self, fn: Function) -> Function:
        out = fold_constant(_fold_shapes(fn), self.max_elements)
        assert isinstance(out, Function)
        return out


def _rebuild(fn: Function, replace: Any) -> Function:
    """`fn` rebuilt bottom-up (iteratively; fused functions are not entered) with
    `replace(old, rebuilt)` substituted where it returns an expression. A function
    whose body changed loses its return type annotation (the types inside may now be
    static), as TVM's DynamicToStatic drops it."""
    done: dict[int, Expr] = {}
    for node in post_order(fn, opaque_children):
        kids = opaque_children(node)
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        if isinstance(rebuilt, Function) and rebuilt is not node and rebuilt.ret_type is not None:
            rebuilt = Function(rebuilt.params, rebuilt.body, None, rebuilt.type_params,
                               rebuilt.attrs, span=rebuilt.span)
        new = replace(node, rebuilt)
        done[id(node)] = rebuilt if new is None else new
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


def _fold_shapes(fn: Function) -> Function:
    """shape_of(e) -> its value, where e's type has a static shape."""
    def replace(old: Expr, new: Expr) -> Expr | None:
        if not (isinstance(new, Call) and isinstance(new.op, Op)
                and new.op.name in _SHAPE_OPS and len(new.args) == 1):
            return None
        ty = new.args[0].checked_type
        if not (isinstance(ty, TensorType) and all(type(d) is int for d in ty.shape)):
            return None
        # The op's own kernel on a stand-in of that shape (strides 0: no memory).
        stand_in = np.broadcast_to(np.zeros((), "int8"), tuple(ty.shape))
        data = get_op_def(new.op.name).kernel([stand_in], new.attrs)
        return Constant(data, span=new.span)
    return _rebuild(fn, replace)


def _to_static(fn: Function, changed: list[bool]) -> Function:
    # The types of the static calls built here (their relation gave them), so that a
    # chain of dyn calls becomes static in one round: the next call's argument is typed.
    built: dict[int, Any] = {}
    keep: list[Expr] = []                  # built nodes stay alive: their ids stay unique

    def type_of(e: Expr) -> Any:
        return e.checked_type if e.checked_type is not None else built.get(id(e))

    def replace(old: Expr, new: Expr) -> Expr | None:
        if isinstance(new, Call) and isinstance(new.op, Op) and new.op.name in TWINS:
            found = static_call(new, old.checked_type, type_of)
            if found is not None:
                call, ty = found
                changed.append(True)
                built[id(call)] = ty
                keep.append(call)
                return call
        return None
    return _rebuild(fn, replace)


def static_call(call: Call, dyn_type: Any, type_of: Any = None) -> tuple[Call, Any] | None:
    """The static twin of the dyn call `call` (typed as `dyn_type`) and its type, when
    its shape-like arguments are constants the twin accepts; else None. `type_of(e)`
    gives the types of the arguments (default: their checked types)."""
    assert isinstance(call.op, Op)
    twin = TWINS[call.op.name]
    consts = [call.args[i] for i in twin.values]
    if not all(isinstance(c, Constant) for c in consts):
        return None
    try:
        attrs = twin.attrs(call.attrs, [np.asarray(c.data).tolist() for c in consts])
    except ValueError:
        return None                      # no static call computes it: a run-time error stays
    args = tuple(call.args[i] for i in twin.inputs)
    opdef = get_op_def(twin.op)
    assert opdef is not None and opdef.type_rel is not None
    types = [a.checked_type if type_of is None else type_of(a) for a in args]
    if any(t is None for t in types):
        return None
    try:
        out = opdef.type_rel(types, attrs)
    except TypeRelError:
        return None
    if not same_rank_and_dtype(out, dyn_type):
        return None                      # the twin would not have the type the call had
    return Call(get_op(twin.op), args, attrs, span=call.span), out
