"""Dataflow patterns: the nodes of TVM's pattern language (python/tvm/relay/dataflow_pattern).

A pattern is a small graph of `DFPattern` nodes built with the functions of this
package (`is_op("nn.conv2d")(wildcard(), is_constant())`); it is matched against
expressions by `matcher.py`. Patterns compare by identity, as TVM's do: one pattern
object used twice in a larger pattern (`is_conv = is_op(...)(...)`, then `relu(is_conv)`
and `leaky_relu(is_conv)`) must match one expression both times (a diamond).

Nothing here walks expressions; `pattern_children` and `pattern_post_order` walk
patterns with an explicit stack.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..ir.expr import Expr, Op
from ..ir.types import Type

if TYPE_CHECKING:
    from ..ir.module import IRModule


# The engines (matcher.py, rewrite.py, printer.py) import this module; they install their
# entry points here when they are imported, as the package's __init__ does first thing,
# so that this module imports none of them (no import circle).
_ENGINE: dict[str, Callable[..., Any]] = {}


class DFPattern:
    """The base of every pattern (TVM's `DFPattern`)."""

    __slots__ = ("__weakref__",)

    # ------------------------------------------------------------ building
    def __call__(self, *args: DFPattern | None) -> CallPattern:
        """`pattern(a, b)`: a call of what `pattern` matches; `pattern(None)`: any arguments."""
        if len(args) == 1 and args[0] is None:
            return CallPattern(self, None)
        return CallPattern(self, list(args))

    def __or__(self, other: DFPattern) -> AltPattern:
        return AltPattern(self, other)

    def __add__(self, other: DFPattern) -> CallPattern:
        return is_op("add")(self, other)

    def __sub__(self, other: DFPattern) -> CallPattern:
        return is_op("subtract")(self, other)

    def __mul__(self, other: DFPattern) -> CallPattern:
        return is_op("multiply")(self, other)

    def __truediv__(self, other: DFPattern) -> CallPattern:
        return is_op("divide")(self, other)

    def has_attr(self, attrs: Mapping[str, Any]) -> AttrPattern:
        """This pattern, on an expression with these attributes (of a call, of a function,
        or of an operator: `TOpPattern` and the other fields of its `OpDef`)."""
        return AttrPattern(self, dict(attrs))

    def has_type(self, ttype: Type) -> TypePattern:
        return has_type(ttype, self)

    def has_dtype(self, dtype: str) -> DataTypePattern:
        return has_dtype(dtype, self)

    def has_shape(self, shape: Sequence[int]) -> ShapePattern:
        return has_shape(shape, self)

    def dominates(self, parent: DFPattern, path: DFPattern | None = None) -> DominatorPattern:
        return DominatorPattern(parent, wildcard() if path is None else path, self)

    def optional(self, option_constructor: Callable[[DFPattern], DFPattern]) -> AltPattern:
        """This pattern, or `option_constructor(this pattern)`: `conv.optional(relu_of)`."""
        return self | option_constructor(self)

    # ------------------------------------------------------------ using
    def match(self, expr: Expr) -> bool:
        return match(self, expr)

    def partition(self, expr: Expr, attrs: Mapping[str, Any] | None = None,
                  check: Callable[[Expr], bool] = lambda x: True) -> Expr:
        return partition(self, expr, attrs, check)

    def __str__(self) -> str:
        return str(_ENGINE["text"](self))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self}>"

    def astext(self) -> str:
        return str(self)


class ExprPattern(DFPattern):
    """Matches an expression structurally equal to `expr` (an operator: by name)."""

    __slots__ = ("expr",)

    def __init__(self, expr: Expr):
        if not isinstance(expr, Expr):
            raise TypeError(f"ExprPattern: expected a Relay expression, got {type(expr).__name__}")
        self.expr = expr


class VarPattern(DFPattern):
    """Matches a variable, named `name` unless `name` is empty."""

    __slots__ = ("name",)

    def __init__(self, name: str = ""):
        self.name = name

    @property
    def name_hint(self) -> str:
        return self.name


