"""The iterative traversal engine: order, sharing, rewriting, visitors, depth."""
from __future__ import annotations

import numpy as np

from relaylang.ir import (Call, Constant, ExprVisitor, Function, Let, Op, Tuple, TupleGetItem, Var,
                          post_order, pre_order, rewrite)

ADD = Op("add")


def _const(v: float) -> Constant:
    return Constant(np.array(v, dtype="float32"))


def test_post_order_visits_children_first_and_shared_nodes_once() -> None:
    x = Var("x")
    shared = Call(ADD, (x, x))
    root = Tuple((shared, shared))
    order = post_order(root)
    assert order[-1] is root
    assert order.count(shared) == 1 and order.count(x) == 1
    assert order.index(x) < order.index(shared)
    assert list(pre_order(root))[0] is root


def test_rewrite_keeps_unchanged_subgraphs_and_sharing() -> None:
    x, y = Var("x"), Var("y")
    untouched = Call(ADD, (y, y))
    shared = Call(ADD, (x, x))
    root = Tuple((shared, shared, untouched))
    out = rewrite(root, lambda old, new: y if old is x else None)
    assert out is not root
    assert out.fields[0] is out.fields[1]          # sharing survives
    assert out.fields[0].args == (y, y)
    assert out.fields[2] is untouched              # unchanged subgraph is the same object
    assert rewrite(root, lambda old, new: None) is root


def test_rewrite_keeps_spans_and_binding_sites() -> None:
    from relaylang.ir import Span
    x = Var("x")
    span = Span("f", 1, 2, 1, 5)
    fn = Function((x,), Call(ADD, (x, _const(1.0)), span=span), span=span)
    out = rewrite(fn, lambda old, new: _const(2.0) if isinstance(old, Constant) else None)
    assert out.params == (x,) and out.span == span and out.body.span == span
    assert float(out.body.args[1].data) == 2.0


def test_visitor_dispatches_by_node_kind() -> None:
    class Count(ExprVisitor):
        def __init__(self) -> None:
            self.calls = 0
            self.items = 0

        def visit_call(self, node: Call) -> None:
            self.calls += 1

        def visit_tuple_get_item(self, node: TupleGetItem) -> None:
            self.items += 1

    x = Var("x")
    c = Count()
    c.visit(TupleGetItem(Tuple((Call(ADD, (x, x)), x)), 0))
    assert (c.calls, c.items) == (1, 1)


def test_100k_deep_chains_do_not_recurse() -> None:
    x = Var("x")
    node = x
    for _ in range(100_000):
        node = Call(ADD, (node, x))
    assert len(post_order(node)) == 100_002      # calls, x, and the op
    assert rewrite(node, lambda old, new: None) is node
    body = x
    for i in range(100_000):
        body = Let(Var(f"v{i}"), _const(1.0), body)
    assert len(post_order(body)) == 200_001
