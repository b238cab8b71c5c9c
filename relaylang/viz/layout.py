"""A layered (Sugiyama-style) layout of a `Graph` with nested clusters, in pure Python.

Why not grandalf: its Sugiyama layout takes 7 s on a 5,000-node chain here (and grows
faster than linearly), and it knows no clusters. This one is linear in the size of the
graph but for sorting, and lays clusters out as boxes:

- clusters are laid out innermost first; in its parent a cluster is one item, a box the
  size of its own layout, so a cluster never overlaps anything else (compound layout by
  collapsing, as ELK's hierarchical mode does);
- an edge belongs to the innermost cluster holding both its ends, between the items of
  that cluster that hold them;
- in each cluster: cycles are broken by reversing the back edges of a depth-first search;
  layers are longest paths from the sources, then each item moves down to just above its
  first user (parameters and weights sit next to the op that reads them); an edge over
  several layers gets one dummy point per layer crossed (within a budget, shortest edges
  first); the order within layers comes from a few barycentric sweeps down and up; x
  coordinates from a few sweeps that place each layer as close as possible to the mean of
  its neighbours' coordinates under the minimum spacing (an isotonic regression, solved
  exactly by pool-adjacent-violators).

Everything iterates over lists: no recursion, whatever the depth of the graph or of the
nesting of its clusters.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .graph import Graph

CHAR_W = 7.3             # px per character of the 12px monospace node font
LINE_H = 16              # px per line of a node's label
PAD_X, PAD_Y = 10, 6     # inside a node
NODE_GAP = 22            # horizontal space between items of a layer
LAYER_GAP = 46           # vertical space between layers (edge labels live there)
PORT_GAP = 24            # ... next to where edges cross a cluster's border
CLUSTER_PAD = 12         # inside a cluster's border
CLUSTER_LABEL_H = 20     # the cluster's label line
DUMMY_W = 8              # the width a long edge takes in a layer it crosses
SWEEPS = 4               # ordering sweeps (down, up, down, up)
DUMMY_BASE = 1 << 40     # ids of dummy points (nodes are >= 0, clusters < 0)
PORT_BASE = 1 << 50      # ids of the points where edges cross a cluster's border
PLACE_SWEEPS = 3         # coordinate sweeps


@dataclass
class Box:
    x: float                 # left
    y: float                 # top
    w: float
    h: float

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


@dataclass
class Layout:
    width: float
    height: float
    nodes: list[Box]                                   # by node id
    clusters: dict[int, Box] = field(default_factory=dict)
    edges: list[list[tuple[float, float]]] = field(default_factory=list)  # by edge index
    labels: list[tuple[float, float, str]] = field(default_factory=list)  # x, y, "start"/"end"


def node_size(lines: list[str]) -> tuple[float, float]:
    longest = max((len(s) for s in lines), default=1)
    return longest * CHAR_W + 2 * PAD_X, len(lines) * LINE_H + 2 * PAD_Y


def node_lines(graph: Graph, i: int) -> list[str]:
    n = graph.nodes[i]
    return [n.title, *n.detail]


# ---------------------------------------------------------------- one level


@dataclass
class _Level:
    """The layout of one cluster's items, relative to its top-left corner."""

    pos: dict[int, tuple[float, float]]                # item -> (center x, top y)
    routes: dict[int, list[tuple[float, float]]]       # edge index -> bend points
    reversed_edges: set[int]
    width: float
    height: float


def _break_cycles(items: list[int], succ: dict[int, list[int]]) -> set[tuple[int, int]]:
    """Back edges of an iterative depth-first search (reversing them leaves a DAG)."""
    state: dict[int, int] = {}          # 1 on the stack, 2 done
    back: set[tuple[int, int]] = set()
    for root in items:
        if root in state:
            continue
        state[root] = 1
        stack = [(root, iter(succ[root]))]
        while stack:
            v, it = stack[-1]
            for w in it:
                s = state.get(w)
                if s is None:
                    state[w] = 1
                    stack.append((w, iter(succ[w])))
                    break
                if s == 1:
                    back.add((v, w))
            else:
                state[v] = 2
                stack.pop()
    return back


