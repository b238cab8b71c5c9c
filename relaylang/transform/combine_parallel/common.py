"""The machinery shared by CombineParallelConv2D and CombineParallelDense: find ops of one
kind that read the same input, group the compatible ones, and replace each group by one
combined op whose result is split back into the branches (TVM's
src/relay/transforms/combine_parallel_op.cc).

A *branch* starts at a call of the op and goes on through the elementwise or broadcast
calls (`OpPattern <= BROADCAST`) that are the only user of the previous node. A *group*
is a list of branches whose first ops read the same input and may be combined. Each level
of the branches after the first is combined too while every branch has there the same op
and attributes and its other arguments are compatible (`CombineBranches`, `CheckLevel`).

    %1 = nn.conv2d(%x, %w1);            %0 = concatenate((%w1, %w2));
    %2 = nn.relu(%1);           ==>     %1 = nn.conv2d(%x, %0, channels=8);
    %3 = nn.conv2d(%x, %w2);            %2 = nn.relu(%1);
    %4 = nn.relu(%3);                   (strided_slice(%2, ...), strided_slice(%2, ...))
    (%2, %4)

A `Combiner` says which calls qualify and how the combined op, the combined following ops
and the per-branch outputs are built. Beyond TVM, a group never mixes scopes (an `if`
branch, a `match` clause or a nested function with the code around it: the combined op
would run where only one branch ran before), and an argument that depends on an op of its
own group keeps that branch out (TVM would duplicate the op instead).
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.expr import Call, Expr, Function, If, Let, Match, Op, Tuple, Var
from ...ir.module import IRModule
from ...ir.normal_forms import is_opaque
from ...ir.traverse import post_order
from ...ir.types import TensorType
from ...op.registry import OpPattern, get_op_def
from ...op.registry import get as get_op
from ...op.transform import ConcatenateAttrs
from ..pass_infra import FunctionPass, PassContext

Branch = list[Call]            # the op, then the elementwise calls that follow it
Group = list[Branch]
Lookup = Callable[[Expr], Expr]   # an original node -> its rewritten version


class Combiner(ABC):
    """One kind of combination; subclasses say what qualifies and how to build."""

    op_name: str = ""

    @abstractmethod
    def is_supported(self, call: Call) -> bool:
        """May `call` (of `op_name`, types known) start a branch?"""

    @abstractmethod
    def can_combine(self, a: Call, b: Call) -> bool:
        """May ops `a` and `b` of one input be in one group?"""

    @abstractmethod
    def is_arg_compatible(self, root: Call, a: Call, b: Call, index: int,
                          parent_index: int) -> bool:
        """May argument `index` of the following calls `a` and `b` be combined? They read
        their branch at `parent_index`; `root` is the group's first op."""

    def can_follow(self, call: Call) -> bool:
        """May the following call `call` (the same in every branch) be combined at all?"""
        return True

    def follows(self, branch: Branch, depth: int, parent_index: int) -> bool:
        """May `branch[depth]` be combined given how it changes the branch's shape? By
        default only when it keeps it (an op that changes the shape would move the axes
        the outputs are split along)."""
        return keeps_shape(branch[depth], parent_index)

    @abstractmethod
    def make_combined_op(self, group: Group, new: Lookup) -> Expr:
        """The one op that computes what the group's first ops computed."""

    @abstractmethod
    def make_following(self, data: Expr, group: Group, depth: int, parent_index: int,
                       new: Lookup) -> Expr:
        """The calls of level `depth` as one call on the combined value `data`."""

    @abstractmethod
    def split_outputs(self, data: Expr, group: Group, depth: int) -> list[Expr]:
        """One expression per branch, each replacing that branch's node at `depth`."""


def tensor_type(e: Expr) -> TensorType | None:
    ty = e.checked_type
    return ty if isinstance(ty, TensorType) else None


def keeps_shape(call: Call, parent_index: int) -> bool:
    """Does `call` give a tensor of the shape of its argument `parent_index` (it does not
    broadcast the branch's value to a larger shape)?"""
    out, parent = static_shape(call), static_shape(call.args[parent_index])
    return out is not None and out == parent


def static_shape(e: Expr) -> tuple[int, ...] | None:
    """The shape of `e` when it is a tensor of known, constant dimensions."""
    ty = tensor_type(e)
    if ty is None or not all(isinstance(d, int) for d in ty.shape):
        return None
    return tuple(int(d) for d in ty.shape)


def concat(parts: list[Expr], axis: int) -> Call:
    return Call(get_op("concatenate"), (Tuple(tuple(parts)),), ConcatenateAttrs(axis=axis))


def is_call_of(e: Expr, name: str) -> bool:
    return isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == name


