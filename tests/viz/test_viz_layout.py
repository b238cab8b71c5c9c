"""relaylang.viz.layout: boxes never overlap, clusters hold their nodes, edges end on
their nodes; a 5,000-op model lays out (and renders) quickly; the TVM test models draw."""
from __future__ import annotations

import time

import pytest
from viz_programs import BRANCHY, FUSABLE, MATCHY, big_model

from relaylang.syntax.parser import parse
from relaylang.viz import graph_of, render
from relaylang.viz.layout import _isotonic, layout


def _overlap(a, b) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def _inside(a, box) -> bool:
    return box.x <= a.x and a.x + a.w <= box.x + box.w and box.y <= a.y and \
        a.y + a.h <= box.y + box.h


def _check(graph) -> None:
    lay = layout(graph)
    boxes = lay.nodes
    assert len(boxes) == len(graph.nodes)
    for i, a in enumerate(boxes):
        assert all(not _overlap(a, b) for b in boxes[i + 1:])
        assert 0 <= a.x and a.x + a.w <= lay.width and 0 <= a.y and a.y + a.h <= lay.height
    for n in graph.nodes:                    # a node is inside its clusters, and only those
        holding = set()
        c = n.cluster
        while c:
            holding.add(c)
            c = graph.clusters[c].parent
        for cid, box in lay.clusters.items():
            if cid in holding:
                assert _inside(boxes[n.id], box)
            else:
                assert not _overlap(boxes[n.id], box)
    for cid, box in lay.clusters.items():    # sibling clusters are apart
        for other, obox in lay.clusters.items():
            if other > cid and graph.clusters[other].parent == graph.clusters[cid].parent:
                assert not _overlap(box, obox)
    for e, pts in zip(graph.edges, lay.edges):
        s, d = boxes[e.src], boxes[e.dst]
        (x0, y0), (x1, y1) = pts[0], pts[-1]
        assert s.x <= x0 <= s.x + s.w and y0 in (s.y, s.y + s.h)
        assert d.x <= x1 <= d.x + d.w and y1 in (d.y, d.y + d.h)


@pytest.mark.parametrize("text,function,after", [
    (BRANCHY, "main", None), (MATCHY, "sum", None), (MATCHY, "main", None),
    (FUSABLE, "main", "FuseOps")])
def test_layout_is_sound(text, function, after) -> None:
    _check(graph_of(parse(text), function, after))


def test_layout_of_every_example_function_is_sound() -> None:
    from pathlib import Path
    for path in sorted(Path(__file__).parents[2].joinpath("examples").glob("*.relay")):
        mod = parse(path.read_text(encoding="utf-8"), source_name=str(path))
        for gv in mod.functions:
            for after in (None, "FuseOps"):
                _check(graph_of(mod, gv.name_hint, after))


def test_data_flows_downwards() -> None:
    graph = graph_of(parse(FUSABLE), "main")
    lay = layout(graph)
    for e in graph.edges:
        assert lay.nodes[e.src].y + lay.nodes[e.src].h <= lay.nodes[e.dst].y


def test_isotonic_regression() -> None:
    assert _isotonic([1.0, 3.0, 2.0, 4.0], [1.0] * 4) == [1.0, 2.5, 2.5, 4.0]
    assert _isotonic([5.0, 1.0], [3.0, 1.0]) == [4.0, 4.0]


def test_a_5000_op_model_renders_quickly() -> None:
    text = big_model(1000)
    start = time.perf_counter()
    graph = graph_of(parse(text, source_name="big.relay"), "main")
    page = render(graph, "html")
    svg = render(graph, "svg")
    elapsed = time.perf_counter() - start
    assert sum(1 for n in graph.nodes if n.kind == "op") == 5000
    assert page.count('class="node ') == svg.count('class="node ') == len(graph.nodes)
    assert elapsed < 60, f"{elapsed:.1f} s"       # about 2 s here; generous for busy machines


@pytest.mark.parametrize("name", ["resnet50", "gpt2"])
def test_the_tvm_test_models_draw(name: str) -> None:
    import xml.etree.ElementTree as ET

    from relaylang.testing.models import get_workload
    mod, _ = get_workload(name, small=True)
    for after in (None, "FuseOps"):
        graph = graph_of(mod, "main", after)
        root = ET.fromstring(render(graph, "svg").encode("utf-8"))
        assert root.tag.endswith("svg") and len(graph.nodes) > 50
        _check(graph)
