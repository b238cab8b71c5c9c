"""MergeComposite: wrap each match of a pattern table in a composite function (TVM's
src/relay/transforms/merge_composite.cc).

    MergeComposite([("example.conv2d_bias_relu", pattern), ("example.add", add, check)])

For each global function (external ones, `Compiler=...`, and fused ones are left alone),
the patterns are tried in the table's order, earlier ones first: every match that
`check` (default: always) accepts is replaced by a call of a local function carrying
`PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_"` and `Composite="<name>"`
(`dataflow_pattern.partition`), and types are inferred again before the next pattern,
so checks and type patterns see typed IR:

    %2 = fn (%FunctionVar_0_0: Tensor[...], %FunctionVar_0_1: Tensor[...],
             PartitionedFromPattern="nn.conv2d_nn.bias_add_nn.relu_",
             Composite="example.conv2d_bias_relu") { ... };
    %2(%x, %w)

From text the table is named: `MergeComposite{pattern_table=example}` takes the table
registered for that target (`registry.register_pattern_table`). A pattern that matches
nothing anywhere is reported as a note through the pass context (`notes.py`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ...dataflow_pattern import DFPattern
from ...dataflow_pattern.grouper import partition_pattern
from ...ir.diagnostics import Diagnostic, DiagnosticError
from ...ir.expr import Call, Expr, Function
from ...ir.module import IRModule
from ...ir.normal_forms import is_opaque
from ...ir.traverse import post_order
from ...typing import infer_types
from ..pass_infra import ModulePass, PassContext, register_pass
from .notes import note
from .registry import get_pattern_table


def _accept(expr: Expr) -> bool:
    return True


def normalise_table(entries: Sequence[Any]) -> list[tuple[str, DFPattern, Callable[[Expr], bool]]]:
    """`(name, pattern)` and `(name, pattern, check)` entries as triples; TypeError for
    anything else."""
    out = []
    for i, entry in enumerate(entries):
        if not isinstance(entry, (tuple, list)) or len(entry) not in (2, 3):
            raise TypeError(f"MergeComposite: pattern table entry {i} must be "
                            f"(name, pattern) or (name, pattern, check), got {entry!r}")
        name, pattern = entry[0], entry[1]
        check = entry[2] if len(entry) == 3 else _accept
        if not isinstance(name, str) or not isinstance(pattern, DFPattern) \
                or not callable(check):
            raise TypeError(f"MergeComposite: pattern table entry {i} must be "
                            f"(str, DFPattern[, callable]), got {entry!r}")
        out.append((name, pattern, check))
    return out


class UnknownPatternTable(DiagnosticError, ValueError):
    """MergeComposite's `pattern_table` names no registered table: a diagnostic (the
    user's option, reported by `relay opt` with exit 1), and a ValueError as it was."""


@register_pass
@dataclass(frozen=True)
class MergeComposite(ModulePass):
    """Wrap the matches of each pattern in a function with `Composite="<name>"`."""

    name: ClassVar[str] = "MergeComposite"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    patterns: Any = field(default=(), compare=False)   # [(name, pattern[, check]), ...]
    pattern_table: str = ""            # or: the table registered for this target

    def __post_init__(self) -> None:
        if isinstance(self.patterns, (str, DFPattern)):
            raise TypeError("MergeComposite: `patterns` is a list of (name, pattern[, check]); "
                            "a registered table is `pattern_table=NAME`")
        object.__setattr__(self, "patterns", tuple(self.patterns))

    def table(self, mod: IRModule | None = None
              ) -> list[tuple[str, DFPattern, Callable[[Expr], bool]]]:
        """The patterns, the registered table's after the given ones; an unknown table is
        a diagnostic at `mod`'s first function (the option names no place of its own)."""
        entries = list(self.patterns)
        if self.pattern_table:
            found = get_pattern_table(self.pattern_table)
            if found is None:
                from .registry import registered_targets
                known = ", ".join(registered_targets()) or "none"
                # a bad option is the user's error (relay opt: exit 1), as ChangeBatch's
                span = next(iter(mod.functions.values())).span if mod and mod.functions \
                    else None
                raise UnknownPatternTable([Diagnostic.error(
                    f"MergeComposite: no pattern table registered for "
                    f"`{self.pattern_table}` (tables: {known})", span, code="pass-option")],
                    mod.sources if mod is not None else {})
            entries += found
        return normalise_table(entries)

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        table = self.table(mod)
        out = mod.copy()
        used: set[str] = set()
        for gv, fn in mod.functions.items():
            if is_opaque(fn):
                continue
            for name, pattern, check in table:
                new = partition_pattern(pattern, fn, {"Composite": name}, check)
                if new is fn:
                    continue
                if _made_composite(new, name):
                    used.add(name)
                fn = new
                out.functions[gv] = fn
                try:       # the next pattern and its check see types
                    out = infer_types(out)
                except DiagnosticError:
                    pass
                fn = out.functions[gv]
        for name, pattern, _ in table:
            if name not in used:
                note(ctx, f"MergeComposite: pattern `{name}` ({pattern}) matched nothing")
        return out


def _made_composite(fn: Expr, name: str) -> bool:
    return any(isinstance(n, Call) and isinstance(n.op, Function) and n.op.attrs is not None
               and n.op.attrs.get("Composite") == name for n in post_order(fn))