def combine_function(fn: Function, combiner: Combiner, min_num_branches: int) -> Function:
    """`fn` with every group of at least `min_num_branches` branches combined."""
    if is_opaque(fn):
        return fn
    order = post_order(fn)
    # Users, scopes and positions of every node cost four tables the size of the function:
    # built only when there is something to combine.
    if not any(is_call_of(n, combiner.op_name) for n in order):
        return fn
    graph = _Graph(fn, order)
    plans: list[_Plan] = []
    reads: list[set[int]] = []      # reads[i]: the plans whose ops plan i's inputs read
    for group in _find_groups(graph, combiner):
        if len(group) >= min_num_branches:
            plan = _plan(graph, combiner, group)
            edges = _new_edges(graph, plan, plans)
            if edges is not None and not _reaches(reads, edges[0], edges[1]):
                plans.append(plan)
                reads.append(edges[0])
                for j in edges[1]:
                    reads[j].add(len(plans) - 1)
    if not plans:
        return fn
    out = _apply(fn, combiner, plans)
    assert isinstance(out, Function)
    return out


class CombineParallelPass(FunctionPass):
    """The pass around a `Combiner`: subclasses are frozen dataclasses with a
    `min_num_branches` field and say which combiner runs."""

    min_num_branches: int
    # Combiners read checked types; the combined ops need theirs afterwards.
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    @abstractmethod
    def combiner(self) -> Combiner:
        """The combiner this pass runs on each function."""

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        return combine_function(fn, self.combiner(), self.min_num_branches)


# ---------------------------------------------------------------- the graph of users


class _Graph:
    """Users, scopes, post-order positions and let bindings of one function's nodes."""

    def __init__(self, fn: Function, order: list[Expr] | None = None):
        self.order = post_order(fn) if order is None else order
        self.pos = {id(n): i for i, n in enumerate(self.order)}
        self.users: dict[int, list[Expr]] = {}
        self.bound: dict[int, Expr] = {}       # let-bound var -> its value
        for node in self.order:
            for child in node.children():
                self.users.setdefault(id(child), []).append(node)
            if isinstance(node, Let):
                self.bound[id(node.var)] = node.value
        self.scope = _scopes(fn)

    def only_user(self, node: Expr) -> Expr | None:
        users = self.users.get(id(node), [])
        return users[0] if len(users) == 1 else None

    def depends_on(self, roots: Sequence[Expr], ops: Sequence[Call]) -> bool:
        """Does any of `roots` read (through children or let-bound vars) one of `ops`?"""
        targets = {id(op) for op in ops}
        first = min(self.pos[t] for t in targets)
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if id(node) in targets:
                return True
            if isinstance(node, Var):
                value = self.bound.get(id(node))
                if value is not None:
                    stack.append(value)
            # A node before the first op in post-order cannot read it.
            elif self.pos.get(id(node), first) >= first:
                stack.extend(node.children())
        return False


def _scopes(fn: Function) -> dict[int, int]:
    """Scope number of each node: a new one inside each if branch, match clause and nested
    function. A node reached from two scopes gets -1 (it may start no branch)."""
    scope: dict[int, int] = {}
    stack: list[tuple[Expr, int]] = [(fn.body, 0)]
    count = 0
    while stack:
        node, s = stack.pop()
        known = scope.get(id(node))
        if known is not None:
            if known != s:
                scope[id(node)] = -1
            continue
        scope[id(node)] = s
        kids = node.children()
        if isinstance(node, If):
            stack.append((node.cond, s))
            kids = kids[1:]
        elif isinstance(node, Match):
            stack.append((node.data, s))
            kids = kids[1:]
        elif not isinstance(node, Function):
            stack.extend((k, s) for k in kids)
            continue
        for k in kids:
            count += 1
            stack.append((k, count))
    return scope


# ---------------------------------------------------------------- finding groups


def _find_groups(graph: _Graph, combiner: Combiner) -> list[Group]:
    """Groups of compatible branches over the same input, in program order (TVM's
    BranchGroupFinder::Find)."""
    by_input: dict[tuple[int, int], list[Call]] = {}
    inputs: list[tuple[int, int]] = []
    for node in graph.order:
        if not (is_call_of(node, combiner.op_name) and isinstance(node, Call)):
            continue
        scope = graph.scope.get(id(node), -1)
        if scope < 0 or not combiner.is_supported(node):
            continue
        key = (id(node.args[0]), scope)
        if key not in by_input:
            by_input[key] = []
            inputs.append(key)
        by_input[key].append(node)
    groups: list[Group] = []
    for key in inputs:
        mine: list[Group] = []
        for call in by_input[key]:
            home = next((g for g in mine if _fits(graph, combiner, g, call)), None)
            branch = _branch(graph, call)
            if home is None:
                mine.append([branch])
            else:
                home.append(branch)
        groups += mine
    return groups


def _fits(graph: _Graph, combiner: Combiner, group: Group, call: Call) -> bool:
    if not combiner.can_combine(call, group[0][0]):
        return False
    # The combined op reads every branch's other arguments: none may read the group.
    ops = [b[0] for b in group]
    return not graph.depends_on(call.args[1:], ops) and \
        not graph.depends_on([a for op in ops for a in op.args[1:]], [call])


def _branch(graph: _Graph, call: Call) -> Branch:
    """`call` and the chain of elementwise/broadcast calls that alone use it."""
    branch: Branch = [call]
    scope = graph.scope.get(id(call))
    while True:
        user = graph.only_user(branch[-1])
        if not (isinstance(user, Call) and isinstance(user.op, Op)):
            return branch
        opdef = get_op_def(user.op.name)
        if opdef is None or opdef.pattern > OpPattern.BROADCAST or \
                graph.scope.get(id(user)) != scope or tensor_type(user) is None:
            return branch
        branch.append(user)


