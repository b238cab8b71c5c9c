"""AnnotateTarget: mark which target runs each operation (TVM's
src/relay/transforms/annotate_target.cc).

    AnnotateTarget(["example"])            relay opt -p 'AnnotateTarget{targets=example}'

Every call gets a target: the first target of the list whose predicate accepts the call
(`registry.register_target_op`), or, for a call of a composite function, the target its
`Composite` name starts with (`example.conv2d_bias_relu` -> `example`) if listed; else
`default` (TVM's name for "the host compiles it"). Then each argument of the call is
fenced: `annotation.compiler_end(arg, <target of arg>)` where the argument was computed
under a target, and `annotation.compiler_begin(..., <target of the call>)` around every
argument (variables and constants included). Tuples, projections and references take
the target their fields agree on (`default` when they differ); function bodies, `if`
branches and `let` bodies end with a `compiler_end`. Composite functions are not looked
into. Existing annotations are kept, so the pass is idempotent.

Without targets every call is `default` (a warning says so). With
`include_non_call_ops=False` tuples, projections, references and `if`s are not
annotated: their operands are ended and they stay on the host.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ...ir.expr import (
    Call,
    Expr,
    Function,
    If,
    Let,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ...ir.module import IRModule
from ...ir.traverse import post_order
from ..pass_infra import ModulePass, PassContext, register_pass
from .annotations import DEFAULT, compiler_begin, compiler_end, compiler_of, is_begin, is_end
from .notes import warning
from .registry import is_known_target, op_supported


def _names(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        parts = value.replace(",", ";").split(";")
    else:
        parts = list(value)
    return tuple(p.strip() for p in parts if isinstance(p, str) and p.strip())


@register_pass
@dataclass(frozen=True)
class AnnotateTarget(ModulePass):
    """Fence every operation with compiler_begin/compiler_end naming its target."""

    name: ClassVar[str] = "AnnotateTarget"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    targets: Any = ()                  # ["example", ...] or "example;other": by priority
    include_non_call_ops: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "targets", ";".join(_names(self.targets)))

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        targets = _names(self.targets)
        if not targets:
            warning(ctx, "AnnotateTarget: no target given (targets=NAME;...): every call is "
                         "left to the default compiler")
        for t in targets:
            if not is_known_target(t):
                warning(ctx, f"AnnotateTarget: nothing is registered for target `{t}` "
                             "(register_target_op / register_pattern_table): it takes no call")
        out = mod.copy()
        for gv, fn in mod.functions.items():
            if fn.attrs is not None and fn.attrs.get("Compiler"):
                continue                    # already external (TVM's function passes skip it)
            out.functions[gv] = _Annotator(targets, self.include_non_call_ops).run(fn)
        return out


class _Annotator:
    def __init__(self, targets: tuple[str, ...], include_non_call_ops: bool):
        self.targets = targets
        self.non_call = include_non_call_ops
        # the target of each rewritten expression (node kept beside its id)
        self.target_of: dict[int, tuple[Expr, str]] = {}

    def _get(self, e: Expr) -> str | None:
        entry = self.target_of.get(id(e))
        return entry[1] if entry is not None and entry[0] is e else None

    def _set(self, e: Expr, target: str) -> None:
        self.target_of[id(e)] = (e, target)

    def run(self, fn: Function) -> Function:
        done: dict[int, Expr] = {}

        def children(n: Expr) -> tuple[Expr, ...]:
            if isinstance(n, Function) and _composite(n):
                return ()
            return n.children()
        for node in post_order(fn, children):
            kids = children(node)
            post = node.with_children([done[id(c)] for c in kids]) if kids else node
            done[id(node)] = self._rewrite(node, post)
        out = done[id(fn)]
        assert isinstance(out, Function)
        return out

    # ------------------------------------------------------------ helpers
    def annotate_args(self, args: tuple[Expr, ...], pre_args: tuple[Expr, ...],
                      target: str = "") -> tuple[str, list[Expr]]:
        """Each argument ended with its own target and begun with the call's; the call's
        target (`target`, or the one the arguments agree on, else default). Arguments that
        are not tensors (or tuples of them) are passed as they are: no target takes them,
        and a fence would stop types flowing into them (`Cons(%x, Nil)`)."""
        ref = ""
        ends: list[tuple[Expr, bool]] = []     # (expression, already begun)
        for arg, pre_arg in zip(args, pre_args):
            arg_target = DEFAULT
            if not is_begin(arg) and not is_data(pre_arg.checked_type):
                ends.append((arg, True))
            elif is_begin(arg):
                if compiler_of(arg) != DEFAULT:
                    ends.append((arg, True))
                else:
                    ends.append((arg.args[0], False))
                inner = arg.args[0]
                if is_end(inner):
                    arg_target = compiler_of(inner) or DEFAULT
            elif self._get(arg) is not None:
                arg_target = self._get(arg) or DEFAULT
                if isinstance(arg, Call) and not arg.args:
                    ends.append((arg, False))
                else:
                    ends.append((compiler_end(arg, arg_target), False))
            else:
                ends.append((arg, False))
            if ref == "":
                ref = arg_target
            elif ref != arg_target:
                ref = DEFAULT
        op_target = target or ref
        if ref == "":
            return op_target, list(args)
        return op_target, [e if begun else compiler_begin(e, op_target) for e, begun in ends]

    def end_and_propagate(self, expr: Expr, pre: Expr) -> Expr:
        """`expr` ended with its target where it was computed under one."""
        if not is_end(expr) and not is_data(pre.checked_type):
            return expr
        target = self._get(expr)
        if target is not None:
            if isinstance(expr, (RefWrite, RefCreate, RefRead, TupleGetItem)) \
                    or (isinstance(expr, Call) and expr.args) \
                    or (isinstance(expr, Tuple) and expr.fields):
                new = compiler_end(expr, target)
                self._set(new, target)
                return new
        elif is_end(expr) and compiler_of(expr) == DEFAULT:
            inner = expr.args[0]
            target = self._get(inner) or DEFAULT
            new = compiler_end(inner, target)
            self._set(new, target)
            return new
        return expr

    # ------------------------------------------------------------ rewriting
    def _rewrite(self, pre: Expr, post: Expr) -> Expr:
        if isinstance(pre, Call):
            return self._call(pre, post)
        if isinstance(pre, Tuple):
            if not self.non_call:
                fields = (self.end_and_propagate(f, p) for f, p in zip(post.fields, pre.fields))
                return Tuple(tuple(fields), span=pre.span)
            target, fields = self.annotate_args(post.fields, pre.fields)
            new = Tuple(tuple(fields), span=pre.span)
            self._set(new, target)
            return new
        if isinstance(pre, TupleGetItem):
            if not self.non_call:
                return TupleGetItem(self.end_and_propagate(post.tuple_value, pre.tuple_value),
                                    post.index, span=pre.span)
            target, fields = self.annotate_args((post.tuple_value,), (pre.tuple_value,))
            new = TupleGetItem(fields[0], post.index, span=pre.span)
            self._set(new, target)
            return new
        if isinstance(pre, Function):
            if _composite(pre):
                return pre
            return Function(post.params, self.end_and_propagate(post.body, pre.body),
                            post.ret_type, post.type_params, post.attrs, span=pre.span)
        if isinstance(pre, Let):
            body = self.end_and_propagate(post.body, pre.body)
            if isinstance(post.value, Function) or not self.non_call:
                value = post.value if isinstance(post.value, Function) \
                    else self.end_and_propagate(post.value, pre.value)
                return Let(post.var, value, body, span=pre.span)
            _, fields = self.annotate_args((post.value,), (pre.value,))
            return Let(post.var, fields[0], body, span=pre.span)
        if isinstance(pre, If):
            return If(self.end_and_propagate(post.cond, pre.cond),
                      self.end_and_propagate(post.true_branch, pre.true_branch),
                      self.end_and_propagate(post.false_branch, pre.false_branch), span=pre.span)
        if isinstance(pre, (RefCreate, RefRead, RefWrite)):
            kids = post.children()
            if not self.non_call:
                return post.with_children([self.end_and_propagate(k, p)
                                           for k, p in zip(kids, pre.children())])
            target, fields = self.annotate_args(kids, pre.children())
            new = post.with_children(fields)
            if new is post:
                new = type(post)(*fields, span=pre.span)
            self._set(new, target)
            return new
        return post

    def _call(self, pre: Call, post: Call) -> Expr:
        if is_begin(pre):
            return post                               # kept; handled by its user
        if is_end(pre):
            inner = post.args[0]
            if self._get(inner) is None:
                self._set(inner, compiler_of(post) or DEFAULT)
            return post
        if pre.args and is_begin(pre.args[0]) and compiler_of(pre.args[0]) != DEFAULT:
            return post                               # annotated by an earlier run
        supported: list[str] = []
        if isinstance(pre.op, Op):
            supported += [t for t in self.targets if op_supported(t, pre)]
        elif isinstance(pre.op, Function):
            comp = _composite(pre.op)
            if comp and "." in comp:
                prefix = comp.split(".", 1)[0]
                if prefix in self.targets:
                    supported.append(prefix)
        supported.append(DEFAULT)
        if isinstance(pre.op, Var) and not self.non_call:
            args = tuple(self.end_and_propagate(a, p) for a, p in zip(post.args, pre.args))
            return Call(post.op, args, post.attrs, post.type_args, span=pre.span)
        target = supported[0]
        _, args = self.annotate_args(post.args, pre.args, target)
        new = Call(post.op, tuple(args), post.attrs, post.type_args, span=pre.span)
        self._set(new, target)
        return new


def is_data(ty: Any) -> bool:
    """A tensor, or a tuple of data (what a target can take or give back)."""
    from ...ir.types import RefType, TensorType, TupleType
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif isinstance(t, RefType):
            stack.append(t.value)
        elif not isinstance(t, TensorType):
            return False
    return True


def _composite(fn: Function) -> str | None:
    value = fn.attrs.get("Composite") if fn.attrs is not None else None
    return value if isinstance(value, str) else None
