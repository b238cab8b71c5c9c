"""Matching a pattern against an expression (TVM's `DFPatternMatcher`,
src/relay/ir/dataflow_matcher.cc), without recursion.

Each visit of (pattern, expression) is a generator that asks for the visits it needs by
yielding them and receives their results; `_run` drives the generators with an explicit
stack. So neither deep patterns nor the dominator pattern's walk along a deep path of
the expression uses Python's stack.

As in TVM, a pattern node that matched is memoised with the expression it matched
(`memo`): a pattern node used twice must match one expression (diamonds), and the memo
is the node map handed to rewrite callbacks. A failed branch clears what it recorded
(the watermark of `matched`). `add` and `multiply` calls also match with their
arguments swapped, and `(a * b) / c` matches `a * (b / c)` and the other way round.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Generator
from types import GeneratorType
from typing import Any

from ..ir.attrs import Attrs, DictAttrs
from ..ir.expr import (
    Call,
    Constant,
    Expr,
    Function,
    If,
    Let,
    Op,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.node import MetaObject
from ..ir.types import TensorType, Type
from .graph import IndexedGraph
from .pattern import (
    _ENGINE,
    AltPattern,
    AttrPattern,
    CallPattern,
    ConstantPattern,
    DataTypePattern,
    DFPattern,
    DominatorPattern,
    ExprPattern,
    FunctionPattern,
    IfPattern,
    LetPattern,
    ShapePattern,
    TupleGetItemPattern,
    TuplePattern,
    TypePattern,
    VarPattern,
    WildcardPattern,
    op_name_of,
)

Visit = Generator[Any, Any, bool]
_MISSING = object()


class _Kind:
    """A request to run the pattern kind's own visit (after the memo check)."""

    __slots__ = ("expr", "pattern")

    def __init__(self, pattern: DFPattern, expr: Expr):
        self.pattern, self.expr = pattern, expr


class _Path:
    """A request to run `matches_path(op, expr)`."""

    __slots__ = ("expr", "op")

    def __init__(self, op: DominatorPattern, expr: Expr):
        self.op, self.expr = op, expr


