"""`annotation.compiler_begin` / `annotation.compiler_end` calls: making them and reading
their target.

The ops are declared in relaylang/op/annotation/ as TVM declares them: with no
attribute schema of their own, so their `CompilerAttrs` is an attributes object of the
metadata section and prints as TVM prints it, `annotation.compiler_begin(%x,
meta[relay.attrs.CompilerAttrs][0])`. A `CompilerAttrs` value or a dictionary with a
`compiler` entry is read as well.
"""
from __future__ import annotations

import json
from functools import cache, lru_cache
from typing import Any

from ...ir.attrs import Attrs, DictAttrs
from ...ir.expr import Call, Expr, Op
from ...ir.node import MetaObject

BEGIN = "annotation.compiler_begin"
END = "annotation.compiler_end"
DEFAULT = "default"           # TVM's target of what no external compiler takes


@cache
def compiler_attrs(target: str) -> MetaObject:
    """The `relay.attrs.CompilerAttrs` object naming `target` (one per target)."""
    payload = {"attrs": {"compiler": {"repr_str": target, "type_key": "runtime.String"}},
               "type_key": "relay.attrs.CompilerAttrs"}
    return MetaObject("relay.attrs.CompilerAttrs",
                      json.dumps(payload, sort_keys=True, separators=(",", ":")))


def _op(name: str) -> Op:
    from ...op import get
    return get(name)


def compiler_begin(expr: Expr, target: str) -> Call:
    return Call(_op(BEGIN), (expr,), compiler_attrs(target))


def compiler_end(expr: Expr, target: str) -> Call:
    return Call(_op(END), (expr,), compiler_attrs(target))


def is_begin(expr: Any) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == BEGIN


def is_end(expr: Any) -> bool:
    return isinstance(expr, Call) and isinstance(expr.op, Op) and expr.op.name == END


def is_annotation(expr: Any) -> bool:
    return is_begin(expr) or is_end(expr)


def compiler_of(call: Call) -> str | None:
    """The target an annotation names, or None when its attributes name none."""
    attrs = call.attrs
    if isinstance(attrs, MetaObject):
        return _meta_compiler(attrs)
    if isinstance(attrs, DictAttrs):
        value = attrs.get("compiler")
        return value if isinstance(value, str) else None
    if isinstance(attrs, Attrs):
        value = getattr(attrs, "compiler", None)
        return value if isinstance(value, str) else None
    return None


@lru_cache(maxsize=256)
def _meta_compiler(obj: MetaObject) -> str | None:
    from ...dataflow_pattern.matcher import meta_attrs
    value = meta_attrs(obj).get("compiler")
    return value if isinstance(value, str) else None
