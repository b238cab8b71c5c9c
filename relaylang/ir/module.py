"""`IRModule`: the global functions and ADT definitions of a program.

A module maps `GlobalVar`s to `Function`s and `GlobalTypeVar`s to
`TypeData`, in definition order. Passes build new modules rather than edit a
module another stage still holds (`copy`, `with_function`).
"""
from __future__ import annotations

from typing import Iterator

from .expr import Constructor, Function, GlobalVar
from .types import GlobalTypeVar, TypeData


class IRModule:
    def __init__(self, functions: dict[GlobalVar, Function] | None = None,
                 type_definitions: dict[GlobalTypeVar, TypeData] | None = None,
                 source_name: str = "from_string", sources: dict[str, str] | None = None):
        self.functions: dict[GlobalVar, Function] = dict(functions or {})
        self.type_definitions: dict[GlobalTypeVar, TypeData] = dict(type_definitions or {})
        self.source_name = source_name
        # Source texts by name, so that later stages can render diagnostics with source lines.
        self.sources: dict[str, str] = dict(sources or {})

    # ------------------------------------------------------------ lookup
    def get_global_var(self, name: str) -> GlobalVar:
        for gv in self.functions:
            if gv.name_hint == name:
                return gv
        raise KeyError(f"no global function @{name} in the module")

    def get_global_type_var(self, name: str) -> GlobalTypeVar:
        for gtv in self.type_definitions:
            if gtv.name_hint == name:
                return gtv
        raise KeyError(f"no type {name} in the module")

    def get_constructor(self, name: str) -> Constructor:
        for data in self.type_definitions.values():
            for ctor in data.constructors:
                if ctor.name == name:
                    return ctor
        raise KeyError(f"no constructor {name} in the module")

    def __getitem__(self, key: str | GlobalVar | GlobalTypeVar) -> Function | TypeData:
        if isinstance(key, GlobalVar):
            return self.functions[key]
        if isinstance(key, GlobalTypeVar):
            return self.type_definitions[key]
        name = key[1:] if key.startswith("@") else key
        try:
            return self.functions[self.get_global_var(name)]
        except KeyError:
            return self.type_definitions[self.get_global_type_var(key)]

    def __contains__(self, key: str | GlobalVar) -> bool:
        try:
            self[key]
        except KeyError:
            return False
        return True

    def __iter__(self) -> Iterator[tuple[GlobalVar, Function]]:
        return iter(self.functions.items())

    def __len__(self) -> int:
        return len(self.functions)

    # ------------------------------------------------------------ building
    def copy(self) -> IRModule:
        return IRModule(self.functions, self.type_definitions, self.source_name, self.sources)

    def with_function(self, gv: GlobalVar, fn: Function) -> IRModule:
        mod = self.copy()
        mod.functions[gv] = fn
        return mod

    def add_type_definition(self, data: TypeData) -> None:
        self.type_definitions[data.header] = data

    # ------------------------------------------------------------ printing
    def astext(self, show_meta_data: bool = True) -> str:
        from .text import astext
        return astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        names = ", ".join("@" + gv.name_hint for gv in self.functions)
        return f"<IRModule {names}>"
