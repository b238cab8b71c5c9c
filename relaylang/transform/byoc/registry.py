"""What each external target supports: the one place BYOC's passes ask.

TVM spreads this over op attributes (`tvm.ir.register_op_attr("nn.dense", "target.dnnl")`)
and `relay.op.contrib.register_pattern_table`. Here both live in this module:

    register_target_op("blas", "nn.dense")                    # always supported
    @register_target_op("blas", "nn.conv2d")                  # supported when ...
    def _conv2d(call): return call.attrs.groups == 1
    register_pattern_table("blas", lambda: [("blas.dense_bias", pattern), ...])

AnnotateTarget asks `op_supported(target, call)`; composites are supported by the target
their name starts with (`blas.dense_bias` -> `blas`). MergeComposite takes a table by
name (`MergeComposite{pattern_table=blas}`). A target's registrations may sit in a module
of `targets/` (imported when the registry is first asked, as the op registry loads its
families) or anywhere that is imported before the passes run (a backend's package).
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from typing import Any

from ...ir.expr import Expr

Predicate = Callable[[Expr], bool]
PatternEntry = tuple  # (name, pattern) or (name, pattern, check)

_OP_SUPPORT: dict[str, dict[str, Predicate]] = {}
_PATTERN_TABLES: dict[str, Callable[[], Sequence[PatternEntry]] | Sequence[PatternEntry]] = {}


def _always(expr: Expr) -> bool:
    return True


def register_target_op(target: str, op_name: str, predicate: Predicate | bool | None = None
                       ) -> Callable[[Predicate], Predicate]:
    """Declare that `target` can run calls of `op_name` (when `predicate(call)` holds;
    always without one). Returns a decorator, so the predicate may be given by decorating
    it: `@register_target_op("blas", "nn.conv2d")`. Registering again replaces."""
    from ...op import get_op_def
    if not isinstance(target, str) or not target or target == "default":
        raise ValueError(f"register_target_op: bad target name {target!r}")
    if get_op_def(op_name) is None:
        raise ValueError(f"register_target_op: unknown operator `{op_name}`")
    if predicate is None or predicate is True:
        fn: Predicate = _always
    elif predicate is False:
        fn = lambda expr: False
    else:
        fn = predicate
    _OP_SUPPORT.setdefault(target, {})[op_name] = fn

    def decorate(f: Predicate) -> Predicate:
        _OP_SUPPORT[target][op_name] = f
        return f
    return decorate


def unregister_target(target: str) -> None:
    """Forget everything registered for `target` (tests register temporary targets)."""
    _OP_SUPPORT.pop(target, None)
    _PATTERN_TABLES.pop(target, None)


def op_supported(target: str, call: Any) -> bool:
    """Whether `target` takes this operator call (its predicate says yes)."""
    _load_targets()
    fn = _OP_SUPPORT.get(target, {}).get(call.op.name)
    return fn is not None and bool(fn(call))


def supported_ops(target: str) -> list[str]:
    _load_targets()
    return sorted(_OP_SUPPORT.get(target, {}))


def register_pattern_table(target: str, table: Callable[[], Sequence[PatternEntry]]
                           | Sequence[PatternEntry] | None = None) -> Any:
    """Register `target`'s composite patterns (TVM's `register_pattern_table`): a list of
    `(name, pattern[, check])` or a function returning one (called on each use). Without
    `table`, a decorator for that function."""
    if table is None:
        def decorate(f: Callable[[], Sequence[PatternEntry]]) -> Callable[[], Sequence[PatternEntry]]:
            _PATTERN_TABLES[target] = f
            return f
        return decorate
    _PATTERN_TABLES[target] = table
    return table


def get_pattern_table(target: str) -> list[PatternEntry] | None:
    """`target`'s pattern table, or None when it has none."""
    _load_targets()
    table = _PATTERN_TABLES.get(target)
    if table is None:
        return None
    return list(table() if callable(table) else table)


def registered_targets() -> list[str]:
    _load_targets()
    return sorted(set(_OP_SUPPORT) | set(_PATTERN_TABLES))


def is_known_target(target: str) -> bool:
    _load_targets()
    return target in _OP_SUPPORT or target in _PATTERN_TABLES


def _load_targets() -> None:
    """Import the modules of `targets/` once: each registers what its target supports."""
    if getattr(_load_targets, "done", False):
        return
    _load_targets.done = True          # type: ignore[attr-defined]
    from . import targets
    for info in pkgutil.iter_modules(targets.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{targets.__name__}.{info.name}")