# ---------------------------------------------------------------- planning and rewriting


@dataclass
class _Plan:
    group: Group
    depth: int                                   # the last combined level
    parents: list[int] = field(default_factory=list)   # parent argument index per level


def _plan(graph: _Graph, combiner: Combiner, group: Group) -> _Plan:
    """How many levels of `group` combine (TVM's CombineBranches and CheckLevel)."""
    plan = _Plan(group, 0, [0])
    shortest = min(len(b) for b in group)
    ops = [b[0] for b in group]
    for depth in range(1, shortest):
        first = group[0][depth]
        parent = next(i for i, a in enumerate(first.args) if a is group[0][depth - 1])
        if not _level_fits(graph, combiner, group, depth, parent, ops):
            break
        plan.depth = depth
        plan.parents.append(parent)
    return plan


def _level_fits(graph: _Graph, combiner: Combiner, group: Group, depth: int, parent: int,
                ops: list[Call]) -> bool:
    first = group[0][depth]
    if not combiner.can_follow(first):
        return False
    for branch in group:
        call = branch[depth]
        if call.op is not first.op or call.attrs != first.attrs or \
                len(call.args) != len(first.args) or call.args[parent] is not branch[depth - 1]:
            return False
        # An op that changes the branch's shape may move the axes the outputs are split
        # along: the combiner says which it can follow.
        if not combiner.follows(branch, depth, parent):
            return False
        for i in range(len(call.args)):
            if i != parent and not combiner.is_arg_compatible(group[0][0], first, call, i,
                                                              parent):
                return False
        others = [a for i, a in enumerate(call.args) if i != parent]
        if graph.depends_on(others, ops):
            return False
    return True


def _new_edges(graph: _Graph, plan: _Plan, accepted: list[_Plan]
               ) -> tuple[set[int], set[int]] | None:
    """The accepted plans whose ops `plan`'s inputs read, and those whose inputs read
    `plan`'s ops; None when combining `plan` too would make a cycle. Each combined group
    makes its outputs depend on all its inputs, so the groups must stay in a DAG: group A
    reading group B (its inputs read B's ops) and B reading A cannot both be combined,
    nor can longer cycles. One-way reading is fine (TVM combines chained blocks, its
    test_combine_parallel_conv2d_multiple_blocks)."""
    ops = [b[0] for b in plan.group]
    inputs = _inputs(plan)
    out_edges = {k for k, q in enumerate(accepted)
                 if graph.depends_on(inputs, [b[0] for b in q.group])}
    in_edges = {k for k, q in enumerate(accepted) if graph.depends_on(_inputs(q), ops)}
    if out_edges & in_edges:
        return None
    return out_edges, in_edges


def _reaches(reads: list[set[int]], start: set[int], targets: set[int]) -> bool:
    """Does a path of `reads` edges lead from one of `start` to one of `targets`?"""
    seen, work = set(start), list(start)
    while work:
        k = work.pop()
        if k in targets:
            return True
        for j in reads[k]:
            if j not in seen:
                seen.add(j)
                work.append(j)
    return False


def _inputs(plan: _Plan) -> list[Expr]:
    """Every original node the combined expression reads."""
    found: list[Expr] = []
    for branch in plan.group:
        found += branch[0].args
        for depth in range(1, plan.depth + 1):
            found += [a for i, a in enumerate(branch[depth].args) if i != plan.parents[depth]]
    return found


def _apply(fn: Function, combiner: Combiner, plans: list[_Plan]) -> Expr:
    """Rebuild `fn` bottom-up with each group's last combined nodes replaced by the split
    outputs of the combined expression; a group's inputs are rebuilt before its outputs."""
    ends: dict[int, tuple[_Plan, int]] = {}
    extra: dict[int, tuple[Expr, ...]] = {}
    for plan in plans:
        inputs = tuple(_inputs(plan))
        for k, branch in enumerate(plan.group):
            ends[id(branch[plan.depth])] = (plan, k)
            extra[id(branch[plan.depth])] = inputs
    done: dict[int, Expr] = {}
    outputs: dict[int, list[Expr]] = {}

    def new(e: Expr) -> Expr:
        return done[id(e)]

    order = post_order(fn, lambda n: (*n.children(), *extra.get(id(n), ())))
    for node in order:
        end = ends.get(id(node))
        if end is not None:
            plan, k = end
            if id(plan) not in outputs:
                outputs[id(plan)] = _combined_outputs(combiner, plan, new)
            done[id(node)] = outputs[id(plan)][k]
            continue
        kids = node.children()
        done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
    return done[id(fn)]


def _combined_outputs(combiner: Combiner, plan: _Plan, new: Lookup) -> list[Expr]:
    data = combiner.make_combined_op(plan.group, new)
    for depth in range(1, plan.depth + 1):
        data = combiner.make_following(data, plan.group, depth, plan.parents[depth], new)
    return combiner.split_outputs(data, plan.group, plan.depth)
