"""`#[import "prelude"]`: a library of relaylang/std read into the text that names it.

TVM's text format has no imports (its standard library was loaded from Python,
`IRModule.import_from_std`); the directive is our extension. It may follow the
version header, before any definition. The library's globals, types and
constructors are then in scope in the text, as if the text were parsed inside
a module holding them (TVM's `init_module`), and the parsed module holds the
library's definitions ahead of the text's own (the same objects every time:
IR nodes are immutable, so importers share them).

The libraries live in `relaylang.std`, a layer above this one. As the IR
reaches its printer (ir/text.py), the syntax layer reaches them through a loader
that `relaylang.std` registers when it loads; the first import loads that module
by name if nothing has yet. Libraries are loaded before the parse starts (the
parser is not re-entrant): a scan of the text finds the names, and the directive's
callback, which knows where the directive is, reports what went wrong.
"""
from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any, Protocol

from ..ir.diagnostics import DiagnosticError, Note
from .builder_state import tok_span

if TYPE_CHECKING:
    from ..ir.module import IRModule
    from .builder_state import ParseState

# The module that calls `set_library_loader` when imported.
LIBRARY_MODULE = "relaylang.std"

_DIRECTIVE = re.compile(r'#\[[ \t\r\n]*import[ \t\r\n]+"([^"\]]*)"[ \t\r\n]*\]')


class LibraryLoader(Protocol):
    def names(self) -> tuple[str, ...]:
        """The libraries there are."""
        ...

    def load(self, name: str) -> IRModule | None:
        """The parsed library (shared: do not change it), None if there is no such
        library; DiagnosticError if its text is broken."""
        ...


_loader: list[LibraryLoader] = []


def set_library_loader(loader: LibraryLoader) -> None:
    """Install what resolves `#[import "NAME"]` (relaylang.std does, when it loads)."""
    _loader[:] = [loader]


def library_loader() -> LibraryLoader:
    if not _loader:
        importlib.import_module(LIBRARY_MODULE)
    return _loader[0]


def load_imports(body: str, state: ParseState) -> None:
    """Load every library `body` names into `state` (before parsing it). A directive
    inside a comment is loaded for nothing; its callback never runs."""
    if "import" not in body:
        return
    names = {m.group(1) for m in _DIRECTIVE.finditer(body)}
    if not names:
        return
    loader = library_loader()
    state.library_names = loader.names()
    for name in sorted(names):
        try:
            module = loader.load(name)
        except DiagnosticError as e:
            first = e.diagnostics[0] if e.diagnostics else None
            where = f" ({first.span.source_name}:{first.span.line}:{first.span.column}: " \
                    f"{first.message})" if first is not None and first.span else ""
            state.library_errors[name] = f"the library does not parse{where}"
            continue
        if module is not None:
            state.libraries[name] = module


def import_library(state: ParseState, tok: Any) -> None:
    """The callback of one `#[import "NAME"]`: bring the library's names into scope."""
    span = tok_span(state.source_name, tok)
    m = _DIRECTIVE.fullmatch(tok.value.strip())
    if m is None:
        state.diag.error('malformed import directive: write `#[import "prelude"]`', span,
                         code="syntax")
        return
    name = m.group(1)
    if name in state.library_errors:
        state.diag.error(f'cannot import "{name}": {state.library_errors[name]}', span,
                         code="undefined-name")
        return
    module = state.libraries.get(name)
    if module is None:
        known = ", ".join(f'"{n}"' for n in state.library_names) or "none"
        state.diag.error(f'unknown library "{name}" in `#[import]` (the standard libraries '
                         f"are {known})", span, code="undefined-name")
        return
    if any(module is seen for seen in state.imported):
        return
    state.imported.append(module)
    _bring_into_scope(state, name, module, span)


def _bring_into_scope(state: ParseState, name: str, module: IRModule, span: Any) -> None:
    for gv in module.functions:
        known = state.globals.get(gv.name_hint)
        if known is not None and known is not gv:
            state.diag.error(f'`#[import "{name}"]` defines `@{gv.name_hint}`, which another '
                             "import already defines", span, code="duplicate-definition")
            continue
        state.globals[gv.name_hint] = gv
        state.context_globals.add(gv)
        state.imported_globals.setdefault(gv, name)
    for gtv, data in module.type_definitions.items():
        known_type = state.types.get(gtv.name_hint)
        if known_type is not None and known_type is not gtv:
            state.diag.error(f'`#[import "{name}"]` defines type `{gtv.name_hint}`, which '
                             "another import already defines", span,
                             code="duplicate-definition")
            continue
        state.types[gtv.name_hint] = gtv
        state.context_types.add(gtv)
        state.imported_types.setdefault(gtv, name)
        for ctor in data.constructors:
            previous = state.constructors.get(ctor.name)
            if previous is not None and previous is not ctor:
                state.diag.error(f"a constructor named `{ctor.name}` was already defined", span,
                                 Note("previous definition", previous.span),
                                 code="duplicate-definition")
                continue
            state.constructors[ctor.name] = ctor


def imported_by(state: ParseState, node: Any) -> str | None:
    """The library that defined an imported GlobalVar or GlobalTypeVar, or None."""
    return state.imported_globals.get(node) or state.imported_types.get(node)


__all__ = ["LIBRARY_MODULE", "LibraryLoader", "import_library", "library_loader",
           "load_imports", "set_library_loader"]
