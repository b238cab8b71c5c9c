"""The dataflow graph of an expression, with its post-dominator tree (TVM's
src/relay/ir/indexed_graph.{h,cc}, `IndexedGraph<Expr>`).

Nodes are numbered in post-order (an input before its users); `outputs[i]` are the
nodes that use node i. The root is used from outside (`external`). Node i's dominator
parent is the least common ancestor, in the dominator tree, of its outputs: every path
from i to the root passes through it. Everything is iterative.

Edges follow TVM: a call's callee and arguments flow into it, a tuple's fields, a
projection's tuple, a function's body, an `if`'s three parts; a `let`'s value flows into
its variable (where the body uses it) and the body into the `let`; a `match`'s data into
the variables its clauses bind, and each clause's right-hand side into the `match`.
"""
from __future__ import annotations

from ..ir.expr import Expr, Let, Match, pattern_vars
from ..ir.traverse import post_order


class IndexedGraph:
    """`nodes[i]` in post-order; `index[id(expr)]`; inputs, outputs and dominator tree."""

    def __init__(self, root: Expr):
        self.root = root
        self.nodes: list[Expr] = post_order(root)
        self.index: dict[int, int] = {id(n): i for i, n in enumerate(self.nodes)}
        n = len(self.nodes)
        self.inputs: list[list[int]] = [[] for _ in range(n)]
        self.outputs: list[list[int]] = [[] for _ in range(n)]
        index = self.index
        for i, node in enumerate(self.nodes):
            if isinstance(node, Let):
                var_i = index.get(id(node.var))
                self._edge(index[id(node.value)], i if var_i is None else var_i)
                self._edge(index[id(node.body)], i)
            elif isinstance(node, Match):
                bound = [index[id(v)] for c in node.clauses for v in pattern_vars(c.lhs)
                         if id(v) in index]
                data = index[id(node.data)]
                for b in bound:
                    self._edge(data, b)
                if not bound:
                    self._edge(data, i)
                for c in node.clauses:
                    self._edge(index[id(c.rhs)], i)
            else:
                for child in node.children():
                    self._edge(index[id(child)], i)
        self.external = n - 1
        self._post_dominators()

    def _edge(self, src: int, dst: int) -> None:
        self.outputs[src].append(dst)
        self.inputs[dst].append(src)

    def _post_dominators(self) -> None:
        n = len(self.nodes)
        self.depth = [0] * n
        self.dom_parent: list[int | None] = [None] * n
        self.dom_children: list[list[int]] = [[] for _ in range(n)]
        for i in range(n - 1, -1, -1):
            if i == self.external:
                self.depth[i] = 1
                continue
            parent = self._lca(self.outputs[i])
            self.dom_parent[i] = parent
            self.depth[i] = self.depth[parent] + 1 if parent is not None else 1
            if parent is not None:
                self.dom_children[parent].append(i)

    def _lca(self, outputs: list[int]) -> int | None:
        if not outputs:
            return None
        parent: int | None = outputs[0]
        for other in outputs[1:]:
            parent = self._lca2(parent, other)
        return parent

    def _lca2(self, a: int | None, b: int | None) -> int | None:
        depth, up = self.depth, self.dom_parent
        while a != b:
            if a is None or b is None:
                return None
            if depth[a] < depth[b]:
                b = up[b]
            elif depth[a] > depth[b]:
                a = up[a]
            else:
                a, b = up[a], up[b]
        return a

    # ------------------------------------------------------------ questions
    def node_index(self, expr: Expr) -> int:
        return self.index[id(expr)]

    def dominates(self, a: int, b: int) -> bool:
        """Whether `a` strictly post-dominates `b`: every path from `b` to the root
        passes through `a` (`b` is in `a`'s dominator subtree)."""
        up = self.dom_parent[b]
        while up is not None:
            if up == a:
                return True
            up = self.dom_parent[up]
        return False

    def is_leaf(self, i: int) -> bool:
        return not self.inputs[i]

