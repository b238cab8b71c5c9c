"""RemoveUnusedFunctions: drop the globals no entry function can reach.

Mirrors TVM's src/relay/backend/vm/removed_unused_funcs.cc (`CallTracer`): starting
from the entry functions, follow every `@global` mentioned (called or passed as a
value) and keep exactly the functions met; ADT definitions all stay.

    def @helper(%x) { add(%x, 1f) }          def @helper(%x) { add(%x, 1f) }
    def @unused(%x) { @unused(%x) }    ==>   def @main(%x) { @helper(%x) }
    def @main(%x) { @helper(%x) }

`entry_functions` is a list of names separated by commas, semicolons or spaces; TVM's
default is `main`. In pipeline text, where a comma starts the next option, use
semicolons: `-p 'RemoveUnusedFunctions{entry_functions=main;init}'`. Names the module does not
define are ignored; if it defines none of them, the module is returned unchanged
(TVM would fail looking the entry up, and removing everything helps nobody).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import ClassVar

from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from ..ir.traverse import post_order
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class RemoveUnusedFunctions(ModulePass):
    """Keep only the global functions reachable from `entry_functions`."""

    name: ClassVar[str] = "RemoveUnusedFunctions"
    opt_level: ClassVar[int] = 1
    entry_functions: str = "main"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        names = [n.lstrip("@") for n in re.split(r"[,;\s]+", self.entry_functions) if n]
        return remove_unused_functions(mod, names)


def remove_unused_functions(mod: IRModule, entries: list[str]) -> IRModule:
    """`mod` with only the functions reachable from the named entries (in module order)."""
    by_name = {gv.name_hint: gv for gv in mod.functions}
    work = [by_name[n] for n in entries if n in by_name]
    if not work:
        return mod
    reached: set[str] = set()
    while work:                         # a worklist over functions: calls may be cyclic
        gv = work.pop()
        if gv.name_hint in reached:
            continue
        reached.add(gv.name_hint)
        for node in post_order(mod.functions[gv]):
            if isinstance(node, GlobalVar) and node.name_hint not in reached \
                    and node.name_hint in by_name:
                work.append(by_name[node.name_hint])
    if len(reached) == len(mod.functions):
        return mod
    out = mod.copy()
    out.functions = {gv: fn for gv, fn in mod.functions.items() if gv.name_hint in reached}
    return out