def _isotonic(target: list[float], weight: list[float]) -> list[float]:
    """The non-decreasing sequence closest to `target` in weighted least squares (PAV)."""
    vals: list[float] = []
    wts: list[float] = []
    cnt: list[int] = []
    for t, w in zip(target, weight):
        vals.append(t)
        wts.append(w)
        cnt.append(1)
        while len(vals) > 1 and vals[-2] > vals[-1]:
            w2 = wts[-2] + wts[-1]
            v2 = (vals[-2] * wts[-2] + vals[-1] * wts[-1]) / w2
            c2 = cnt[-2] + cnt[-1]
            vals.pop()
            wts.pop()
            cnt.pop()
            vals[-1], wts[-1], cnt[-1] = v2, w2, c2
    out: list[float] = []
    for v, c in zip(vals, cnt):
        out.extend([v] * c)
    return out


def _place_layer(order: list[int], width: dict[int, float], desired: list[float],
                 weight: list[float]) -> list[float]:
    """x centres for `order` closest to `desired` with at least NODE_GAP between items."""
    offsets = [0.0]
    for a, b in pairwise(order):
        offsets.append(offsets[-1] + (width[a] + width[b]) / 2 + NODE_GAP)
    y = _isotonic([d - o for d, o in zip(desired, offsets)], weight)
    return [v + o for v, o in zip(y, offsets)]


