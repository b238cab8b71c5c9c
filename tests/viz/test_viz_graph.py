"""relaylang.viz.graph: what the graph of a function holds (nodes, edges, clusters)."""
from __future__ import annotations

import sys

import pytest
from viz_programs import BRANCHY, FUSABLE, MATCHY, op_calls

from relaylang.syntax.parser import parse
from relaylang.viz import VizError, graph_of
from relaylang.viz.graph import pattern_text, type_text


def _ops(graph):
    return sorted(n.title for n in graph.nodes if n.kind == "op")


def test_every_op_call_is_a_node_with_its_attributes_and_typed_edges() -> None:
    mod = parse(FUSABLE, source_name="fusable.relay")
    g = graph_of(mod, "main")
    assert _ops(g) == sorted(op_calls(mod))
    conv = next(n for n in g.nodes if n.title == "nn.conv2d")
    assert conv.detail[:3] == ["padding=[1, 1, 1, 1]", "channels=4", "kernel_size=[3, 3]"]
    assert conv.type_text == "float32[1, 4, 8, 8]"
    params = sorted(n.title for n in g.nodes if n.kind == "param")
    assert params == ["%bias", "%data", "%weight"]
    into_conv = sorted(e.label for e in g.edges if e.dst == conv.id)
    assert into_conv == ["float32[1, 3, 8, 8]", "float32[4, 3, 3, 3]"]
    # one edge per use: 6 op calls with 8 arguments, plus the result
    assert len(g.edges) == 9 and [n.kind for n in g.nodes].count("output") == 1
    # the tooltip carries the node's source line and place
    tip = g.tooltip(conv)
    assert "fusable.relay:4:8" in tip and "%0 = nn.conv2d(%data, %weight" in tip


def test_constants_and_parameters_are_kinds_of_their_own() -> None:
    g = graph_of(parse(BRANCHY), "main")
    assert {n.title for n in g.nodes if n.kind == "const"} == {"1"}
    assert {n.title for n in g.nodes if n.kind == "param"} == {"%x", "%w", "%c"}


def test_fused_functions_are_clusters_after_fuse_ops() -> None:
    mod = parse(FUSABLE)
    before = graph_of(mod, "main")
    after = graph_of(mod, "main", after="FuseOps")
    assert before.clusters == {}
    assert {c.kind for c in after.clusters.values()} == {"fused"}
    assert _ops(after) == _ops(before)       # the ops are drawn inside the clusters
    fused = {c.label for c in after.clusters.values()}
    assert "fused: nn.conv2d + nn.bias_add + nn.relu" in fused
    conv = next(n for n in after.nodes if n.title == "nn.conv2d")
    relu = next(n for n in after.nodes if n.title == "nn.relu")
    assert conv.cluster == relu.cluster != 0
    # the fused function's parameters are its call's arguments: edges come from %data
    data = next(n for n in after.nodes if n.title == "%data")
    assert any(e.src == data.id and e.dst == conv.id for e in after.edges)
    assert not any(n.kind == "param" and n.cluster for n in after.nodes)


def test_if_branches_are_subgraphs() -> None:
    g = graph_of(parse(BRANCHY), "main")
    kinds = {c.kind: cid for cid, c in g.clusters.items()}
    assert set(kinds) == {"then", "else"}
    by_title = {n.title: n for n in g.nodes}
    assert by_title["exp"].cluster == by_title["add"].cluster == kinds["then"]
    assert by_title["negative"].cluster == kinds["else"]
    assert by_title["nn.relu"].cluster == by_title["sigmoid"].cluster == 0
    join = by_title["if"]
    roles = sorted(e.label.split(":")[0] for e in g.edges if e.dst == join.id)
    assert roles == ["cond", "else", "then"]


def test_match_clauses_are_subgraphs_with_pattern_variables() -> None:
    g = graph_of(parse(MATCHY), "sum")
    labels = sorted(c.label for c in g.clusters.values())
    assert labels == ["Cons(%h, %t) =>", "Nil =>"]
    cons = next(cid for cid, c in g.clusters.items() if c.label.startswith("Cons"))
    pattern = {n.title: n for n in g.nodes if n.kind == "pattern"}
    assert set(pattern) == {"%h", "%t"} and all(n.cluster == cons for n in pattern.values())
    xs = next(n for n in g.nodes if n.title == "%xs")
    assert sorted(e.label for e in g.edges if e.src == xs.id and e.dst in
                  {p.id for p in pattern.values()}) == ["Cons.0", "Cons.1"]
    call = next(n for n in g.nodes if n.kind == "call")
    assert call.title == "@sum" and call.cluster == cons
    match = next(n for n in g.nodes if n.kind == "match")
    assert sum(1 for e in g.edges if e.dst == match.id) == 3    # data and two clauses


def test_a_deep_let_chain_needs_no_recursion() -> None:
    depth = 3 * sys.getrecursionlimit()
    body = "".join(f"  let %v{i} = add(%v{i - 1}, 1f);\n" for i in range(1, depth))
    text = ('#[version = "0.0.5"]\ndef @main(%v0: float32) {\n' + body + f"  %v{depth - 1}\n}}\n")
    g = graph_of(parse(text), "main")
    assert sum(1 for n in g.nodes if n.kind == "op") == depth - 1
    assert len(g.edges) == 2 * (depth - 1) + 1


def test_unknown_function_is_a_viz_error_naming_the_close_one() -> None:
    with pytest.raises(VizError, match=r"no function @mian; did you mean @main\?"):
        graph_of(parse(BRANCHY), "mian")
    with pytest.raises(VizError, match="unknown pass"):
        graph_of(parse(BRANCHY), "main", after="NoSuchPass")


def test_type_and_pattern_text() -> None:
    from relaylang.ir.types import TensorType, TupleType
    assert type_text(TensorType((1, 4), "float32")) == "float32[1, 4]"
    assert type_text(TensorType((), "int32")) == "int32"
    assert type_text(TupleType((TensorType((2,), "int8"),))) == "(int8[2],)"
    mod = parse(MATCHY)
    clause = mod.functions[mod.get_global_var("sum")].body.clauses[0]
    assert pattern_text(clause.lhs) == "Cons(%h, %t)"
