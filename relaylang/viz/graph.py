"""The dataflow graph of one Relay function, as `relay viz` draws it.

`extract(mod, name)` walks the function with an explicit stack of tasks (never recursion
over the IR; a node shared by several users is drawn once) and returns a `Graph`:

- nodes: op calls (labelled with the op name and its non-default attributes), parameters,
  constants, calls of globals and closures, constructors, tuples and projections, `if` and
  `match` (the join of their branches), pattern variables, closures, references, and one
  `return` node;
- edges: from a value to its user, labelled with the value's type (compact:
  `float32[1, 4, 16]`); `let`-bound variables are no nodes of their own (the edge comes
  from the bound value);
- clusters: each primitive function called in place (what FuseOps makes) is drawn as a
  `fused` cluster holding its ops, its parameters replaced by the call's arguments; each
  branch of an `if` and each clause of a `match` is a cluster of the nodes used only
  there (a value used in both branches is drawn outside them, `_hoist_shared`); a closure
  (`fn` as a value) is a cluster holding its parameters and body. Clusters left empty
  (a branch that only names an outer value) are dropped: the labelled edge says it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.types import TensorType, TupleType

if TYPE_CHECKING:
    from ..ir.expr import Expr, Pattern
    from ..ir.module import IRModule
    from ..ir.span import Span
    from ..ir.types import Type

# Node kinds, each drawn its own way by the writers.
KINDS = ("op", "param", "const", "global", "call", "ctor", "tuple", "getitem", "if",
         "match", "pattern", "func", "ref", "output", "free")
ATTR_LIMIT = 3          # attributes shown on an op node (all are in its tooltip)
VALUE_WIDTH = 28        # characters of one attribute value shown on a node
TYPE_WIDTH = 40         # characters of an edge's type label


class VizError(Exception):
    """A graph that cannot be drawn for a reason the user can fix (unknown function)."""


@dataclass
class Node:
    id: int
    kind: str
    title: str                       # first line: op name, `%param`, `@global`, ...
    detail: list[str] = field(default_factory=list)   # further lines (attributes)
    cluster: int = 0                 # the innermost cluster holding the node (0: none)
    span: Span | None = None
    type_text: str = ""              # the type of the node's value
    info: list[str] = field(default_factory=list)     # tooltip-only lines (all attributes)


@dataclass
class Edge:
    src: int
    dst: int
    label: str = ""                  # the value's type, prefixed with a role for branches
    result: bool = False             # a branch's, clause's or function's result to its join


@dataclass
class Cluster:
    id: int
    parent: int                      # 0 for a top-level cluster (the function itself is 0)
    kind: str                        # fused, then, else, clause, closure
    label: str


@dataclass
class Graph:
    function: str
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)
    clusters: dict[int, Cluster] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    _lines: dict[str, list[str]] = field(default_factory=dict, repr=False)

    def node(self, kind: str, title: str, cluster: int, span: Span | None = None,
             type_text: str = "", detail: list[str] | None = None) -> int:
        n = Node(len(self.nodes), kind, title, detail or [], cluster, span, type_text)
        self.nodes.append(n)
        return n.id

    def edge(self, src: int, dst: int, label: str = "", result: bool = False) -> None:
        self.edges.append(Edge(src, dst, label, result))

    def cluster(self, parent: int, kind: str, label: str) -> int:
        cid = len(self.clusters) + 1
        self.clusters[cid] = Cluster(cid, parent, kind, label)
        return cid

    def source_line(self, span: Span | None) -> str:
        """The text of the source line a span starts on ("" when unknown)."""
        if span is None:
            return ""
        lines = self._lines.get(span.source_name)
        if lines is None:
            lines = self._lines[span.source_name] = \
                self.sources.get(span.source_name, "").split("\n")
        return lines[span.line - 1].strip() if 0 < span.line <= len(lines) else ""

    def tooltip(self, n: Node) -> str:
        """What hovering a node shows: its source line and where it is, its type, all
        its attributes."""
        lines = [" ".join([n.title, *n.detail])] if n.kind != "op" else [n.title]
        lines += n.info
        if n.type_text:
            lines.append(f": {n.type_text}")
        if n.span is not None:
            lines.append(f"{n.span.source_name}:{n.span.line}:{n.span.column}")
            src = self.source_line(n.span)
            if src:
                lines.append(src if len(src) <= 160 else src[:157] + "...")
        return "\n".join(lines)


# ---------------------------------------------------------------- text of types and values


def type_text(ty: Type | None, width: int = TYPE_WIDTH) -> str:
    """`float32[1, 4, 16]`, `int32`, `(float32[2], int32)`; other types as printed."""
    if ty is None:
        return ""
    if isinstance(ty, TensorType):
        text = _tensor_text(ty)
    elif isinstance(ty, TupleType) and all(isinstance(f, TensorType) for f in ty.fields):
        text = "(" + ", ".join(_tensor_text(f) for f in ty.fields) + \
            ("," if len(ty.fields) == 1 else "") + ")"
    else:
        from ..ir.text import astext
        text = " ".join(astext(ty).split())
    return text if len(text) <= width else text[:width - 3] + "..."


def _tensor_text(ty: TensorType) -> str:
    if not ty.shape:
        return ty.dtype
    return f"{ty.dtype}[{', '.join(str(d) for d in ty.shape)}]"


def value_text(v: Any, width: int = VALUE_WIDTH) -> str:
    """An attribute value, short: tuples as `[1, 1]`, expressions as printed."""
    parts: list[str] = []
    stack: list[Any] = [v]
    while stack:                    # attribute tuples nest; an explicit stack all the same
        item = stack.pop()
        if isinstance(item, str) and item in ("\x00[", "\x00]", "\x00,"):
            parts.append(item[1:] + (" " if item == "\x00," else ""))
        elif isinstance(item, (tuple, list)):
            stack.append("\x00]")
            for i in range(len(item) - 1, -1, -1):
                stack.append(item[i])
                if i:
                    stack.append("\x00,")
            stack.append("\x00[")
        elif isinstance(item, str):
            parts.append(repr(item) if item == "" else item)
        elif isinstance(item, float):
            parts.append(f"{item:g}")
        elif isinstance(item, (Var, GlobalVar)):
            parts.append(("%" if isinstance(item, Var) else "@") + item.name_hint)
        else:
            parts.append(str(item) if not hasattr(item, "span") else type(item).__name__)
    text = "".join(parts)
    return text if len(text) <= width else text[:width - 3] + "..."


def _constant_title(c: Constant) -> str:
    data = c.data
    try:
        if data.ndim == 0:
            value = data.item()
            text = f"{value:g}" if isinstance(value, float) else str(value)
            return text if len(text) <= 16 else text[:13] + "..."
    except (AttributeError, TypeError, ValueError):
        pass
    return "const"


def pattern_text(p: Pattern) -> str:
    """`Cons(%x, %rest)`, `(%a, _)`, `Nil`: a pattern as written (iteratively)."""
    parts: list[str] = []
    stack: list[Any] = [p]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            parts.append(item)
        elif isinstance(item, PatternVar):
            parts.append("%" + item.var.name_hint)
        elif isinstance(item, PatternConstructor):
            parts.append(item.constructor.name)
            if item.patterns:
                _push_sequence(stack, item.patterns, "(", ")")
        elif isinstance(item, PatternTuple):
            _push_sequence(stack, item.patterns, "(", ")")
        else:
            parts.append("_")
    return "".join(parts)


def _push_sequence(stack: list[Any], items: Any, open_: str, close: str) -> None:
    stack.append(close)
    for i in range(len(items) - 1, -1, -1):
        stack.append(items[i])
        if i:
            stack.append(", ")
    stack.append(open_)


def _pattern_vars(p: Pattern) -> list[tuple[Var, str]]:
    """Each variable a pattern binds with its path from the matched value (`Cons.0`)."""
    out: list[tuple[Var, str]] = []
    stack: list[tuple[Pattern, str]] = [(p, "")]
    while stack:
        pat, path = stack.pop()
        if isinstance(pat, PatternVar):
            out.append((pat.var, path or "value"))
        elif isinstance(pat, PatternConstructor):
            for i in range(len(pat.patterns) - 1, -1, -1):
                stack.append((pat.patterns[i], f"{path}{pat.constructor.name}.{i}"
                              if not path else f"{path}.{pat.constructor.name}.{i}"))
        elif isinstance(pat, PatternTuple):
            for i in range(len(pat.patterns) - 1, -1, -1):
                stack.append((pat.patterns[i], f"{path}.{i}" if path else f".{i}"))
    return out


def _is_primitive(fn: Function) -> bool:
    return fn.attrs is not None and bool(fn.attrs.get("Primitive", 0))


def _op_detail(call: Call) -> tuple[list[str], list[str]]:
    """(attributes shown on the node, every attribute for the tooltip)."""
    if call.attrs is None:
        return [], []
    try:
        items = call.attrs.non_default_items()
    except (AttributeError, TypeError):
        return [], []
    texts = [f"{k}={value_text(v)}" for k, v in items]
    full = [f"{k}={value_text(v, 200)}" for k, v in items]
    shown = texts[:ATTR_LIMIT] + ([f"(+{len(texts) - ATTR_LIMIT} more)"]
                                  if len(texts) > ATTR_LIMIT else [])
    return shown, full


# ---------------------------------------------------------------- extraction

# Task codes of the extractor's stack.
_VISIT, _BUILD, _BIND_PARAMS, _ALIAS, _BIND_LET, _FINISH_IF, _BIND_CLAUSE, _FINISH_MATCH, \
    _FINISH_FN = range(9)


class _Extractor:
    def __init__(self, graph: Graph):
        self.g = graph
        self.memo: dict[int, int] = {}       # id(expr) -> node of its value
        self.env: dict[int, int] = {}        # id(var) -> node of its value
        self.inlined: set[int] = set()       # primitive functions drawn in place
        self.stack: list[tuple[Any, ...]] = []

    def push(self, *tasks: tuple[Any, ...]) -> None:
        """Run `tasks` next, in the order given."""
        self.stack.extend(reversed(tasks))

    def value(self, e: Expr) -> int:
        if isinstance(e, Var):
            found = self.env.get(id(e))
            if found is None:          # free in the drawn function
                found = self.env[id(e)] = self.g.node(
                    "free", "%" + e.name_hint, 0, e.span, type_text(e.checked_type))
            return found
        return self.memo[id(e)]

    def edge_from(self, e: Expr, dst: int, role: str = "", result: bool = False) -> None:
        ty = type_text(e.checked_type)
        label = f"{role}: {ty}" if role and ty else role or ty
        self.g.edge(self.value(e), dst, label, result)

    def run(self, fn: Function, name: str) -> None:
        g = self.g
        for p in fn.params:
            self.env[id(p)] = g.node("param", "%" + p.name_hint, 0, p.span,
                                     type_text(p.checked_type or p.type_annotation))
        self.push((_VISIT, fn.body, 0))
        self.loop()
        out = g.node("output", f"@{name} result", 0, None, type_text(fn.body.checked_type))
        self.edge_from(fn.body, out)

    def start_function(self, fn: Function, node: int, cluster: int, name: str = "") -> None:
        g = self.g
        params = ", ".join("%" + p.name_hint for p in fn.params)
        kind = "fused" if _is_primitive(fn) else "closure"
        inner = g.cluster(cluster, kind, f"{name} = fn ({params})" if name else f"fn ({params})")
        for p in fn.params:
            self.env[id(p)] = g.node("param", "%" + p.name_hint, inner, p.span,
                                     type_text(p.checked_type or p.type_annotation))
        self.push((_VISIT, fn.body, inner), (_FINISH_FN, fn, node))

    def loop(self) -> None:
        stack, g = self.stack, self.g
        while stack:
            task = stack.pop()
            code = task[0]
            if code == _VISIT:
                self.visit(task[1], task[2])
            elif code == _BUILD:
                self.build(task[1], task[2])
            elif code == _BIND_PARAMS:
                fn, call = task[1], task[2]
                for p, a in zip(fn.params, call.args):
                    self.env[id(p)] = self.value(a)
            elif code == _ALIAS:
                self.memo[id(task[1])] = self.value(task[2])
            elif code == _BIND_LET:
                let = task[1]
                self.env[id(let.var)] = n = self.value(let.value)
                g.nodes[n].info.append(f"let %{let.var.name_hint}")
            elif code == _FINISH_IF:
                e, cluster = task[1], task[2]
                n = g.node("if", "if", cluster, e.span, type_text(e.checked_type))
                self.edge_from(e.cond, n, "cond")
                self.edge_from(e.true_branch, n, "then", result=True)
                self.edge_from(e.false_branch, n, "else", result=True)
                self.memo[id(e)] = n
            elif code == _BIND_CLAUSE:
                match, clause, cluster = task[1], task[2], task[3]
                for var, path in _pattern_vars(clause.lhs):
                    n = self.env[id(var)] = g.node("pattern", "%" + var.name_hint, cluster,
                                                   var.span, type_text(var.checked_type))
                    g.edge(self.value(match.data), n, path)
            elif code == _FINISH_MATCH:
                e, cluster = task[1], task[2]
                n = g.node("match", "match" if e.complete else "match?", cluster, e.span,
                           type_text(e.checked_type))
                self.edge_from(e.data, n, "data")
                for c in e.clauses:
                    self.edge_from(c.rhs, n, pattern_text(c.lhs), result=True)
                self.memo[id(e)] = n
            else:   # _FINISH_FN
                fn, node = task[1], task[2]
                self.edge_from(fn.body, node, "returns", result=True)

    def visit(self, e: Expr, cluster: int) -> None:
        if id(e) in self.memo or isinstance(e, Var):
            return
        g = self.g
        ty = type_text(e.checked_type)
        if isinstance(e, Constant):
            self.memo[id(e)] = g.node("const", _constant_title(e), cluster, e.span, ty)
        elif isinstance(e, GlobalVar):
            self.memo[id(e)] = g.node("global", "@" + e.name_hint, cluster, e.span, ty)
        elif isinstance(e, Op):
            self.memo[id(e)] = g.node("op", e.name, cluster, e.span, ty)
        elif isinstance(e, Constructor):
            self.memo[id(e)] = g.node("ctor", e.name, cluster, e.span, ty)
        elif isinstance(e, Call):
            op = e.op
            if isinstance(op, Function) and _is_primitive(op) and id(op) not in self.inlined \
                    and len(op.params) == len(e.args):
                self.inlined.add(id(op))
                inner = g.cluster(cluster, "fused", "fused")
                self.push(*[(_VISIT, a, cluster) for a in e.args], (_BIND_PARAMS, op, e),
                          (_VISIT, op.body, inner), (_ALIAS, e, op.body))
                return
            callee = [] if isinstance(op, (Op, GlobalVar, Constructor)) else \
                [(_VISIT, op, cluster)]
            self.push(*callee, *[(_VISIT, a, cluster) for a in e.args], (_BUILD, e, cluster))
        elif isinstance(e, Let):
            if isinstance(e.value, Function) and id(e.value) not in self.memo:
                fn = e.value
                n = self.env[id(e.var)] = self.memo[id(fn)] = g.node(
                    "func", "%" + e.var.name_hint, cluster, fn.span or e.span,
                    type_text(fn.checked_type), ["fn"])
                self.push((_VISIT, e.body, cluster), (_ALIAS, e, e.body))
                self.start_function(fn, n, cluster, "%" + e.var.name_hint)
                return
            self.push((_VISIT, e.value, cluster), (_BIND_LET, e), (_VISIT, e.body, cluster),
                      (_ALIAS, e, e.body))
        elif isinstance(e, If):
            then_c = g.cluster(cluster, "then", "then")
            else_c = g.cluster(cluster, "else", "else")
            self.push((_VISIT, e.cond, cluster), (_VISIT, e.true_branch, then_c),
                      (_VISIT, e.false_branch, else_c), (_FINISH_IF, e, cluster))
        elif isinstance(e, Match):
            tasks: list[tuple[Any, ...]] = [(_VISIT, e.data, cluster)]
            for c in e.clauses:
                inner = g.cluster(cluster, "clause", pattern_text(c.lhs) + " =>")
                tasks += [(_BIND_CLAUSE, e, c, inner), (_VISIT, c.rhs, inner)]
            self.push(*tasks, (_FINISH_MATCH, e, cluster))
        elif isinstance(e, Function):
            params = ", ".join("%" + p.name_hint for p in e.params)
            n = self.memo[id(e)] = g.node("func", f"fn ({params})", cluster, e.span, ty)
            self.start_function(e, n, cluster)
        else:      # Tuple, TupleGetItem, references: children first, then the node
            self.push(*[(_VISIT, c, cluster) for c in e.children()], (_BUILD, e, cluster))

    def build(self, e: Expr, cluster: int) -> None:
        g = self.g
        ty = type_text(e.checked_type)
        if isinstance(e, Call):
            op = e.op
            if isinstance(op, Op):
                shown, full = _op_detail(e)
                n = g.node("op", op.name, cluster, e.span, ty, shown)
                g.nodes[n].info.extend(full)
            elif isinstance(op, GlobalVar):
                n = g.node("call", "@" + op.name_hint, cluster, e.span, ty, ["call"])
            elif isinstance(op, Constructor):
                n = g.node("ctor", op.name, cluster, e.span, ty)
            else:
                title = "%" + op.name_hint if isinstance(op, Var) else "closure"
                n = g.node("call", title, cluster, e.span, ty, ["call"])
                self.edge_from(op, n, "fn")
            for a in e.args:
                self.edge_from(a, n)
        elif isinstance(e, Tuple):
            n = g.node("tuple", "tuple", cluster, e.span, ty)
            for f in e.fields:
                self.edge_from(f, n)
        elif isinstance(e, TupleGetItem):
            n = g.node("getitem", f".{e.index}", cluster, e.span, ty)
            self.edge_from(e.tuple_value, n)
        elif isinstance(e, RefCreate):
            n = g.node("ref", "ref", cluster, e.span, ty)
            self.edge_from(e.value, n)
        elif isinstance(e, RefRead):
            n = g.node("ref", "ref_read", cluster, e.span, ty)
            self.edge_from(e.ref, n)
        elif isinstance(e, RefWrite):
            n = g.node("ref", "ref_write", cluster, e.span, ty)
            self.edge_from(e.ref, n, "ref")
            self.edge_from(e.value, n)
        else:
            n = g.node("call", type(e).__name__, cluster, e.span, ty)
            for c in e.children():
                self.edge_from(c, n)
        self.memo[id(e)] = n


def _name_clusters(g: Graph) -> None:
    """A fused cluster is labelled with the ops it holds: `fused: nn.conv2d + nn.relu`."""
    ops: dict[int, list[str]] = {}
    for n in g.nodes:
        if n.kind == "op" and n.cluster in g.clusters and g.clusters[n.cluster].kind == "fused":
            names = ops.setdefault(n.cluster, [])
            if n.title not in names:
                names.append(n.title)
    for cid, names in ops.items():
        shown = " + ".join(names[:3]) + (" + ..." if len(names) > 3 else "")
        g.clusters[cid].label = f"fused: {shown}"


def _hoist_shared(g: Graph) -> None:
    """A value is drawn in the innermost cluster holding all its uses. Extraction puts a
    node where the walk first reaches it; in graph form a value bound before an `if` and
    used in both branches is first reached in the `then` branch, yet belongs outside.
    Users are made after the values they use (but for results, which do not pull), so one
    pass from the last node to the first sees each user's final cluster."""
    depth: dict[int, int] = {0: 0}
    for cid in sorted(g.clusters):
        depth[cid] = depth[g.clusters[cid].parent] + 1
    users: dict[int, list[int]] = {}
    for e in g.edges:
        if not e.result:
            users.setdefault(e.src, []).append(e.dst)
    for n in reversed(g.nodes):
        c = n.cluster
        if not c or n.kind in ("param", "free"):
            continue
        for u in users.get(n.id, ()):
            b = g.nodes[u].cluster
            while c != b:
                if depth[c] >= depth[b]:
                    c = g.clusters[c].parent if c else 0
                else:
                    b = g.clusters[b].parent
        # Up to there, but never out of a function (fused or closure): it is computed inside.
        at = n.cluster
        while at != c and g.clusters[at].kind not in ("fused", "closure"):
            at = g.clusters[at].parent
        n.cluster = at


