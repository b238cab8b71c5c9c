"""ToCPS: continuation-passing style for a whole module (TVM's src/relay/transforms/to_cps.cc).

Every function, global or local, takes one more parameter: the continuation
`%k` that receives its result. A call that is not in tail position becomes a
call whose continuation is a closure holding the rest of the block; a call in
tail position passes `%k` on (a proper tail call); an `if` or `match` in the
middle of a block binds the rest of the block once, as a join continuation.

    def @f(%n: int32) -> int32 {              def @f[answer](%n: int32,
      %0 = @g(%n);                    ==>                    %k: fn (int32) -> answer) -> answer {
      add(%0, 1)                                @g(%n, fn (%x: int32) -> answer {
    }                                             %k(add(%x, 1))
                                                })
                                              }

As in TVM, each global gets a type parameter for its answer type (here
`answer`), so it can be called from any context; local functions use the
answer type of the global they are in. Types change accordingly: `fn (A) -> R`
becomes `fn (A', fn (R') -> answer) -> answer` wherever it occurs (parameters,
tuples, references, ADT arguments).

Preconditions: the module must type-check (it is type-checked here, after
ToBasicBlockNormalForm, which makes sharing across branches explicit so that
a shared value is computed once, before both branches); every binder binds a
distinct variable (as the parser makes them). Ops, constructors, tuples,
references and `match` are supported; functions marked `Primitive=1` (after
FuseOps) are rejected with `CPSError`. The output is not typed (run InferType).
Unlike the normal forms, ToCPS is not idempotent: a CPS program converted
again gets a second continuation. UnCPS (un_cps.py) goes back.

No recursion on program depth: each block (function body, branch, clause) is
flattened into bindings with an explicit stack, blocks are found with a work
list, and built from the innermost out. Types are converted once per distinct
type node of the global (`CPSTypes`), not once per expression: the types of
nested tuples share their sub-types, and converting each from scratch was
quadratic.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.block_forms import ATOMIC, is_primitive
from ...ir.diagnostics import Diagnostic, DiagnosticError
from ...ir.expr import Call, Clause, Constructor, Expr, Function, GlobalVar, If, Let, Match, Op, Var
from ...ir.module import IRModule
from ...ir.span import Span
from ...ir.types import (
    FuncType,
    GlobalTypeVar,
    RefType,
    TupleType,
    Type,
    TypeCall,
    TypeData,
    TypeVar,
    map_type,
)
from ...typing import infer_types
from ..pass_infra import ModulePass, PassContext, register_pass
from .to_basic_block_normal_form import to_basic_block_normal_form


class CPSError(DiagnosticError):
    """A program ToCPS does not handle (see the module's preconditions): a located
    diagnostic, as for any other input a pass refuses."""

    def __init__(self, message: str, span: Span | None):
        super().__init__([Diagnostic.error(f"ToCPS: {message}", span)])


def cps_type(ty: Type, answer: Type) -> Type:
    """`ty` with every function type `fn (A) -> R` made `fn (A', fn (R') -> answer) -> answer`."""
    return CPSTypes(answer)(ty)


class CPSTypes:
    """`cps_type` for one answer type, memoised by type identity across calls.

    The types of a program share their sub-types (the type of `((%a, %b), %c)` holds
    the type of `(%a, %b)` itself), so a converter given each node's type in turn
    converts every distinct type node once, reusing what it converted before: work
    linear in the number of distinct type nodes, not in the sum of the types' sizes
    (quadratic on nested tuples). The exception is a type holding a polymorphic
    function type: each occurrence needs type variables of its own (`_rebind`), so
    that part (not its monomorphic sub-types) is converted again at each call.
    `rebuilt` counts the type nodes converted."""

    def __init__(self, answer: Type):
        self.answer = answer
        # id of a type -> (the type, kept alive so that its id is not reused; its conversion)
        self._done: dict[int, tuple[Type, Type]] = {}
        self.rebuilt = 0

    def __call__(self, ty: Type) -> Type:
        done = self._done
        hit = done.get(id(ty))
        if hit is not None:
            return hit[1]
        fresh: dict[int, Type] = {}      # this call's conversions of types binding type variables

        def converted(t: Type) -> Type | None:
            hit = done.get(id(t))
            return hit[1] if hit is not None else fresh.get(id(t))
        stack: list[tuple[Type, bool]] = [(ty, False)]
        while stack:
            t, expanded = stack.pop()
            if converted(t) is not None:
                continue
            kids = _type_kids(t)
            if not expanded and kids:
                stack.append((t, True))
                stack.extend((c, False) for c in kids if converted(c) is None)
                continue
            self.rebuilt += 1
            new_kids: list = [converted(c) for c in kids]     # all converted by now
            new = _rebuild_type(t, new_kids, self.answer)
            if (isinstance(t, FuncType) and t.type_params) or any(id(c) in fresh for c in kids):
                fresh[id(t)] = new
            else:
                done[id(t)] = (t, new)
        out = converted(ty)
        assert out is not None
        return out


def _type_kids(t: Type) -> tuple[Type, ...]:
    if isinstance(t, TupleType):
        return t.fields
    if isinstance(t, FuncType):
        return (*t.arg_types, t.ret_type)
    if isinstance(t, TypeCall):
        return t.args
    if isinstance(t, RefType):
        return (t.value,)
    return ()


def _rebuild_type(t: Type, kids: list[Type], answer: Type) -> Type:
    if isinstance(t, TupleType):
        return TupleType(tuple(kids))
    if isinstance(t, FuncType):
        k = FuncType((kids[-1],), answer)
        out = FuncType((*kids[:-1], k), answer, t.type_params)
        return _rebind(out) if t.type_params else out
    if isinstance(t, TypeCall):
        return TypeCall(t.func, tuple(kids))
    if isinstance(t, RefType):
        return RefType(kids[0])
    return t


def _rebind(t: FuncType) -> FuncType:
    """`t` with type parameters of its own. The type of a polymorphic global used as a
    value (`let %f = @id`) names the global's own TypeVars; the output must not share
    them between two definitions, which a printed and re-parsed module cannot do."""
    fresh = {id(tv): TypeVar(tv.name_hint, span=tv.span) for tv in t.type_params}
    body = map_type(FuncType(t.arg_types, t.ret_type), lambda u: fresh.get(id(u)))
    assert isinstance(body, FuncType)
    return FuncType(body.arg_types, body.ret_type, tuple(fresh[id(tv)] for tv in t.type_params),
                    span=t.span)


# ---------------------------------------------------------------- linear blocks


@dataclass(eq=False)
class _Block:
    """A function body, branch or clause: bindings in evaluation order, then a tail."""

    root: Expr
    k: Var                                  # its continuation
    bindings: list[tuple[Var, object]] = field(default_factory=list)
    tail: object = None
    result: Expr | None = None


@dataclass(eq=False)
class _CallK:
    callee: Expr
    args: list[Expr]
    span: object


@dataclass(eq=False)
class _Branch:
    node: Expr                              # the original If or Match
    head: Expr                              # condition or matched value, atomic
    blocks: list[_Block]


@dataclass(eq=False)
class _Fn:
    node: Function
    params: tuple[Var, ...]
    body: _Block
    type_params: tuple[TypeVar, ...]


def _block_children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, If):
        return (node.cond,)
    if isinstance(node, Match):
        return (node.data,)
    if isinstance(node, Function):
        return ()
    return node.children()


class _Converter:
    """Converts the functions of one global; `memo` maps old nodes to atoms of the output."""

    def __init__(self, answer: TypeVar, globals_: dict[int, GlobalVar],
                 types: dict[GlobalTypeVar, TypeData] | None = None):
        self.answer = answer
        self.memo: dict[int, Expr] = dict(globals_)
        self.types = types or {}
        self.blocks: list[_Block] = []
        self.prefer: dict[int, Var] = {}
        self.types_cps = CPSTypes(answer)     # shared by all the types of this global

    def ty(self, t: Type | None) -> Type | None:
        return None if t is None else self.types_cps(t)

    def cont(self, arg: Type | None, name: str = "k") -> Var:
        return Var(name, FuncType((self.ty(arg) or _unknown(),), self.answer))

    def fresh(self, node: Expr, name: str = "x") -> Var:
        return Var(name, self.ty(node.checked_type), span=node.span)

    def function(self, fn: Function, type_params: tuple[TypeVar, ...]) -> _Fn:
        if is_primitive(fn):
            raise CPSError("cannot convert a primitive (fused) function; run ToCPS before "
                           "FuseOps", fn.span)
        params = tuple(Var(p.name_hint, self.ty(p.type_annotation or p.checked_type),
                           span=p.span) for p in fn.params)
        for old, new in zip(fn.params, params):
            self.memo[id(old)] = new
        ret = fn.ret_type
        if ret is None and isinstance(fn.checked_type, FuncType):
            ret = fn.checked_type.ret_type
        body = self.block(fn.body, self.cont(ret))
        return _Fn(fn, params, body, type_params)

    def block(self, root: Expr, k: Var) -> _Block:
        b = _Block(root, k)
        self.blocks.append(b)
        return b

    def run(self, fn: Function) -> Function:
        top = self.function(fn, (*fn.type_params, self.answer))
        i = 0
        while i < len(self.blocks):          # blocks found while flattening join the list
            self.linearize(self.blocks[i])
            i += 1
        for b in reversed(self.blocks):      # inner blocks were found after outer ones
            b.result = self.build(b)
        out = self.build_fn(top)
        return out

    # ------------------------------------------------------------ flattening
    def atom(self, e: Expr) -> Expr:
        if isinstance(e, Constructor) and e.inputs:
            return self.constructor_value(e)
        return self.memo[id(e)]

    def linearize(self, b: _Block) -> None:
        stack: list[tuple[Expr, int]] = [(b.root, 0)]
        while stack:
            node, phase = stack.pop()
            if phase == 0 and id(node) in self.memo:
                continue
            if isinstance(node, ATOMIC):
                self.memo[id(node)] = node
            elif isinstance(node, Let):
                self.let_step(b, node, phase, stack)
            elif phase == 0:
                stack.append((node, 1))
                stack.extend((c, 0) for c in reversed(_block_children(node)))
            else:
                var = self.prefer.pop(id(node), None) or self.fresh(node)
                b.bindings.append((var, self.rhs(node, b)))
                self.memo[id(node)] = var
        b.tail = self.atom(b.root)
        self.tail_call(b)

    def constructor_value(self, ctor: Constructor) -> Expr:
        """A constructor used as a value (not applied) is a function, so in CPS it takes a
        continuation too: `Cons` becomes `fn (%p0: _, %p1: List[_], %k: fn (List[_]) ->
        answer) -> answer { %k(Cons(%p0, %p1)) }`, a new one at each use, whose `_` the
        type checker fills in from that use (a function value is not polymorphic)."""
        data = self.types.get(ctor.belong_to)
        params_of_type = {id(tv) for tv in (data.type_params if data is not None else ())}

        def inst(t: Type) -> Type:
            unknown = map_type(t, lambda u: _unknown() if id(u) in params_of_type else None)
            return self.types_cps(unknown)
        params = tuple(Var(f"p{i}", inst(t)) for i, t in enumerate(ctor.inputs))
        result = TypeCall(ctor.belong_to, tuple(_unknown() for _ in params_of_type))
        k = Var("k", FuncType((result,), self.answer))
        body = Call(k, (Call(ctor, params, span=ctor.span),))
        return Function((*params, k), body, self.answer, span=ctor.span)

    def let_step(self, b: _Block, node: Let, phase: int, stack: list[tuple[Expr, int]]) -> None:
        if phase == 0:
            var = Var(node.var.name_hint, self.ty(node.var.type_annotation
                                                  or node.value.checked_type), span=node.var.span)
            self.memo[id(node.var)] = var          # before the value: it may recurse
            if id(node.value) not in self.memo and not isinstance(node.value, ATOMIC):
                self.prefer[id(node.value)] = var
            stack += [(node, 1), (node.value, 0)]
        elif phase == 1:
            var, value = self.memo[id(node.var)], self.atom(node.value)
            if value is not var:
                b.bindings.append((var, value))    # type: ignore[arg-type]
            stack += [(node, 2), (node.body, 0)]
        else:
            self.memo[id(node)] = self.atom(node.body)

    def tail_call(self, b: _Block) -> None:
        """The last binding, when it is the result, becomes the tail (a proper tail call)."""
        if not b.bindings or b.bindings[-1][0] is not b.tail:
            return
        rhs = b.bindings[-1][1]
        if isinstance(rhs, _Fn):
            return                                  # may refer to itself through its variable
        b.bindings.pop()
        b.tail = rhs
        if isinstance(rhs, _Branch):
            for sub in rhs.blocks:                  # branches return straight to `b`'s caller
                sub.k = b.k

    def rhs(self, node: Expr, b: _Block) -> object:
        if isinstance(node, Call):
            args = [self.atom(a) for a in node.args]
            if isinstance(node.op, (Op, Constructor)):
                return Call(node.op, tuple(args), node.attrs, node.type_args, span=node.span)
            return _CallK(self.atom(node.op), args, node.span)
        if isinstance(node, Function):
            return self.function(node, node.type_params)
        if isinstance(node, (If, Match)):
            join = self.cont(node.checked_type, "j")
            return _Branch(node, self.atom(_block_children(node)[0]),
                           [self.block(e, join) for e in node.children()[1:]])
        return node.with_children([self.atom(c) for c in node.children()])

    # ------------------------------------------------------------ building
    def build(self, b: _Block) -> Expr:
        """The block's expression, from its tail back to its first binding."""
        out = self.build_tail(b.tail, b.k)
        for var, rhs in reversed(b.bindings):
            if isinstance(rhs, _CallK):
                k = Function((var,), out, self.answer)
                out = Call(rhs.callee, (*rhs.args, k), span=rhs.span)   # type: ignore[arg-type]
            elif isinstance(rhs, _Branch):
                join = rhs.blocks[0].k
                out = Let(join, Function((var,), out, self.answer), self.branch(rhs))
            elif isinstance(rhs, _Fn):
                out = Let(var, self.build_fn(rhs), out, span=rhs.node.span)
            else:
                out = Let(var, rhs, out)                                  # type: ignore[arg-type]
        return out

    def build_tail(self, tail: object, k: Var) -> Expr:
        if isinstance(tail, _CallK):
            return Call(tail.callee, (*tail.args, k), span=tail.span)   # type: ignore[arg-type]
        if isinstance(tail, _Branch):
            return self.branch(tail)
        if isinstance(tail, _Fn):
            return Call(k, (self.build_fn(tail),))
        return Call(k, (tail,))                                         # type: ignore[arg-type]

    def branch(self, br: _Branch) -> Expr:
        results = [sub.result for sub in br.blocks]
        if isinstance(br.node, If):
            return If(br.head, results[0], results[1], span=br.node.span)  # type: ignore[arg-type]
        assert isinstance(br.node, Match)
        clauses = tuple(Clause(c.lhs, r, span=c.span)                     # type: ignore[arg-type]
                        for c, r in zip(br.node.clauses, results))
        return Match(br.head, clauses, br.node.complete, span=br.node.span)

    def build_fn(self, f: _Fn) -> Function:
        assert f.body.result is not None
        return Function((*f.params, f.body.k), f.body.result, self.answer, f.type_params,
                        f.node.attrs, span=f.node.span)


def _unknown() -> Type:
    from ...ir.types import IncompleteType
    return IncompleteType()


def to_cps_module(mod: IRModule) -> IRModule:
    """Every global of `mod` in CPS, under fresh GlobalVars of the same names."""
    typed = infer_types(_bbnf(mod))
    renamed = {id(gv): GlobalVar(gv.name_hint, span=gv.span) for gv in typed.functions}
    functions: dict[GlobalVar, Function] = {}
    for gv, fn in typed.functions.items():
        answer = TypeVar("answer")
        converter = _Converter(answer, renamed, typed.type_definitions)  # type: ignore[arg-type]
        try:
            functions[renamed[id(gv)]] = converter.run(fn)  # type: ignore[arg-type]
        except CPSError as e:
            e.sources = dict(typed.sources)
            raise
    return IRModule(functions, typed.type_definitions, typed.source_name, typed.sources)


def _bbnf(mod: IRModule) -> IRModule:
    out = mod.copy()
    for gv, fn in mod.functions.items():
        out.functions[gv] = to_basic_block_normal_form(fn)            # type: ignore[assignment]
    return out


@register_pass
@dataclass(frozen=True)
class ToCPS(ModulePass):
    name: ClassVar[str] = "ToCPS"
    opt_level: ClassVar[int] = 1

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        return to_cps_module(mod)