def _layout_level(items: list[int], size: dict[int, tuple[float, float]],
                  edges: list[tuple[int, int, int]], dummy_budget: int,
                  ports_in: list[int] = (), ports_out: list[int] = ()) -> _Level:
    """Lay out `items` (sizes given) joined by `edges` (index, source item, target item).
    `ports_in` / `ports_out` are where edges from outside enter (the top layer) and edges
    to outside leave (the bottom layer)."""
    items = [*items, *ports_in, *ports_out]
    for p in (*ports_in, *ports_out):
        size[p] = (DUMMY_W, 0.0)
    succ: dict[int, list[int]] = {v: [] for v in items}
    for _, u, v in edges:
        if u != v:
            succ[u].append(v)
    back = _break_cycles(items, succ)
    # The DAG: back edges reversed, duplicates kept (they weigh in the barycentres).
    dag: list[tuple[int, int, int, bool]] = []      # (edge, from, to, reversed)
    for e, u, v in edges:
        if u == v:
            continue
        if (u, v) in back:
            dag.append((e, v, u, True))
        else:
            dag.append((e, u, v, False))
    preds: dict[int, list[int]] = {v: [] for v in items}
    succs: dict[int, list[int]] = {v: [] for v in items}
    for _, u, v, _r in dag:
        succs[u].append(v)
        preds[v].append(u)
    # Longest-path layering in topological order (Kahn), then as late as possible.
    indeg = {v: len(preds[v]) for v in items}
    topo = [v for v in items if indeg[v] == 0]
    i = 0
    while i < len(topo):
        v = topo[i]
        i += 1
        for w in succs[v]:
            indeg[w] -= 1
            if indeg[w] == 0:
                topo.append(w)
    layer = {v: 0 for v in items}
    for v in topo:
        lv = layer[v] + 1
        for w in succs[v]:
            layer[w] = max(layer[w], lv)
    for v in reversed(topo):
        if succs[v]:
            below = min(layer[w] for w in succs[v]) - 1
            layer[v] = max(layer[v], below)
    if ports_in:
        for v in items:
            layer[v] += 1
        for p in ports_in:
            layer[p] = 0
    if ports_out:
        inner = max((layer[v] for v in items if v not in ports_out), default=0)
        for p in ports_out:
            layer[p] = inner + 1
    nlayers = max(layer.values(), default=0) + 1
    # Dummy points for long edges, shortest first, within the budget.
    width = {v: size[v][0] for v in items}
    chain: dict[int, list[int]] = {}              # edge -> its dummies, top down
    next_id = DUMMY_BASE
    seg_pred: dict[int, list[int]] = {v: [] for v in items}
    seg_succ: dict[int, list[int]] = {v: [] for v in items}
    long_edges = sorted((layer[v] - layer[u], e, u, v) for e, u, v, _r in dag)
    used = 0
    for span, e, u, v in long_edges:
        if span > 1 and used + span - 1 <= dummy_budget:
            used += span - 1
            prev = u
            dummies = []
            for k in range(layer[u] + 1, layer[v]):
                d = next_id
                next_id += 1
                layer[d] = k
                width[d] = DUMMY_W
                seg_pred[d], seg_succ[d] = [], []
                seg_succ[prev].append(d)
                seg_pred[d].append(prev)
                dummies.append(d)
                prev = d
            seg_succ[prev].append(v)
            seg_pred[v].append(prev)
            chain[e] = dummies
        else:
            seg_succ[u].append(v)
            seg_pred[v].append(u)
    # Initial order: topological order of first appearance, dummies after their source.
    layers: list[list[int]] = [[] for _ in range(nlayers)]
    placed: set[int] = set()
    for v in topo:
        if v not in placed:
            placed.add(v)
            layers[layer[v]].append(v)
        for d in seg_succ[v]:
            while DUMMY_BASE <= d < PORT_BASE and d not in placed:       # walk a dummy chain
                placed.add(d)
                layers[layer[d]].append(d)
                d = seg_succ[d][0]
    index: dict[int, float] = {}
    for lay in layers:
        for k, v in enumerate(lay):
            index[v] = k
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        rng = range(1, nlayers) if down else range(nlayers - 2, -1, -1)
        for li in rng:
            lay = layers[li]
            nb = seg_pred if down else seg_succ
            keys = {}
            for v in lay:
                ns = nb[v]
                keys[v] = sum(index[w] for w in ns) / len(ns) if ns else index[v]
            lay.sort(key=keys.__getitem__)
            for k, v in enumerate(lay):
                index[v] = k
    # x coordinates.
    x: dict[int, float] = {}
    for lay in layers:
        at = 0.0
        for v in lay:
            x[v] = at + width[v] / 2
            at += width[v] + NODE_GAP
    for sweep in range(2 * PLACE_SWEEPS + 1):
        down = sweep % 2 == 0
        rng = range(1, nlayers) if down else range(nlayers - 2, -1, -1)
        nb = seg_pred if down else seg_succ
        for li in rng:
            lay = layers[li]
            if not lay:
                continue
            desired, weight = [], []
            for v in lay:
                ns = nb[v]
                if ns:
                    desired.append(sum(x[w] for w in ns) / len(ns))
                    weight.append(len(ns) * (4.0 if v >= DUMMY_BASE else 1.0))
                else:
                    desired.append(x[v])
                    weight.append(0.05)
            for v, nx in zip(lay, _place_layer(lay, width, desired, weight)):
                x[v] = nx
    left = min((x[v] - width[v] / 2 for v in x), default=0.0)
    right = max((x[v] + width[v] / 2 for v in x), default=0.0)
    # y coordinates: each layer as tall as its tallest item; items centred in it.
    tops: list[float] = []
    at = 0.0
    heights = []
    for li, lay in enumerate(layers):
        h = max((size[v][1] for v in lay if v < DUMMY_BASE or v >= PORT_BASE),
                default=LINE_H)
        tops.append(at)
        heights.append(h)
        ports_only = lay and all(v >= PORT_BASE for v in lay)
        before_ports = li + 1 < nlayers and layers[li + 1] and \
            all(v >= PORT_BASE for v in layers[li + 1])
        at += h + (PORT_GAP if ports_only or before_ports else LAYER_GAP)
    at -= LAYER_GAP
    pos = {v: (x[v] - left, tops[layer[v]] + (heights[layer[v]] - size[v][1]) / 2)
           for v in items}
    routes = {e: [(x[d] - left, tops[layer[d]] + heights[layer[d]] / 2) for d in ds]
              for e, ds in chain.items()}
    rev = {e for e, _u, _v, r in dag if r}
    for e in rev:
        if e in routes:
            routes[e].reverse()
    return _Level(pos, routes, rev, right - left, max(at, 0.0))


