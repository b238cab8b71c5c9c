"""`IRModule`: the global functions and ADT definitions of a program.

A module maps `GlobalVar`s to `Function`s and `GlobalTypeVar`s to
`TypeData`, in definition order. Passes build new modules rather than edit a
module another stage still holds (`copy`, `with_function`).
"""
from __future__ import annotations

from typing import Iterator

from .expr import Constructor, Expr, Function, GlobalVar
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

    @staticmethod
    def from_expr(expr: Expr, functions: dict[GlobalVar | str, Function] | None = None,
                  type_defs: dict[GlobalTypeVar, TypeData] | list[TypeData] | None = None
                  ) -> IRModule:
        """A module whose entry is `expr`, as TVM's `IRModule.from_expr`.

        A `Function` becomes `@main` (or the name in its `global_symbol` attribute);
        any other expression is wrapped in a function over its free variables (in
        order of first use) and its free type variables. `functions` adds further
        globals: keys are `GlobalVar`s, or names, for which a same-named `GlobalVar`
        already used in `expr` or in those functions is reused, so calls resolve.
        If a global is already named `main`, the entry becomes `main_1` (TVM's rule).
        """
        from .analysis import free_type_vars, free_vars
        from .expr import Expr
        from .traverse import pre_order

        if not isinstance(expr, Expr):
            raise TypeError(f"IRModule.from_expr: expected a Relay expression, "
                            f"got {type(expr).__name__}")
        funcs = dict(functions or {})
        named: dict[str, GlobalVar] = {}
        if any(isinstance(key, str) for key in funcs):
            for root in (expr, *funcs.values()):
                for node in pre_order(root):
                    if isinstance(node, GlobalVar):
                        named.setdefault(node.name_hint, node)
        globals_: dict[GlobalVar, Function] = {}
        for key, fn in funcs.items():
            if isinstance(key, str):
                name = key.removeprefix("@")
                key = named.get(name) or GlobalVar(name)
            if not isinstance(key, GlobalVar) or not isinstance(fn, Function):
                raise TypeError("IRModule.from_expr: functions maps GlobalVars (or names) to "
                                f"Functions, got {type(key).__name__} -> {type(fn).__name__}")
            globals_[key] = fn
        defs = type_defs.values() if isinstance(type_defs, dict) else (type_defs or ())
        mod = IRModule(globals_, {d.header: d for d in defs})

        name = None
        if isinstance(expr, Function):
            symbol = expr.attrs.get("global_symbol") if expr.attrs is not None else None
            name = symbol if isinstance(symbol, str) and symbol else None
            func = expr
        else:
            func = Function(tuple(free_vars(expr)), expr, None,
                            tuple(free_type_vars(expr)))
        taken = {gv.name_hint for gv in mod.functions}
        if name in taken:
            raise ValueError(f"IRModule.from_expr: the function's global_symbol @{name} "
                             "is already defined in functions")
        if name is None:
            name, suffix = "main", 0
            while name in taken:
                suffix += 1
                name = f"main_{suffix}"
        mod.functions[GlobalVar(name)] = func
        return mod

    # ------------------------------------------------------------ printing
    def astext(self, show_meta_data: bool = True) -> str:
        from .text import astext
        return astext(self, show_meta_data=show_meta_data)

    def __str__(self) -> str:
        return self.astext()

    def __repr__(self) -> str:
        names = ", ".join("@" + gv.name_hint for gv in self.functions)
        return f"<IRModule {names}>"