class ConstantPattern(DFPattern):
    """Matches a constant."""

    __slots__ = ()


class WildcardPattern(DFPattern):
    """Matches anything (or, after `redirect_to(p)`, what `p` matches)."""

    __slots__ = ("pattern",)

    def __init__(self) -> None:
        self.pattern: DFPattern | None = None

    def redirect_to(self, pat: DFPattern) -> None:
        """Make this wildcard match what `pat` matches: patterns that refer to themselves."""
        self.pattern = pat


class CallPattern(DFPattern):
    """Matches a call of what `op` matches on `args` (None: any arguments)."""

    __slots__ = ("args", "op")

    def __init__(self, op: DFPattern, args: Sequence[DFPattern] | None):
        self.op = _check_pattern(op, "CallPattern op")
        self.args = None if args is None else [_check_pattern(a, "CallPattern argument")
                                               for a in args]


class FunctionPattern(DFPattern):
    """Matches a function with these parameters (None: any) and body."""

    __slots__ = ("body", "params")

    def __init__(self, params: Sequence[DFPattern] | None, body: DFPattern):
        self.params = None if params is None else [_check_pattern(p, "FunctionPattern parameter")
                                                   for p in params]
        self.body = _check_pattern(body, "FunctionPattern body")


class TuplePattern(DFPattern):
    """Matches a tuple of these fields (None: any fields)."""

    __slots__ = ("fields",)

    def __init__(self, fields: Iterable[DFPattern] | None):
        self.fields = None if fields is None else [_check_pattern(f, "TuplePattern field")
                                                   for f in fields]

    def __getitem__(self, index: int) -> DFPattern:
        if self.fields is None or index >= len(self.fields):
            raise IndexError("TuplePattern index out of range")
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields or ())

    def astype(self, _: Any) -> None:
        raise TypeError("astype cannot be used on TuplePattern")


class TupleGetItemPattern(DFPattern):
    """Matches `tuple.index` (index -1 or None: any index)."""

    __slots__ = ("index", "tuple")

    def __init__(self, tuple_value: DFPattern, index: int | None = None):
        self.tuple = _check_pattern(tuple_value, "TupleGetItemPattern tuple")
        self.index = -1 if index is None else index


class IfPattern(DFPattern):
    __slots__ = ("cond", "false_branch", "true_branch")

    def __init__(self, cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern):
        self.cond = _check_pattern(cond, "IfPattern condition")
        self.true_branch = _check_pattern(true_branch, "IfPattern true branch")
        self.false_branch = _check_pattern(false_branch, "IfPattern false branch")


class LetPattern(DFPattern):
    __slots__ = ("body", "value", "var")

    def __init__(self, var: DFPattern, value: DFPattern, body: DFPattern):
        self.var = _check_pattern(var, "LetPattern variable")
        self.value = _check_pattern(value, "LetPattern value")
        self.body = _check_pattern(body, "LetPattern body")


class AltPattern(DFPattern):
    """Matches what `left` matches, else what `right` matches."""

    __slots__ = ("left", "right")

    def __init__(self, left: DFPattern, right: DFPattern):
        self.left = _check_pattern(left, "AltPattern left")
        self.right = _check_pattern(right, "AltPattern right")


class TypePattern(DFPattern):
    """Matches what `pattern` matches when the expression's type is `type`."""

    __slots__ = ("pattern", "type")

    def __init__(self, pattern: DFPattern, ttype: Type):
        if not isinstance(ttype, Type):
            raise TypeError(f"has_type: expected a Relay type, got {type(ttype).__name__}")
        self.pattern = _check_pattern(pattern, "TypePattern")
        self.type = ttype


class DataTypePattern(DFPattern):
    """Matches what `pattern` matches when the expression is a tensor of `dtype`."""

    __slots__ = ("dtype", "pattern")

    def __init__(self, pattern: DFPattern, dtype: str):
        from ..ir.dtype import canonical_dtype
        self.pattern = _check_pattern(pattern, "DataTypePattern")
        self.dtype = canonical_dtype(dtype) or dtype