# ---------------------------------------------------------------- the whole graph


def _spread_ends(graph: Graph, boxes: list[Box | None],
                 routes: list[list[tuple[float, float]]]) -> list[tuple[float, float, str]]:
    """Edges into one node end side by side on its top, ordered by where they come from.
    Returns where each edge's label goes (x, y of the text's baseline, anchor): on the
    last stretch of the edge, left of it for the left half of a node's inputs and right of
    it for the right half, the inner ones higher up, so that labels stand apart."""
    labels: list[tuple[float, float, str]] = []
    into: dict[int, list[int]] = {}
    for k, e in enumerate(graph.edges):
        pts = routes[k]
        (x0, y0), (x1, y1) = pts[-2], pts[-1]
        labels.append(((x0 + x1) / 2 + 4, (y0 + y1) / 2 + 3, "start"))
        if y1 >= y0:                                     # downwards edges only
            into.setdefault(e.dst, []).append(k)
    for dst, ks in into.items():
        b = boxes[dst]
        assert b is not None
        ks.sort(key=lambda k: routes[k][-2][0])
        m = len(ks)
        step = min(b.w * 0.8 / m, 28.0) if m > 1 else 0.0
        left = b.cx - step * (m - 1) / 2
        for i, k in enumerate(ks):
            pts = routes[k]
            x1, y1 = left + i * step, pts[-1][1]
            pts[-1] = (x1, y1)
            x0, y0 = pts[-2]
            inner = min(i, m - 1 - i)                # 0 for the outermost two
            t = max(0.5 - 0.28 * inner, 0.1)           # how far up the last stretch
            lx, ly = x1 + (x0 - x1) * t, y1 + (y0 - y1) * t
            if 2 * i < m - 1:
                labels[k] = (lx - 4, ly + 3, "end")
            else:
                labels[k] = (lx + 4, ly + 3, "start")
    return labels


