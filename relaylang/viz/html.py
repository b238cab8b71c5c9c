"""A laid-out `Graph` as one self-contained HTML page: the SVG inline, the CSS and the
script inline, nothing fetched (no URL anywhere in the page).

The page pans (drag), zooms (wheel, around the pointer; `+`/`-`; `f` fits the graph,
`0` is 100%), searches nodes (`/` focuses the box; every node whose label or source line
holds the text is marked, Enter goes to the next one) and shows a tooltip on a node: its
label, attributes, type and source line; the node's edges are highlighted meanwhile."""
from __future__ import annotations

from typing import TYPE_CHECKING
from xml.sax.saxutils import escape

from .layout import layout
from .style import LEGEND, NODE_STYLES
from .svg import to_svg

if TYPE_CHECKING:
    from .graph import Graph

_CSS = """
html, body { margin: 0; height: 100%; overflow: hidden; background: #ffffff;
  font: 13px system-ui, -apple-system, 'Segoe UI', sans-serif; color: #111827; }
#bar { position: fixed; top: 0; left: 0; right: 0; height: 38px; display: flex;
  align-items: center; gap: 10px; padding: 0 10px; background: #f9fafb;
  border-bottom: 1px solid #e5e7eb; z-index: 2; white-space: nowrap; }
#bar .title { font-weight: 600; }
#bar .count { color: #6b7280; }
#bar input { width: 220px; padding: 3px 6px; border: 1px solid #d1d5db; border-radius: 4px; }
#bar button { padding: 2px 8px; border: 1px solid #d1d5db; border-radius: 4px;
  background: #ffffff; cursor: pointer; }
#status { color: #6b7280; min-width: 80px; }
.chip { display: inline-block; width: 11px; height: 11px; border: 1px solid; border-radius: 3px;
  vertical-align: -1px; margin: 0 3px 0 6px; }
#legend { color: #4b5563; font-size: 12px; overflow: hidden; }
#canvas { position: absolute; top: 39px; left: 0; right: 0; bottom: 0; cursor: grab; }
#canvas.dragging { cursor: grabbing; }
#canvas svg { width: 100%; height: 100%; display: block; }
#tip { position: fixed; display: none; max-width: 560px; padding: 6px 8px; z-index: 3;
  background: #111827; color: #f9fafb; border-radius: 5px; pointer-events: none;
  font: 12px Menlo, Consolas, 'DejaVu Sans Mono', monospace; white-space: pre-wrap; }
g.node { cursor: pointer; }
g.node.hit > rect { stroke: #dc2626 !important; stroke-width: 3 !important; }
g.node.current > rect { fill: #fecaca !important; }
g.node.hover > rect { stroke-width: 2.6 !important; }
path.edge.hl { stroke: #dc2626; stroke-width: 2.2; }
svg.searching g.node:not(.hit) { opacity: 0.35; }
"""