class ShapePattern(DFPattern):
    """Matches what `pattern` matches when the expression is a tensor of `shape`."""

    __slots__ = ("pattern", "shape")

    def __init__(self, pattern: DFPattern, shape: Sequence[Any]):
        self.pattern = _check_pattern(pattern, "ShapePattern")
        self.shape = tuple(int(d) if isinstance(d, int) or hasattr(d, "__index__") else d
                           for d in shape)


class AttrPattern(DFPattern):
    """Matches what `pattern` matches when the expression has these attributes."""

    __slots__ = ("attrs", "pattern")

    def __init__(self, pattern: DFPattern, attrs: Mapping[str, Any]):
        self.pattern = _check_pattern(pattern, "AttrPattern")
        self.attrs = dict(attrs)


class DominatorPattern(DFPattern):
    """`child` reached from `parent` only through paths matching `path` (TVM's diamond)."""

    __slots__ = ("child", "parent", "path")

    def __init__(self, parent: DFPattern, path: DFPattern, child: DFPattern):
        self.parent = _check_pattern(parent, "DominatorPattern parent")
        self.path = _check_pattern(path, "DominatorPattern path")
        self.child = _check_pattern(child, "DominatorPattern child")


def _check_pattern(p: Any, what: str) -> DFPattern:
    if not isinstance(p, DFPattern):
        raise TypeError(f"{what} must be a pattern (wildcard(), is_op(...), ...), "
                        f"got {type(p).__name__}")
    return p


def pattern_children(p: DFPattern) -> list[DFPattern]:
    """The sub-patterns of `p`, in the order the matcher visits them."""
    if isinstance(p, CallPattern):
        return [p.op, *(p.args or ())]
    if isinstance(p, FunctionPattern):
        return [*(p.params or ()), p.body]
    if isinstance(p, TuplePattern):
        return list(p.fields or ())
    if isinstance(p, TupleGetItemPattern):
        return [p.tuple]
    if isinstance(p, IfPattern):
        return [p.cond, p.true_branch, p.false_branch]
    if isinstance(p, LetPattern):
        return [p.var, p.value, p.body]
    if isinstance(p, AltPattern):
        return [p.left, p.right]
    if isinstance(p, (TypePattern, DataTypePattern, ShapePattern, AttrPattern)):
        return [p.pattern]
    if isinstance(p, DominatorPattern):
        return [p.parent, p.path, p.child]
    if isinstance(p, WildcardPattern) and p.pattern is not None:
        return [p.pattern]
    return []


