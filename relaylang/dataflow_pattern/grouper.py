"""Grouping matches, partitioning and rewriting (TVM's `PatternGrouper`,
`PatternPartitioner` and `PatternRewriter`, src/relay/ir/dataflow_matcher.cc).

The grouper visits the expression's nodes users-first (so the largest match of an
optional pattern wins), and makes a group of each node the pattern matches there:

  * the group's inputs are the expressions matched by the pattern's leaves (and the
    arguments of `f(None)` calls, the fields of `is_tuple(None)`), except operators,
    functions and constants matched by `is_constant()` or an `is_expr(const)`: those stay
    inside. The interior of a dominator pattern's fuzzy path or of a function pattern is
    never an input;
  * the matched graph is extracted as a function over fresh parameters
    `%FunctionVar_<group>_<i>` (typed as their inputs where these are typed), named by the
    operators it holds, callees first (`nn.conv2d_nn.bias_add_nn.relu_`);
  * a group is dropped when it overlaps an earlier one, or when a value computed inside
    it is used outside it by a node the group's root does not post-dominate (taking the
    group out would make a cycle).

Functions already partitioned (`PartitionedFromPattern`) are not looked into. Every walk
is iterative and memoised by identity.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..ir.attrs import DictAttrs
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    If,
    Let,
    Match,
    Op,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.traverse import post_order
from .graph import IndexedGraph
from .matcher import DFPatternMatcher, infer_expr_types
from .pattern import (
    _ENGINE,
    AltPattern,
    CallPattern,
    ConstantPattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    TuplePattern,
    pattern_children,
    pattern_post_order,
)

if TYPE_CHECKING:
    from ..ir.module import IRModule
    from .pattern import DFPatternCallback


@dataclass
class Group:
    """One match: its root, its node map, and the function extracted from it."""

    root: Expr
    gid: int
    matched: dict[DFPattern, list[Expr]]
    name: str = ""
    function: Function | None = None
    args: list[Expr] = field(default_factory=list)


class PatternGrouper:
    """Finds the non-overlapping matches of one pattern in one expression."""

    def __init__(self) -> None:
        self.groups: dict[int, Group] = {}
        self.gid_of: dict[int, int] = {}        # id(expr) -> group id
        self._gid = 0
        self._graph_number = 0

    def group_matches(self, pattern: DFPattern, pre: Expr) -> dict[int, Group]:
        self.groups, self.gid_of = {}, {}
        self.pattern = pattern
        self.pattern_nodes = pattern_post_order(pattern)
        self.graph = IndexedGraph(pre)
        self.matcher = DFPatternMatcher(self.graph)
        pre_partitioned: set[int] = set()
        nodes = self.graph.nodes
        for i in range(len(nodes) - 1, -1, -1):
            current = nodes[i]
            if id(current) in self.gid_of:
                continue
            if isinstance(current, Function) and current.attrs is not None \
                    and current.attrs.get("PartitionedFromPattern") is not None:
                pre_partitioned.add(id(current))
                pre_partitioned.update(id(n) for n in post_order(current.body))
            if id(current) not in pre_partitioned and self.matcher.match(pattern, current):
                self._create_group(current)
        return self.groups

    def _create_group(self, expr: Expr) -> None:
        graph = self.graph
        node_map = {p: list(es) for p, es in self.matcher.memo.items()}
        fuzzy: set[int] = set()
        for p in self.pattern_nodes:
            if isinstance(p, DominatorPattern):
                for fp in (p.parent, p.path):
                    fuzzy.update(id(m) for m in node_map.get(fp, ()))
            if isinstance(p, FunctionPattern):
                for m in node_map.get(p, ()):
                    fuzzy.update(id(n) for n in post_order(m.body))
        inputs: dict[int, Var] = {}
        args: list[Expr] = []
        params: list[Var] = []
        var_number = 0

        def make_input(inp: Expr, p: DFPattern) -> None:
            nonlocal var_number
            if id(inp) in fuzzy or isinstance(inp, (Op, Function)) or self._embed_const(inp, p):
                return
            if id(inp) in inputs:
                return
            var = Var(f"FunctionVar_{self._graph_number}_{var_number}", inp.checked_type)
            inputs[id(inp)] = var
            args.append(inp)
            params.append(var)
            var_number += 1

        for p in self.pattern_nodes:
            if isinstance(p, TuplePattern) and p.fields is None:
                for m in node_map.get(p, ()):
                    for f in m.fields:
                        make_input(f, p)
            elif isinstance(p, CallPattern) and p.args is None:
                for m in node_map.get(p, ()):
                    for a in m.args:
                        make_input(a, p)
            elif not pattern_children(p):
                for m in node_map.get(p, ()):
                    make_input(m, p)
        self._graph_number += 1

        body, memo, name = extract(expr, inputs)
        root_i = graph.node_index(expr)
        for node in memo.values():
            if id(node) in inputs or isinstance(node, (Op, Function, Constant)):
                continue
            if id(node) in self.gid_of:
                return                                   # overlaps an earlier group
            if node is not expr and id(node) in graph.index:
                for out in graph.outputs[graph.node_index(node)]:
                    if id(graph.nodes[out]) not in memo and not graph.dominates(root_i, out):
                        return                           # taking it out would make a cycle
        self._gid += 1
        group = Group(expr, self._gid, node_map, name,
                      Function(tuple(params), body, None, ()), args)
        for node_id in memo:
            self.gid_of[node_id] = self._gid
        self.groups[self._gid] = group

    def _embed_const(self, expr: Expr, p: DFPattern) -> bool:
        if not isinstance(expr, Constant):
            return False
        if isinstance(p, ConstantPattern):
            return True
        if isinstance(p, ExprPattern):
            return isinstance(p.expr, Constant)
        if isinstance(p, AltPattern):
            if DFPatternMatcher(self.graph).match(p.left, expr):
                return self._embed_const(expr, p.left)
            return self._embed_const(expr, p.right)
        return False


def extract(root: Expr, inputs: Mapping[int, Var]) -> tuple[Expr, dict[int, Expr], str]:
    """`root` rebuilt with the expressions of `inputs` replaced by their variables (TVM's
    `MatchExtractor`): the body, the extracted nodes by id, and the group's name."""
    done: dict[int, Expr] = {}
    memo: dict[int, Expr] = {}
    parts: list[str] = []
    order = post_order(root, lambda n: () if id(n) in inputs else n.children())
    for node in order:
        if id(node) in inputs:
            done[id(node)] = inputs[id(node)]
            continue
        kids = node.children()
        done[id(node)] = node.with_children([done[id(c)] for c in kids]) if kids else node
        memo[id(node)] = node
        parts.append(_name_part(node))
    return done[id(root)], memo, "".join(parts)


