"""MergeCompilerRegions: grow each target's regions as large as they can be (TVM's
src/relay/transforms/merge_compiler_regions.cc).

After AnnotateTarget every operation is a region of its own. Visiting the regions
producers first, a region is merged with each region that feeds it (through a
`compiler_end` -> `compiler_begin` edge) when both have the same target, unless that
would make a cycle: a region R records, as restrictions, every region of another target
that feeds it and every restriction of the regions that feed it (through `if`s too), and
never merges with a restricted region. So in

    %a (example) -> %b (default) -> %c (example),  and  %a -> %c

`%c` does not join `%a`: the merged region would need `%b`'s result, which needs its own.
Then the `compiler_end`/`compiler_begin` pairs that now lie inside one region are removed.
`default` regions merge like any other; PartitionGraph drops their annotations.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ...ir.expr import Call, Expr, Function, If
from ...ir.module import IRModule
from ...ir.traverse import post_order
from ..pass_infra import ModulePass, PassContext, register_pass
from .annotations import compiler_of, is_begin, is_end
from .regions import AnnotatedRegion, AnnotatedRegionSet


@register_pass
@dataclass(frozen=True)
class MergeCompilerRegions(ModulePass):
    """Merge neighbouring regions of one target when no cycle would form."""

    name: ClassVar[str] = "MergeCompilerRegions"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if fn.attrs is not None and fn.attrs.get("Compiler"):
                continue
            new = merge_compiler_regions(fn)
            if new is not fn:
                out.functions[gv] = new
        return out


def merge_compiler_regions(fn: Function) -> Function:
    regions = AnnotatedRegionSet.create(fn)
    if not regions.regions:
        return fn
    _RegionMerger(regions).run(fn)
    done: dict[int, Expr] = {}
    for node in post_order(fn):
        kids = node.children()
        post = node.with_children([done[id(c)] for c in kids]) if kids else node
        if is_begin(node) and is_end(node.args[0]):
            r1, r2 = regions.get_region(node), regions.get_region(node.args[0])
            if r1 is not None and r1 is r2:
                post = post.args[0].args[0]          # both inside one region now
        done[id(node)] = post
    out = done[id(fn)]
    assert isinstance(out, Function)
    return out


class _RegionMerger:
    """TVM's RegionMerger. A region's restrictions are the union of the regions it was
    told about (`own`) and of the restrictions of the regions that fed it when it was
    visited (`links`, kept as links rather than copied: a long chain of regions would
    otherwise copy ever larger sets). A merged region's id stands for the region it was
    merged into (`regions.root_id`), as TVM renames it in every restriction set."""

    def __init__(self, regions: AnnotatedRegionSet):
        self.regions = regions
        self.merged: set[int] = set()
        self.own: dict[int, set[int]] = {}
        self.links: dict[int, list[int]] = {}

    def run(self, fn: Function) -> None:
        for node in post_order(fn):
            if is_end(node):
                self._visit_end(node)

    def _nonempty(self, rid: int) -> bool:
        return bool(self.own.get(rid)) or bool(self.links.get(rid))

    def _restricted(self, rid: int, other: int) -> bool:
        """Whether region `other` (a current region id) is among `rid`'s restrictions."""
        root = self.regions.root_id
        stack, seen = [rid], {rid}
        while stack:
            n = stack.pop()
            if any(root(m) == other for m in self.own.get(n, ())):
                return True
            for link in self.links.get(n, ()):
                if link not in seen:
                    seen.add(link)
                    stack.append(link)
        return False

    def _visit_end(self, end: Call) -> None:
        rs = self.regions
        region = rs.get_region(end)
        if region is None or region.id in self.merged:
            return
        target = compiler_of(end)
        parents: list[AnnotatedRegion] = []
        correlative: list[AnnotatedRegion] = []
        for begin in list(region.ins):
            parent = rs.get_region(begin.args[0])
            if parent is not None:
                if parent not in parents:
                    parents.append(parent)
                if parent not in correlative:
                    correlative.append(parent)
            else:
                for r in self._control_flow_regions(begin.args[0]):
                    if r not in correlative:
                        correlative.append(r)
        links = self.links.setdefault(region.id, [])
        for parent in correlative:             # inherit the parents' restrictions
            if parent.id != region.id and self._nonempty(parent.id):
                links.append(parent.id)
        for parent in parents:
            if parent.target != target:
                self.own.setdefault(region.id, set()).add(parent.id)
                continue
            if parent.id not in rs.regions or self._restricted(region.id, parent.id):
                continue
            rs.merge_regions(parent, region)
        self.merged.add(region.id)

    def _control_flow_regions(self, expr: Expr) -> list[AnnotatedRegion]:
        """The regions of an `if`'s condition and branches, looking through nested `if`s."""
        found: list[AnnotatedRegion] = []
        stack = [expr]
        while stack:
            e = stack.pop()
            if not isinstance(e, If):
                continue
            for part in (e.cond, e.true_branch, e.false_branch):
                r = self.regions.get_region(part)
                if r is not None:
                    found.append(r)
                else:
                    stack.append(part)
        return found
