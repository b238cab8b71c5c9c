"""The relation of every annotation op: TVM's IdentityRel."""
from __future__ import annotations

from typing import Any

from ...ir.types import Type
from ..relation import is_known


def identity_rel(args: list[Type], attrs: Any) -> Type | None:
    """IdentityRel: the result has the argument's type."""
    return args[0] if is_known(args[0]) else None
