"""relaylang: a toolchain for the Relay text IR.

The public API (DESIGN.md) is imported lazily, so `import relaylang` and
`relay --help` stay fast and never load llvmlite or numpy until needed.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_LAZY = {
    "parse": ("relaylang.syntax.parser", "parse"),
    "parse_expr": ("relaylang.syntax.parser", "parse_expr"),
    "astext": ("relaylang.syntax.printer", "astext"),
    "structural_equal": ("relaylang.ir.equal", "structural_equal"),
    "structural_hash": ("relaylang.ir.equal", "structural_hash"),
    "DiagnosticError": ("relaylang.ir.diagnostics", "DiagnosticError"),
    "Diagnostic": ("relaylang.ir.diagnostics", "Diagnostic"),
    "IRModule": ("relaylang.ir.module", "IRModule"),
    "evaluate": ("relaylang.backend.build", "evaluate"),
    "create_executor": ("relaylang.backend.build", "create_executor"),
    "build": ("relaylang.backend.build", "build"),
    "profile": ("relaylang.backend.profiler", "profile"),
    "tune": ("relaylang.backend.tuning.tune", "tune"),
    "register_func": ("relaylang.op.extern.functions", "register_func"),
    "get_global_func": ("relaylang.op.extern.functions", "get_global_func"),
    "register_extern_op": ("relaylang.op.extern", "register_extern_op"),
    "register_codegen": ("relaylang.backend.byoc.registry", "register_codegen"),
    "prelude": ("relaylang.std", "prelude"),
}

# The IR builder (DESIGN.md, "building IR from Python"). Op builders (`nn.conv2d`,
# `add`, ...) are not listed: `__getattr__` finds them in the op registry.
_BUILDER_NAMES = ("var", "const", "Function", "Let", "If", "Tuple", "TupleGetItem",
                  "GlobalVar", "Call", "RefCreate", "RefRead", "RefWrite", "TensorType",
                  "TupleType")
_LAZY.update({name: ("relaylang.ir.builder", name) for name in _BUILDER_NAMES})

# Modules of the public API that live deeper in the package: `rl.graph_executor.GraphModule`,
# `rl.runtime.load_module` (TVM's names).
_MODULES = {
    "graph_executor": "relaylang.backend.graph_executor",
    "runtime": "relaylang.backend.runtime",
}

if TYPE_CHECKING:
    from .backend import graph_executor, runtime
    from .backend.build import build, create_executor, evaluate
    from .backend.byoc.registry import register_codegen
    from .backend.profiler import profile
    from .backend.tuning.tune import tune
    from .op.extern import register_extern_op
    from .op.extern.functions import get_global_func, register_func
    from .ir.builder import (
        Call,
        Function,
        GlobalVar,
        If,
        Let,
        RefCreate,
        RefRead,
        RefWrite,
        TensorType,
        Tuple,
        TupleGetItem,
        TupleType,
        const,
        var,
    )
    from .ir.diagnostics import Diagnostic, DiagnosticError
    from .ir.equal import structural_equal, structural_hash
    from .ir.module import IRModule
    from .std import prelude
    from .syntax.parser import parse, parse_expr
    from .syntax.printer import astext


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in _MODULES:
        import importlib
        module = importlib.import_module(_MODULES[name])
        globals()[name] = module
        return module
    if name in ("ir", "op", "syntax", "typing", "transform", "backend", "analysis",
                "frontend"):
        import importlib
        if name == "op":
            importlib.import_module("relaylang.op.make")    # so that `rl.op.make` resolves
        return importlib.import_module(f"relaylang.{name}")
    value = _op_builder(name)
    if value is not None:
        return value
    raise AttributeError(f"module 'relaylang' has no attribute {name!r}")


_SUBMODULES: frozenset[str] | None = None


def _submodules() -> frozenset[str]:
    global _SUBMODULES
    if _SUBMODULES is None:
        import pkgutil
        _SUBMODULES = frozenset(m.name for m in pkgutil.iter_modules(__path__))
    return _SUBMODULES


def _op_builder(name: str) -> Any:
    """`rl.add`, `rl.nn` (and `rl.nn.conv2d`): an op builder or op namespace of
    `relaylang.op.make`, or None. Existing names win: a submodule of relaylang
    (imported or not) is never shadowed by an op; the op stays reachable as
    `rl.op.make.<name>`."""
    if name.startswith("_") or name in _submodules():
        return None
    from .op.make import namespace
    try:
        return getattr(namespace(""), name)     # the registry's root ops and namespaces
    except AttributeError:
        return None


def __dir__() -> list[str]:
    from .op.make import namespace
    public = {m for m in _submodules() if not m.startswith("_")}
    return sorted(set(globals()) | set(_LAZY) | set(_MODULES) | public |
                  set(dir(namespace(""))))


__all__ = sorted(_LAZY) + sorted(_MODULES) + ["__version__"]