def pattern_post_order(root: DFPattern) -> list[DFPattern]:
    """Every pattern node reachable from `root`, sub-patterns first, each once (iterative;
    a redirected wildcard may make the pattern graph cyclic: a node is entered once)."""
    order: list[DFPattern] = []
    seen: set[int] = set()
    stack: list[tuple[DFPattern, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for child in reversed(pattern_children(node)):
            if id(child) not in seen:
                stack.append((child, False))
    return order


# ---------------------------------------------------------------- TVM's sugar


def is_var(name: str = "") -> VarPattern:
    return VarPattern(name)


def is_constant() -> ConstantPattern:
    return ConstantPattern()


def is_expr(expr: Expr) -> ExprPattern:
    return ExprPattern(expr)


def is_op(op_name: str) -> ExprPattern:
    """A pattern matching the operator `op_name` (ValueError for an unknown op)."""
    from ..op import get
    try:
        return ExprPattern(get(op_name))
    except KeyError:
        raise ValueError(f"is_op: unknown operator `{op_name}`") from None


def is_tuple(fields: Iterable[DFPattern] | None) -> TuplePattern:
    return TuplePattern(fields)


def is_tuple_get_item(tuple_value: DFPattern, index: int | None = None) -> TupleGetItemPattern:
    return TupleGetItemPattern(tuple_value, index)


def is_if(cond: DFPattern, true_branch: DFPattern, false_branch: DFPattern) -> IfPattern:
    return IfPattern(cond, true_branch, false_branch)


def is_let(var: DFPattern, value: DFPattern, body: DFPattern) -> LetPattern:
    return LetPattern(var, value, body)


def wildcard() -> WildcardPattern:
    return WildcardPattern()


def has_type(ttype: Type, pattern: DFPattern | None = None) -> TypePattern:
    return TypePattern(wildcard() if pattern is None else pattern, ttype)


def has_dtype(dtype: str, pattern: DFPattern | None = None) -> DataTypePattern:
    return DataTypePattern(wildcard() if pattern is None else pattern, dtype)


def has_shape(shape: Sequence[int], pattern: DFPattern | None = None) -> ShapePattern:
    return ShapePattern(wildcard() if pattern is None else pattern, shape)


def has_attr(attrs: Mapping[str, Any], pattern: DFPattern | None = None) -> AttrPattern:
    return (wildcard() if pattern is None else pattern).has_attr(attrs)


def dominates(parent: DFPattern, path: DFPattern, child: DFPattern) -> DominatorPattern:
    return DominatorPattern(parent, path, child)


def match(pattern: DFPattern, expr: Expr) -> bool:
    """Whether `pattern` matches `expr` (the root of the match)."""
    return bool(_ENGINE["match"](pattern, expr))


def partition(pattern: DFPattern, expr: Expr, attrs: Mapping[str, Any] | None = None,
              check: Callable[[Expr], bool] = lambda x: True) -> Expr:
    """`expr` with each match of `pattern` replaced by a call of a function holding it."""
    return _ENGINE["partition"](pattern, expr, attrs, check)


class DFPatternCallback:
    """A rewrite: set `self.pattern` and override `callback(pre, post, node_map)`.

    `require_type`: types are inferred before matching (the callback may read
    `checked_type`); `rewrite_once`: the callback is not run again once it rewrote."""

    def __init__(self, require_type: bool = False, rewrite_once: bool = False):
        self.pattern: DFPattern | None = None
        self.require_type = require_type
        self.rewrite_once = rewrite_once

    def rewrite(self, expr: Expr) -> Expr:
        return rewrite(self, expr)

    def callback(self, pre: Expr, post: Expr, node_map: dict[DFPattern, list[Expr]]) -> Expr:
        raise NotImplementedError("DFPatternCallback.callback")


def rewrite(callbacks: DFPatternCallback | Sequence[DFPatternCallback], expr: Expr,
            mod: IRModule | None = None) -> Expr:
    """`expr` rewritten by the callbacks until it stops changing (TVM's `rewrite`)."""
    cbs = [callbacks] if isinstance(callbacks, DFPatternCallback) else list(callbacks)
    for cb in cbs:
        if cb.pattern is None:
            raise ValueError(f"{type(cb).__name__}: set self.pattern before rewriting")
    return _ENGINE["rewrite"](cbs, expr, mod)


def op_name_of(p: DFPattern) -> str | None:
    """The operator an `is_op(...)` pattern names, else None."""
    if isinstance(p, ExprPattern) and isinstance(p.expr, Op):
        return p.expr.name
    return None


__all__ = ["AltPattern", "AttrPattern", "CallPattern", "ConstantPattern", "DFPattern",
           "DFPatternCallback", "DataTypePattern", "DominatorPattern", "ExprPattern",
           "FunctionPattern", "IfPattern", "LetPattern", "ShapePattern",
           "TupleGetItemPattern", "TuplePattern", "TypePattern", "VarPattern", "WildcardPattern",
           "dominates", "has_attr", "has_dtype", "has_shape", "has_type", "is_constant", "is_expr",
           "is_if", "is_let", "is_op", "is_tuple", "is_tuple_get_item", "is_var", "match",
           "partition", "pattern_children", "pattern_post_order", "rewrite", "wildcard"]
