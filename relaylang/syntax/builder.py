"""Parser callbacks that build IR as Lark's LALR parser reduces rules.

One method per rule or alias of grammar/relay.lark; each receives the rule's
children (tokens and already-built IR) and returns IR. Name resolution happens
here too (see scope.py): locals and type parameters lexically, graph ids per
top-level definition (LANGUAGE.md §6.9 permits this looser reading, which also
accepts TVM printouts that reuse an id bound in a branch), constructors once
their `type` has been read, operators from the registry, globals and types
module-wide with forward references (checked at the end, in `finish`).

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
from ..ir.attrs import AttrError, DictAttrs, make_attrs
from ..ir.expr import (Call, Clause, Constant, Constructor, Expr, Function, GlobalVar, If, Let,
                       Match, Op, PatternConstructor, PatternTuple, PatternVar, PatternWildcard,
                       RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var, pattern_vars)
from ..ir.node import ANY, MetaObject
from ..ir.span import Span
from ..ir.types import (FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType,
                        TypeCall, TypeData, TypeVar)
from .builder_state import ParseState, tok_span
from .literals import (LiteralError, is_dtype_name, parse_dtype, parse_index, parse_number,
                       parse_string)

_BINOPS = {"==": ("equal", 7), "!=": ("not_equal", 7), "<": ("less", 8), ">": ("greater", 8),
           "<=": ("less_equal", 8), ">=": ("greater_equal", 8), "+": ("add", 10),
           "-": ("subtract", 10), "*": ("multiply", 12), "/": ("divide", 12)}
RESERVED = frozenset("def fn let if else type extern match free_var ref ref_read ref_write".split())
_SPECIAL_FLOATS = {"inff", "nanf", "inff16", "inff32", "inff64", "nanf16", "nanf32", "nanf64"}


class _AttrList(list):
    """Parsed `key=value` items: (key, value, span of the key)."""


class _CallArgs:
    __slots__ = ("args", "attrs", "span")

    def __init__(self, args: list[Expr], attrs: _AttrList | None, span: Span | None):
        self.args, self.attrs, self.span = args, attrs, span


class _Callee:
    """A callee with the span of its use."""

    __slots__ = ("node", "span")

    def __init__(self, node: Expr, span: Span):
        self.node, self.span = node, span


class _Stmt:
    """A statement of a sequence: `kind` is let, seq, or none (graph binding, free_var)."""

    __slots__ = ("kind", "var", "value", "span")

    def __init__(self, kind: str, var: Var | None, value: Expr | None, span: Span | None):
        self.kind, self.var, self.value, self.span = kind, var, value, span


NO_STMT = _Stmt("none", None, None, None)


class MetaAttrsArg(Expr):
    """`meta[relay.attrs.X][i]` as the last call argument: the call's attributes."""

    __slots__ = ("obj",)

    def __init__(self, obj: MetaObject, span: Span | None):
        object.__setattr__(self, "obj", obj)
        object.__setattr__(self, "span", span)
        object.__setattr__(self, "checked_type", None)


_new_tuple = tuple.__new__


def _span_of(node: Any) -> Span | None:
    return getattr(node, "span", None)


def _join(first: Any, last: Any) -> Span | None:
    a, b = _span_of(first), _span_of(last)
    return a.merge(b) if a is not None else b


def _append(self: Any, c: list[Any]) -> list[Any]:
    """A left-recursive list rule (`xs: x | xs "," x`): one list, appended to in place."""
    if len(c) == 1:
        return [c[0]]
    c[0].append(c[1])
    return c[0]


