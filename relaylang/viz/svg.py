"""A laid-out `Graph` as SVG, with no Graphviz: clusters as dashed boxes (outer first),
edges as curves through their bend points with an arrow and a type label, nodes as boxes
whose `<title>` (the browser's tooltip) is the node's source line and type.

Every node is a `<g class="node k-KIND" id="nN" data-cluster="C">`; the HTML page finds
them by class for search and its own tooltip."""
from __future__ import annotations

from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from .layout import LINE_H, PAD_Y, layout
from .style import CLUSTER_STYLES, NODE_STYLES

if TYPE_CHECKING:
    from .graph import Graph
    from .layout import Layout

FONT = "Menlo, Consolas, 'DejaVu Sans Mono', monospace"
LABEL_CHARS = 34         # an edge label longer than this is cut (all of it in its title)


def _f(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _path(points: list[tuple[float, float]]) -> str:
    """Cubic curves through the points, leaving and entering vertically."""
    (x0, y0) = points[0]
    out = [f"M{_f(x0)},{_f(y0)}"]
    for (x1, y1) in points[1:]:
        dy = (y1 - y0) / 2
        out.append(f"C{_f(x0)},{_f(y0 + dy)} {_f(x1)},{_f(y1 - dy)} {_f(x1)},{_f(y1)}")
        x0, y0 = x1, y1
    return " ".join(out)


def to_svg(graph: Graph, lay: Layout | None = None, standalone: bool = True) -> str:
    """The SVG text; `standalone=False` leaves out the XML declaration and namespace (for
    inline SVG in HTML, which needs neither)."""
    lay = lay or layout(graph)
    w, h = lay.width, lay.height
    ns = ' xmlns="http://www.w3.org/2000/svg"' if standalone else ""
    out: list[str] = []
    if standalone:
        out.append('<?xml version="1.0" encoding="UTF-8"?>')
    out.append(f'<svg{ns} id="relay-graph" width="{_f(w)}" height="{_f(h)}" '
               f'viewBox="0 0 {_f(w)} {_f(h)}" font-family="{FONT}" font-size="12">')
    out.append(f"<title>{escape('@' + graph.function)}</title>")
    out.append('<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" '
               'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
               '<path d="M0,0 L10,5 L0,10 z" fill="#6b7280"/></marker></defs>')
    out.append('<g id="viewport">')
    out.append('<rect class="background" x="0" y="0" width="100%" height="100%" '
               'fill="#ffffff"/>' if standalone else "")
    # Clusters, outer before inner (a parent's id is smaller than its children's).
    out.append('<g class="clusters">')
    for cid in sorted(lay.clusters):
        c, b = graph.clusters[cid], lay.clusters[cid]
        fill, stroke = CLUSTER_STYLES.get(c.kind, ("#ffffff", "#9ca3af"))
        out.append(f'<g class="cluster c-{c.kind}" id="c{cid}">'
                   f'<rect x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" height="{_f(b.h)}" '
                   f'rx="8" fill="{fill}" stroke="{stroke}" stroke-dasharray="5,3"/>'
                   f'<text x="{_f(b.x + 8)}" y="{_f(b.y + 15)}" font-size="11" '
                   f'fill="#374151">{escape(c.label)}</text></g>')
    out.append("</g>")
    out.append('<g class="edges" fill="none" stroke="#6b7280" stroke-width="1.2">')
    labels: list[str] = []
    for k, e in enumerate(graph.edges):
        pts = lay.edges[k]
        out.append(f'<path class="edge" data-from="n{e.src}" data-to="n{e.dst}" '
                   f'd="{_path(pts)}" marker-end="url(#arrow)"/>')
        if e.label:
            lx, ly, anchor = lay.labels[k]
            text = e.label if len(e.label) <= LABEL_CHARS else e.label[:LABEL_CHARS - 3] + "..."
            end = ' text-anchor="end"' if anchor == "end" else ""
            labels.append(f'<text x="{_f(lx)}" y="{_f(ly)}"{end}>{escape(text)}'
                          f'<title>{escape(e.label)}</title></text>')
    out.append("</g>")
    out.append('<g class="edge-labels" font-size="9.5" fill="#4b5563">')
    out.extend(labels)
    out.append("</g>")
    out.append('<g class="nodes">')
    for n in graph.nodes:
        b = lay.nodes[n.id]
        s = NODE_STYLES[n.kind]
        dash = ' stroke-dasharray="4,2"' if s.dashed else ""
        rx = min(s.round, b.h / 2)
        out.append(f'<g class="node k-{n.kind}" id="n{n.id}" data-cluster="{n.cluster}">'
                   f"<title>{escape(graph.tooltip(n))}</title>"
                   f'<rect x="{_f(b.x)}" y="{_f(b.y)}" width="{_f(b.w)}" height="{_f(b.h)}" '
                   f'rx="{_f(rx)}" fill="{s.fill}" stroke="{s.stroke}" stroke-width="1.3"{dash}/>')
        y = b.y + PAD_Y + LINE_H - 4
        for j, line in enumerate([n.title, *n.detail]):
            weight = ' font-weight="bold"' if j == 0 else ' font-size="11"'
            out.append(f'<text x="{_f(b.cx)}" y="{_f(y)}" text-anchor="middle" '
                       f'fill="{s.text}"{weight}>{escape(line)}</text>')
            y += LINE_H
        out.append("</g>")
    out.append("</g></g></svg>")
    return "\n".join(x for x in out if x) + "\n"


__all__ = ["to_svg"]
