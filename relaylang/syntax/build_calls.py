"""Parser callbacks for operators, calls, projections and call attributes.

The `CallRules` mixin of `Builder` (builder.py): infix operators folded by
precedence, calls and `.N` projections chained on a callee, `key=value`
attribute lists and their values, checked against the operator's attribute
schema. Mirrors apache/tvm src/relay/parser/parser.cc (`ParseExprBinOp`,
`ParseCallExpr`, `ParseCallArgs`, `ParseAttrs`, `ParseAttributeValue`).

Also `fast_call_stmt`: the printed graph binding `%5 = op(%4, axis=1) /* ty */;`,
which the lexer reads as one token (FAST_CALL_STMT), built as the general rules
would build it (tests/syntax/test_parser_fast_path.py compares the two).
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from .. import op as op_registry
from ..ir.attrs import AttrError, DictAttrs
from ..ir.expr import Call, Expr, Op, TupleGetItem
from ..ir.node import ANY
from ..ir.span import Span
from .build_base import RESERVED, SPECIAL_FLOATS, AttrList, BuilderBase, MetaAttrsArg, span_of
from .literals import LiteralError, parse_index, parse_number, parse_string

if TYPE_CHECKING:
    from ..ir.expr import GlobalVar, Var

_BINOPS = {"==": ("equal", 7), "!=": ("not_equal", 7), "<": ("less", 8), ">": ("greater", 8),
           "<=": ("less_equal", 8), ">=": ("greater_equal", 8), "+": ("add", 10),
           "-": ("subtract", 10), "*": ("multiply", 12), "/": ("divide", 12)}


class _CallArgs:
    __slots__ = ("args", "attrs", "span")

    def __init__(self, args: list[Expr], attrs: AttrList | None, span: Span | None):
        self.args, self.attrs, self.span = args, attrs, span


class _Callee:
    """A callee with the span of its use."""

    __slots__ = ("node", "span")

    def __init__(self, node: Expr, span: Span):
        self.node, self.span = node, span


_NAME = r"[A-Za-z_][A-Za-z0-9_/]*+(?:\.[A-Za-z_][A-Za-z0-9_/]*+)*+"
_COMMENT = r"/\*(?:[^*/\n\r]++|\*(?!/)|/(?!\*))*+\*/"
# The pieces of a FAST_CALL_STMT token (grammar/relay.lark), which the lexer has already
# checked: (what comes before a piece: spaces, comments and the punctuation `=(,`, the
# piece: a token, `[`, `]`, or the closing `)` up to the `;`, which ends the token).
_FAST_PIECE = re.compile(r"""
    ((?:[ =(,]|""" + _COMMENT + r""")*+)
    (%[0-9]++|%""" + _NAME + r"""|-*+[0-9][0-9.eE+\-]*+(?:[if][0-9.eE+\-]*+)?+
     |"[^"\\\n\r]*+"|""" + _NAME + r"""|[\[\]]|\)(?:[ ]|""" + _COMMENT + r""")*+;)
""", re.VERBOSE)
_FAST_NAMES = {"True": True, "False": False, "None": None, "nullptr": None}   # as av_ident
_new_tuple = tuple.__new__


class _Tok:
    """A token cut out of a FAST_CALL_STMT token, with what callbacks read of Lark's."""

    __slots__ = ("column", "end_column", "end_line", "end_pos", "line", "start_pos", "type",
                 "value")

    def __init__(self, type_: str, value: str, line: int, column: int, start_pos: int):
        self.type, self.value, self.line, self.column = type_, value, line, column
        self.end_line, self.end_column = line, column + len(value)
        self.start_pos, self.end_pos = start_pos, start_pos + len(value)


def fast_pieces(tok: Any) -> list[tuple[str, str]]:
    """(what comes before, piece) for each piece of the FAST_CALL_STMT token `tok`."""
    return _FAST_PIECE.findall(tok.value)


