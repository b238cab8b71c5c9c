"""The regions that compiler_begin/compiler_end annotations delimit (TVM's
src/relay/analysis/annotated_region_set.{h,cc}, `AnnotatedRegionSet`).

Each `compiler_begin` opens a region of its target; an expression whose arguments lie in
regions joins them (merging them into the first one); a `compiler_end` closes the region
of its argument. A region knows its begins (`ins`, its inputs), its ends (`outs`) and
its nodes. The walk visits nodes in the order of TVM's MixedModeVisitor (calls, tuples
and projections after their operands; `let`, `if` and references before theirs), so
region ids, and the names PartitionGraph derives from them, are TVM's. Iterative.
"""
from __future__ import annotations

from collections.abc import Iterator

from ...ir.diagnostics import Diagnostic, DiagnosticError
from ...ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from .annotations import compiler_of, is_annotation, is_begin, is_end

_DATAFLOW = (Call, Tuple, TupleGetItem, Var, Constant, Op, GlobalVar, Constructor)


class AnnotatedRegion:
    def __init__(self, rid: int, target: str, func_name: str):
        self.id = rid
        self.target = target
        self.func_name = func_name
        self.ins: list[Call] = []          # compiler_begin calls
        self.outs: list[Call] = []         # compiler_end calls
        self.nodes: dict[int, Expr] = {}

    def __repr__(self) -> str:
        return f"<region {self.id} {self.target}: {len(self.nodes)} nodes>"


class AnnotatedRegionSet:
    def __init__(self) -> None:
        self.regions: dict[int, AnnotatedRegion] = {}       # by id, in creation order
        self._region_of: dict[int, int] = {}                # id(expr) -> region id, then
        self._merged_into: dict[int, int] = {}              # merged region id -> its dest
        self._next_id = 0

    def __iter__(self) -> Iterator[AnnotatedRegion]:
        return iter(list(self.regions.values()))

    def get_region(self, expr: Expr) -> AnnotatedRegion | None:
        rid = self._region_of.get(id(expr))
        if rid is None:
            return None
        return self.regions[self.root_id(rid)]

    def root_id(self, rid: int) -> int:
        """The id of the region that region `rid` is now part of."""
        up = self._merged_into
        root = rid
        while root in up:
            root = up[root]
        while rid != root:                   # path compression
            nxt = up[rid]
            up[rid] = root
            rid = nxt
        return root

    def make_region(self, func_name: str, target: str) -> AnnotatedRegion:
        region = AnnotatedRegion(self._next_id, target, func_name)
        self._next_id += 1
        self.regions[region.id] = region
        return region

    def add_node(self, region: AnnotatedRegion, expr: Expr) -> None:
        region.nodes[id(expr)] = expr
        self._region_of[id(expr)] = region.id

    def merge_regions(self, src: AnnotatedRegion, dest: AnnotatedRegion) -> None:
        """Move `src` into `dest` (TVM's order: `dest`'s inputs and outputs, then `src`'s);
        ends of `src` feeding begins of `dest` become inner. The larger containers are
        kept and the smaller copied in, so a long chain of merges stays linear."""
        if src is dest:
            return
        inner = [b for b in dest.ins if id(b.args[0]) in src.nodes]
        if len(src.nodes) > len(dest.nodes):
            src.nodes.update(dest.nodes)
            dest.nodes = src.nodes
        else:
            dest.nodes.update(src.nodes)
        for name in ("ins", "outs"):
            mine, theirs = getattr(dest, name), getattr(src, name)
            if len(theirs) > len(mine):
                theirs[0:0] = mine
                setattr(dest, name, theirs)
            else:
                mine.extend(theirs)
        for b in inner:
            _remove(dest.ins, b)
            _remove(dest.outs, b.args[0])
        src.nodes, src.ins, src.outs = {}, [], []
        self._merged_into[src.id] = dest.id
        del self.regions[src.id]

    def add_to_region(self, dest: AnnotatedRegion, expr: Expr) -> None:
        src = self.get_region(expr)
        if src is not None:
            self.merge_regions(src, dest)
        else:
            self.add_node(dest, expr)

    # ------------------------------------------------------------ building
    @staticmethod
    def create(expr: Expr, func_name: str = "default") -> AnnotatedRegionSet:
        rs = AnnotatedRegionSet()
        for node in mixed_mode_order(expr):
            if isinstance(node, Call):
                if not is_annotation(node):
                    rs._add_to_arg_region(node, node.args)
                elif is_begin(node):
                    if rs.get_region(node) is not None:
                        continue
                    region = rs.make_region(func_name, compiler_of(node) or "default")
                    rs.add_node(region, node)
                    region.ins.append(node)
                else:
                    region = rs.get_region(node.args[0])
                    if region is None:
                        raise DiagnosticError([Diagnostic.error(
                            "cannot find the region this compiler_end closes (its argument "
                            "is not computed under a compiler_begin)", node.span)])
                    rs.add_node(region, node)
                    region.outs.append(node)
            elif isinstance(node, Tuple):
                rs._add_to_arg_region(node, node.fields)
            elif isinstance(node, TupleGetItem):
                rs._add_to_arg_region(node, (node.tuple_value,))
            elif isinstance(node, Let):
                rs._add_to_arg_region(node, (node.var, node.value, node.body))
            elif isinstance(node, If):
                rs._add_to_arg_region(node, (node.cond, node.true_branch, node.false_branch))
            elif isinstance(node, (RefCreate, RefRead)):
                rs._add_to_arg_region(node, node.children())
            elif isinstance(node, RefWrite):
                rs._add_to_arg_region(node, (node.ref,))
        return rs

    def _add_to_arg_region(self, expr: Expr, args: tuple[Expr, ...]) -> None:
        region = None
        for arg in args:
            if is_end(arg):
                continue                      # a closed region
            region = self.get_region(arg)
            if region is not None:
                break
        if region is None:
            return
        for arg in args:
            if is_end(arg):
                continue
            other = self.get_region(arg)
            if other is not None and other is not region:
                self.merge_regions(other, region)
        self.add_to_region(region, expr)


def _remove(items: list[Expr], item: Expr) -> None:
    for i, x in enumerate(items):
        if x is item:
            del items[i]
            return


def mixed_mode_order(root: Expr) -> list[Expr]:
    """Nodes in the order TVM's MixedModeVisitor calls `VisitExpr_` on them: dataflow nodes
    (calls, tuples, projections, leaves) after their operands, other nodes (let, if,
    functions, references, match) before theirs; each once. Iterative."""
    order: list[Expr] = []
    seen: set[int] = set()
    stack: list[tuple[Expr, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if ready:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, _DATAFLOW):
            stack.append((node, True))
        else:
            order.append(node)
        for child in reversed(node.children()):
            if id(child) not in seen:
                stack.append((child, False))
    return order
