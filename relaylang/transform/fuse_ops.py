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

A simplification of TVM's dominator-tree partitioner: a producer call is fused into its
consumer only when the consumer is its one and only user (a value used twice ends its
group, so nothing is ever computed twice), and only when

  * the producer's group is ELEMWISE/BROADCAST/INJECTIVE and the consumer is one of
    those or COMM_REDUCE (elementwise chains, injective chains, `sum(exp(x))`);
  * the producer's group holds an OUT_ELEMWISE_FUSABLE op (`nn.conv2d`, `nn.dense`) and
    the consumer is ELEMWISE/BROADCAST (`conv2d + bias + relu`);
  * the result holds at most one OUT_ELEMWISE_FUSABLE/COMM_REDUCE op ("anchor") and at
    most `max_fuse_depth` ops (TVM: 256).

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

from ..ir.attrs import DictAttrs
from ..ir.expr import Call, Constant, Expr, Function, Op, Var
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque, opaque_children
from ..ir.traverse import post_order
from ..ir.types import TensorType
from ..op import OpPattern, get_op_def
from ..typing import infer_types
from .pass_infra import ModulePass, PassContext, register_pass

_ANCHORS = (OpPattern.OUT_ELEMWISE_FUSABLE, OpPattern.COMM_REDUCE)


@register_pass
@dataclass(frozen=True)
class FuseOps(ModulePass):
    """Wrap operator calls of every function in `Primitive=1` functions, fused by pattern."""

    name: ClassVar[str] = "FuseOps"
    opt_level: ClassVar[int] = 0
    fuse_opt_level: int = -1           # -1: the PassContext's opt_level; 0: no fusion
    max_fuse_depth: int = 256          # TVM's relay.FuseOps.max_depth

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        level = self.fuse_opt_level if self.fuse_opt_level >= 0 else ctx.opt_level
        mod = infer_types(mod)         # parameters of the new functions need types
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if not is_opaque(fn):
                out.functions[gv] = fuse_ops(fn, fuse=level > 0, max_size=self.max_fuse_depth)
        return infer_types(out)        # typed output, as TVM's: a second run changes nothing


@dataclass
class _Group:
    """Calls fused together; `root` is the one whose value leaves the group."""

    root: Call
    members: list[Call] = field(default_factory=list)   # producers before consumers
    kind: OpPattern = OpPattern.ELEMWISE                # the pattern that decides fusion
    anchors: int = 0


def fuse_ops(fn: Function, fuse: bool = True, max_size: int = 256) -> Function:
    """`fn` (type-checked) with every operator call inside a `Primitive=1` function."""
    order = post_order(fn, opaque_children)      # existing Primitive functions: not entered
    users: dict[int, int] = {}
    for node in order:
        for child in opaque_children(node):
            users[id(child)] = users.get(id(child), 0) + 1
    groups: dict[int, _Group] = {}               # id(root call) -> its group
    member_of: set[int] = set()                  # calls fused into another call's group
    for node in order:
        if _is_op_call(node):
            group = _new_group(node)
            groups[id(node)] = group
            if fuse and _fusable(node):
                for arg in node.args:
                    if users.get(id(arg)) == 1 and id(arg) in groups and _fusable(arg) \
                            and _try_merge(group, groups[id(arg)], max_size):
                        member_of.add(id(arg))
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


def _try_merge(group: _Group, producer: _Group, max_size: int) -> bool:
    """Fuse `producer` (whose root feeds only `group.root`) into `group`, if the rules allow."""
    consumer = _pattern(group.root)
    if producer.kind <= OpPattern.INJECTIVE:
        allowed = consumer <= OpPattern.COMM_REDUCE
    elif producer.kind == OpPattern.OUT_ELEMWISE_FUSABLE:
        allowed = consumer <= OpPattern.BROADCAST
    else:
        allowed = False              # a reduction ends its group; OPAQUE never fuses
    if not allowed or group.anchors + producer.anchors > 1 \
            or len(group.members) + len(producer.members) > max_size:
        return False
    group.members[:0] = producer.members         # producers first: a valid evaluation order
    group.anchors += producer.anchors
    if producer.kind in _ANCHORS or group.kind in _ANCHORS:
        group.kind = producer.kind if producer.kind in _ANCHORS else group.kind
    else:
        group.kind = max(group.kind, producer.kind)
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
        done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
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
                    param = Var(f"p{len(params)}", arg.checked_type)
                    params.append(param)
                    inputs.append(done[id(arg)])
                    local[id(arg)] = param
            args.append(local[id(arg)])
        local[id(member)] = Call(member.op, tuple(args), member.attrs, member.type_args,
                                 span=member.span)
    body = local[id(group.root)]
    prim = Function(tuple(params), body, group.root.checked_type,
                    attrs=DictAttrs((("Primitive", 1),)))
    return Call(prim, tuple(inputs), span=group.root.span)


def _children_within(group: _Group) -> Callable[[Expr], tuple[Expr, ...]]:
    inside = {id(m) for m in group.members}
    return lambda node: tuple(a for a in node.args if id(a) in inside) \
        if isinstance(node, Call) else ()
