"""relaylang.viz writers: the SVG is XML holding every op call, the HTML one page with no
external reference, the dot text has the graph's nodes, edges and clusters."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
from viz_programs import BRANCHY, FUSABLE, MATCHY, op_calls

from relaylang.syntax.parser import parse
from relaylang.viz import VizError, format_of, graph_of, prepare, render

SVG = "{http://www.w3.org/2000/svg}"
CASES = [(BRANCHY, "main", None), (MATCHY, "sum", None), (FUSABLE, "main", "FuseOps"),
         (FUSABLE, "main", None)]


def _svg_nodes(root: ET.Element) -> list[ET.Element]:
    return [g for g in root.iter(f"{SVG}g") if "node" in g.get("class", "").split()]


def _node_texts(g: ET.Element) -> list[str]:
    return [t.text or "" for t in g.findall(f"{SVG}text")]


@pytest.mark.parametrize("text,function,after", CASES)
def test_svg_is_well_formed_and_holds_every_op_call(text, function, after) -> None:
    mod = parse(text)
    graph = graph_of(mod, function, after)
    root = ET.fromstring(render(graph, "svg").encode("utf-8"))
    assert root.tag == f"{SVG}svg"
    nodes = _svg_nodes(root)
    assert len(nodes) == len(graph.nodes)
    drawn_ops = sorted(_node_texts(g)[0] for g in nodes if "k-op" in g.get("class"))
    # every op call of the function as the graph saw it (after the passes), by a walk
    assert drawn_ops == sorted(op_calls(prepare(mod, function, after), function))
    assert drawn_ops
    edges = [p for p in root.iter(f"{SVG}path") if p.get("class") == "edge"]
    assert len(edges) == len(graph.edges)
    ids = {g.get("id") for g in nodes}
    assert all(p.get("data-from") in ids and p.get("data-to") in ids for p in edges)
    clusters = [g for g in root.iter(f"{SVG}g") if "cluster" in g.get("class", "").split()]
    assert len(clusters) == len(graph.clusters)
    # each node's <title> is its tooltip: its source place and line
    titles = [g.find(f"{SVG}title").text for g in nodes if "k-op" in g.get("class")]
    assert all(re.search(r"from_string:\d+:\d+", t) for t in titles)


def test_svg_numbers_are_finite_and_nodes_do_not_overlap() -> None:
    graph = graph_of(parse(FUSABLE), "main", "FuseOps")
    root = ET.fromstring(render(graph, "svg").encode("utf-8"))
    rects = []
    for g in _svg_nodes(root):
        r = g.find(f"{SVG}rect")
        rects.append(tuple(float(r.get(k)) for k in ("x", "y", "width", "height")))
    for i, (x, y, w, h) in enumerate(rects):
        assert w > 0 and h > 0 and x >= 0 and y >= 0
        for (x2, y2, w2, h2) in rects[i + 1:]:
            assert x + w <= x2 or x2 + w2 <= x or y + h <= y2 or y2 + h2 <= y


@pytest.mark.parametrize("text,function,after", CASES)
def test_html_is_one_self_contained_page(text, function, after) -> None:
    graph = graph_of(parse(text), function, after)
    page = render(graph, "html", "test")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    lowered = page.lower()
    for external in ("http://", "https://", "src=", "<link", "@import", "//cdn", "href="):
        assert external not in lowered, external
    assert all(m == "url(#arrow)" for m in re.findall(r"url\([^)]*\)", page))
    assert page.count("<svg") == 1 and page.count("<script>") == 1
    assert 'id="q"' in page and "wheel" in page            # search box, zoom
    # the inline SVG parses as XML too, and holds every node
    svg = page[page.index("<svg"):page.index("</svg>") + len("</svg>")]
    root = ET.fromstring(svg)
    assert sum(1 for g in root.iter("g") if "node" in g.get("class", "").split()) == \
        len(graph.nodes)


def _parse_dot(text: str) -> tuple[set[str], list[tuple[str, str]], int]:
    """(declared node ids, edges, clusters) of our dot output, read structurally: quoted
    strings are removed first, so labels cannot fake a statement."""
    bare = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    assert bare.count("{") == bare.count("}")
    nodes = set(re.findall(r"^\s*(n\d+) \[", bare, re.MULTILINE))
    edges = re.findall(r"^\s*(n\d+) -> (n\d+)", bare, re.MULTILINE)
    clusters = len(re.findall(r"^\s*subgraph cluster_\d+ \{", bare, re.MULTILINE))
    return nodes, edges, clusters


@pytest.mark.parametrize("text,function,after", CASES)
def test_dot_has_the_nodes_edges_and_clusters(text, function, after) -> None:
    graph = graph_of(parse(text), function, after)
    dot = render(graph, "dot")
    assert dot.startswith(f'digraph "@{function}" {{')
    nodes, edges, clusters = _parse_dot(dot)
    assert nodes == {f"n{n.id}" for n in graph.nodes}
    assert sorted(edges) == sorted((f"n{e.src}", f"n{e.dst}") for e in graph.edges)
    assert clusters == len(graph.clusters)


def test_dot_nests_fused_ops_inside_their_cluster() -> None:
    graph = graph_of(parse(FUSABLE), "main", "FuseOps")
    dot = render(graph, "dot")
    conv = next(n for n in graph.nodes if n.title == "nn.conv2d")
    start = dot.index(f"subgraph cluster_{conv.cluster} {{")
    assert dot.index(f"  n{conv.id} [") > start
    assert 'label="fused: nn.conv2d + nn.bias_add + nn.relu"' in dot


def test_output_format_comes_from_the_extension() -> None:
    assert [format_of(p) for p in ("a.dot", "b.SVG", "c/d.html")] == ["dot", "svg", "html"]
    for bad in ("a.png", "a", "a.htm"):
        with pytest.raises(VizError, match="unknown output format"):
            format_of(bad)
