"""The layout-rewriting machinery shared by ConvertLayout and AlterOpLayout
(TVM's src/relay/transforms/transform_layout.h: `LayoutRewriter` under `ForwardRewrite`).

One walk over a function, children first. Every rewritten tensor carries a `Laid`
fact -- "this value is the original's, laid out in `new` instead of `old`" -- or
none (it is exactly the original value). At each operator call the op's layout rule
(`rules.py`, TVM's `FInferCorrectLayout` and `FTVMConvertOpLayout`) looks
at the facts of the arguments and answers with a `Plan`: the call's new
attributes, the layout each argument must arrive in, and the fact of the result.
`layout_transform` calls are inserted only where an argument is not in the layout
its consumer wants, so inside a region of layout-aware ops (conv -> relu -> pool
-> conv) values flow in the new layout and transforms appear only at its edges:

  * where the region begins (a parameter or an op without a rule feeding a conv);
  * where it ends: a function's result, a `let`/`if`/`match`, a call of a
    function, or an op without a layout rule gets the original layout back.

A tuple of converted values stays converted (its fact is a tuple of facts) until
something other than a projection or a layout-aware op (concatenate) consumes it.
A `let` whose value is a converted tensor binds a fresh variable of the new layout
(its annotation permuted), so A-normal-form code converts as well as graph form.
Transforms are shared: the same value converted the same way is one node, and a
transform that undoes the one it is applied to is not built (the pair cancels).

Nothing recurses: `post_order` with an explicit stack, memoised by node identity.
Functions marked `Primitive=1` are opaque, as in the other passes.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ...ir.attrs import Attrs
from ...ir.expr import Call, Expr, Function, Let, Op, Tuple, TupleGetItem, Var
from ...ir.normal_forms import opaque_children
from ...ir.traverse import post_order
from ...ir.types import TensorType
from ...op.layouts import parse_layout, primal_sizes, transformed_shape
from ...op.registry import get as get_op
from ...op.transform import ExpandDimsAttrs, LayoutTransformAttrs


@dataclass(frozen=True, slots=True)
class Laid:
    """A rewritten tensor holds the original value laid out in `new`, where the original
    program reads it in layout `old` (two plain layouts of the same axes). As what an
    argument must arrive in, `Laid(old, new)` says: the consumer reads the original in
    `old` and wants it in `new` (`old == new`: in the original layout); there `old` may
    have fewer axes than `new` (a broadcast operand: expand_dims first)."""

    old: str
    new: str


Info = Laid | tuple["Info", ...] | None


def laid(old: str, new: str) -> Laid | None:
    """The fact of a value in layout `new` whose original is in `old` (None: the same)."""
    return None if old == new else Laid(old, new)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a layout rule decided for one call."""

    attrs: Attrs | None                  # the call's new attributes
    wants: tuple[Info, ...]              # per argument: the layout it must arrive in
    output: Info                         # the fact of the result
    forward: int | None = None           # the call is its argument `forward` (it vanished)
    op: str | None = None                # the call becomes a call of this op (AlterOpLayout's
                                         # nn.conv2d -> nn.contrib_conv2d_NCHWc)
    # AlterOpLayout's registered functions: given the rewritten arguments and `bring`,
    # the replacement and its fact, or None to apply the rest of this plan instead
    build: Callable[[list[Expr], Callable[[Expr, Info, Info], Expr]],
                    tuple[Expr, Info] | None] | None = None


# What a pass would like an op to use: the op's call -> its data (and kernel) layouts,
# or None to leave the call's own layouts alone.
Prefer = Callable[[Call], "tuple[str, ...] | None"]
# A layout rule: the original (typed) call, the facts of its rewritten arguments and the
# pass's preferences -> a plan, or None when the op cannot work in the given layouts.
Rule = Callable[[Call, "list[Info]", Prefer], "Plan | None"]


def is_plain(layout: str) -> bool:
    """Only upper-case axes (NHWC, not NCHW16c): a permutation of another plain layout."""
    return layout.isalpha() and layout.isupper() and len(set(layout)) == len(layout)


def axis_letters(layout: str) -> list[str]:
    """The axes of `layout` in order: NCHW16c -> [N, C, H, W, c] (a plain layout: its
    letters)."""
    return [a for a, _ in parse_layout(layout)]


