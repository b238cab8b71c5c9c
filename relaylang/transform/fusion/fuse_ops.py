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

Tuples of tensors and their projections are nodes too, as in TVM: a tuple joins the
injective call taking it (`concatenate((%a, %b))`), and then the elementwise and
injective ops computing its fields join through it (TVM's last phase), so
`concatenate((add(%x, 1f), %y))` is one function with the tuple inside; a projection
(`%s.0` of a `split`) is injective, so a split and the elementwise ops on its fields are
one function. A tuple that joins nothing stays outside every function, and so does a
projection of a tuple computed elsewhere. `annotation.stop_fusion` is a boundary and is
dropped from the output (TVM's).

OPAQUE and stateful ops, ops returning other than tensors or tuples of tensors, a
reduction's consumers, `let`s, `if`s, references and calls of functions are boundaries.
Inputs from outside a group become its parameters `%p0, %p1, ...`, typed from InferType
(which runs first); scalar constants stay inside, and tensor constants too with
`link_params=1` (TVM's `relay.FuseOps.link_params`). Like TVM, a call that fuses with
nothing is still wrapped in its own Primitive function; `fuse_opt_level=0` wraps every
call alone (no fusion at all), and the default -1 takes the opt level of the current
`PassContext`; `max_fuse_depth` defaults to the context's `relay.FuseOps.max_depth`
config, else 256. Existing Primitive functions are left as they are, so the pass is
idempotent. DefuseOps undoes it.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.attrs import DictAttrs
from ...ir.expr import Call, Constant, Expr, Function, Op, Tuple, TupleGetItem, Var
from ...ir.module import IRModule
from ...ir.normal_forms import map_unfused_functions, opaque_children
from ...ir.traverse import post_order
from ...ir.types import FuncType, TensorType, TupleType
from ...op import OpPattern, get_op_def
from ..pass_infra import ModulePass, PassContext, register_pass
from .dominators import DataflowGraph, dataflow_graph

_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)
MAX_FUSE_DEPTH = 256                  # TVM's kMaxFusedOps
STOP_FUSION = "annotation.stop_fusion"


@register_pass
@dataclass(frozen=True)
class FuseOps(ModulePass):
    """Wrap operator calls of every function in `Primitive=1` functions, fused by pattern."""

    name: ClassVar[str] = "FuseOps"
    opt_level: ClassVar[int] = 0
    fuse_opt_level: int = -1           # -1: the PassContext's opt_level; 0: no fusion
    # 0: the PassContext's config "relay.FuseOps.max_depth" (TVM's), else 256
    max_fuse_depth: int = 0
    # -1: the PassContext's config "relay.FuseOps.link_params" (TVM's), else 0; 1: tensor
    # constants stay inside the functions instead of becoming parameters
    link_params: int = -1
    # Parameters of the new functions need types; the output is typed, as TVM's, so
    # that a second run changes nothing.
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        level = self.fuse_opt_level if self.fuse_opt_level >= 0 else ctx.opt_level
        config = ctx.config if isinstance(ctx.config, dict) else {}
        depth = self.max_fuse_depth if self.max_fuse_depth > 0 \
            else int(config.get("relay.FuseOps.max_depth", MAX_FUSE_DEPTH))
        link = self.link_params if self.link_params >= 0 \
            else int(bool(config.get("relay.FuseOps.link_params", False)))
        return map_unfused_functions(
            mod, lambda fn: fuse_ops(fn, fuse=level > 0, max_size=max(depth, 1),
                                     link_params=bool(link)))


@dataclass
class _Group:
    """Nodes fused together; `root` is the one whose value leaves the group."""

    root: Expr
    members: list[Expr] = field(default_factory=list)   # in no particular order
    kind: OpPattern = OpPattern.ELEMWISE                # the pattern that decides fusion
    anchors: int = 0
    merged_into: _Group | None = None                   # set once fused into another group


def fuse_ops(fn: Function, fuse: bool = True, max_size: int = MAX_FUSE_DEPTH,
             link_params: bool = False) -> Function:
    """`fn` (type-checked) with every operator call inside a `Primitive=1` function."""
    order = post_order(fn, opaque_children)      # existing Primitive functions: not entered
    groups: dict[int, _Group] = {id(n): _new_group(n) for n in order if _is_node(n)}
    member_of: set[int] = set()                  # nodes fused into another node's group
    if fuse:
        graph = dataflow_graph(order, _is_node, opaque_children)
        # As TVM's injective phase before its last one: a tuple joins the injective call
        # taking it (`concatenate`), so that the ops computing its fields can then join
        # through it; a tuple that does not stays outside every function.
        for node in graph.calls:
            if isinstance(node, Tuple):
                _fuse_into_post_dominator(node, graph, groups, member_of, max_size)
        # Producers first: when a node is visited its own producers have had their turn.
        for node in graph.calls:
            if not isinstance(node, Tuple) and _fusable(node):
                _fuse_into_post_dominator(node, graph, groups, member_of, max_size)
        # A group without an operator call (`(%a, %b).0`) is no kernel: its nodes stay.
        for group in groups.values():
            if group.merged_into is None and not _makes_function(group):
                member_of.difference_update(id(m) for m in group.members)
    return _rebuild(order, fn, groups, member_of, link_params)


def _fuse_into_post_dominator(node: Expr, graph: DataflowGraph, groups: dict[int, _Group],
                              member_of: set[int], max_size: int) -> None:
    sink = graph.post_dominator[id(node)]
    if sink is None:
        return
    producer, target = _find(groups[id(node)]), _find(groups[id(sink)])
    if producer is target:
        return                   # already fused on an earlier node's path
    if isinstance(sink, Tuple):
        # Into a tuple only once the tuple is in an injective call's group (TVM's
        # third phase); a tuple left alone stays outside every function.
        if target.root is sink or target.kind > OpPattern.INJECTIVE \
                or producer.kind > OpPattern.INJECTIVE:
            return
        sink_kind = OpPattern.INJECTIVE
    else:
        sink_kind = _pattern(sink)
    between = graph.between(node, sink, max_size)
    if between is None:
        return                   # more nodes on the way than a group may hold
    others: dict[int, _Group] = {}
    for other in between:
        group = _find(groups[id(other)])
        if group is not target and group is not producer:
            others[id(group)] = group
    absorbed = [producer, *others.values()]
    if _try_merge(target, sink_kind, absorbed, max_size):
        member_of.update(id(g.root) for g in absorbed)


def _is_node(node: Expr) -> bool:
    """A node of the fusion graph: an operator call, a tuple of tensors, a projection of
    a tuple of tensors (TVM's: other tuples cannot be parameters of a kernel). A
    non-computational call taking or returning a value that is not a tensor
    (memory.alloc_storage, memory.alloc_tensor, memory.kill: a `Storage[]`) is no node:
    it stays as it is, in no Primitive function, as in TVM's FuseMutator (which leaves
    every non-computational op out; here on_device, device_copy and the vm ops, whose
    tensors the backends compute, are still fused)."""
    if isinstance(node, Call):
        if not isinstance(node.op, Op):
            return False
        opdef = get_op_def(node.op.name)
        if opdef is not None and opdef.non_computational:
            return all(_tensor_value(t) for t in
                       [a.checked_type for a in node.args] + [node.checked_type])
        return True
    if isinstance(node, Tuple):
        return _tensor_tuple(node.checked_type)
    if isinstance(node, TupleGetItem):
        return _tensor_tuple(node.tuple_value.checked_type)
    return False


def _tensor_value(t: object) -> bool:
    return isinstance(t, TensorType) or (isinstance(t, TupleType)
                                         and all(_tensor_value(f) for f in t.fields))


def _tensor_tuple(t: object) -> bool:
    return isinstance(t, TupleType) and bool(t.fields) \
        and all(isinstance(f, TensorType) for f in t.fields)


def _pattern(node: Expr) -> OpPattern:
    if isinstance(node, Tuple):
        return OpPattern.TUPLE
    if isinstance(node, TupleGetItem):
        return OpPattern.INJECTIVE
    assert isinstance(node, Call) and isinstance(node.op, Op)
    opdef = get_op_def(node.op.name)
    if opdef is None or opdef.stateful or node.op.name == STOP_FUSION:
        return OpPattern.OPAQUE      # unknown or effectful: a boundary
    t = node.checked_type
    if not (isinstance(t, TensorType) or _tensor_tuple(t)):
        return OpPattern.OPAQUE      # a result a kernel cannot return
    return opdef.pattern


def _fusable(node: Expr) -> bool:
    return _pattern(node) <= OpPattern.OUT_ELEMWISE_FUSABLE


def _new_group(node: Expr) -> _Group:
    pattern = _pattern(node)
    return _Group(node, [node], pattern, int(pattern in _ANCHORS))


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
    elif producer.kind == OpPattern.TUPLE:
        # A tuple joins an injective consumer, everything on the way injective (TVM).
        allowed, on_path = sink <= OpPattern.INJECTIVE and target.kind <= OpPattern.INJECTIVE, \
            OpPattern.INJECTIVE
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
        if other.kind == OpPattern.TUPLE:
            continue                             # a tuple does not change the kernel's kind
        if other.kind in _ANCHORS or target.kind in _ANCHORS:
            target.kind = other.kind if other.kind in _ANCHORS else target.kind
        else:
            target.kind = max(target.kind, other.kind)
    return True


def _rebuild(order: list[Expr], fn: Function, groups: dict[int, _Group],
             member_of: set[int], link_params: bool) -> Function:
    done: dict[int, Expr] = {}
    for node in order:
        if id(node) in member_of:
            continue                 # computed inside its group's function
        if isinstance(node, Call) and isinstance(node.op, Op) and node.op.name == STOP_FUSION:
            done[id(node)] = done[id(node.args[0])]     # TVM drops the annotation
            continue
        group = groups.get(id(node))
        if group is not None and _makes_function(group):
            done[id(node)] = _fused_call(group, done, link_params)
            continue
        kids = opaque_children(node)
        done[id(node)] = _typed_as(node.with_children([done[id(c)] for c in kids]), node) \
            if kids else node
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


def _makes_function(group: _Group) -> bool:
    """Whether `group` becomes a Primitive function: one with an operator call does,
    unless its root is a tuple (TVM's: then the group is the tuple alone); a tuple, a
    projection or a projection of a tuple literal stays as it is."""
    return not isinstance(group.root, Tuple) \
        and any(isinstance(m, Call) for m in group.members)


def _fused_call(group: _Group, done: dict[int, Expr], link_params: bool) -> Call:
    """`fn (%p0, ..., Primitive=1) { members on params }(inputs)` for one group."""
    inside = {id(m) for m in group.members}
    local: dict[int, Expr] = {}                  # id(original) -> its expression inside
    params: list[Var] = []
    inputs: list[Expr] = []
    # The function's post-order within the group: producers before consumers, inputs
    # numbered in the order the original program reaches them.
    for member in post_order(group.root, _children_within(group)):
        args = []
        for arg in _operands(member):
            if id(arg) not in inside and id(arg) not in local:
                if isinstance(arg, Constant) and (link_params or arg.data.ndim == 0):
                    local[id(arg)] = arg          # scalars (all with link_params) stay in
                else:
                    param = _typed_as(Var(f"p{len(params)}", arg.checked_type), arg)
                    params.append(param)
                    inputs.append(done[id(arg)])
                    local[id(arg)] = param
            args.append(local[id(arg)])
        if isinstance(member, Call):
            new: Expr = Call(member.op, tuple(args), member.attrs, member.type_args,
                             span=member.span)
        elif isinstance(member, Tuple):
            new = Tuple(tuple(args), span=member.span)
        else:
            assert isinstance(member, TupleGetItem)
            new = TupleGetItem(args[0], member.index, span=member.span)
        local[id(member)] = _typed_as(new, member)
    root = group.root
    prim = Function(tuple(params), local[id(root)], root.checked_type,
                    attrs=DictAttrs((("Primitive", 1),)))
    if root.checked_type is not None:
        prim.set_checked_type(FuncType(tuple(p.type_annotation for p in params),
                                       root.checked_type))
    return _typed_as(Call(prim, tuple(inputs), span=root.span), root)


def _operands(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Call):
        return node.args
    if isinstance(node, Tuple):
        return node.fields
    assert isinstance(node, TupleGetItem)
    return (node.tuple_value,)


def _typed_as(new: Expr, old: Expr) -> Expr:
    """`new`, which computes what `old` did, with `old`'s type: fusing changes no type, so
    the output is typed as it is built and InferType need not run over it again."""
    if new is not old and new.checked_type is None and old.checked_type is not None:
        new.set_checked_type(old.checked_type)
    return new


def _children_within(group: _Group) -> Callable[[Expr], tuple[Expr, ...]]:
    inside = {id(m) for m in group.members}
    return lambda node: tuple(a for a in _operands(node) if id(a) in inside) \
        if _is_node(node) else ()
