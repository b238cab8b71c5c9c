"""Imports every op family module, so that each registers its ops.

`registry._load_families` imports this module once, on first lookup. A new
family module is added to `FAMILIES`; nothing else lists op names.
`attrs_schemas()` maps each TVM attrs type key (e.g. "relay.attrs.Conv2DAttrs")
to its schema, including schemas that no op registers as its own
(CompilerAttrs, CastHintAttrs): the parser needs them for
`attrs_type_key="..."` and `meta[relay.attrs.*][i]` attribute objects.
"""
from __future__ import annotations

from types import ModuleType

from ..ir.attrs import Attrs
from . import annotation, elemwise, image, nn, pool, reduce, transform

FAMILIES: tuple[ModuleType, ...] = (elemwise, reduce, transform, nn, pool, image, annotation)

_SCHEMAS: dict[str, type[Attrs]] = {}


def attrs_schemas() -> dict[str, type[Attrs]]:
    """type_key -> schema for every attribute schema the families declare."""
    if not _SCHEMAS:
        for module in FAMILIES:
            for value in vars(module).values():
                if (isinstance(value, type) and issubclass(value, Attrs)
                        and value.__module__ == module.__name__):
                    _SCHEMAS[value.type_key] = value
    return dict(_SCHEMAS)