def _name_part(node: Expr) -> str:
    if isinstance(node, Call):
        return node.op.name + "_" if isinstance(node.op, Op) else "Call_"
    if isinstance(node, Tuple):
        return "Tuple_"
    if isinstance(node, Function):
        return "Function"
    if isinstance(node, Let):
        return "Let_"
    if isinstance(node, If):
        return "If_"
    if isinstance(node, TupleGetItem):
        return f"TupleGetItem{node.index}_"
    if isinstance(node, Match):
        return "Match_"
    return ""


def _with_attrs(fn: Function, attrs: Sequence[tuple[str, Any]]) -> Function:
    entries = dict(fn.attrs.entries) if fn.attrs is not None else {}
    for k, v in attrs:
        entries[k] = v
    return Function(fn.params, fn.body, fn.ret_type, fn.type_params,
                    DictAttrs(tuple(entries.items())), span=fn.span)


# ---------------------------------------------------------------- partition


def partition_pattern(pattern: DFPattern, expr: Expr, attrs: Mapping[str, Any] | None,
                      check: Callable[[Expr], bool]) -> Expr:
    """`expr` with each group replaced by a call of its function, which carries
    `PartitionedFromPattern` and `attrs` (TVM's `PatternPartitioner`); `check(root)`
    may refuse a group."""
    if isinstance(pattern, FunctionPattern):
        return expr            # TVM: partitioning a function that is not called makes no sense
    grouper = PatternGrouper()
    groups = grouper.group_matches(pattern, expr)
    if not groups:
        return expr
    extra = list((attrs or {}).items())
    done: dict[int, Expr] = {}
    for node in post_order(expr):
        kids = node.children()
        post = node.with_children([done[id(c)] for c in kids]) if kids else node
        gid = grouper.gid_of.get(id(node))
        if gid is not None:
            group = groups[gid]
            if group.root is node and check(node):
                fn = _with_attrs(group.function, [("PartitionedFromPattern", group.name),
                                                  *extra])
                post = Call(fn, tuple(done.get(id(a), a) for a in group.args), span=node.span)
        done[id(node)] = post
    return done[id(expr)]


# ---------------------------------------------------------------- rewrite


def rewrite_patterns(callbacks: Sequence[DFPatternCallback], expr: Expr,
                     mod: IRModule | None = None) -> Expr:
    """Run the callbacks until the expression stops changing (at most 100 rounds)."""
    from ..ir.equal import structural_equal
    post = expr
    finished: set[int] = set()
    count = 0
    while True:
        last = post
        types_invalidated = True
        for cb in callbacks:
            if id(cb) in finished:
                continue
            before = post
            post_typed = post
            if cb.require_type and types_invalidated:
                post_typed = infer_expr_types(post, mod)
            grouper = PatternGrouper()
            groups = grouper.group_matches(cb.pattern, post_typed)
            post = _apply_callback(cb, grouper, groups, post_typed)
            count += 1
            if cb.require_type and structural_equal(before, post, map_free_vars=True):
                types_invalidated = False
                post = post_typed
            else:
                types_invalidated = True
                if cb.rewrite_once:
                    finished.add(id(cb))
        if structural_equal(last, post, map_free_vars=True):
            return post
        if count >= 100:
            raise RuntimeError("rewrite: observed 100 rewrite passes, possibly conflicting "
                               "callbacks")


def _apply_callback(cb: DFPatternCallback, grouper: PatternGrouper, groups: dict[int, Group],
                    expr: Expr) -> Expr:
    if not groups:
        return expr
    done: dict[int, Expr] = {}
    for node in post_order(expr):
        kids = node.children()
        post = node.with_children([done[id(c)] for c in kids]) if kids else node
        gid = grouper.gid_of.get(id(node))
        if gid is not None and groups[gid].root is node:
            node_map = {p: [done.get(id(e), e) for e in es]
                        for p, es in groups[gid].matched.items()}
            out = cb.callback(node, post, node_map)
            if not isinstance(out, Expr):
                raise TypeError(f"{type(cb).__name__}.callback returned "
                                f"{type(out).__name__}, not a Relay expression")
            post = out
        done[id(node)] = post
    return done[id(expr)]


_ENGINE["partition"] = partition_pattern
_ENGINE["rewrite"] = rewrite_patterns
