"""The standard library: Relay programs shipped as text beside this file.

    prelude.relay   List, Option, Tree and their functions (TVM's prelude.rly names)
    nat.relay       unary naturals: nat, zero, succ, @nat_add, @nat_nth, ... (TVM's nat.rly)

Three ways in:

    #[import "prelude"]                       in Relay text, after the version header
    mod = rl.prelude()                        the prelude as a type-checked IRModule
    mod = relaylang.std.import_std(mod, "prelude")   a module plus the prelude

Each library is parsed once per process and its IR shared: IR nodes are immutable,
so every importer holds the same `List`, `Cons` and `@map` objects. `prelude()` and
`library()` return a new `IRModule` each call (its tables are the caller's to
change); the definitions in it are the shared ones. TVM called the files
`prelude.rly` and `nat.rly` and loaded them with `IRModule.import_from_std`.
"""
from __future__ import annotations

import threading
from pathlib import Path

from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.equal import structural_equal
from ..ir.expr import GlobalVar
from ..ir.module import IRModule
from ..syntax.imports import set_library_loader
from ..syntax.parser import parse
from ..typing import infer_types

LIBRARIES: tuple[str, ...] = ("prelude", "nat")

_lock = threading.RLock()
_parsed: dict[str, IRModule] = {}
_typed: set[str] = set()
_loading: list[str] = []


def library_path(name: str) -> Path:
    """The text of library `name` (`prelude` -> relaylang/std/prelude.relay)."""
    if name not in LIBRARIES:
        raise KeyError(f"no standard library {name!r} (there are {', '.join(LIBRARIES)})")
    return Path(__file__).resolve().parent / f"{name}.relay"


class _Loader:
    """What the parser asks for `#[import "NAME"]` (syntax/imports.py)."""

    def names(self) -> tuple[str, ...]:
        return LIBRARIES

    def load(self, name: str) -> IRModule | None:
        return _load(name) if name in LIBRARIES else None


def _load(name: str) -> IRModule:
    """The parsed library, shared (never changed after it is made)."""
    with _lock:
        module = _parsed.get(name)
        if module is not None:
            return module
        if name in _loading:
            cycle = " -> ".join([*_loading, name])
            raise DiagnosticError([Diagnostic.error(f"libraries import each other: {cycle}",
                                                    None, code="syntax")])
        path = library_path(name)
        _loading.append(name)
        try:
            module = parse(path.read_text(encoding="utf-8"), source_name=str(path))
        finally:
            _loading.pop()
        _parsed[name] = module
        return module


def library(name: str) -> IRModule:
    """Library `name` as a type-checked module of its own (a new module each call)."""
    with _lock:
        module = _load(name)
        if name not in _typed:
            infer_types(module)         # sets the checked types on the shared nodes, once
            _typed.add(name)
        return module.copy()


def prelude() -> IRModule:
    """The prelude as a type-checked module (`rl.prelude()`; TVM's `Prelude().mod`)."""
    return library("prelude")


def import_std(mod: IRModule, name: str = "prelude") -> IRModule:
    """`mod` with the definitions of library `name` added ahead of its own (a new
    module; `mod` is not changed). Definitions `mod` already has are not added twice:
    a library's own objects (from an earlier import or `#[import]`) are recognised,
    and so is a whole library `mod` holds as equal text (a printed and re-parsed
    module). A definition of the same name that differs is an error (ValueError):
    the library's functions would otherwise call a stranger's `@map`."""
    lib = library(name)
    names = {gv.name_hint for gv in mod.functions} | {g.name_hint for g in mod.type_definitions}
    clashes = [("@" if isinstance(node, GlobalVar) else "") + node.name_hint
               for node in (*lib.functions, *lib.type_definitions)
               if node.name_hint in names and node not in mod.functions
               and node not in mod.type_definitions]
    if not clashes:
        return IRModule({**lib.functions, **mod.functions},
                        {**lib.type_definitions, **mod.type_definitions},
                        mod.source_name, {**lib.sources, **mod.sources})
    if _holds(mod, lib):
        return mod.copy()
    raise ValueError(f"cannot import the standard library {name!r}: the module already "
                     f"defines {', '.join(clashes[:5])} differently")


def _holds(mod: IRModule, lib: IRModule) -> bool:
    """Whether every definition of `lib` is in `mod`, as the same object or equal."""
    functions = {gv.name_hint: fn for gv, fn in mod.functions.items()}
    types = {gtv.name_hint: data for gtv, data in mod.type_definitions.items()}
    for gv, fn in lib.functions.items():
        mine = functions.get(gv.name_hint)
        if mine is None or (mine is not fn and
                            not structural_equal(mine, fn, map_free_vars=True)):
            return False
    for gtv, data in lib.type_definitions.items():
        other = types.get(gtv.name_hint)
        if other is None or [(c.name, len(c.inputs)) for c in other.constructors] != \
                [(c.name, len(c.inputs)) for c in data.constructors]:
            return False
    return True


set_library_loader(_Loader())

__all__ = ["LIBRARIES", "import_std", "library", "library_path", "prelude"]
