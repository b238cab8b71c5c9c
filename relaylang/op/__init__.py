"""The op registry (`registry.py`) and the op families that fill it: one subpackage per
family (`tensor/`, `reduce/`, `transform/`, `nn/`, `pool/`, `image/`, `annotation/`),
each declaring its ops once and registering their implementations per target beside
them. Importing this package imports no family: the registry loads them on first lookup.
`make` (one builder function per op: `relaylang.op.make.nn.conv2d`) loads on first use.
"""
from typing import Any

from .registry import (OpDef, OpPattern, all_ops, attrs_schemas, call, declare_op, families, get,
                       get_op_def, implement, implementation, register_op)

__all__ = ["OpDef", "OpPattern", "all_ops", "attrs_schemas", "call", "declare_op", "families",
           "get", "get_op_def", "implement", "implementation", "register_op"]


def __getattr__(name: str) -> Any:
    if name == "make":                 # lazily: building the builders reads every family
        import importlib
        return importlib.import_module(f"{__name__}.make")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
