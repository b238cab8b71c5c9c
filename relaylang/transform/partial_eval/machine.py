"""The online partial evaluator behind PartialEvaluate, as an explicit-stack machine.

TVM's `PartialEvaluator` (src/relay/transforms/partial_eval.cc) is a recursive
`VisitExpr(e, ll) -> PStatic`. Here each visit is a Python generator that, instead
of calling itself, *yields* the sub-visit it needs (`result = yield task`) to
`run`, which keeps the suspended visits on a list: continuations are data, and a
65,535-deep static recursion or a 100,000-long `let` chain never touches Python's
recursion limit. `let` chains and the chosen branch of a static `if`/`match` are
followed by a loop inside one visit (tail position), so they cost no stack at all.
`yield from` is used only for helpers one level deep.

Input is in A-normal form (PartialEvaluate converts first), so no computation is
shared and operands are atoms. Residual code gets fresh binders everywhere
(lets, parameters, pattern variables): the output binds each variable once, which
is TVM's DeDup + Remap done by construction.
"""
from __future__ import annotations

from collections.abc import Generator, Sequence
from itertools import count
from typing import Any

from ...ir.analysis import free_vars
from ...ir.expr import (
    Call,
    Clause,
    Constant,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    If,
    Let,
    Match,
    Op,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ...ir.module import IRModule
from ...ir.normal_forms import is_anf, is_opaque
from ..fold_constant import fold_constant
from ..normal_forms.to_a_normal_form import to_a_normal_form
from .patterns import choose_clause, erase_type, fresh_pattern
from .values import (
    LetList,
    PStatic,
    SClosure,
    SConstructed,
    SConstructorFn,
    SOp,
    SPrimitive,
    SRef,
    STensor,
    Store,
    STuple,
    arg_fuel,
    dynamics,
    meet,
    use,
)

Task = Generator[Any, Any, Any]


def run(task: Task) -> Any:
    """Drive `task` and the sub-tasks it yields to completion, with a list as the stack."""
    stack = [task]
    value: Any = None
    while True:
        try:
            sub = stack[-1].send(value)
        except StopIteration as done:
            stack.pop()
            if not stack:
                return done.value
            value = done.value
            continue
        stack.append(sub)
        value = None


class PartialEvaluator:
    """Partially evaluates the globals of one module; `residual` holds the results."""

    def __init__(self, mod: IRModule, max_elements: int):
        self.mod = mod
        self.max_elements = max_elements
        self.store = Store()
        self.fuel: dict[int, Any] = {}              # id(fn) -> fuel of its unfoldings
        self.globals: dict[GlobalVar, PStatic] = {}
        self.residual: dict[GlobalVar, Function] = {}
        self.free: dict[int, tuple[Function, list[Var]]] = {}
        self.clock = count()
        # Type variables bound around the residual code being built (by the functions being
        # residualized); other ones, of functions unfolded here, are left to inference.
        self.tscope: frozenset[int] = frozenset()

    def value(self, static: Any, dynamic: Expr) -> PStatic:
        return PStatic(static, dynamic, next(self.clock))

    # ------------------------------------------------------------ globals
    def visit_global(self, gv: GlobalVar) -> Task:
        """The static value of a global; the first visit also residualizes its body."""
        if gv in self.globals:
            return self.globals[gv]
        fn = self.mod.functions.get(gv)
        if fn is None or is_opaque(fn):
            self.globals[gv] = self.value(None, gv)
            if fn is not None:
                self.residual[gv] = fn
            return self.globals[gv]
        if not is_anf(fn):            # evaluation needs ANF: nothing shared, atoms as operands
            fn = Function(fn.params, to_a_normal_form(fn.body), fn.ret_type, fn.type_params,
                          fn.attrs, span=fn.span)
        ps = self.value(SClosure(fn, {}, None), gv)
        self.globals[gv] = ps
        # A global is specialised for unknown arguments once, in a fresh context: what is
        # being unfolded where it is first mentioned does not shape its residual code.
        saved = self.fuel, self.tscope
        self.fuel, self.tscope = {}, frozenset()
        self.residual[gv] = yield self.residualize(ps)
        self.fuel, self.tscope = saved
        return ps

    # ------------------------------------------------------------ functions
    def residualize(self, closure: PStatic) -> Task:
        """The function's code specialised to what it captured, arguments unknown
        (TVM's VisitFuncDynamic)."""
        fn = closure.static.fn
        self.store.enter()
        self.store.invalidate()          # it runs later: references may hold anything then
        outer = self.tscope
        own = self.tscope = outer | {id(t) for t in fn.type_params}
        params = tuple(Var(p.name_hint, erase_type(p.type_annotation, own), p.virtual_device,
                           span=p.span) for p in fn.params)
        ll = LetList()
        args = [self.value(None, p) for p in params]
        result = yield self.unfold(closure, args, ll, meet(None, tuple(map(arg_fuel, args)))[0])
        self.store.leave()
        self.tscope = outer
        return Function(params, ll.wrap(use(result)), erase_type(fn.ret_type, own),
                        fn.type_params, fn.attrs, span=fn.span)

    def unfold(self, closure: PStatic, args: list[PStatic], ll: LetList, fuel: Any) -> Task:
        """The function's body evaluated on `args`, its fuel lowered to `fuel` meanwhile."""
        clo: SClosure = closure.static
        fid = id(clo.fn)
        old = self.fuel.get(fid)
        self.fuel[fid] = fuel
        env = dict(clo.captured)
        if clo.name is not None:
            env[id(clo.name)] = closure
        for p, a in zip(clo.fn.params, args):
            env[id(p)] = a
        result = yield self.eval(clo.fn.body, env, ll)
        if old is None:
            del self.fuel[fid]
        else:
            self.fuel[fid] = old
        return result

    def closure(self, fn: Function, name: Var | None, env: dict[int, PStatic],
                ll: LetList) -> Task:
        """A function expression: a static closure, and its residual code bound in `ll`."""
        captured = {id(v): env[id(v)] for v in self.free_vars(fn)
                    if v is not name and id(v) in env}
        atom = Var(name.name_hint if name is not None else "f", span=fn.span)
        ps = self.value(SClosure(fn, captured, name), atom)
        ll.bind(atom, (yield self.residualize(ps)))
        return ps

    def free_vars(self, fn: Function) -> list[Var]:
        cached = self.free.get(id(fn))
        if cached is None:
            cached = self.free[id(fn)] = (fn, free_vars(fn))   # fn kept: its id stays unique
        return cached[1]

    # ------------------------------------------------------------ expressions
    def atom(self, e: Expr, env: dict[int, PStatic]) -> PStatic | None:
        """The value of an atom, or None when it needs a task (a global seen first)."""
        kind = type(e)
        if kind is Var:
            found = env.get(id(e))
            return found if found is not None else self.value(None, e)
        if kind is Constant:
            return self.value(STensor(e), e)
        if kind is Op:
            return self.value(SOp(), e)
        if kind is Constructor:       # `Nil` is a call of it with no arguments
            return self.value(SConstructorFn(e), e)
        if kind is GlobalVar:
            return self.globals.get(e)
        if kind is Function and is_opaque(e):
            return self.value(SPrimitive(e), e)
        return None

    def operand(self, e: Expr, env: dict[int, PStatic], ll: LetList) -> Task:
        found = self.atom(e, env)
        if found is None:
            found = yield (self.visit_global(e) if isinstance(e, GlobalVar)
                           else self.eval(e, env, ll))
        return found

    def eval(self, e: Expr, env: dict[int, PStatic], ll: LetList, hint: str = "x") -> Task:
        """The value of `e`; residual code goes to `ll`. Tail positions loop here."""
        while True:
            kind = type(e)
            if kind is Let:
                if isinstance(e.value, Function) and not is_opaque(e.value):
                    ps = yield self.closure(e.value, e.var, env, ll)
                else:
                    ps = self.atom(e.value, env)
                    if ps is None:
                        ps = yield self.eval(e.value, env, ll, e.var.name_hint)
                env[id(e.var)] = ps
                e = e.body
            elif kind is If:
                cond = yield from self.operand(e.cond, env, ll)
                if isinstance(cond.static, STensor):
                    e = e.true_branch if bool(cond.static.const.data) else e.false_branch
                    continue
                then = yield self.branch(e.true_branch, env)
                other = yield self.branch(e.false_branch, env)
                self.store.invalidate()
                return self.value(None, ll.push(If(use(cond), then, other, span=e.span), hint))
            elif kind is Match:
                data = yield from self.operand(e.data, env, ll)
                chosen = choose_clause(e, data, env)
                if chosen is not None:
                    e = chosen
                    continue
                return (yield self.dynamic_match(e, data, env, ll, hint))
            else:
                found = self.atom(e, env)
                if found is not None:
                    return found
                if kind is GlobalVar:
                    return (yield self.visit_global(e))
                return (yield from self.eval_value(e, env, ll, hint))

    def branch(self, e: Expr, env: dict[int, PStatic]) -> Task:
        """Residual code of a path that may not run: its own scope, its writes forgotten."""
        self.store.enter()
        ll = LetList()
        result = yield self.eval(e, env, ll)
        self.store.leave()
        return ll.wrap(use(result))

    def dynamic_match(self, e: Match, data: PStatic, env: dict[int, PStatic], ll: LetList,
                      hint: str) -> Task:
        clauses = []
        for clause in e.clauses:
            lhs, renamed = fresh_pattern(clause.lhs, self.tscope)
            for old, new in renamed:
                env[id(old)] = self.value(None, new)
            rhs = yield self.branch(clause.rhs, env)
            clauses.append(Clause(lhs, rhs, span=clause.span))
        self.store.invalidate()
        return self.value(None, ll.push(Match(use(data), tuple(clauses), e.complete,
                                              span=e.span), hint))

    def eval_value(self, e: Expr, env: dict[int, PStatic], ll: LetList, hint: str) -> Task:
        """Expressions that are not scopes: tuples, projections, calls, references."""
        kind = type(e)
        if kind is Function:
            return (yield self.closure(e, None, env, ll))
        kids = []
        for child in e.children():
            kids.append((yield from self.operand(child, env, ll)))
        if kind is Tuple:
            return self.value(STuple(kids), ll.push(Tuple(dynamics(kids), span=e.span), hint))
        if kind is TupleGetItem:
            s = kids[0].static
            if isinstance(s, STuple):
                return s.fields[e.index]
            return self.value(None, ll.push(TupleGetItem(use(kids[0]), e.index,
                                                         span=e.span), hint))
        if kind is Call:
            return (yield from self.apply(kids[0], kids[1:], e, ll, hint))
        return self.reference(e, kids, ll, hint)

    def reference(self, e: Expr, kids: list[PStatic], ll: LetList, hint: str) -> PStatic:
        if isinstance(e, RefCreate):
            ref = SRef()
            self.store.write(ref, kids[0])
            return self.value(ref, ll.push(RefCreate(use(kids[0]), span=e.span), hint))
        if isinstance(e, RefWrite):
            ref = kids[0].static
            if isinstance(ref, SRef):
                self.store.write(ref, kids[1])
            else:
                self.store.invalidate()     # an unknown cell: any might have changed
            return self.value(STuple([]), ll.push(RefWrite(use(kids[0]), use(kids[1]),
                                                           span=e.span), hint))
        assert isinstance(e, RefRead), type(e).__name__
        ref = kids[0].static
        known = self.store.read(ref) if isinstance(ref, SRef) else None
        if known is not None:
            return known
        return self.value(None, ll.push(RefRead(use(kids[0]), span=e.span), hint))

    # ------------------------------------------------------------ calls
    def apply(self, callee: PStatic, args: list[PStatic], call: Call, ll: LetList,
              hint: str) -> Task:
        s = callee.static
        if isinstance(s, SClosure) and len(args) == len(s.fn.params):
            fuel, progress = meet(self.fuel.get(id(s.fn)), tuple(map(arg_fuel, args)))
            if progress:
                return (yield self.unfold(callee, args, ll, fuel))
        elif isinstance(s, SOp):
            return self.fold(call, call.op, args, ll, hint) or self.residual_call(
                callee, args, call, ll, hint)
        elif isinstance(s, SPrimitive):
            return self.fold(call, s.fn, args, ll, hint) or self.residual_call(
                callee, args, call, ll, hint)
        elif isinstance(s, SConstructorFn):
            return self.value(SConstructed(s.ctor, args),
                              ll.push(Call(s.ctor, dynamics(args), span=call.span), hint))
        self.store.invalidate()             # unknown code, or not unfolded: may write cells
        return self.residual_call(callee, args, call, ll, hint)

    def residual_call(self, callee: PStatic, args: list[PStatic], call: Call, ll: LetList,
                      hint: str) -> PStatic:
        type_args = call.type_args if all(erase_type(t, self.tscope) is not None
                                          for t in call.type_args) else ()
        return self.value(None, ll.push(Call(use(callee), dynamics(args), call.attrs,
                                             type_args, span=call.span), hint))

    def fold(self, call: Call, callee: Expr, args: list[PStatic], ll: LetList,
             hint: str) -> PStatic | None:
        """Run an operator (or a Primitive function) on static tensors through FoldConstant."""
        consts = [_reflect(a) for a in args]
        if any(c is None for c in consts):
            return None
        if isinstance(callee, Function):       # bind the parameters; FoldConstant inlines them
            expr: Expr = callee.body
            for param, const in reversed(list(zip(callee.params, consts))):
                expr = Let(param, const, expr)   # type: ignore[arg-type]
        else:
            expr = Call(callee, tuple(consts), call.attrs, call.type_args,  # type: ignore
                        span=call.span)
        out = fold_constant(expr, self.max_elements)
        if isinstance(out, Constant):
            return self.value(STensor(out), out)
        if isinstance(out, Tuple) and all(isinstance(f, Constant) for f in out.fields):
            fields = [self.value(STensor(f), f) for f in out.fields]  # type: ignore[arg-type]
            return self.value(STuple(fields), ll.push(out, hint))
        return None


# ---------------------------------------------------------------- helpers


def _reflect(ps: PStatic) -> Expr | None:
    """A static tensor, or a flat tuple of them, as a constant expression."""
    s = ps.static
    if isinstance(s, STensor):
        return s.const
    if isinstance(s, STuple) and all(isinstance(f.static, STensor) for f in s.fields):
        return Tuple(tuple(f.static.const for f in s.fields))   # type: ignore[union-attr]
    return None


def evaluate_module(mod: IRModule, max_elements: int) -> dict:
    """Residual functions of every global of `mod`, in module order."""
    pe = PartialEvaluator(mod, max_elements)
    for gv in mod.functions:
        run(pe.visit_global(gv))
    return {gv: pe.residual[gv] for gv in mod.functions}


__all__: Sequence[str] = ("PartialEvaluator", "evaluate_module", "run")
