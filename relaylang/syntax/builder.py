"""Parser callbacks that build IR as Lark's LALR parser reduces rules.

One method per rule or alias of grammar/relay.lark; each receives the rule's
children (tokens and already-built IR) and returns IR. Name resolution happens
here too (see scope.py): locals and type parameters lexically, graph ids per
top-level definition (LANGUAGE.md §6.9 permits this looser reading, which also
accepts TVM printouts that reuse an id bound in a branch), constructors once
their `type` has been read, operators from the registry, globals and types
module-wide with forward references (checked at the end, in `finish`).

`Builder` combines one mixin per area of the grammar: types (build_types.py),
match and patterns (build_patterns.py), operators, calls and attributes
(build_calls.py); this module holds files, definitions, sequences and atoms.
Lark looks each callback up with getattr on the `Builder`, so inherited methods
count; tests/syntax/test_builder_callbacks.py checks that every rule has one.

Errors that leave the structure intact (an unknown name, a bad literal, a bad
attribute) are diagnostics and the parse goes on with a placeholder; syntax
errors are handled by parser.py.
"""
from __future__ import annotations

import difflib
from typing import Any

import numpy as np
from lark import Transformer

from .. import op as op_registry
from ..ir.attrs import DictAttrs
from ..ir.expr import (
    Call,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    Var,
)
from ..ir.node import MetaObject
from ..ir.span import Span
from .build_base import RESERVED, SPECIAL_FLOATS, AttrList, MetaAttrsArg, join_spans, span_of
from .build_calls import CallRules
from .build_patterns import PatternRules
from .build_types import TypeRules
from .builder_state import ParseState
from .imports import import_library
from .literals import LiteralError, parse_number

__all__ = ["RESERVED", "Builder", "MetaAttrsArg"]


class _Stmt:
    """A statement of a sequence: `kind` is let, seq, or none (graph binding, free_var)."""

    __slots__ = ("kind", "span", "value", "var")

    def __init__(self, kind: str, var: Var | None, value: Expr | None, span: Span | None):
        self.kind, self.var, self.value, self.span = kind, var, value, span


NO_STMT = _Stmt("none", None, None, None)


def _append(self: Any, c: list[Any]) -> list[Any]:
    """A left-recursive list rule (`xs: x | xs "," x`): one list, appended to in place."""
    if len(c) == 1:
        return [c[0]]
    c[0].append(c[1])
    return c[0]