def split_axes(layout: str) -> dict[str, int]:
    """The primal axes `layout` splits and their factors: NCHW16c -> {C: 16}."""
    return {a.upper(): int(f) for a, f in parse_layout(layout) if f is not None}


def rewrite_layouts(fn: Function, rules: dict[str, Rule], prefer: Prefer,
                    fold_projections: bool = False) -> Function:
    """`fn` with layout-aware ops rewritten by `rules` as `prefer` asks (module docstring).
    With `fold_projections`, `(a, b).0` becomes `a`, as TVM's ForwardRewrite does
    (AlterOpLayout asks for it). The result is untyped where it changed: the caller
    type-checks it again."""
    out = _Rewriter(rules, prefer, fold_projections).run(fn)
    assert isinstance(out, Function)
    return out


class _Rewriter:
    def __init__(self, rules: dict[str, Rule], prefer: Prefer, fold_projections: bool = False):
        self.rules = rules
        self.prefer = prefer
        self.fold_projections = fold_projections
        self.transforms: dict[tuple[int, str, str], Expr] = {}
        self.done: dict[int, tuple[Expr, Info]] = {}
        self.binders: dict[int, Let] = {}
        self.rebound: dict[int, Var] = {}          # let variable -> its new-layout twin

    def run(self, root: Expr) -> Expr:
        order = post_order(root, opaque_children)   # children first, each node once
        self.binders = {id(n.var): n for n in order if isinstance(n, Let)}
        for node in order:
            self.done[id(node)] = self.visit(node)
        return self.done[id(root)][0]

    def visit(self, node: Expr) -> tuple[Expr, Info]:
        if isinstance(node, Var):
            return self.visit_var(node)
        if isinstance(node, Call) and isinstance(node.op, Op) and node.op.name in self.rules:
            return self.visit_call(node)
        if isinstance(node, Tuple):              # converted fields stay converted
            fields = [self.done[id(f)] for f in node.fields]
            infos = tuple(info for _, info in fields)
            value = node.with_children([v for v, _ in fields])
            return value, (infos if any(i is not None for i in infos) else None)
        if isinstance(node, TupleGetItem):
            value, info = self.done[id(node.tuple_value)]
            if self.fold_projections and isinstance(value, Tuple):   # (a, b).0 is a
                return value.fields[node.index], \
                    info[node.index] if isinstance(info, tuple) else None
            if isinstance(info, tuple):
                return node.with_children([value]), info[node.index]
        if isinstance(node, Let):
            return self.visit_let(node), None
        kids = opaque_children(node)             # an edge: the original layouts come back
        if not kids:
            return node, None
        return node.with_children([self.restore(c) for c in kids]), None

    def visit_var(self, var: Var) -> tuple[Expr, Info]:
        let = self.binders.get(id(var))
        bound = self.done.get(id(let.value)) if let is not None else None
        if bound is None or not isinstance(bound[1], Laid):
            return var, None
        info = bound[1]
        twin = Var(var.name_hint, _permuted(var.type_annotation, info), var.virtual_device,
                   span=var.span)
        self.rebound[id(var)] = twin
        return twin, info

    def visit_let(self, let: Let) -> Expr:
        twin = self.rebound.get(id(let.var))
        body = self.restore(let.body)
        if twin is None:
            return let.with_children([self.restore(let.value), body])
        return Let(twin, self.done[id(let.value)][0], body, span=let.span)

    def visit_call(self, call: Call) -> tuple[Expr, Info]:
        assert isinstance(call.op, Op)
        args = [self.done[id(a)] for a in call.args]
        plan = self.rules[call.op.name](call, [info for _, info in args], self.prefer)
        if plan is None:
            return call.with_children([call.op, *(self.restore(a) for a in call.args)]), None
        if plan.build is not None:
            built = plan.build([v for v, _ in args], self.bring)
            if built is not None:
                return built
        new_args = [self.bring(v, have, want) for (v, have), want in zip(args, plan.wants)]
        if plan.forward is not None:
            return new_args[plan.forward], plan.output
        if plan.op is not None:
            return Call(get_op(plan.op), tuple(new_args), plan.attrs, call.type_args,
                        span=call.span), plan.output
        if plan.attrs is call.attrs or plan.attrs == call.attrs:
            return call.with_children([call.op, *new_args]), plan.output
        return Call(call.op, tuple(new_args), plan.attrs, call.type_args,
                    span=call.span), plan.output

    # ------------------------------------------------------------ moving between layouts

    def restore(self, child: Expr) -> Expr:
        """The rewritten `child` in its original layout."""
        value, info = self.done[id(child)]
        return self.bring(value, info, None)

    def bring(self, value: Expr, have: Info, want: Info) -> Expr:
        """`value` (whose fact is `have`) in the layout `want` asks for."""
        if have is None and want is None:
            return value
        if isinstance(have, tuple) or isinstance(want, tuple):
            return self._bring_tuple(value, have, want)
        if want is None:
            assert have is not None
            return self.transform(value, have.new, have.old)
        if have is None:
            return self.transform(value, want.old, want.new)
        if have.old == want.old:
            return self.transform(value, have.new, want.new)
        # The consumer names the axes differently: back to the original, then over.
        return self.transform(self.transform(value, have.new, have.old), want.old, want.new)

    def _bring_tuple(self, value: Expr, have: Info, want: Info) -> Expr:
        size = len(have) if isinstance(have, tuple) else len(want)  # type: ignore[arg-type]
        haves = have if isinstance(have, tuple) else (None,) * size
        wants = want if isinstance(want, tuple) else (None,) * size
        if isinstance(value, Tuple) and len(value.fields) == size:
            fields: Sequence[Expr] = value.fields
        else:
            fields = [TupleGetItem(value, i) for i in range(size)]
        new = [self.bring(f, h, w) for f, h, w in zip(fields, haves, wants)]
        if isinstance(value, Tuple):
            return value.with_children(new)
        return Tuple(tuple(new), span=value.span)

    def transform(self, value: Expr, src: str, dst: str) -> Expr:
        if src == dst:
            return value
        if _is_transform(value, dst, src) or _undoes_transpose(value, src, dst):
            assert isinstance(value, Call)
            return value.args[0]                 # the pair is the identity
        key = (id(value), src, dst)
        found = self.transforms.get(key)
        if found is None:
            found = self._transform(value, src, dst)
            self.transforms[key] = found
        return found

    @staticmethod
    def _transform(value: Expr, src: str, dst: str) -> Expr:
        expand = len(axis_letters(dst)) - len(split_axes(dst)) - len(src)
        if expand > 0:
            # A lower-rank operand (a bias of shape (C,) beside NHWC data going to NCHW):
            # leading axes first, then the transform over the full layout, as TVM's
            # TransformHelper (src C, dst NCHW: expand_dims to NHWC, NHWC -> NCHW).
            value = Call(get_op("expand_dims"), (value,),
                         ExpandDimsAttrs(axis=0, num_newaxis=expand), span=value.span)
            src = "".join(a.upper() for a in axis_letters(dst)
                          if a.isupper() and a not in src) + src
            if src == dst:
                return value
        return Call(get_op("layout_transform"), (value,),
                    LayoutTransformAttrs(src_layout=src, dst_layout=dst), span=value.span)