def _drop_empty_clusters(g: Graph) -> None:
    """A branch that only names an outer value (`if (%c) { %acc } else ...`) holds no node:
    its edge says it all, and an empty box would say nothing."""
    used: set[int] = set()
    for n in g.nodes:
        c = n.cluster
        while c and c not in used:
            used.add(c)
            c = g.clusters[c].parent
    g.clusters = {cid: c for cid, c in g.clusters.items() if cid in used}


def extract(mod: IRModule, name: str) -> Graph:
    """The graph of function `@name` of `mod` (typed or not: edges carry types only when
    the module is typed). VizError when the module has no such function."""
    if not any(gv.name_hint == name for gv in mod.functions):
        names = sorted(gv.name_hint for gv in mod.functions)
        import difflib
        close = difflib.get_close_matches(name, names, n=1)
        hint = f"; did you mean @{close[0]}?" if close else \
            f"; it has {', '.join('@' + n for n in names[:8])}" if names else ""
        raise VizError(f"the module has no function @{name}{hint}")
    fn = mod.functions[mod.get_global_var(name)]
    g = Graph(name, sources=dict(mod.sources))
    _Extractor(g).run(fn, name)
    _hoist_shared(g)
    _drop_empty_clusters(g)
    _name_clusters(g)
    return g


__all__ = ["Cluster", "Edge", "Graph", "Node", "VizError", "extract", "type_text"]
