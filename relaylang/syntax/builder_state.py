"""The state of one parse: names in scope, module-wide tables, the meta table.

`Builder` (builder.py) owns one `ParseState` per parse. Module-level tables
(globals, types, constructors) survive a syntax error so that parsing can
resume at the next definition; lexical scopes are reset then.
"""
from __future__ import annotations

import re
from typing import Any

from .. import op as op_registry
from ..ir.attrs import make_attrs
from ..ir.diagnostics import DiagnosticContext, Note
from ..ir.expr import Constant, Constructor, Expr, Function, GlobalVar, Var
from ..ir.module import IRModule
from ..ir.node import MetaObject
from ..ir.span import Span
from ..ir.types import BUILTIN_TYPE_NAMES, GlobalTypeVar, TypeData, TypeVar
from .scope import Env

_META = re.compile(r"meta\[([^\]]*)\]\[([0-9]+)\]")
_VERSION = re.compile(r"#\[\s*version[^=\]]*=\s*(.*?)\s*\]\Z", re.S)
SUPPORTED_VERSION = '"0.0.5"'


def _memo_key(value: Any) -> Any:
    # True == 1 == 1.0 in Python; the attribute checker must still see which was written.
    if type(value) is tuple:
        return tuple(_memo_key(v) for v in value)
    return value if type(value) in (int, str) else (type(value), value)


def tok_span(source_name: str, tok: Any) -> Span:
    return Span(source_name, tok.line, tok.column, tok.end_line, tok.end_column)