def layout(graph: Graph) -> Layout:
    """Positions of every node and cluster and the route of every edge."""
    clusters = graph.clusters
    depth: dict[int, int] = {0: 0}
    for cid in sorted(clusters):                 # a parent is made before its children
        depth[cid] = depth[clusters[cid].parent] + 1
    parent = {cid: c.parent for cid, c in clusters.items()}
    members: dict[int, list[int]] = {cid: [] for cid in depth}   # items: node i, cluster ~c
    for n in graph.nodes:
        members[n.cluster].append(n.id)
    for cid in sorted(clusters):
        members[parent[cid]].append(-cid - 1)     # a cluster as an item: -(id + 1)

    def item_in(node: int, level: int) -> int:
        """The item of cluster `level` that holds `node`: itself or a cluster's box."""
        c = graph.nodes[node].cluster
        if c == level:
            return node
        while parent[c] != level:
            c = parent[c]
        return -c - 1

    # Each edge: one segment in the innermost cluster holding both ends, and one in each
    # cluster it leaves (to a port at the bottom) or enters (from a port at the top).
    segments: dict[int, list[tuple[int, int, int]]] = {cid: [] for cid in depth}
    ports_in: dict[int, list[int]] = {cid: [] for cid in depth}
    ports_out: dict[int, list[int]] = {cid: [] for cid in depth}
    chains: list[tuple[list[tuple[int, int]], int, list[tuple[int, int]]]] = []
    next_port = PORT_BASE
    for k, e in enumerate(graph.edges):
        a, b = graph.nodes[e.src].cluster, graph.nodes[e.dst].cluster
        up: list[tuple[int, int]] = []           # (cluster, its out-port), innermost first
        down: list[tuple[int, int]] = []         # (cluster, its in-port), innermost first
        while a != b:
            if depth[a] >= depth[b]:
                port, next_port = next_port, next_port + 1
                ports_out[a].append(port)
                segments[a].append((k, item_in(e.src, a), port))
                up.append((a, port))
                a = parent[a]
            else:
                port, next_port = next_port, next_port + 1
                ports_in[b].append(port)
                segments[b].append((k, port, item_in(e.dst, b)))
                down.append((b, port))
                b = parent[b]
        segments[a].append((k, item_in(e.src, a), item_in(e.dst, a)))
        chains.append((up, a, down))

    size: dict[int, tuple[float, float]] = {}
    for n in graph.nodes:
        size[n.id] = node_size(node_lines(graph, n.id))
    budget = 8 * len(graph.nodes) + 2000
    levels: dict[int, _Level] = {}
    for cid in sorted(depth, key=lambda c: -depth[c]):        # innermost first
        lvl = _layout_level(members[cid], size, segments[cid], budget,
                            ports_in[cid], ports_out[cid])
        levels[cid] = lvl
        if cid:
            label_w = len(clusters[cid].label) * CHAR_W * 0.9
            w = max(lvl.width, label_w) + 2 * CLUSTER_PAD
            size[-cid - 1] = (w, lvl.height + 2 * CLUSTER_PAD + CLUSTER_LABEL_H)
    # Absolute positions, outermost first.
    origin: dict[int, tuple[float, float]] = {0: (CLUSTER_PAD, CLUSTER_PAD)}
    boxes: list[Box | None] = [None] * len(graph.nodes)
    cboxes: dict[int, Box] = {}
    for cid in sorted(depth, key=lambda c: depth[c]):
        ox, oy = origin[cid]
        for item, (cx, top) in levels[cid].pos.items():
            if item >= PORT_BASE:
                continue
            w, h = size[item]
            if item >= 0:
                boxes[item] = Box(ox + cx - w / 2, oy + top, w, h)
            else:
                sub = -item - 1
                cboxes[sub] = Box(ox + cx - w / 2, oy + top, w, h)
                origin[sub] = (ox + cx - w / 2 + (w - levels[sub].width) / 2,
                               oy + top + CLUSTER_PAD + CLUSTER_LABEL_H)

    def bends(cid: int, k: int) -> list[tuple[float, float]]:
        ox, oy = origin[cid]
        return [(ox + px, oy + py) for px, py in levels[cid].routes.get(k, ())]

    def port(cid: int, p: int, top: bool) -> tuple[float, float]:
        box = cboxes[cid]
        return (origin[cid][0] + levels[cid].pos[p][0], box.y if top else box.y + box.h)

    routes: list[list[tuple[float, float]]] = []
    for k, e in enumerate(graph.edges):
        s, d = boxes[e.src], boxes[e.dst]
        assert s is not None and d is not None
        up, lca, down = chains[k]
        if k in levels[lca].reversed_edges:       # a cycle's back edge: drawn upwards
            routes.append([(s.cx, s.y), *bends(lca, k), (d.cx, d.y + d.h)])
            continue
        pts = [(s.cx, s.y + s.h)]
        for cid, p in up:
            pts += bends(cid, k)
            pts.append(port(cid, p, top=False))
        pts += bends(lca, k)
        for cid, p in reversed(down):
            pts.append(port(cid, p, top=True))
            pts += bends(cid, k)
        pts.append((d.cx, d.y))
        routes.append(pts)
    labels = _spread_ends(graph, boxes, routes)
    root = levels[0]
    return Layout(root.width + 2 * CLUSTER_PAD, root.height + 2 * CLUSTER_PAD,
                  [b for b in boxes if b is not None], cboxes, routes, labels)
