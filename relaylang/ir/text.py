"""IR objects as Relay text, for `mod.astext()` and for messages of every layer.

The printer lives in the syntax layer, above the IR, because it shares the
grammar's vocabulary; the IR and the op relations still need text (a module's
`astext()`, a type in an error message). As in TVM, where `IRModule.astext`
calls the printer registered under a global name, the printer registers itself
here when its module loads (`set_printer`), and the first request for text
loads that module by name if nothing has yet. So the IR never imports the layer
above it, and every layer below `syntax` asks this module for text.
"""
from __future__ import annotations

import importlib
from typing import Protocol

# What is printed: an IRModule, an Expr or a Type. Annotated as `object` so that this
# module imports none of theirs, not even for type checking: `Expr.__str__` and
# `IRModule.astext` import this one, and a circle through it would join them all.
Printable = object

# The module that calls `set_printer` when imported.
PRINTER_MODULE = "relaylang.syntax.printer"


class Printer(Protocol):
    def __call__(self, node: Printable, show_meta_data: bool = True) -> str: ...


_printer: list[Printer] = []


def set_printer(printer: Printer) -> None:
    """Install the function that prints IR as Relay text (the syntax layer's printer)."""
    _printer[:] = [printer]


def astext(node: Printable, show_meta_data: bool = True) -> str:
    """The Relay text of a module, an expression or a type."""
    if not _printer:
        importlib.import_module(PRINTER_MODULE)
    return _printer[0](node, show_meta_data=show_meta_data)


def type_text(ty: Printable | None, none: str = "") -> str:
    """A type as Relay writes it (`Tensor[(1, 3), float32]`); `none` stands for no type."""
    return none if ty is None else astext(ty)