class ParseState:
    def __init__(self, source_name: str, text: str,
                 meta_table: dict[str, list[Any]] | None = None,
                 meta_hint: str = "", expression: bool = False):
        self.source_name = source_name
        self.diag = DiagnosticContext(source_name, text)
        self.expression = expression
        self.locals: Env[Var] = Env()
        self.type_params: Env[TypeVar] = Env()
        self.free_vars: dict[str, Var] = {}
        self.graph: dict[int, Expr] = {}
        self.globals: dict[str, GlobalVar] = {}
        self.global_refs: dict[str, Span] = {}
        self.functions: dict[GlobalVar, Function] = {}
        self.function_spans: dict[str, Span] = {}
        self.types: dict[str, GlobalTypeVar] = {}
        self.type_refs: dict[str, Span] = {}
        self.type_defs: dict[GlobalTypeVar, TypeData] = {}
        self.type_spans: dict[str, Span] = {}
        self.constructors: dict[str, Constructor] = {}
        self.meta_table = meta_table
        self.meta_hint = meta_hint
        self.meta_broken = False
        self.op_nodes: dict[str, Any] = {}     # operator names seen so far -> shared Op
        self.meta_cache: dict[tuple[str, int], Any] = {}
        self.auto_applied: set[int] = set()
        self.pending_meta_attrs: dict[int, Any] = {}
        self._default_attrs: dict[str, Any] = {}
        self._attrs_memo: dict[tuple[Any, ...], Any] = {}
        # (operator, attribute text) -> attributes, for one-token statements (build_calls.py)
        self.fast_attrs: dict[tuple[str, str], Any] = {}
        # Globals of an enclosing module (`use_context`): references to them are defined.
        self.context_globals: set[GlobalVar] = set()
        self.context_types: set[GlobalTypeVar] = set()
        self.has_context = False
        # `#[import "NAME"]` (imports.py): libraries loaded before the parse, by name; the
        # modules imported, in order; which library each imported name came from.
        self.libraries: dict[str, IRModule] = {}
        self.library_errors: dict[str, str] = {}
        self.library_names: tuple[str, ...] = ()
        self.imported: list[IRModule] = []
        self.imported_globals: dict[GlobalVar, str] = {}
        self.imported_types: dict[GlobalTypeVar, str] = {}

    # ------------------------------------------------------------ context
    def use_context(self, module: IRModule, skip_globals: frozenset[str] = frozenset(),
                    skip_constructors_of: frozenset[str] = frozenset()) -> None:
        """Names resolve to `module`'s own objects: its globals (except `skip_globals`,
        which the text redefines), type names and constructors (except those of the
        types in `skip_constructors_of`, which the text redefines: their headers stay,
        so annotations elsewhere keep naming them). Its definitions are not parsed
        here, so `finish` returns only what the text defines."""
        self.has_context = True
        for gv in module.functions:
            if gv.name_hint not in skip_globals:
                self.globals[gv.name_hint] = gv
                self.context_globals.add(gv)
        for gtv, data in module.type_definitions.items():
            self.types[gtv.name_hint] = gtv
            if gtv.name_hint not in skip_constructors_of:
                for ctor in data.constructors:
                    self.constructors[ctor.name] = ctor
        self.context_types = set(module.type_definitions)

    # ------------------------------------------------------------ header
    def check_version(self, tok: Any, required: bool) -> None:
        if tok is None or getattr(tok, "type", None) != "VERSION":
            if required:
                self.diag.error('expected the text format version header `#[version = "0.0.5"]` '
                                "at the start of the module", Span(self.source_name, 1, 1, 1, 2),
                                code="version")
            return
        m = _VERSION.match(tok.value)
        if m is None or m.group(1) != SUPPORTED_VERSION:
            found = m.group(1) if m else tok.value
            self.diag.error(f"unsupported text format version {found}; this reader reads "
                            f"{SUPPORTED_VERSION}", tok_span(self.source_name, tok),
                            code="version")

    # ------------------------------------------------------------ locals
    def bind_local(self, var: Var, span: Span) -> None:
        self.locals.bind(var.name_hint, var)

    def lookup_local(self, name: str, span: Span) -> Var:
        var = self.locals.get(name) or self.free_vars.get(name)
        if var is None:
            self.diag.error(f"unknown local variable `%{name}`: no parameter, let, pattern or "
                            "free_var binds it here", span, code="undefined-name")
            var = Var(name, span=span)
        return var

    def bind_graph(self, text: str, value: Expr, span: Span) -> None:
        number = int(text[1:])
        if number in self.graph:
            # TVM kept the first binding, a reader of its scoping rules the last: ambiguous.
            self.diag.error(f"graph binding `{text}` is bound twice in this definition", span,
                            code="duplicate-definition")
        self.graph[number] = value

    def lookup_graph(self, text: str, span: Span) -> Expr:
        node = self.graph.get(int(text[1:]))
        if node is None:
            self.diag.error(f"graph binding `{text}` is used before it is defined", span,
                            code="use-before-definition")
            node = Var(text[1:], span=span)
        return node

    def reset_scopes(self) -> None:
        """After a syntax error: forget everything lexical, keep module tables."""
        self.locals.clear()
        self.type_params.clear()
        self.graph.clear()

    # ------------------------------------------------------------ globals
    def global_var(self, name: str, span: Span) -> GlobalVar:
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name, span=span)
        self.global_refs.setdefault(name, span)
        return gv

    def define_global(self, name: str, fn: Function, span: Span) -> None:
        gv = self.globals.get(name)
        if gv is None:
            gv = self.globals[name] = GlobalVar(name, span=span)
        if gv in self.functions:
            self.diag.error(f"duplicate definition of global function `@{name}`", span,
                            Note("first defined here", self.function_spans[name]),
                            code="duplicate-definition")
        elif gv in self.imported_globals:
            self.diag.error(f"`@{name}` is already defined by `#[import "
                            f"\"{self.imported_globals[gv]}\"]`", span,
                            Note("defined here", gv.span), code="duplicate-definition")
        else:
            self.functions[gv] = fn
            self.function_spans[name] = span
        self.graph.clear()

    # ------------------------------------------------------------ types
    def global_type(self, name: str, span: Span, definition: bool = False) -> GlobalTypeVar:
        gtv = self.types.get(name)
        if gtv is None:
            gtv = self.types[name] = GlobalTypeVar(name, span=span)
        if not definition:
            self.type_refs.setdefault(name, span)
        return gtv

    def define_type(self, data: TypeData, span: Span) -> None:
        name = data.header.name_hint
        if data.header in self.type_defs:
            self.diag.error(f"duplicate definition of type `{name}`", span,
                            Note("first defined here", self.type_spans[name]),
                            code="duplicate-definition")
            return
        if data.header in self.imported_types:
            self.diag.error(f"type `{name}` is already defined by `#[import "
                            f"\"{self.imported_types[data.header]}\"]`", span,
                            Note("defined here", data.header.span), code="duplicate-definition")
            return
        self.type_defs[data.header] = data
        self.type_spans[name] = span

    def declare_constructor(self, ctor: Constructor) -> bool:
        previous = self.constructors.get(ctor.name)
        if previous is not None:
            self.diag.error(f"a constructor named `{ctor.name}` was already defined", ctor.span,
                            Note("previous definition", previous.span),
                            code="duplicate-definition")
            return False
        self.constructors[ctor.name] = ctor
        self.op_nodes.pop(ctor.name, None)     # from here on the name is the constructor
        return True

    # ------------------------------------------------------------ meta
    def meta(self, text: str, span: Span) -> Any:
        """The object behind `meta[KEY][i]`: a shared Constant for relay.Constant, else a
        MetaObject. None (after a diagnostic) when the table cannot supply it."""
        m = _META.match(text)
        key, index = m.group(1), int(m.group(2))
        cached = self.meta_cache.get((key, index))
        if cached is not None:
            return cached
        if self.meta_broken:
            return None
        if self.meta_table is None:
            self.diag.error(f"`{text}` refers to the metadata table, but there is none: "
                            "append a `#[metadata]` section or pass `metadata=` to parse"
                            f"{self.meta_hint}", span, code="metadata")
            return None
        entries = self.meta_table.get(key)
        if entries is None:
            self.diag.error(f"the metadata table has no entry for `{key}`", span,
                            code="metadata")
            return None
        if index >= len(entries):
            self.diag.error(f"`{text}` is out of bounds: the metadata table has "
                            f"{len(entries)} `{key}` objects", span, code="metadata")
            return None
        obj = entries[index]
        if obj is None:     # TVM's null node: no constant, no object that could print again
            self.diag.error(f"`{text}` is null in the metadata table: a `{key}` entry must be "
                            "an object", span, code="metadata")
            return None
        if isinstance(obj, (Expr, MetaObject)):
            value = obj
        elif key == "relay.Constant":
            import numpy as np
            array = np.asarray(obj)
            if array.dtype.kind not in "biufV":       # V: bfloat16's carrier
                self.diag.error(f"`{text}` is not a tensor of numbers or booleans "
                                f"(a {type(obj).__name__})", span, code="metadata")
                return None
            value = Constant(array, span=span)
        else:
            value = MetaObject(key, repr(obj))
        self.meta_cache[(key, index)] = value
        return value

    def make_op_attrs(self, schema: Any, values: dict[str, Any], op_name: str) -> Any:
        """`make_attrs`, memoised: models repeat the same attributes on many calls,
        and attribute objects are immutable, so equal ones can be shared."""
        try:
            key = (op_name, tuple((k, _memo_key(v)) for k, v in values.items()))
            cached = self._attrs_memo.get(key)
        except TypeError:       # an unhashable value: build without the memo
            return make_attrs(schema, values, op_name)
        if cached is None:
            cached = self._attrs_memo[key] = make_attrs(schema, values, op_name)
        return cached

    def default_attrs(self, op_name: str) -> Any:
        if op_name not in self._default_attrs:
            opdef = op_registry.get_op_def(op_name)
            schema = opdef.attrs if opdef is not None else None
            self._default_attrs[op_name] = make_attrs(schema, {}, op_name) if schema else None
        return self._default_attrs[op_name]

    def _global_hint(self, name: str) -> str:
        """`; did you mean `@main`?` for a misspelt global, else ""."""
        import difflib
        defined = {gv.name_hint for gv in (*self.functions, *self.context_globals,
                                           *self.imported_globals)}
        close = difflib.get_close_matches(name, sorted(defined), n=3)
        return f"; did you mean {', '.join('`@' + n + '`' for n in close)}?" if close else ""

    # ------------------------------------------------------------ result
    def finish(self) -> IRModule:
        """Module-wide checks that need the whole text, then the module."""
        for arg in self.pending_meta_attrs.values():
            self.diag.error(f"an attributes object (`meta[{arg.obj.type_key}]`) can only be the "
                            "last argument of a call", arg.span, code="metadata")
        if not self.expression or self.has_context:
            for name, span in self.global_refs.items():
                gv = self.globals[name]
                if gv not in self.functions and gv not in self.context_globals:
                    self.diag.error(f"undefined global function `@{name}`"
                                    f"{self._global_hint(name)}", span, code="undefined-name")
        for name, span in self.type_refs.items():
            gtv = self.types[name]
            if gtv not in self.type_defs and gtv not in self.context_types \
                    and name not in BUILTIN_TYPE_NAMES:
                self.diag.error(f"unknown type `{name}`: no `type {name}` definition", span,
                                code="undefined-name")
        functions, type_defs = self.functions, self.type_defs
        sources = {self.source_name: self.diag.text}
        if self.imported:       # imported definitions first, then the text's own
            functions, type_defs, sources = {}, {}, {}
            for library in self.imported:
                functions.update(library.functions)
                type_defs.update(library.type_definitions)
                sources.update(library.sources)
            functions.update(self.functions)
            type_defs.update(self.type_defs)
            sources[self.source_name] = self.diag.text
        return IRModule(functions, type_defs, self.source_name, sources)