def _is_transform(e: Expr, src: str, dst: str) -> bool:
    if not (isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == "layout_transform"):
        return False
    attrs: Any = e.attrs
    return attrs.src_layout == src and attrs.dst_layout == dst


def _undoes_transpose(e: Expr, src: str, dst: str) -> bool:
    """`layout_transform(transpose(v, axes), src, dst)` is `v` (a model imported from
    NHWC wraps its convolutions in such transposes)."""
    if not (isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == "transpose"
            and is_plain(src) and is_plain(dst)):
        return False
    rank = len(src)
    axes = getattr(e.attrs, "axes", None) or tuple(reversed(range(rank)))
    if len(axes) != rank:
        return False
    axes = [a + rank if a < 0 else a for a in axes]
    # Axis i of the result is axis src.index(dst[i]) of the transpose's result, which is
    # axis axes[...] of v: the identity when that is i for every i.
    return all(axes[src.index(c)] == i for i, c in enumerate(dst))


def _permuted(ty: Any, info: Laid) -> Any:
    """A let variable's tensor annotation in the new layout (None stays None)."""
    if not isinstance(ty, TensorType) or len(ty.shape) != len(info.old):
        return None                  # nothing to permute: inference gives the type
    return TensorType(_permuted_shape(tuple(ty.shape), info.old, info.new), ty.dtype)


@lru_cache(maxsize=256)
def _permuted_shape(shape: tuple, old: str, new: str) -> tuple:
    return transformed_shape(primal_sizes(shape, parse_layout(old)), parse_layout(new))