class Builder(TypeRules, PatternRules, CallRules, Transformer):
    """The callbacks; all per-parse state lives in `self.state` (reset per parse)."""

    params = args = attrs = attr_values = dims = stmts = _append
    _ref_token: Any = None         # the last op/global/constructor name read (`seq_stmt`)

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.state = ParseState("from_string", "")

    # -------------------------------------------------------------- files
    def start_module(self, children: list[Any]) -> None:
        self.state.check_version(children[0] if children else None, required=True)

    def start_expr(self, children: list[Any]) -> Expr:
        self.state.check_version(children[0] if len(children) > 1 else None, required=False)
        return children[-1]

    def start_definitions(self, children: list[Any]) -> None:
        return None

    def import_directive(self, children: list[Any]) -> None:
        import_library(self.state, children[0])

    # -------------------------------------------------------------- definitions
    def function_def(self, c: list[Any]) -> None:
        def_tok, name_tok, tparams, (params, attrs), ret, body, end = c
        span = self._span(def_tok).merge(self._span(end))
        fn = self._make_function(params, body, ret, tparams, attrs, span)
        self.state.define_global(self._name(name_tok), fn, self._span(name_tok))

    def _make_function(self, params: list[Var], body: Expr, ret: Any, tparams: Any,
                       attrs: AttrList | None, span: Span | None) -> Function:
        for var in reversed(params):
            self.state.locals.unbind(var.name_hint)
        for tv in reversed(tparams or ()):
            self.state.type_params.unbind(tv.name_hint)
        fn_attrs = None
        if attrs:
            fn_attrs = DictAttrs(tuple((k, v) for k, v, _ in attrs))
        return Function(tuple(params), body, ret, tuple(tparams or ()), fn_attrs, span=span)

    def fn_params(self, c: list[Any]) -> tuple[list[Var], AttrList | None]:
        params = c[0] if c and type(c[0]) is list else []
        attrs = c[-1] if c and isinstance(c[-1], AttrList) else None
        return params, attrs

    def param(self, c: list[Any]) -> Var:
        tok, attrs, ty = c
        device = None
        for key, value, key_span in attrs or ():
            if key == "virtual_device":
                device = value
            else:
                self._error(f"unknown parameter attribute `{key}` (only `virtual_device`)",
                            key_span, code="attribute")
        var = Var(self._name(tok), ty, device, span=self._span(tok))
        self.state.bind_local(var, self._span(tok))
        return var

    # -------------------------------------------------------------- sequences
    def let_head(self, c: list[Any]) -> tuple[Var, Span]:
        let_tok, name_tok, ty = c
        var = Var(self._name(name_tok), ty, span=self._span(name_tok))
        self.state.bind_local(var, self._span(name_tok))
        return var, self._span(let_tok)

    def let_stmt(self, c: list[Any]) -> _Stmt:
        (var, span), value = c
        return _Stmt("let", var, value, span)

    def let_value(self, c: list[Any]) -> Let:
        (var, span), value, body = c
        self.state.locals.unbind(var.name_hint)
        return Let(var, value, body, span=span.merge(span_of(body)))

    def graph_stmt(self, c: list[Any]) -> _Stmt:
        tok, value = c
        self.state.bind_graph(tok.value, value, self._span(tok))
        return NO_STMT

    def free_var_stmt(self, c: list[Any]) -> _Stmt:
        _, tok, ty = c
        name = self._name(tok)
        self.state.free_vars[name] = Var(name, ty, span=self._span(tok))
        return NO_STMT

    def seq_stmt(self, c: list[Any]) -> _Stmt:
        span = span_of(c[0])
        if (span is None and isinstance(c[0], (Op, GlobalVar, Constructor))
                and self._ref_token is not None):
            # `multiply;`, `@id;`, `Cons;`: ops, globals and constructors are shared and
            # spanless; the name just read is where the statement is.
            span = self._span(self._ref_token)
        return _Stmt("seq", None, c[0], span)

    def expr(self, c: list[Any]) -> Expr:
        stmts, body = c
        for stmt in reversed(stmts):
            if stmt.kind == "let":
                self.state.locals.unbind(stmt.var.name_hint)
                body = Let(stmt.var, stmt.value, body, span=stmt.span.merge(span_of(body)))
            elif stmt.kind == "seq":
                # `e1; e2` is `let %_ = e1; e2` with a fresh, nameless variable (§6.10).
                body = Let(Var("", span=stmt.span), stmt.value, body, span=join_spans(stmt, body))
        return body

    # -------------------------------------------------------------- atoms
    def literal(self, c: list[Any]) -> Constant:
        return self._literal(c[0].value, self._span(c[0]))

    def _literal(self, text: str, span: Span) -> Constant:
        try:
            value, dtype = parse_number(text)
        except LiteralError as e:
            self._error(str(e), span, code="literal")
            value, dtype = 0, "int32"
        return Constant(np.array(value, dtype=dtype), span=span)

    def local_ref(self, c: list[Any]) -> Var:
        return self.state.lookup_local(self._name(c[0]), self._span(c[0]))

    def graph_ref(self, c: list[Any]) -> Expr:
        return self.state.lookup_graph(c[0].value, self._span(c[0]))

    def global_ref(self, c: list[Any]) -> GlobalVar:
        self._ref_token = c[0]
        return self.state.global_var(self._name(c[0]), self._span(c[0]))

    def meta_ref(self, c: list[Any]) -> Expr:
        span = self._span(c[0])
        obj = self.state.meta(c[0].value, span)
        if isinstance(obj, Constant):
            return obj
        if isinstance(obj, MetaObject):
            arg = MetaAttrsArg(obj, span)
            self.state.pending_meta_attrs[id(arg)] = arg
            return arg
        return Constant(np.array(0, dtype="int32"), span=span)

    def ident_ref(self, c: list[Any]) -> Expr:
        tok = self._ref_token = c[0]
        name, span = tok.value, self._span(tok)
        node = self.state.op_nodes.get(name)
        if node is not None:       # the common case: an operator (a constructor shadows none)
            return node
        if name in ("True", "False"):
            return Constant(np.array(name == "True"), span=span)
        if name in SPECIAL_FLOATS:
            value, dtype = parse_number(name)
            return Constant(np.array(value, dtype=dtype), span=span)
        ctor = self.state.constructors.get(name)
        if ctor is not None:
            if not ctor.inputs:
                applied = Call(ctor, (), span=span)
                self.state.auto_applied.add(id(applied))
                return applied
            return ctor
        if op_registry.get_op_def(name) is not None:
            node = self.state.op_nodes[name] = op_registry.get(name)
            return node
        self._unknown_name(name, span)
        return Op(name, span=span)

    def _unknown_name(self, name: str, span: Span) -> None:
        if name == "match":
            self._error("a `match` cannot be an operand; put it in parentheses: "
                        "`(match (...) {...})`", span, code="syntax")
            return
        if name in RESERVED:
            self._error(f"`{name}` cannot appear here", span, code="reserved-word")
            return
        known = [o.name for o in op_registry.all_ops()] + list(self.state.constructors)
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join('`' + n + '`' for n in close)}?" if close else ""
        self._error(f"unknown operator or constructor `{name}`{hint}", span,
                    code="undefined-name")

    def function(self, c: list[Any]) -> Function:
        fn_tok, tparams, (params, attrs), ret, body, end = c
        span = self._span(fn_tok).merge(self._span(end))
        return self._make_function(params, body, ret, tparams, attrs, span)

    def if_expr(self, c: list[Any]) -> If:
        if_tok, cond, then, _, other, end = c
        return If(cond, then, other, span=self._span(if_tok).merge(self._span(end)))

    def ref_create(self, c: list[Any]) -> RefCreate:
        return RefCreate(c[1], span=self._span(c[0]).merge(span_of(c[1])))

    def ref_read(self, c: list[Any]) -> RefRead:
        return RefRead(c[1], span=self._span(c[0]).merge(span_of(c[1])))

    def ref_write(self, c: list[Any]) -> RefWrite:
        return RefWrite(c[1], c[2], span=self._span(c[0]).merge(span_of(c[2])))

    def unit(self, c: list[Any]) -> Tuple:
        return Tuple((), span=self._span(c[0]))

    def tuple(self, c: list[Any]) -> Tuple:
        fields = tuple(x for x in c[1:] if x is not None)
        return Tuple(fields, span=self._span(c[0]).merge(span_of(fields[-1])))
