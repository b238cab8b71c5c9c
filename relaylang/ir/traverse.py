"""The one traversal engine: iterative post-order, visitors and rewriting.

Nothing here recurses in Python: a 100,000-deep expression is walked with an
explicit stack, and a node shared by several users (a DAG) is visited once
(memoised by identity). Shapes follow tinygrad's `UOp.toposort` and lark's
`Transformer_NonRecursive`; `rewrite` is TVM's `PostOrderRewrite` without the
recursive fallback.
"""
from __future__ import annotations

import re
from typing import Callable, Iterator, Sequence

from .expr import Expr


def post_order(root: Expr,
               children: Callable[[Expr], Sequence[Expr]] | None = None) -> list[Expr]:
    """Every node reachable from `root`, children before parents, each once.

    `children` may widen what counts as a child (the printer also walks the
    expressions inside attributes)."""
    # The stack is two parallel lists, node and "children done" flag, not a list of
    # (node, flag) pairs: a pair per node was a third of the allocations of a plain
    # traversal, and on a deep stack they live long enough to cost the garbage
    # collector full scans of the heap.
    order: list[Expr] = []
    seen: set[int] = set()
    nodes: list[Expr] = [root]
    expanded: list[bool] = [False]
    push_node, push_flag, pop_node, pop_flag = \
        nodes.append, expanded.append, nodes.pop, expanded.pop
    mark = seen.add
    while nodes:
        node = pop_node()
        if pop_flag():
            order.append(node)
            continue
        key = id(node)
        if key in seen:
            continue
        mark(key)
        push_node(node)
        push_flag(True)
        for child in reversed(node.children() if children is None else children(node)):
            if id(child) not in seen:
                push_node(child)
                push_flag(False)
    return order


def pre_order(root: Expr) -> Iterator[Expr]:
    """Every node reachable from `root`, parents before children, each once."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        stack.extend(reversed(node.children()))


def rewrite(root: Expr, fn: Callable[[Expr, Expr], Expr | None]) -> Expr:
    """Rebuild `root` bottom-up.

    For each node (once, children first) the node is rebuilt from its rewritten
    children, then `fn(old, rebuilt)` may return a replacement (or None to keep
    `rebuilt`). Unchanged subgraphs stay the same objects; sharing is kept.
    """
    done: dict[int, Expr] = {}
    for node in post_order(root):
        kids = node.children()
        rebuilt = node.with_children([done[id(c)] for c in kids]) if kids else node
        replacement = fn(node, rebuilt)
        done[id(node)] = rebuilt if replacement is None else replacement
    return done[id(root)]


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


class ExprVisitor:
    """Post-order visitor: `visit(root)` calls `visit_<node kind>(node)` once per node.

    Subclasses define the methods they need (`visit_call`, `visit_tuple_get_item`,
    ...); others fall back to `visit_default`. Dispatch goes through a table built
    once per subclass, not an isinstance chain.
    """

    _dispatch: dict[type, Callable[[ExprVisitor, Expr], object]]

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {}

    def _method_for(self, kind: type) -> Callable[[ExprVisitor, Expr], object]:
        table = type(self)._dispatch if "_dispatch" in type(self).__dict__ else {}
        method = table.get(kind)
        if method is None:
            method = getattr(type(self), "visit_" + _snake(kind.__name__), None) \
                or type(self).visit_default
            table[kind] = method
        return method

    def visit(self, root: Expr) -> None:
        for node in post_order(root):
            self._method_for(type(node))(self, node)

    def visit_default(self, node: Expr) -> None:
        pass