_JS = r"""
(function () {
  var svg = document.getElementById('relay-graph');
  var vp = document.getElementById('viewport');
  var canvas = document.getElementById('canvas');
  var W = parseFloat(svg.getAttribute('width')), H = parseFloat(svg.getAttribute('height'));
  svg.removeAttribute('width'); svg.removeAttribute('height'); svg.removeAttribute('viewBox');
  var s = 1, tx = 0, ty = 0;
  function apply() { vp.setAttribute('transform', 'translate(' + tx + ',' + ty + ') scale(' + s + ')'); }
  function box() { return canvas.getBoundingClientRect(); }
  function fit() {
    var r = box();
    if (!r.width || !r.height) { s = 1; tx = 0; ty = 0; apply(); return; }   /* not shown */
    s = Math.min(r.width / W, r.height / H) * 0.96;
    tx = (r.width - W * s) / 2; ty = (r.height - H * s) / 2; apply();
  }
  function start() {   /* the top of the graph, as wide as the window allows (at most 100%) */
    var r = box();
    if (!r.width || !r.height) { fit(); return; }
    s = Math.min(1, r.width / W * 0.98);
    if (H * s < r.height) { fit(); if (s > 1) { s = 1; tx = (r.width - W) / 2; ty = (r.height - H) / 2; apply(); } return; }
    tx = (r.width - W * s) / 2; ty = 8; apply();
  }
  function zoomAt(mx, my, k) {
    var ns = Math.min(8, Math.max(0.01, s * k));
    tx = mx - (mx - tx) * ns / s; ty = my - (my - ty) * ns / s; s = ns; apply();
  }
  canvas.addEventListener('wheel', function (e) {
    e.preventDefault();
    var r = box();
    zoomAt(e.clientX - r.left, e.clientY - r.top, Math.exp(-e.deltaY * 0.0015));
  }, { passive: false });
  var drag = null;
  canvas.addEventListener('pointerdown', function (e) {
    drag = { x: e.clientX, y: e.clientY, tx: tx, ty: ty };
    canvas.classList.add('dragging');
  });
  window.addEventListener('pointermove', function (e) {
    if (!drag) return;
    tx = drag.tx + e.clientX - drag.x; ty = drag.ty + e.clientY - drag.y; apply();
  });
  window.addEventListener('pointerup', function () { drag = null; canvas.classList.remove('dragging'); });

  /* Nodes: their tooltip text moves from <title> (the browser's own tooltip) to ours. */
  var nodes = Array.prototype.slice.call(svg.querySelectorAll('g.node'));
  var text = {}, edgesOf = {};
  nodes.forEach(function (g) {
    var t = g.querySelector('title');
    text[g.id] = t ? t.textContent : '';
    if (t) t.parentNode.removeChild(t);
    edgesOf[g.id] = [];
  });
  svg.querySelectorAll('path.edge').forEach(function (p) {
    var a = p.getAttribute('data-from'), b = p.getAttribute('data-to');
    if (edgesOf[a]) edgesOf[a].push(p);
    if (edgesOf[b]) edgesOf[b].push(p);
  });
  var tip = document.getElementById('tip'), hovered = null;
  svg.addEventListener('mouseover', function (e) {
    var g = e.target.closest ? e.target.closest('g.node') : null;
    if (g === hovered) return;
    unhover();
    if (!g) return;
    hovered = g; g.classList.add('hover');
    edgesOf[g.id].forEach(function (p) { p.classList.add('hl'); });
    tip.textContent = text[g.id]; tip.style.display = 'block';
  });
  function unhover() {
    if (!hovered) return;
    hovered.classList.remove('hover');
    edgesOf[hovered.id].forEach(function (p) { p.classList.remove('hl'); });
    hovered = null; tip.style.display = 'none';
  }
  svg.addEventListener('mouseleave', unhover);
  svg.addEventListener('mousemove', function (e) {
    if (!hovered) return;
    var x = e.clientX + 14, y = e.clientY + 14;
    var w = tip.offsetWidth, h = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = Math.max(4, e.clientX - w - 10);
    if (y + h > window.innerHeight - 4) y = Math.max(4, e.clientY - h - 10);
    tip.style.left = x + 'px'; tip.style.top = y + 'px';
  });

  /* Search. */
  var q = document.getElementById('q'), status = document.getElementById('status');
  var hits = [], at = -1;
  function clear() {
    hits.forEach(function (g) { g.classList.remove('hit'); g.classList.remove('current'); });
    hits = []; at = -1; svg.classList.remove('searching'); status.textContent = '';
  }
  function search() {
    clear();
    var needle = q.value.trim().toLowerCase();
    if (!needle) return;
    nodes.forEach(function (g) {
      if (text[g.id].toLowerCase().indexOf(needle) >= 0) { hits.push(g); g.classList.add('hit'); }
    });
    svg.classList.add('searching');
    status.textContent = hits.length + (hits.length === 1 ? ' match' : ' matches');
  }
  function show(g) {
    var r = g.querySelector('rect'), b = box();
    var x = parseFloat(r.getAttribute('x')) + parseFloat(r.getAttribute('width')) / 2;
    var y = parseFloat(r.getAttribute('y')) + parseFloat(r.getAttribute('height')) / 2;
    if (s < 0.6) s = 1;
    tx = b.width / 2 - x * s; ty = b.height / 2 - y * s; apply();
  }
  function next(step) {
    if (!hits.length) return;
    if (at >= 0) hits[at].classList.remove('current');
    at = (at + step + hits.length) % hits.length;
    hits[at].classList.add('current');
    status.textContent = (at + 1) + ' / ' + hits.length;
    show(hits[at]);
  }
  q.addEventListener('input', search);
  q.addEventListener('keydown', function (e) {
    if (e.key === 'Enter') { e.preventDefault(); next(e.shiftKey ? -1 : 1); }
    else if (e.key === 'Escape') { q.value = ''; clear(); q.blur(); }
  });
  document.getElementById('fit').addEventListener('click', fit);
  document.getElementById('one').addEventListener('click', function () { var r = box(); zoomAt(r.width / 2, r.height / 2, 1 / s); });
  window.addEventListener('keydown', function (e) {
    if (e.target === q) return;
    if (e.key === '/') { e.preventDefault(); q.focus(); q.select(); }
    else if (e.key === 'f') fit();
    else if (e.key === '0') { var r = box(); zoomAt(r.width / 2, r.height / 2, 1 / s); }
    else if (e.key === '+' || e.key === '=') { var r1 = box(); zoomAt(r1.width / 2, r1.height / 2, 1.25); }
    else if (e.key === '-') { var r2 = box(); zoomAt(r2.width / 2, r2.height / 2, 0.8); }
  });
  window.addEventListener('resize', function () {});
  start();
})();
"""


def to_html(graph: Graph, title: str = "") -> str:
    """The page; `title` says where the graph comes from (file, passes)."""
    lay = layout(graph)
    name = f"@{graph.function}" + (f" \u2014 {title}" if title else "")
    legend = "".join(f'<span class="chip" style="background:{NODE_STYLES[k].fill};'
                     f'border-color:{NODE_STYLES[k].stroke}"></span>{escape(v)}'
                     for k, v in LEGEND.items())
    legend += ('<span class="chip" style="background:#eff6ff;border-color:#60a5fa;'
               'border-style:dashed"></span>fused')
    counts = f"{len(graph.nodes)} nodes, {len(graph.edges)} edges"
    svg = to_svg(graph, lay, standalone=False)
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<title>{escape(name)}</title>\n<style>{_CSS}</style>\n</head>\n<body>\n"
        f'<div id="bar"><span class="title">{escape(name)}</span>'
        f'<span class="count">{counts}</span>'
        '<input id="q" type="search" placeholder="search nodes ( / )" autocomplete="off">'
        '<span id="status"></span><button id="fit" title="f">fit</button>'
        '<button id="one" title="0">100%</button>'
        f'<span id="legend">{legend}</span></div>\n'
        f'<div id="canvas">\n{svg}</div>\n<div id="tip"></div>\n'
        f"<script>{_JS}</script>\n</body>\n</html>\n")
