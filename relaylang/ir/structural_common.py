"""What structural equality (equal.py) and structural hashing (hash.py) share.

Which node kinds are graph nodes (their sharing is compared) and which are plain
values, the normal form of empty attributes, per-kind handler lookup, and the
definitions of a module by name. Mirrors the parts of apache/tvm
src/node/structural_equal.cc and structural_hash.cc that both sides agree on
(`MarkGraphNode`, the `SEqualReduce` / `SHashReduce` pairs).
"""
from __future__ import annotations

from typing import Any

from .attrs import Attrs, DictAttrs
from .expr import Call, Function, If, Let, Match, RefCreate, RefRead, RefWrite, Tuple, Var
from .module import IRModule
from .node import AnyDim, MetaObject
from .types import TypeData, TypeVar

# Nodes whose sharing is part of their meaning (TVM's `MarkGraphNode`); the
# empty tuple is not one (it is a constant in TVM).
GRAPH_KINDS = frozenset({Var, TypeVar, Call, Let, If, Function, Tuple, RefCreate, RefRead,
                         RefWrite, Match})
PLAIN_KINDS = frozenset({int, bool, str, type(None), AnyDim, MetaObject})    # compared with ==
SCALAR_KINDS = PLAIN_KINDS | {float}


def norm_attrs(attrs: Attrs | None) -> Attrs | None:
    # A function or call with no attributes means the same as one with an empty
    # dictionary of them: both become None.
    if isinstance(attrs, DictAttrs) and not attrs.entries and attrs.attrs_type_key is None:
        return None
    return attrs


def lookup_handler(table: dict[type, Any], kind: type) -> Any:
    """The handler for `kind`, or for its nearest base class (cached)."""
    handler = table.get(kind)
    if handler is None:
        handler = next((table[b] for b in kind.__mro__ if b in table), table[object])
        table[kind] = handler
    return handler


def functions_by_name(mod: IRModule) -> dict[str, Function]:
    return {gv.name_hint: fn for gv, fn in mod.functions.items()}


def types_by_name(mod: IRModule) -> dict[str, TypeData]:
    return {gtv.name_hint: data for gtv, data in mod.type_definitions.items()}

