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
    "evaluate": ("relaylang.backend.interpreter.executor", "evaluate"),
    "create_executor": ("relaylang.backend.interpreter.executor", "create_executor"),
}

if TYPE_CHECKING:
    from .ir.equal import structural_equal, structural_hash
    from .backend.interpreter.executor import create_executor, evaluate
    from .ir.module import IRModule
    from .ir.diagnostics import Diagnostic, DiagnosticError
    from .syntax.parser import parse, parse_expr
    from .syntax.printer import astext


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
        globals()[name] = value
        return value
    if name in ("ir", "op", "syntax", "typing", "transform", "backend", "analysis"):
        import importlib
        return importlib.import_module(f"relaylang.{name}")
    raise AttributeError(f"module 'relaylang' has no attribute {name!r}")


__all__ = sorted(_LAZY) + ["__version__"]