class Builder(Transformer):
    """The callbacks; all per-parse state lives in `self.state` (reset per parse)."""

    params = args = attrs = attr_values = dims = stmts = _append

    def __init__(self) -> None:
        super().__init__(visit_tokens=False)
        self.state = ParseState("from_string", "")

    # -------------------------------------------------------------- helpers
    def _span(self, tok: Any) -> Span:
        # Hot: one call per kept token. `tuple.__new__` skips NamedTuple's Python-level __new__.
        return _new_tuple(Span, (self.state.source_name, tok.line, tok.column, tok.end_line,
                                 tok.end_column))

    def _name(self, tok: Any) -> str:
        """The name of a `%name`/`@name` token; a reserved word there is an error (§2.4)."""
        name = tok.value[1:]
        if name in RESERVED:
            self._error(f"`{name}` is a reserved word and cannot be a name: `{tok.value}`",
                        self._span(tok))
        return name

    def _error(self, message: str, span: Span | None) -> None:
        self.state.diag.error(message, span)

    # -------------------------------------------------------------- files
    def start_module(self, children: list[Any]) -> None:
        self.state.check_version(children[0] if children else None, required=True)

    def start_expr(self, children: list[Any]) -> Expr:
        self.state.check_version(children[0] if len(children) > 1 else None, required=False)
        return children[-1]

    def start_definitions(self, children: list[Any]) -> None:
        return None

    # -------------------------------------------------------------- definitions
    def function_def(self, c: list[Any]) -> None:
        def_tok, name_tok, tparams, (params, attrs), ret, body = c
        span = self._span(def_tok).merge(_span_of(body))
        fn = self._make_function(params, body, ret, tparams, attrs, span)
        self.state.define_global(self._name(name_tok), fn, self._span(name_tok))

    def _make_function(self, params: list[Var], body: Expr, ret: Any, tparams: Any,
                       attrs: _AttrList | None, span: Span | None) -> Function:
        for var in reversed(params):
            self.state.locals.unbind(var.name_hint)
        for tv in reversed(tparams or ()):
            self.state.type_params.unbind(tv.name_hint)
        fn_attrs = None
        if attrs:
            fn_attrs = DictAttrs(tuple((k, v) for k, v, _ in attrs))
        return Function(tuple(params), body, ret, tuple(tparams or ()), fn_attrs, span=span)

    def type_def(self, c: list[Any]) -> None:
        type_tok, name_tok, tparams, ctor_defs = c
        self._define_type(name_tok, tparams, ctor_defs or [], self._span(type_tok))

    def extern_type_def(self, c: list[Any]) -> None:
        extern_tok, _, name_tok, tparams = c
        self._define_type(name_tok, tparams, [], self._span(extern_tok))

    def _define_type(self, name_tok: Any, tparams: Any, ctor_defs: list[Any], span: Span) -> None:
        header = self.state.global_type(name_tok.value, self._span(name_tok), definition=True)
        ctors = []
        for tag, (ctor_tok, fields) in enumerate(ctor_defs):
            ctor = Constructor(ctor_tok.value, tuple(fields), header, tag, span=self._span(ctor_tok))
            if self.state.declare_constructor(ctor):
                ctors.append(ctor)
        for tv in reversed(tparams or ()):
            self.state.type_params.unbind(tv.name_hint)
        data = TypeData(header, tuple(tparams or ()), tuple(ctors),
                        span=span.merge(self._span(name_tok)))
        self.state.define_type(data, self._span(name_tok))

    def ctor_list(self, c: list[Any]) -> list[Any]:
        return [x for x in c if x is not None]

    def ctor_def(self, c: list[Any]) -> tuple[Any, list[Any]]:
        return c[0], [t for t in c[1:] if t is not None]

    def type_params(self, c: list[Any]) -> list[TypeVar]:
        out = []
        for tok in c:
            if tok is None:
                continue
            tv = TypeVar(tok.value, span=self._span(tok))
            self.state.type_params.bind(tok.value, tv)
            out.append(tv)
        return out

    def ret_type(self, c: list[Any]) -> Any:
        return c[0]

    def fn_params(self, c: list[Any]) -> tuple[list[Var], _AttrList | None]:
        params = c[0] if c and type(c[0]) is list else []
        attrs = c[-1] if c and isinstance(c[-1], _AttrList) else None
        return params, attrs

    def param(self, c: list[Any]) -> Var:
        tok, attrs, ty = c
        device = None
        for key, value, key_span in attrs or ():
            if key == "virtual_device":
                device = value
            else:
                self._error(f"unknown parameter attribute `{key}` (only `virtual_device`)", key_span)
        var = Var(self._name(tok), ty, device, span=self._span(tok))
        self.state.bind_local(var, self._span(tok))
        return var

    # -------------------------------------------------------------- attributes
    def attr_list(self, c: list[Any]) -> _AttrList:
        return _AttrList(c[0])

    def attr(self, c: list[Any]) -> tuple[str, Any, Span]:
        return c[0].value, c[1], self._span(c[0])

    def av_number(self, c: list[Any]) -> int | float:
        try:
            return parse_number(c[0].value)[0]
        except LiteralError as e:
            self._error(str(e), self._span(c[0]))
            return 0

    def av_string(self, c: list[Any]) -> str:
        return parse_string(c[0].value)

    def av_meta(self, c: list[Any]) -> Any:
        obj = self.state.meta(c[0].value, self._span(c[0]))
        return obj if obj is not None else None

    def av_ident(self, c: list[Any]) -> Any:
        name = c[0].value
        if name in ("True", "False"):
            return name == "True"
        if name in ("None", "nullptr"):
            return None
        if name in _SPECIAL_FLOATS:
            return parse_number(name)[0]
        if self.state.constructors.get(name) is not None:
            return self.state.constructors[name]
        self._error(f"bare identifier `{name}` is not an attribute value; "
                    f"strings are quoted: \"{name}\"", self._span(c[0]))
        return name

    def av_local(self, c: list[Any]) -> Expr:
        return self.local_ref(c)

    def av_global(self, c: list[Any]) -> Expr:
        return self.global_ref(c)

    def av_graph(self, c: list[Any]) -> Expr:
        return self.graph_ref(c)

    def av_any(self, c: list[Any]) -> Any:
        return ANY

    def av_list(self, c: list[Any]) -> tuple[Any, ...]:
        return () if c[0] is None else tuple(c[0])

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
        return Let(var, value, body, span=span.merge(_span_of(body)))

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
        return _Stmt("seq", None, c[0], _span_of(c[0]))

    def expr(self, c: list[Any]) -> Expr:
        stmts, body = c
        for stmt in reversed(stmts):
            if stmt.kind == "let":
                self.state.locals.unbind(stmt.var.name_hint)
                body = Let(stmt.var, stmt.value, body, span=stmt.span.merge(_span_of(body)))
            elif stmt.kind == "seq":
                # `e1; e2` is `let %_ = e1; e2` with a fresh, nameless variable (§6.10).
                body = Let(Var("", span=stmt.span), stmt.value, body, span=_join(stmt, body))
        return body

    # -------------------------------------------------------------- operators
    def binary(self, c: list[Any]) -> Expr:
        # Fold `a op b op c ...` by precedence; all operators are left-associative.
        operands: list[Expr] = [c[0]]
        operators: list[tuple[str, int]] = []

        def reduce_top() -> None:
            name, _ = operators.pop()
            rhs, lhs = operands.pop(), operands.pop()
            operands.append(Call(op_registry.get(name), (lhs, rhs), self.state.default_attrs(name),
                                 span=_join(lhs, rhs)))

        for i in range(1, len(c), 2):
            name, prec = _BINOPS[c[i].value]
            while operators and operators[-1][1] >= prec:
                reduce_top()
            operators.append((name, prec))
            operands.append(c[i + 1])
        while operators:
            reduce_top()
        return operands[0]

    def call(self, c: list[Any]) -> Expr:
        head, post = c
        node, start = (head.node, head.span) if type(head) is _Callee else (head, head.span)
        if type(post) is _CallArgs:
            return self._make_call(node, post, start.merge(post.span) if start else post.span)
        index, span = post
        return TupleGetItem(node, index, span=start.merge(span) if start else span)

    def callee_local(self, c: list[Any]) -> _Callee:
        return _Callee(self.local_ref(c), self._span(c[0]))

    def callee_graph(self, c: list[Any]) -> _Callee:
        return _Callee(self.graph_ref(c), self._span(c[0]))

    def callee_global(self, c: list[Any]) -> _Callee:
        return _Callee(self.global_ref(c), self._span(c[0]))

    def callee_ident(self, c: list[Any]) -> _Callee:
        return _Callee(self.ident_ref(c), self._span(c[0]))

    def callee_meta(self, c: list[Any]) -> _Callee:
        return _Callee(self.meta_ref(c), self._span(c[0]))

    def call_args(self, c: list[Any]) -> _CallArgs:
        end = self._span(c[-1])
        args = c[0] if len(c) > 1 and type(c[0]) is list else []
        attrs = c[-2] if len(c) > 1 and type(c[-2]) is _AttrList else None
        return _CallArgs(args, attrs, end)

    def projection_index(self, c: list[Any]) -> tuple[int, Span]:
        span = self._span(c[0])
        try:
            return parse_index(c[0].value), span
        except LiteralError as e:
            self._error(str(e), span)
            return 0, span

    def _make_call(self, callee: Expr, post: _CallArgs, span: Span | None) -> Expr:
        if id(callee) in self.state.auto_applied and not post.args and not post.attrs:
            return callee     # `Nil()` is the same as `Nil` (§6.3)
        args = post.args
        attrs: Any = None
        if args and isinstance(args[-1], MetaAttrsArg):
            attrs = args[-1].obj
            self.state.pending_meta_attrs.pop(id(args[-1]), None)
            args = args[:-1]
        if isinstance(callee, Op):
            if attrs is None:
                attrs = self._op_attrs(callee.name, post.attrs, span)
            elif post.attrs:
                self._error("a call cannot have both keyword attributes and an attributes "
                            "object", post.attrs[0][2])
        elif post.attrs:
            attrs = self._dict_attrs(post.attrs)
        return Call(callee, tuple(args), attrs, span=span)

    def _op_attrs(self, name: str, items: _AttrList | None, call_span: Span | None) -> Any:
        opdef = op_registry.get_op_def(name)
        if opdef is None:
            return None
        if opdef.attrs is None:
            if items:
                self._error(f"operator `{name}` takes no attributes", items[0][2])
            return None
        values = {key: value for key, value, _ in items or ()}
        try:
            return self.state.make_op_attrs(opdef.attrs, values, name)
        except AttrError as e:
            span = next((s for k, _, s in items or () if k == e.key), None)
            self._error(e.message, span or call_span)
            return None

    def _dict_attrs(self, items: _AttrList) -> DictAttrs | None:
        type_key = None
        entries = []
        for key, value, key_span in items:
            if key == "attrs_type_key":
                type_key = value
            else:
                entries.append((key, value))
        if type_key is None:
            self._error("attributes on a call of a non-operator need `attrs_type_key=\"...\"` "
                        "naming the attribute type", items[0][2])
            return None
        return DictAttrs(tuple(entries), type_key)

    # -------------------------------------------------------------- atoms
    def literal(self, c: list[Any]) -> Constant:
        tok = c[0]
        span = self._span(tok)
        try:
            value, dtype = parse_number(tok.value)
        except LiteralError as e:
            self._error(str(e), span)
            value, dtype = 0, "int32"
        return Constant(np.array(value, dtype=dtype), span=span)

    def local_ref(self, c: list[Any]) -> Var:
        return self.state.lookup_local(self._name(c[0]), self._span(c[0]))

    def graph_ref(self, c: list[Any]) -> Expr:
        return self.state.lookup_graph(c[0].value, self._span(c[0]))

    def global_ref(self, c: list[Any]) -> GlobalVar:
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
        tok = c[0]
        name, span = tok.value, self._span(tok)
        node = self.state.op_nodes.get(name)
        if node is not None:       # the common case: an operator (a constructor shadows none)
            return node
        if name in ("True", "False"):
            return Constant(np.array(name == "True"), span=span)
        if name in _SPECIAL_FLOATS:
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
                        "`(match (...) {...})`", span)
            return
        if name in RESERVED:
            self._error(f"`{name}` cannot appear here", span)
            return
        known = [o.name for o in op_registry.all_ops()] + list(self.state.constructors)
        close = difflib.get_close_matches(name, known, n=3)
        hint = f"; did you mean {', '.join('`' + n + '`' for n in close)}?" if close else ""
        self._error(f"unknown operator or constructor `{name}`{hint}", span)

    def function(self, c: list[Any]) -> Function:
        fn_tok, tparams, (params, attrs), ret, body = c
        span = self._span(fn_tok).merge(_span_of(body))
        return self._make_function(params, body, ret, tparams, attrs, span)

    def if_expr(self, c: list[Any]) -> If:
        if_tok, cond, then, _, other = c
        return If(cond, then, other, span=self._span(if_tok).merge(_span_of(other)))

    def ref_create(self, c: list[Any]) -> RefCreate:
        return RefCreate(c[1], span=self._span(c[0]).merge(_span_of(c[1])))

    def ref_read(self, c: list[Any]) -> RefRead:
        return RefRead(c[1], span=self._span(c[0]).merge(_span_of(c[1])))

    def ref_write(self, c: list[Any]) -> RefWrite:
        return RefWrite(c[1], c[2], span=self._span(c[0]).merge(_span_of(c[2])))

    def unit(self, c: list[Any]) -> Tuple:
        return Tuple((), span=self._span(c[0]))

    def tuple(self, c: list[Any]) -> Tuple:
        fields = tuple(x for x in c[1:] if x is not None)
        return Tuple(fields, span=self._span(c[0]).merge(_span_of(fields[-1])))

    # -------------------------------------------------------------- match
    def match(self, c: list[Any]) -> Match:
        kw, data = c[0], c[1]
        clauses = tuple(x for x in c[2:] if x is not None)
        end = clauses[-1] if clauses else data
        return Match(data, clauses, kw.type != "MATCH_PARTIAL",
                     span=self._span(kw).merge(_span_of(end)))

    def clause(self, c: list[Any]) -> Clause:
        pattern, body = c
        for var in reversed(pattern_vars(pattern)):
            self.state.locals.unbind(var.name_hint)
        return Clause(pattern, body, span=_join(pattern, body))

    def pattern_ident(self, c: list[Any]) -> Any:
        tok = c[0]
        if tok.value == "_":
            return PatternWildcard(span=self._span(tok))
        return PatternConstructor(self._pattern_ctor(tok), (), span=self._span(tok))

    def pattern_ctor(self, c: list[Any]) -> PatternConstructor:
        tok = c[0]
        subs = tuple(p for p in c[1:] if p is not None)
        return PatternConstructor(self._pattern_ctor(tok), subs,
                                  span=self._span(tok).merge(_span_of(subs[-1]) if subs else None))

    def _pattern_ctor(self, tok: Any) -> Constructor:
        ctor = self.state.constructors.get(tok.value)
        if ctor is None:
            self._error(f"unknown constructor `{tok.value}` in pattern (declare it with `type` "
                        f"before this point, or write `%{tok.value}` to bind a variable)",
                        self._span(tok))
            return Constructor(tok.value, (), GlobalTypeVar("?"), span=self._span(tok))
        return ctor

    def pattern_tuple(self, c: list[Any]) -> PatternTuple:
        subs = tuple(p for p in c[1:] if p is not None)
        return PatternTuple(subs, span=self._span(c[0]))

    def pattern_var(self, c: list[Any]) -> PatternVar:
        tok, ty = c
        var = Var(self._name(tok), ty, span=self._span(tok))
        self.state.bind_local(var, self._span(tok))
        return PatternVar(var, span=var.span)

    # -------------------------------------------------------------- types
    def tuple_type(self, c: list[Any]) -> TupleType:
        return TupleType(tuple(t for t in c[1:] if t is not None), span=self._span(c[0]))

    def func_type(self, c: list[Any]) -> FuncType:
        fn_tok, tparams, *types = c
        args = tuple(t for t in types[:-1] if t is not None)
        for tv in reversed(tparams or ()):
            self.state.type_params.unbind(tv.name_hint)
        return FuncType(args, types[-1], tuple(tparams or ()), span=self._span(fn_tok))

    def tensor_type(self, c: list[Any]) -> TensorType:
        tensor_tok, shape, dtype_tok = c
        dtype = parse_dtype(dtype_tok.value)
        if dtype is None:
            self._error(f"unknown dtype `{dtype_tok.value}`", self._span(dtype_tok))
            dtype = dtype_tok.value
        return TensorType(shape, dtype, span=self._span(tensor_tok).merge(self._span(dtype_tok)))

    def shape(self, c: list[Any]) -> tuple[Any, ...]:
        return () if c[0] is None else tuple(c[0])

    def dim_number(self, c: list[Any]) -> int:
        try:
            value, dtype = parse_number(c[0].value)
        except LiteralError as e:
            self._error(str(e), self._span(c[0]))
            return 0
        if not dtype.startswith("int"):
            self._error(f"a dimension must be an integer, got `{c[0].value}`", self._span(c[0]))
            return 0
        return int(value)

    def dim_any(self, c: list[Any]) -> Any:
        return ANY

    def dim_meta(self, c: list[Any]) -> Any:
        obj = self.state.meta(c[0].value, self._span(c[0]))
        if obj is not None and not isinstance(obj, MetaObject):
            self._error("a dimension's meta reference must be an index expression",
                        self._span(c[0]))
            return ANY
        return obj if obj is not None else ANY

    def type_name(self, c: list[Any]) -> Any:
        tok = c[0]
        name, span = tok.value, self._span(tok)
        tv = self.state.type_params.get(name)
        if tv is not None:
            return tv
        if name == "_":
            return IncompleteType(span=span)
        if is_dtype_name(name):
            dtype = parse_dtype(name)
            if dtype is None:
                self._error(f"unknown dtype `{name}`", span)
                dtype = name
            return TensorType((), dtype, span=span)
        return TypeCall(self.state.global_type(name, span), (), span=span)

    def type_app(self, c: list[Any]) -> Any:
        tok = c[0]
        args = tuple(t for t in c[1:] if t is not None)
        span = self._span(tok)
        func = self.state.type_params.get(tok.value) or self.state.global_type(tok.value, span)
        return TypeCall(func, args, span=span)

    def ref_type(self, c: list[Any]) -> RefType:
        return RefType(c[1], span=self._span(c[0]))