class DFPatternMatcher:
    """Matches patterns against the nodes of one expression graph."""

    def __init__(self, graph: IndexedGraph):
        self.graph = graph
        self.memo: dict[DFPattern, list[Expr]] = {}
        self.matched: list[DFPattern] = []
        self.memoize = True
        self._typed = False

    # ------------------------------------------------------------ driving
    def match(self, pattern: DFPattern, expr: Expr) -> bool:
        self.memo = {}
        self.matched = []
        self.memoize = True
        return self._run(self._visit(pattern, expr))

    def visit(self, pattern: DFPattern, expr: Expr) -> bool:
        """One visit without clearing the memo (used to decide constant embedding)."""
        return self._run(self._visit(pattern, expr))

    def _run(self, first: Visit) -> bool:
        stack: list[Visit] = [first]
        result: Any = None
        while True:
            try:
                request = stack[-1].send(result)
            except StopIteration as stop:
                stack.pop()
                result = stop.value
                if not stack:
                    return bool(result)
                continue
            if isinstance(request, _Kind):
                stack.append(self._kind(request.pattern, request.expr))
            elif isinstance(request, _Path):
                stack.append(self._matches_path(request.op, request.expr))
            elif isinstance(request, GeneratorType):
                stack.append(request)
            else:
                stack.append(self._visit(*request))
            result = None

    def _clear(self, watermark: int) -> None:
        for p in self.matched[watermark:]:
            self.memo.pop(p, None)
        del self.matched[watermark:]

    def _visit(self, pattern: DFPattern, expr: Expr) -> Visit:
        if self.memoize and pattern in self.memo:
            return expr is self.memo[pattern][0]
        watermark = len(self.matched)
        out = yield _Kind(pattern, expr)
        if out:
            self.memo.setdefault(pattern, []).append(expr)
            self.matched.append(pattern)
        else:
            self._clear(watermark)
        return bool(out)

    def _kind(self, p: DFPattern, e: Expr) -> Visit:
        method = _KINDS.get(type(p))
        if method is None:
            raise TypeError(f"cannot match a {type(p).__name__}")
        return method(self, p, e)

    # ------------------------------------------------------------ pattern kinds
    def _alt(self, p: AltPattern, e: Expr) -> Visit:
        if (yield (p.left, e)):
            return True
        return bool((yield (p.right, e)))

    def _attr(self, p: AttrPattern, e: Expr) -> Visit:
        if not (yield (p.pattern, e)):
            return False
        if isinstance(e, Op):
            return all(_attr_equal(v, op_attr(e.name, k)) for k, v in p.attrs.items())
        if isinstance(e, Call):
            values = attrs_dict(e.attrs)
            return all(k in values and _attr_equal(v, values[k]) for k, v in p.attrs.items())
        if isinstance(e, Function):
            values = dict(e.attrs.entries) if e.attrs is not None else {}
            return all(k in values and _attr_equal(v, values[k]) for k, v in p.attrs.items())
        return False

    def _call(self, p: CallPattern, e: Expr) -> Visit:
        watermark = len(self.matched)
        if not isinstance(e, Call):
            return False
        if (yield (p.op, e.op)):
            watermark2 = len(self.matched)
            if (yield from_args(self, p.args, e.args, watermark2)):
                return True
            name = op_name_of(p.op)
            commutes = name in ("add", "multiply") and p.args is not None
            return bool(commutes and (yield from_args(self, list(reversed(p.args or [])),
                                                      e.args, watermark2)))
        self._clear(watermark)
        name = op_name_of(p.op)
        args = p.args or []
        if name == "divide" and len(args) == 2 and isinstance(args[0], CallPattern) \
                and op_name_of(args[0].op) == "multiply" and _is_op_call(e, "multiply") \
                and len(args[0].args or []) == 2 \
                and any(_is_op_call(a, "divide") for a in e.args):
            # (a * b) / c matches a * (b / c) and b * (a / c)
            inner = args[0]
            for i in range(2):
                div = CallPattern(p.op, [inner.args[i], args[1]])
                mul = CallPattern(inner.op, [inner.args[(i + 1) % 2], div])
                if (yield (mul, e)):
                    return True
                self._clear(watermark)
            return False
        if name == "multiply" and len(args) == 2:
            for i in range(2):
                inner = args[i]
                if isinstance(inner, CallPattern) and op_name_of(inner.op) == "divide" \
                        and len(inner.args or []) == 2 and _is_op_call(e, "divide") \
                        and any(_is_op_call(a, "multiply") for a in e.args):
                    # a * (b / c) matches (a * b) / c
                    mul = CallPattern(p.op, [inner.args[0], args[(i + 1) % 2]])
                    div = CallPattern(inner.op, [mul, inner.args[1]])
                    return bool((yield (div, e)))
        return False

    def _constant(self, p: ConstantPattern, e: Expr) -> Visit:
        return isinstance(e, Constant)
        yield  # pragma: no cover -- makes this a generator

    def _dtype(self, p: DataTypePattern, e: Expr) -> Visit:
        ty = self.type_of(e)
        if not isinstance(ty, TensorType) or ty.dtype != p.dtype:
            return False
        return bool((yield (p.pattern, e)))

    def _shape(self, p: ShapePattern, e: Expr) -> Visit:
        ty = self.type_of(e)
        if not isinstance(ty, TensorType) or tuple(ty.shape) != tuple(p.shape):
            return False
        return bool((yield (p.pattern, e)))

    def _type(self, p: TypePattern, e: Expr) -> Visit:
        from ..ir.equal import structural_equal
        ty = self.type_of(e)
        if ty is None or not structural_equal(p.type, ty):
            return False
        return bool((yield (p.pattern, e)))

    def _expr(self, p: ExprPattern, e: Expr) -> Visit:
        if isinstance(p.expr, Op):
            return isinstance(e, Op) and e.name == p.expr.name
        if p.expr is e:
            return True
        from ..ir.equal import structural_equal
        return structural_equal(p.expr, e)
        yield  # pragma: no cover

    def _function(self, p: FunctionPattern, e: Expr) -> Visit:
        if not isinstance(e, Function):
            return False
        if p.params is not None:
            if len(p.params) != len(e.params):
                return False
            for sub, param in zip(p.params, e.params):
                if not (yield (sub, param)):
                    return False
        return bool((yield (p.body, e.body)))

    def _tuple_get_item(self, p: TupleGetItemPattern, e: Expr) -> Visit:
        if not isinstance(e, TupleGetItem) or (p.index != -1 and p.index != e.index):
            return False
        return bool((yield (p.tuple, e.tuple_value)))

    def _tuple(self, p: TuplePattern, e: Expr) -> Visit:
        if not isinstance(e, Tuple):
            return False
        if p.fields is None:
            return True
        if len(p.fields) != len(e.fields):
            return False
        for sub, field in zip(p.fields, e.fields):
            if not (yield (sub, field)):
                return False
        return True

    def _if(self, p: IfPattern, e: Expr) -> Visit:
        if not isinstance(e, If):
            return False
        return bool((yield (p.cond, e.cond)) and (yield (p.true_branch, e.true_branch))
                    and (yield (p.false_branch, e.false_branch)))

    def _let(self, p: LetPattern, e: Expr) -> Visit:
        if not isinstance(e, Let):
            return False
        return bool((yield (p.var, e.var)) and (yield (p.value, e.value))
                    and (yield (p.body, e.body)))

    def _var(self, p: VarPattern, e: Expr) -> Visit:
        return isinstance(e, Var) and (not p.name or p.name == e.name_hint)
        yield  # pragma: no cover

    def _wildcard(self, p: WildcardPattern, e: Expr) -> Visit:
        if p.pattern is None:
            return True
        return bool((yield (p.pattern, e)))

    # ------------------------------------------------------------ dominators
    def _dominator(self, p: DominatorPattern, e: Expr) -> Visit:
        if not (yield (p.child, e)):
            return False
        matches_path = yield _Path(p, e)
        self.memoize = True
        if not matches_path:
            return False
        # the parent must be found somewhere in the dominator subtree of the child
        graph = self.graph
        if id(e) not in graph.index:
            return False
        stack = [graph.node_index(e)]
        visited: set[int] = set()
        while stack:
            current = stack.pop()
            for child in graph.dom_children[current]:
                if child in visited:
                    continue
                if (yield (p.parent, graph.nodes[child])):
                    return True
                stack.append(child)
                visited.add(child)
        return False

    def _matches_path(self, p: DominatorPattern, e: Expr) -> Visit:
        """Every input of `e` (but the callee and leaves) is the parent, or matches the
        path and its own inputs satisfy the same, recursively (done by requests)."""
        graph = self.graph
        if id(e) not in graph.index:
            return False
        callee = e.op if isinstance(e, Call) else None
        counted = 0
        for i in graph.inputs[graph.node_index(e)]:
            node = graph.nodes[i]
            if callee is not None and (node is callee or isinstance(node, (Constant, Var))):
                continue
            counted += 1
            self.memoize = True
            if not (yield (p.parent, node)):
                self.memoize = False
                if not (yield (p.path, node)):
                    return False
                if not (yield _Path(p, node)):
                    return False
        return counted > 0

    # ------------------------------------------------------------ types
    def type_of(self, e: Expr) -> Type | None:
        """`e`'s checked type, inferring the types of the whole graph once if need be."""
        if e.checked_type is None and not self._typed:
            self._typed = True
            infer_expr_types(self.graph.root)
        return e.checked_type


