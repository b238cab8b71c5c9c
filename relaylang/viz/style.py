"""How each kind of node and cluster looks, shared by the dot and SVG writers."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeStyle:
    fill: str
    stroke: str
    text: str = "#111827"
    dashed: bool = False
    round: float = 4          # corner radius in SVG (a pill when large)
    dot_shape: str = "box"
    dot_style: str = "rounded,filled"


NODE_STYLES: dict[str, NodeStyle] = {
    "op": NodeStyle("#dbeafe", "#2563eb"),
    "param": NodeStyle("#dcfce7", "#16a34a", round=14, dot_shape="ellipse", dot_style="filled"),
    "free": NodeStyle("#ecfccb", "#65a30d", dashed=True, round=14, dot_shape="ellipse",
                      dot_style="filled,dashed"),
    "const": NodeStyle("#f3f4f6", "#6b7280", dashed=True, round=0, dot_shape="note",
                       dot_style="filled"),
    "global": NodeStyle("#fef3c7", "#d97706", round=0, dot_style="filled"),
    "call": NodeStyle("#fef3c7", "#d97706"),
    "ctor": NodeStyle("#fce7f3", "#db2777"),
    "tuple": NodeStyle("#ffffff", "#6b7280", round=0, dot_style="filled"),
    "getitem": NodeStyle("#ffffff", "#6b7280", round=10, dot_shape="circle",
                         dot_style="filled"),
    "if": NodeStyle("#ede9fe", "#7c3aed", round=0, dot_shape="hexagon", dot_style="filled"),
    "match": NodeStyle("#ede9fe", "#7c3aed", round=0, dot_shape="hexagon", dot_style="filled"),
    "pattern": NodeStyle("#dcfce7", "#16a34a", dashed=True, round=14, dot_shape="ellipse",
                         dot_style="filled,dashed"),
    "func": NodeStyle("#ffedd5", "#ea580c"),
    "ref": NodeStyle("#f5f5f4", "#57534e"),
    "output": NodeStyle("#1f2937", "#111827", text="#ffffff", round=14,
                        dot_style="rounded,filled,bold"),
}

CLUSTER_STYLES: dict[str, tuple[str, str]] = {      # kind -> (fill, stroke)
    "fused": ("#eff6ff", "#60a5fa"),
    "then": ("#f0fdf4", "#4ade80"),
    "else": ("#fef2f2", "#f87171"),
    "clause": ("#faf5ff", "#c084fc"),
    "closure": ("#fffbeb", "#fbbf24"),
}

LEGEND = {                # what the HTML legend names each kind
    "op": "op call", "param": "parameter", "const": "constant", "call": "call",
    "if": "if / match", "func": "closure", "output": "result",
}
