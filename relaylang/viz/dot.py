"""A `Graph` as Graphviz dot text: clusters as nested `subgraph cluster_N`, each node's
source line as its tooltip. Needs no Graphviz to write; `dot -Tsvg` renders it."""
from __future__ import annotations

from typing import TYPE_CHECKING

from .style import CLUSTER_STYLES, NODE_STYLES

if TYPE_CHECKING:
    from .graph import Graph


def quote(text: str) -> str:
    """A dot string literal (escape sequences such as `\\l` are not interpreted in ours)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _node_line(graph: Graph, i: int) -> str:
    n = graph.nodes[i]
    s = NODE_STYLES[n.kind]
    label = "\n".join([n.title, *n.detail])
    return (f"n{i} [label={quote(label)}, shape={s.dot_shape}, style={quote(s.dot_style)}, "
            f"fillcolor={quote(s.fill)}, color={quote(s.stroke)}, fontcolor={quote(s.text)}, "
            f"tooltip={quote(graph.tooltip(n))}];")


def to_dot(graph: Graph) -> str:
    children: dict[int, list[int]] = {0: []}
    for cid in sorted(graph.clusters):
        children.setdefault(cid, [])
        children.setdefault(graph.clusters[cid].parent, []).append(cid)
    nodes_in: dict[int, list[int]] = {}
    for n in graph.nodes:
        nodes_in.setdefault(n.cluster, []).append(n.id)
    out = [f"digraph {quote('@' + graph.function)} {{",
           "  rankdir=TB;",
           ('  graph [fontname="monospace", fontsize=11, labeljust=l, nodesep=0.3, '
            'ranksep=0.45];'),
           '  node [fontname="monospace", fontsize=10, penwidth=1.2, margin="0.12,0.05"];',
           ('  edge [fontname="monospace", fontsize=9, fontcolor="#4b5563", color="#6b7280", '
            'arrowsize=0.7];')]
    # Clusters nest: an explicit stack of ("open", id) / ("close", id).
    stack: list[tuple[str, int]] = [("body", 0)]
    while stack:
        what, cid = stack.pop()
        depth = 1
        c = cid
        while c:
            depth += 1
            c = graph.clusters[c].parent
        pad = "  " * depth
        if what == "close":
            out.append("  " * (depth - 1) + "}")
            continue
        if cid:
            c = graph.clusters[cid]
            fill, stroke = CLUSTER_STYLES.get(c.kind, ("#ffffff", "#9ca3af"))
            out.append("  " * (depth - 1) + f"subgraph cluster_{cid} {{")
            out.append(f"{pad}label={quote(c.label)}; style={quote('rounded,filled,dashed')}; "
                       f"fillcolor={quote(fill)}; color={quote(stroke)};")
        for i in nodes_in.get(cid, ()):
            out.append(pad + _node_line(graph, i))
        if cid:
            stack.append(("close", cid))
        for sub in reversed(children.get(cid, [])):
            stack.append(("body", sub))
    for e in graph.edges:
        attrs = f" [label={quote(e.label)}]" if e.label else ""
        out.append(f"  n{e.src} -> n{e.dst}{attrs};")
    out.append("}")
    return "\n".join(out) + "\n"