def from_args(m: DFPatternMatcher, pattern_args: list[DFPattern] | None,
              expr_args: tuple[Expr, ...], watermark: int) -> Visit:
    """The arguments of a call pattern against a call's (None: any)."""
    ok = True
    if pattern_args is not None:
        if len(pattern_args) != len(expr_args):
            ok = False
        else:
            for sub, arg in zip(pattern_args, expr_args):
                if not (yield (sub, arg)):
                    ok = False
                    break
    if not ok:
        m._clear(watermark)
    return ok


_KINDS = {
    AltPattern: DFPatternMatcher._alt,
    AttrPattern: DFPatternMatcher._attr,
    CallPattern: DFPatternMatcher._call,
    ConstantPattern: DFPatternMatcher._constant,
    DataTypePattern: DFPatternMatcher._dtype,
    DominatorPattern: DFPatternMatcher._dominator,
    ExprPattern: DFPatternMatcher._expr,
    FunctionPattern: DFPatternMatcher._function,
    IfPattern: DFPatternMatcher._if,
    LetPattern: DFPatternMatcher._let,
    ShapePattern: DFPatternMatcher._shape,
    TupleGetItemPattern: DFPatternMatcher._tuple_get_item,
    TuplePattern: DFPatternMatcher._tuple,
    TypePattern: DFPatternMatcher._type,
    VarPattern: DFPatternMatcher._var,
    WildcardPattern: DFPatternMatcher._wildcard,
}


