"""FuseOps: group operator calls into `Primitive=1` functions (TVM's src/relay/transforms/fuse_ops.cc).

Every operator call of a function body ends up inside a function marked `Primitive=1`
that is called in its place; the backend compiles each such function as one kernel.
Calls whose fusion patterns (`OpDef.pattern`, TVM's `OpPattern`) allow it share one
function:

    def @main(%x: Tensor[(4), float32]) {      def @main(%x: Tensor[(4), float32]) {
      %0 = add(%x, 1f);                          %0 = fn (%p0: Tensor[(4), float32],
      %1 = exp(%0);                  ==>                  Primitive=1) {
      sum(%1)                                      %1 = add(%p0, 1f); %2 = exp(%1); sum(%2)
    }                                            };
                                                 %0(%x)
                                               }

TVM's dominator-tree partitioner (`dominators.py`): each call, visited producers
first, is fused with every call on its paths to its immediate post-dominator (the first
call all its uses flow into) and with that post-dominator, so a diamond such as
`%1 = exp(%0); %2 = sigmoid(%0); multiply(%1, %2)` or a residual block's `add` is one
group, nothing is computed twice and no inner value leaves a group. The fusion happens
only when

  * the producer's group is ELEMWISE/BROADCAST/INJECTIVE, every call in between is in
    such a group and the post-dominator is one of those or COMM_REDUCE (elementwise
    chains and diamonds, injective chains, `sum(exp(x))`);
  * the producer's group holds an OUT_ELEMWISE_FUSABLE op (`nn.conv2d`, `nn.dense`),
    every call in between is in an ELEMWISE/BROADCAST group and the post-dominator is
    ELEMWISE/BROADCAST (`conv2d + bias + relu`, a residual `add`);
  * the result holds at most one OUT_ELEMWISE_FUSABLE/COMM_REDUCE op ("anchor") and at
    most `max_fuse_depth` ops (TVM: 256).

Unlike TVM there is one producers-first pass, not three phases (TVM fuses injective
producers only after the anchors' groups are final, and never into a reduction or an
anchored group), and the post-dominator's own pattern, not the edge patterns, decides:
this keeps the groups this pass formed before it had post-dominators, e.g.
`sum(transpose(exp(x)))` as one kernel.

OPAQUE and stateful ops, ops returning tuples, a reduction's consumers, `let`s,
`if`s, tuples and calls of functions are boundaries. Inputs from outside a group become
its parameters `%p0, %p1, ...`, typed from InferType (which runs first); scalar constants
stay inside. Like TVM, a call that fuses with nothing is still wrapped in its own
Primitive function; `fuse_opt_level=0` wraps every call alone (no fusion at all), and
the default -1 takes the opt level of the current `PassContext`. Existing Primitive
functions are left as they are, so the pass is idempotent. DefuseOps undoes it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.attrs import DictAttrs
from ...ir.expr import Call, Constant, Expr, Function, Op, Var
from ...ir.module import IRModule
from ...ir.normal_forms import map_unfused_functions, opaque_children
from ...ir.traverse import post_order
from ...ir.types import FuncType, TensorType
from ...op import OpPattern, get_op_def
from ..pass_infra import ModulePass, PassContext, register_pass
from .dominators import dataflow_graph

_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)


@register_pass
@dataclass(frozen=True)
class FuseOps(ModulePass):
    """Wrap operator calls of every function in `Primitive=1` functions, fused by pattern."""

    name: ClassVar[str] = "FuseOps"
    opt_level: ClassVar[int] = 0
    fuse_opt_level: int = -1           # -1: the PassContext's opt_level; 0: no fusion
    max_fuse_depth: int = 256          # TVM's relay.FuseOps.max_depth
    # Parameters of the new functions need types; the output is typed, as TVM's, so
    # that a second run changes nothing.
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        level = self.fuse_opt_level if self.fuse_opt_level >= 0 else ctx.opt_level
        return map_unfused_functions(
            mod, lambda fn: fuse_ops(fn, fuse=level > 0, max_size=self.max_fuse_depth))


@dataclass
class _Group:
    """Calls fused together; `root` is the one whose value leaves the group."""

    root: Call
    members: list[Call] = field(default_factory=list)   # in no particular order
    kind: OpPattern = OpPattern.ELEMWISE                # the pattern that decides fusion
    anchors: int = 0
    merged_into: _Group | None = None                   # set once fused into another group


def fuse_ops(fn: Function, fuse: bool = True, max_size: int = 256) -> Function:
    """`fn` (type-checked) with every operator call inside a `Primitive=1` function."""
    order = post_order(fn, opaque_children)      # existing Primitive functions: not entered
    groups: dict[int, _Group] = {id(n): _new_group(n) for n in order if _is_op_call(n)}
    member_of: set[int] = set()                  # calls fused into another call's group
    if fuse:
        graph = dataflow_graph(order, _is_op_call, opaque_children)
        # Producers first: when a call is visited its own producers have had their turn.
        for call in graph.calls:
            sink = graph.post_dominator[id(call)]
            if sink is None or not _fusable(call):
                continue
            producer, target = _find(groups[id(call)]), _find(groups[id(sink)])
            if producer is target:
                continue                 # already fused on an earlier call's path
            between = graph.between(call, sink, max_size)
            if between is None:
                continue                 # more calls on the way than a group may hold
            others: dict[int, _Group] = {}
            for node in between:
                group = _find(groups[id(node)])
                if group is not target and group is not producer:
                    others[id(group)] = group
            absorbed = [producer, *others.values()]
            if _try_merge(target, _pattern(sink), absorbed, max_size):
                member_of.update(id(g.root) for g in absorbed)
    return _rebuild(order, fn, groups, member_of)


def _is_op_call(node: Expr) -> bool:
    return isinstance(node, Call) and isinstance(node.op, Op)


def _pattern(call: Call) -> OpPattern:
    assert isinstance(call.op, Op)
    opdef = get_op_def(call.op.name)
    if opdef is None or opdef.stateful or not isinstance(call.checked_type, TensorType):
        return OpPattern.OPAQUE      # unknown, effectful or tuple-valued: a boundary
    return opdef.pattern


def _fusable(call: Expr) -> bool:
    return isinstance(call, Call) and _is_op_call(call) and _pattern(call) <= OpPattern.OUT_ELEMWISE_FUSABLE


def _new_group(call: Call) -> _Group:
    pattern = _pattern(call)
    return _Group(call, [call], pattern, int(pattern in _ANCHORS))


def _find(group: _Group) -> _Group:
    """The group `group` was merged into (union-find root), compressing the path."""
    root = group
    while root.merged_into is not None:
        root = root.merged_into
    while group.merged_into is not None:
        group.merged_into, group = root, group.merged_into
    return root


def _try_merge(target: _Group, sink: OpPattern, absorbed: list[_Group], max_size: int) -> bool:
    """Merge `absorbed` (the producer's group, then the groups on its paths) into `target`,
    the group of the producer's post-dominator whose own pattern is `sink`, if the rules allow."""
    producer, between = absorbed[0], absorbed[1:]
    if producer.kind <= OpPattern.INJECTIVE:
        allowed, on_path = sink <= OpPattern.COMM_REDUCE, OpPattern.INJECTIVE
    elif producer.kind == OpPattern.OUT_ELEMWISE_FUSABLE:
        allowed, on_path = sink <= OpPattern.BROADCAST, OpPattern.BROADCAST
    else:
        return False                 # a reduction ends its group; OPAQUE never fuses
    if not allowed or any(g.kind > on_path for g in between) \
            or target.anchors + sum(g.anchors for g in absorbed) > 1 \
            or len(target.members) + sum(len(g.members) for g in absorbed) > max_size:
        return False
    for other in absorbed:
        target.members.extend(other.members)     # a set: _fused_call orders them
        target.anchors += other.anchors
        other.merged_into = target
        if other.kind in _ANCHORS or target.kind in _ANCHORS:
            target.kind = other.kind if other.kind in _ANCHORS else target.kind
        else:
            target.kind = max(target.kind, other.kind)
    return True


def _rebuild(order: list[Expr], fn: Function, groups: dict[int, _Group],
             member_of: set[int]) -> Function:
    done: dict[int, Expr] = {}
    for node in order:
        if id(node) in member_of:
            continue                 # computed inside its group's function
        group = groups.get(id(node))
        if group is not None:
            done[id(node)] = _fused_call(group, done)
            continue
        kids = opaque_children(node)
        done[id(node)] = _typed_as(node.with_children([done[id(c)] for c in kids]), node) \
            if kids else node
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


def _fused_call(group: _Group, done: dict[int, Expr]) -> Call:
    """`fn (%p0, ..., Primitive=1) { members on params }(inputs)` for one group."""
    inside = {id(m) for m in group.members}
    local: dict[int, Expr] = {}                  # id(original) -> its expression inside
    params: list[Var] = []
    inputs: list[Expr] = []
    # The function's post-order within the group: producers before consumers, inputs
    # numbered in the order the original program reaches them.
    for member in post_order(group.root, _children_within(group)):
        assert isinstance(member, Call)
        args = []
        for arg in member.args:
            if id(arg) not in inside and id(arg) not in local:
                if isinstance(arg, Constant) and arg.data.ndim == 0:
                    local[id(arg)] = arg          # scalars stay in the kernel
                else:
                    param = _typed_as(Var(f"p{len(params)}", arg.checked_type), arg)
                    params.append(param)
                    inputs.append(done[id(arg)])
                    local[id(arg)] = param
            args.append(local[id(arg)])
        local[id(member)] = _typed_as(Call(member.op, tuple(args), member.attrs,
                                           member.type_args, span=member.span), member)
    root = group.root
    prim = Function(tuple(params), local[id(root)], root.checked_type,
                    attrs=DictAttrs((("Primitive", 1),)))
    if root.checked_type is not None:
        prim.set_checked_type(FuncType(tuple(p.type_annotation for p in params),
                                       root.checked_type))
    return _typed_as(Call(prim, tuple(inputs), span=root.span), root)


def _typed_as(new: Expr, old: Expr) -> Expr:
    """`new`, which computes what `old` did, with `old`'s type: fusing changes no type, so
    the output is typed as it is built and InferType need not run over it again."""
    if new is not old and new.checked_type is None and old.checked_type is not None:
        new.set_checked_type(old.checked_type)
    return new


def _children_within(group: _Group) -> Callable[[Expr], tuple[Expr, ...]]:
    inside = {id(m) for m in group.members}
    return lambda node: tuple(a for a in node.args if id(a) in inside) \
        if isinstance(node, Call) else ()
