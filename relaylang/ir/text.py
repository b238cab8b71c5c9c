"""IR objects as Relay text, for `mod.astext()` and for messages of every layer.

The printer lives in the syntax layer, above the IR, because it shares the
grammar's vocabulary. The IR and the op relations still need text (a module's
`astext()`, a type in an error message), so this module is the one place that
reaches up for the printer, lazily, when text is first asked for. Every other
module below `syntax` calls these functions instead of importing the printer
(tests/test_layers.py allows exactly this import).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .expr import Expr
    from .module import IRModule
    from .types import Type


def astext(node: IRModule | Expr | Type, show_meta_data: bool = True) -> str:
    """The Relay text of a module, an expression or a type (`syntax.printer.astext`)."""
    from ..syntax.printer import astext as print_text
    return print_text(node, show_meta_data=show_meta_data)


def type_text(ty: Type | None, none: str = "") -> str:
    """A type as Relay writes it (`Tensor[(1, 3), float32]`); `none` stands for no type."""
    return none if ty is None else astext(ty)