class CallRules(BuilderBase):
    """Callbacks of binary, call (postfixed), the `callee` alternatives, call_args,
    projection_index, attr_list, attr and the `attr_value` alternatives."""

    if TYPE_CHECKING:   # name references, in builder.py; callees and attribute values use them
        def graph_stmt(self, c: list[Any]) -> Any: ...
        def literal(self, c: list[Any]) -> Any: ...
        def local_ref(self, c: list[Any]) -> Var: ...
        def graph_ref(self, c: list[Any]) -> Expr: ...
        def global_ref(self, c: list[Any]) -> GlobalVar: ...
        def meta_ref(self, c: list[Any]) -> Expr: ...
        def ident_ref(self, c: list[Any]) -> Expr: ...

    # -------------------------------------------------------------- operators
    def binary(self, c: list[Any]) -> Expr:
        # Fold `a op b op c ...` by precedence; all operators are left-associative.
        operands: list[Expr] = [c[0]]
        operators: list[tuple[str, int, Span]] = []

        def reduce_top() -> None:
            name, _, op_span = operators.pop()
            rhs, lhs = operands.pop(), operands.pop()
            # An operand that is a variable has no span of its own here (its span is where it
            # was bound); the operator's token then stands in for that end of the call.
            span = (span_of(lhs) or op_span).merge(span_of(rhs) or op_span)
            operands.append(Call(op_registry.get(name), (lhs, rhs), self.state.default_attrs(name),
                                 span=span))

        for i in range(1, len(c), 2):
            name, prec = _BINOPS[c[i].value]
            while operators and operators[-1][1] >= prec:
                reduce_top()
            operators.append((name, prec, self._span(c[i])))
            operands.append(c[i + 1])
        while operators:
            reduce_top()
        return operands[0]

    # -------------------------------------------------------------- statements
    def fast_call_stmt(self, c: list[Any]) -> Any:
        """`%5 = op(%4, %x, 1f, axis=1, v=[1, 2]) /* ty=... */;` as one token (FAST_CALL_STMT,
        grammar/relay.lark): what the callbacks of `GRAPH "=" bind_value ";"` do, in the
        order the parser would have reduced them, with the same spans (the token holds no
        line break: every piece is on its line) and the same diagnostics.

        An operator's attributes written the same way again are the same object (the
        attribute memo of `ParseState.make_op_attrs` guarantees it), so they are looked
        up by their text; only attributes that were read without a diagnostic are."""
        tok = c[0]
        state = self.state
        source, line, column, start = state.source_name, tok.line, tok.column, tok.start_pos
        pieces = fast_pieces(tok)
        graph_text = pieces[0][1]
        offset = len(pieces[0][0]) + len(graph_text)
        gap, callee_text = pieces[1]
        offset += len(gap)
        callee = self.callee_ident([_Tok("IDENT", callee_text, line, column + offset,
                                         start + offset)])
        offset += len(callee_text)
        args: list[Any] = []
        i = 2
        while True:                                  # arguments
            gap, text = pieces[i]
            offset += len(gap)
            first = text[0]
            if first != "%" and first != "-" and not first.isdigit():
                break
            col = column + offset
            span = _new_tuple(Span, (source, line, col, line, col + len(text)))
            if first != "%":
                args.append(self._literal(text, span))
            elif text[1].isdigit():
                args.append(state.lookup_graph(text, span))
            else:
                name = text[1:]
                if name in RESERVED:
                    self._reserved_name(text, span)
                args.append(state.lookup_local(name, span))
            offset += len(text)
            i += 1
        attrs: Any = None
        memo_key = None
        cached = None
        if first != ")":                             # key = value, ...
            node = callee.node
            if type(node) is Op and not (args and type(args[-1]) is MetaAttrsArg):
                whole = tok.value
                memo_key = (node.name, whole[offset:len(whole) - len(pieces[-1][1])])
                cached = state.fast_attrs.get(memo_key)
            if cached is None:
                diagnostics = len(state.diag.diagnostics)
                attrs = AttrList()
                while text[0] != ")":
                    key_col = column + offset
                    offset += len(text)
                    gap, value = pieces[i + 1]
                    offset += len(gap)
                    if value == "[":
                        values: list[Any] = []
                        offset += 1
                        i += 2
                        while True:
                            gap, value = pieces[i]
                            offset += len(gap)
                            if value == "]":
                                break
                            values.append(self._fast_scalar(value, line, column + offset, start
                                                            + offset))
                            offset += len(value)
                            i += 1
                        attrs.append((text, tuple(values), _new_tuple(
                            Span, (source, line, key_col, line, key_col + len(text)))))
                    else:
                        attrs.append((text, self._fast_scalar(value, line, column + offset,
                                                              start + offset),
                                      _new_tuple(Span, (source, line, key_col, line,
                                                        key_col + len(text)))))
                        i += 1
                    offset += len(value)
                    i += 1
                    gap, text = pieces[i]
                    offset += len(gap)
            else:
                offset = len(tok.value) - len(pieces[-1][1])
        col = column + offset                        # the `)`
        post = _CallArgs(args, attrs, _new_tuple(Span, (source, line, col, line, col + 1)))
        if cached is not None:
            value = Call(callee.node, tuple(args), cached, span=callee.span.merge(post.span))
        else:
            value = self.call([callee, post])
            if (memo_key is not None and type(value) is Call and value.attrs is not None
                    and type(value.attrs) is not DictAttrs       # those are not shared
                    and len(state.diag.diagnostics) == diagnostics):
                state.fast_attrs[memo_key] = value.attrs
        return self.graph_stmt([_Tok("GRAPH", graph_text, line, column + len(pieces[0][0]),
                                     start + len(pieces[0][0])), value])

    def _fast_scalar(self, text: str, line: int, column: int, start: int) -> Any:
        first = text[0]
        if first == '"':
            return parse_string(text)
        if first == "-" or first.isdigit():
            try:
                return parse_number(text)[0]
            except LiteralError:
                return self._number_value(text, _Tok("NUMBER", text, line, column, start))
        return _FAST_NAMES[text]

    # -------------------------------------------------------------- calls
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
        attrs = c[-2] if len(c) > 1 and type(c[-2]) is AttrList else None
        return _CallArgs(args, attrs, end)

    def projection_index(self, c: list[Any]) -> tuple[int, Span]:
        span = self._span(c[0])
        try:
            return parse_index(c[0].value), span
        except LiteralError as e:
            self._error(str(e), span, code="literal")
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
                            "object", post.attrs[0][2], code="attribute")
        elif post.attrs:
            attrs = self._dict_attrs(post.attrs)
        return Call(callee, tuple(args), attrs, span=span)

    def _op_attrs(self, name: str, items: AttrList | None, call_span: Span | None) -> Any:
        opdef = op_registry.get_op_def(name)
        if opdef is None:
            return None
        if opdef.attrs is DictAttrs:
            # TVM's attrs type "DictAttrs" (`vm.invoke_tvm_op` carries the primitive's
            # attributes): any `key=value`, printed and read back as written.
            return DictAttrs(tuple({k: v for k, v, _ in items}.items())) if items else None
        if opdef.attrs is None:
            if items:
                self._error(f"operator `{name}` takes no attributes", items[0][2],
                            code="attribute")
            return None
        values = {key: value for key, value, _ in items or ()}
        try:
            return self.state.make_op_attrs(opdef.attrs, values, name)
        except AttrError as e:
            span = next((s for k, _, s in items or () if k == e.key), None)
            self._error(e.message, span or call_span, code="attribute")
            return None

    def _dict_attrs(self, items: AttrList) -> DictAttrs | None:
        type_key = None
        entries = []
        for key, value, key_span in items:
            if key == "attrs_type_key":
                type_key = value
            else:
                entries.append((key, value))
        if type_key is None:
            self._error("attributes on a call of a non-operator need `attrs_type_key=\"...\"` "
                        "naming the attribute type", items[0][2], code="attribute")
            return None
        return DictAttrs(tuple(entries), type_key)

    # -------------------------------------------------------------- attributes
    def attr_list(self, c: list[Any]) -> AttrList:
        return AttrList(c[0])

    def attr(self, c: list[Any]) -> tuple[str, Any, Span]:
        return c[0].value, c[1], self._span(c[0])

    def av_number(self, c: list[Any]) -> int | float:
        return self._number_value(c[0].value, c[0])

    def _number_value(self, text: str, tok: Any) -> int | float:
        try:
            return parse_number(text)[0]
        except LiteralError as e:
            self._error(str(e), self._span(tok), code="literal")
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
        if name in SPECIAL_FLOATS:
            return parse_number(name)[0]
        if self.state.constructors.get(name) is not None:
            return self.state.constructors[name]
        self._error(f"bare identifier `{name}` is not an attribute value; "
                    f"strings are quoted: \"{name}\"", self._span(c[0]), code="syntax")
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