def _is_op_call(e: Expr, name: str) -> bool:
    return isinstance(e, Call) and isinstance(e.op, Op) and e.op.name == name


# ---------------------------------------------------------------- attributes


def op_attr(op_name: str, key: str) -> Any:
    """An operator attribute as TVM's `Op::GetAttrMap` gives it: `TOpPattern` (the fusion
    pattern's number), `TOpIsStateful`, or any field of the op's `OpDef`."""
    from ..op import get_op_def
    opdef = get_op_def(op_name)
    if opdef is None:
        return _MISSING
    if key == "TOpPattern":
        return int(opdef.pattern)
    if key == "TOpIsStateful":
        return opdef.stateful
    if key in {f.name for f in dataclasses.fields(opdef)}:
        return getattr(opdef, key)
    return _MISSING


def attrs_dict(attrs: Any) -> dict[str, Any]:
    """A call's attributes by name: a schema's fields, a dictionary's entries, or the
    string and integer fields of an opaque `meta[relay.attrs.*]` object."""
    if attrs is None:
        return {}
    if isinstance(attrs, DictAttrs):
        return dict(attrs.entries)
    if isinstance(attrs, Attrs):
        return {f.name: getattr(attrs, f.name) for f in dataclasses.fields(attrs)}
    if isinstance(attrs, MetaObject):
        return meta_attrs(attrs)
    return {}


def meta_attrs(obj: MetaObject) -> dict[str, Any]:
    """The plain fields of an attributes object in the metadata section (TVM's node
    layout: a string is a `runtime.String` object, numbers are strings)."""
    try:
        tree = json.loads(obj.payload)
    except (ValueError, RecursionError):
        return {}
    out: dict[str, Any] = {}
    for key, value in (tree.get("attrs") or {}).items():
        if isinstance(value, dict) and value.get("type_key") == "runtime.String":
            out[key] = value.get("repr_str", "")
        elif isinstance(value, dict) and value.get("type_key") == "IntImm":
            try:
                out[key] = int((value.get("attrs") or {}).get("value", ""))
            except ValueError:
                pass
        elif isinstance(value, str):
            out[key] = value
    return out


def _attr_equal(expected: Any, actual: Any) -> bool:
    if actual is _MISSING:
        return False
    if isinstance(expected, (list, tuple)):
        if not isinstance(actual, (list, tuple)) or len(expected) != len(actual):
            return False
        return all(_attr_equal(a, b) for a, b in zip(expected, actual))
    if isinstance(expected, Expr) or isinstance(actual, Expr):
        from ..ir.equal import structural_equal
        return isinstance(expected, Expr) and isinstance(actual, Expr) \
            and structural_equal(expected, actual)
    if isinstance(expected, str) or isinstance(actual, str):
        return isinstance(expected, str) and isinstance(actual, str) and expected == actual
    try:
        return bool(expected == actual)
    except Exception:  # noqa: BLE001 -- incomparable values do not match
        return False


# ---------------------------------------------------------------- entry points


def infer_expr_types(expr: Expr, mod: Any = None) -> Expr:
    """Type `expr` in place (TVM's `InferTypeWithModule`): a function is typed as a
    global of a module holding `mod`'s functions, another expression as the body of a
    function over its free variables. Returns the typed expression; an ill-typed one is
    returned as it is (its types stay unknown)."""
    from ..ir.diagnostics import DiagnosticError
    from ..ir.expr import GlobalVar
    from ..ir.module import IRModule
    from ..typing import infer_types
    if expr.checked_type is not None:
        return expr
    if isinstance(expr, Function):
        fn = expr
    else:
        from ..ir.analysis import free_type_vars, free_vars
        fn = Function(tuple(free_vars(expr)), expr, None, tuple(free_type_vars(expr)))
    work = IRModule(dict(mod.functions) if mod is not None else {},
                    dict(mod.type_definitions) if mod is not None else {})
    taken = {gv.name_hint for gv in work.functions}
    name, n = "_tmp", 0
    while name in taken:
        n += 1
        name = f"_tmp{n}"
    work.functions[GlobalVar(name)] = fn
    try:
        infer_types(work)
    except (DiagnosticError, RecursionError):
        return expr
    return expr


def match_pattern(pattern: DFPattern, expr: Expr) -> bool:
    return DFPatternMatcher(IndexedGraph(expr)).match(pattern, expr)


_ENGINE["match"] = match_pattern
