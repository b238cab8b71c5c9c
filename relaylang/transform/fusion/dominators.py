"""The operator dataflow graph of a function and its post-dominator tree, for FuseOps.

TVM's FuseOps (apache/tvm: src/relay/transforms/fuse_ops.cc) fuses a call into its
*immediate post-dominator*: the first call that every path of uses from it passes
through. In

    %1 = nn.conv2d(%x, %w);  %2 = nn.relu(%1);  %3 = exp(%1);  add(%2, %3)

`add` post-dominates `%1`, so the whole diamond can be one kernel without computing
`%1` twice or letting an inner value escape the group.

Nodes are what the caller's `is_node` accepts (FuseOps: operator calls, tuples of
tensors and their projections); an edge runs from a child to the node using it. A node
used by anything else (a `let`, `if`, a closure or function body, a call of a function)
is an "external reference", like TVM's `extern_ref`: it has no post-dominator. The
tree is built in one pass over the nodes in reverse post-order (users before producers),
the immediate post-dominator of a node being the lowest common ancestor of its users'
tree nodes; `ScopeTree` answers each LCA in O(log depth), so a 100,000-deep chain
costs no walk of the chain.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...ir.expr import Expr
from ...ir.scope_tree import ScopeTree


@dataclass
class DataflowGraph:
    """The nodes of one function, producers before consumers, with their post-dominators."""

    calls: list[Expr]                        # the nodes (operator calls, for the most part)
    users: dict[int, list[Expr]]             # id(node) -> the nodes using it, once each
    post_dominator: dict[int, Expr | None]   # id(node) -> immediate post-dominator, if any

    def between(self, src: Expr, sink: Expr, limit: int) -> list[Expr] | None:
        """The nodes on paths from `src` to its post-dominator `sink`, both excluded.

        None when there are more than `limit` of them: the caller's group size
        bounds the walk, so a node whose post-dominator is far away costs little.
        """
        found: list[Expr] = []
        seen = {id(sink)}
        stack = list(self.users[id(src)])
        while stack:
            node = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            found.append(node)
            if len(found) > limit:
                return None
            stack.extend(self.users[id(node)])
        return found


def dataflow_graph(order: Sequence[Expr], is_node: Callable[[Expr], bool],
                   children: Callable[[Expr], Sequence[Expr]]) -> DataflowGraph:
    """The graph of the nodes in `order` (a post-order, as from `post_order`)."""
    calls = [n for n in order if is_node(n)]
    users: dict[int, list[Expr]] = {id(c): [] for c in calls}
    external: set[int] = set()
    for node in order:
        op_user = is_node(node)
        for child in children(node):
            uses = users.get(id(child))
            if uses is None:
                continue                     # not a node
            if not op_user:
                external.add(id(child))
            elif not uses or uses[-1] is not node:   # add(%1, %1): one edge
                uses.append(node)
    tree = ScopeTree()                       # scope 0: "no post-dominator"
    scope: dict[int, int] = {}
    post_dominator: dict[int, Expr | None] = {}
    for call in reversed(calls):             # every user is placed before its producers
        outs = users[id(call)]
        parent = 0
        if outs and id(call) not in external:
            parent = scope[id(outs[0])]
            for user in outs[1:]:
                parent = tree.lca(parent, scope[id(user)])
        scope[id(call)] = tree.add(parent, call)
        post_dominator[id(call)] = tree.label[parent]   # None for scope 0
    return DataflowGraph(calls, users, post_dominator)
