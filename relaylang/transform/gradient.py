"""Automatic differentiation: `rl.transform.gradient` and the pass `Gradient` (TVM's
relay.transform.gradient: src/relay/transforms/{first_order,higher_order}_gradient.cc).

    def @main(%x: Tensor[(3), float32]) {        fn (%x: Tensor[(3), float32]) {
      multiply(%x, %x)                  ==>        ... (multiply(%x, %x), (d/d%x,))
    }                                            }

`gradient(fn, mod=None, mode="higher_order")` returns a function of the same
parameters whose result is `(original result, (gradient of each parameter,))`.
The gradient is that of the sum of every floating-point tensor of the result (a
result that is a tuple seeds each of its tensors with ones); parameters are tensors
or (nested) tuples of tensors, and a parameter's gradient has its type (zeros for
integer and boolean tensors). Each operator's gradient is its rule,
`implementation(op, "gradient")` in the op family's `gradients.py`; an operator
without one is a located diagnostic (`no-gradient`) naming it.

Both modes first put the function (and every global of the module) in A-normal
form and type it, then walk it once with explicit stacks (a program of any depth).

* `first_order`: straight-line programs (`let`, tuples, projections, operator
  calls) in reverse mode: the forward `let`s as they were, then one backward sweep
  binding each variable's adjoint (the sum of what its uses contribute) before it
  is used; an operator whose result has no adjoint contributes nothing.

* `higher_order`: the whole language -- closures, `if`, `match` and ADTs,
  references, recursion through globals -- by TVM's method. Every tensor value is
  paired with a reference holding its adjoint (`(T, ref(T))`; tuples, functions,
  references and ADTs are mapped through), and every function takes one more
  parameter, the backpropagator: a reference to a closure `fn () -> ()`. Each
  operator call computes its result, then replaces the backpropagator by a closure
  that applies the operator's rule to its result's adjoint, adds the gradients into
  its arguments' references and calls the backpropagator it replaced. The result
  is seeded with ones and the last backpropagator called: the calls run the rules
  in reverse order of the forward computation, whatever control flow chose it.
  A global `@f` the function reaches gets a transformed copy `@f_grad` (added to
  `mod`); an ADT whose fields hold tensors or functions gets a copy `T_grad` with
  mapped fields (polymorphic ADTs such as the prelude's `List` need none); a
  constructor passed as a function value is wrapped in a function that takes the
  backpropagator too. An operator passed as a function value is refused (wrap it).
  The gradients are the same as first order's on straight-line programs (tested).

Diagnostics are located and coded: `no-gradient` (an operator without a rule), and
`not-differentiable` (polymorphic entry, parameters or result that are not tensor
trees, control flow in first-order mode, an operator as a value).

The pass `Gradient{entry=main, mode=higher_order}` replaces `@entry` of a module
by its gradient (helpers added beside it).

After PartialEvaluate has run the backpropagators of a higher-order result at compile
time, what is left of them is references nobody reads any more: their creation and
the writes to them, which DeadCodeElimination keeps (effects). The pass
`EliminateDeadReferences` removes a reference whose only uses are as the target of
`ref_write` (the values computed for it stay if they have effects), so that
PartialEvaluate, EliminateDeadReferences, DeadCodeElimination turn the gradient of
a straight-line program into plain tensor code:

    let %r = ref(%x);                 ==>      multiply(%y, 2f)
    ref_write(%r, add(%y, 1f));
    multiply(%y, 2f)
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.expr import (
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
    Pattern,
    PatternConstructor,
    PatternTuple,
    PatternVar,
    RefCreate,
    RefRead,
    RefWrite,
    Tuple,
    TupleGetItem,
    Var,
)
from ..ir.module import IRModule
from ..ir.normal_forms import is_opaque, opaque_children, pure_value
from ..ir.traverse import post_order, rewrite
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeData,
    TypeVar,
    type_children,
    with_type_children,
)
from .pass_infra import FunctionPass, ModulePass, PassContext, register_pass

MODES = ("higher_order", "first_order")

__all__ = ["EliminateDeadReferences", "Gradient", "eliminate_dead_references", "gradient"]


# ---------------------------------------------------------------- the API


def gradient(expr: Expr, mod: IRModule | None = None, mode: str = "higher_order") -> Function:
    """The gradient of the function `expr` (or of the global `expr` names in `mod`).

    Returns a typed function of the same parameters returning `(result, (grads...))`.
    In higher-order mode the globals (`@f_grad`) and ADTs (`T_grad`) it needs are
    added to `mod`, which must hold every global `expr` uses (TVM's behaviour)."""
    if mode not in MODES:
        raise ValueError(f"gradient: mode must be one of {', '.join(MODES)}, not {mode!r}")
    if isinstance(expr, GlobalVar):
        if mod is None:
            raise ValueError(f"gradient: a global (@{expr.name_hint}) needs its module, mod=")
        expr = mod[expr]
    if not isinstance(expr, Function):
        raise TypeError(f"gradient: expected a Relay function, got {type(expr).__name__}")
    entry, work = _prepare(expr, mod)
    fn = work.functions[entry]
    _check_signature(fn, work)
    if mode == "first_order":
        body = _FirstOrder(fn, work).run()
        out = Function(fn.params, body, None, (), fn.attrs, span=fn.span)
        return _typed(out, work, {}, {})
    ho = _HigherOrder(work)
    out = ho.entry(fn)
    typed = _typed(out, work, ho.new_globals, ho.new_types)
    if mod is not None:
        for data in ho.new_types.values():
            mod.add_type_definition(data)
        for gv, g in ho.new_globals.items():
            mod.functions[gv] = g
    return typed


@register_pass
@dataclass(frozen=True)
class Gradient(ModulePass):
    """Replace `@entry` by its gradient: `(result, (d/dparam, ...))` (see `gradient`)."""

    name: ClassVar[str] = "Gradient"
    opt_level: ClassVar[int] = 0
    required: ClassVar[tuple[str, ...]] = ("InferType",)
    entry: str = "main"
    mode: str = "higher_order"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        if self.mode not in MODES:
            raise ValueError(f"Gradient: mode must be one of {', '.join(MODES)}, "
                             f"not {self.mode!r}")
        try:
            gv = mod.get_global_var(self.entry)
        except KeyError:
            names = ", ".join("@" + g.name_hint for g in mod.functions) or "none"
            first = next(iter(mod.functions.values()), None)
            _fail(f"Gradient: the module has no function @{self.entry} to differentiate "
                  f"(its functions: {names}); name one with Gradient{{entry=...}}",
                  first.span if first is not None else None, mod.sources, code="pass-option")
        out = mod.copy()
        out.functions[gv] = gradient(mod.functions[gv], out, self.mode)
        return out


# ---------------------------------------------------------------- preparation


def _fail(message: str, span: Any, sources: dict[str, str] | None = None, *,
          code: str) -> None:
    raise DiagnosticError([Diagnostic.error(message, span, code=code)], sources or {})


def _prepare(fn: Function, mod: IRModule | None) -> tuple[GlobalVar, IRModule]:
    """A typed module in A-normal form holding `fn` (under the returned name) and the
    globals of `mod`."""
    from ..typing import infer_types
    from .normal_forms.to_a_normal_form import to_a_normal_form
    work = mod.copy() if mod is not None else IRModule()
    entry = next((gv for gv, f in work.functions.items() if f is fn), None)
    if entry is None:
        taken = {gv.name_hint for gv in work.functions}
        name, n = "gradient_entry", 0
        while name in taken:
            n += 1
            name = f"gradient_entry_{n}"
        entry = GlobalVar(name)
        work.functions[entry] = fn
    for gv, f in list(work.functions.items()):
        if is_opaque(f):
            continue
        body = to_a_normal_form(f.body)
        if body is not f.body:
            work.functions[gv] = Function(f.params, body, f.ret_type, f.type_params, f.attrs,
                                          span=f.span)
    return entry, infer_types(work)


def _typed(fn: Function, work: IRModule, globals_: dict[GlobalVar, Function],
           types: dict[GlobalTypeVar, TypeData]) -> Function:
    """`fn` type-checked in `work` with the new globals and ADTs (typed in place)."""
    from ..typing import infer_types
    check = work.copy()
    for data in types.values():
        check.add_type_definition(data)
    check.functions.update(globals_)
    gv = GlobalVar("gradient_result")
    while gv.name_hint in {g.name_hint for g in work.functions}:
        gv = GlobalVar(gv.name_hint + "_")
    check.functions[gv] = fn
    infer_types(check)
    return fn


def _is_diff_tensor(t: Type) -> bool:
    return isinstance(t, TensorType) and t.dtype.startswith(("float", "bfloat"))


def _tensor_tree(t: Type) -> bool:
    """Whether `t` is a tensor or a (nested) tuple of tensors."""
    stack = [t]
    while stack:
        cur = stack.pop()
        if isinstance(cur, TupleType):
            stack.extend(cur.fields)
        elif not isinstance(cur, TensorType):
            return False
    return True


def _leaves(t: Type) -> list[tuple[tuple[int, ...], TensorType]]:
    """(path, tensor type) of each tensor of a tensor tree, left to right."""
    out: list[tuple[tuple[int, ...], TensorType]] = []
    stack: list[tuple[tuple[int, ...], Type]] = [((), t)]
    while stack:
        path, cur = stack.pop()
        if isinstance(cur, TupleType):
            stack.extend(((*path, i), f) for i, f in reversed(list(enumerate(cur.fields))))
        elif isinstance(cur, TensorType):
            out.append((path, cur))
    return out


def _project(e: Expr, path: Iterable[int]) -> Expr:
    for i in path:
        e = TupleGetItem(e, i)
    return e


def _check_signature(fn: Function, work: IRModule) -> None:
    if fn.type_params:
        _fail("gradient: a polymorphic function cannot be differentiated; give its type "
              "parameters concrete types", fn.span, work.sources, code="not-differentiable")
    for p in fn.params:
        if not _tensor_tree(p.checked_type):
            _fail(f"gradient: parameter `%{p.name_hint}` is not a tensor or a tuple of tensors; "
                  "gradients are taken with respect to tensors", p.span or fn.span,
                  work.sources, code="not-differentiable")
    ret = fn.checked_type.ret_type
    if not _tensor_tree(ret):
        _fail("gradient: the function's result is not a tensor or a tuple of tensors",
              fn.body.span or fn.span, work.sources, code="not-differentiable")


def _rule(call: Call, sources: dict[str, str]) -> Callable[..., list[Any]]:
    from ..op.registry import implementation
    name = call.op.name
    rule = implementation(name, "gradient")
    if rule is None:
        _fail(f"the operator `{name}` has no gradient rule (a `@implement(\"{name}\", "
              "target=\"gradient\")` in its family's gradients.py)",
              call.span or call.op.span, sources, code="no-gradient")
    return rule


def _apply_rule(rule: Callable[..., list[Any]], orig: Call, grad: Expr, out: Expr,
                sources: dict[str, str]) -> list[Expr]:
    """The rule's gradients, with the forward call `orig` replaced by `out` (its value).
    A rule that does not cover the call's attributes (nn.pad in reflect mode, ...) raises
    NotImplementedError: that is the same located `no-gradient` diagnostic."""
    try:
        grads = list(rule(orig, grad))
    except NotImplementedError as e:
        _fail(f"the gradient of `{orig.op.name}` is not supported here: {e}", orig.span,
              sources, code="no-gradient")
    if len(grads) != len(orig.args):
        _fail(f"the gradient rule of `{orig.op.name}` gave {len(grads)} gradients for "
              f"{len(orig.args)} inputs", orig.span, sources, code="no-gradient")
    return [rewrite(g, lambda old, new: out if old is orig else None) for g in grads]


def _fresh_name(name: str, taken: set[str]) -> str:
    while name in taken:
        name += "_"
    taken.add(name)
    return name


def _var(name: str, ty: Type | None = None, annotate: bool = False) -> Var:
    v = Var(name, ty if annotate else None)
    if ty is not None:
        v.set_checked_type(ty)
    return v


def _wrap(bindings: Iterable[tuple[Var, Expr]], tail: Expr) -> Expr:
    """`let v1 = e1; ...; tail` built from the last binding up (iterative)."""
    body = tail
    for v, e in reversed(list(bindings)):
        body = Let(v, e, body)
    return body


# ---------------------------------------------------------------- first order


class _FirstOrder:
    """Reverse mode over a straight-line function in A-normal form."""

    def __init__(self, fn: Function, work: IRModule):
        self.fn = fn
        self.sources = work.sources
        # (id(var), path) -> contributions to that tensor's adjoint
        self.adj: dict[tuple[int, tuple[int, ...]], list[Expr]] = {}
        self.done: dict[tuple[int, tuple[int, ...]], Expr | None] = {}
        self.back: list[tuple[Var, Expr]] = []

    def _chain(self) -> tuple[list[tuple[Var, Expr]], Expr]:
        lets: list[tuple[Var, Expr]] = []
        e = self.fn.body
        while isinstance(e, Let):
            lets.append((e.var, e.value))
            e = e.body
        for v, value in lets:
            self._straight(value)
            if isinstance(value, Call):
                _rule(value, self.sources)      # every operator needs a rule, used or not
        self._straight(e)
        return lets, e

    def _straight(self, value: Expr) -> None:
        ok = isinstance(value, (Var, Constant, Tuple, TupleGetItem)) or (
            isinstance(value, Call) and isinstance(value.op, Op))
        if not ok:
            kind = type(value).__name__
            what = {"If": "`if`", "Match": "`match`", "Function": "a closure",
                    "Call": "a call of a function", "GlobalVar": "a global function",
                    "RefCreate": "a reference", "RefRead": "a reference",
                    "RefWrite": "a reference", "Let": "a nested `let`"}.get(kind, kind)
            _fail(f"gradient (first_order mode) handles straight-line tensor programs "
                  f"(let, tuples, operator calls); this one has {what}: use "
                  "mode=\"higher_order\"", value.span or self.fn.span, self.sources,
                  code="not-differentiable")

    def contribute(self, var: Expr, path: tuple[int, ...], e: Expr | None, t: Type) -> None:
        """Add `e` (of type `t`: the value at `path` in `var`) to `var`'s adjoint."""
        if e is None or not isinstance(var, Var):
            return
        if isinstance(t, TupleType):
            leaves = [(p, lt) for p, lt in _leaves(t) if _is_diff_tensor(lt)]
            if not leaves:
                return
            if not isinstance(e, (Var, Tuple)):
                bound = _var("g", t)
                self.back.append((bound, e))
                e = bound
            for p, lt in leaves:
                self.adj.setdefault((id(var), (*path, *p)), []).append(
                    _field(e, p))
        elif _is_diff_tensor(t):
            self.adj.setdefault((id(var), path), []).append(e)

    def adjoint(self, var: Expr, path: tuple[int, ...], t: Type) -> Expr | None:
        """The adjoint of the value at `path` in `var` (None: zero), bound once."""
        if not isinstance(var, Var):
            return None
        if isinstance(t, TupleType):
            fields = [self.adjoint(var, (*path, i), f) for i, f in enumerate(t.fields)]
            if all(f is None for f in fields):
                return None
            return Tuple(tuple(f if f is not None else _zeros(_project(var, (*path, i)), ft)
                               for i, (f, ft) in enumerate(zip(fields, t.fields))))
        key = (id(var), path)
        if key in self.done:
            return self.done[key]
        from ..op import make
        parts = self.adj.get(key)
        if not parts:
            self.done[key] = None
            return None
        total = parts[0]
        for p in parts[1:]:
            total = make.add(total, p)
        if isinstance(total, Var) and len(parts) == 1:
            self.done[key] = total
            return total
        is_param = any(var is p for p in self.fn.params)
        bound = _var(f"{var.name_hint}_grad" if is_param and var.name_hint else "g", t)
        self.back.append((bound, total))
        self.done[key] = bound
        return bound

    def run(self) -> Expr:
        from ..op import make
        lets, tail = self._chain()
        ret_t = self.fn.checked_type.ret_type
        for path, lt in _leaves(ret_t):
            if _is_diff_tensor(lt) and isinstance(tail, Var):
                self.adj.setdefault((id(tail), path), []).append(
                    make.ones_like(_project(tail, path)))
        for v, value in reversed(lets):
            t = v.checked_type
            if isinstance(value, Call):
                g = self.adjoint(v, (), t)
                if g is None:
                    continue
                if not isinstance(g, Var):
                    bound = _var("g", t)
                    self.back.append((bound, g))
                    g = bound
                rule = _rule(value, self.sources)
                grads = _apply_rule(rule, value, g, v, self.sources)
                for a, ga in zip(value.args, grads):
                    self.contribute(a, (), ga, a.checked_type)
            elif isinstance(value, Tuple):
                for i, (f, ft) in enumerate(zip(value.fields, t.fields)):
                    self.contribute(f, (), self.adjoint(v, (i,), ft), ft)
            elif isinstance(value, TupleGetItem):
                tv = value.tuple_value
                self.contribute(tv, (value.index,), self.adjoint(v, (), t), t)
            elif isinstance(value, Var):
                self.contribute(value, (), self.adjoint(v, (), t), t)
        grads = []
        for p in self.fn.params:
            g = self.adjoint(p, (), p.checked_type)
            grads.append(g if g is not None else _zeros(p, p.checked_type))
        result = Tuple((tail, Tuple(tuple(grads))))
        return _wrap([*lets, *self.back], result)


def _field(e: Expr, path: tuple[int, ...]) -> Expr:
    while path and isinstance(e, Tuple):
        e, path = e.fields[path[0]], path[1:]
    return _project(e, path)


def _zeros(value: Expr, t: Type) -> Expr:
    """Zeros of the type `t` of `value` (a tensor tree)."""
    from ..op import make
    if isinstance(t, TupleType):
        return Tuple(tuple(_zeros(TupleGetItem(value, i), f) for i, f in enumerate(t.fields)))
    return make.zeros_like(value)


# ---------------------------------------------------------------- higher order

UNIT = TupleType(())
BP_TYPE = RefType(FuncType((), UNIT))


class _Block:
    """A let chain under construction: bindings (a deque, so a `let` prepends in O(1))
    and the atom it ends in."""

    __slots__ = ("bindings", "tail")

    def __init__(self, bindings: deque[tuple[Var, Expr]], tail: Expr):
        self.bindings = bindings
        self.tail = tail

    def expr(self) -> Expr:
        return _wrap(self.bindings, self.tail)


class _HigherOrder:
    """TVM's higher-order reverse mode (ReverseAD), iterative."""

    def __init__(self, work: IRModule):
        self.work = work
        self.sources = work.sources
        self.vars: dict[int, Var] = {}
        self.new_globals: dict[GlobalVar, Function] = {}
        self.global_map: dict[int, GlobalVar] = {}
        self.pending: list[tuple[GlobalVar, Function]] = []
        self.new_types: dict[GlobalTypeVar, TypeData] = {}
        self.adt_map: dict[int, GlobalTypeVar] = {}
        self.ctor_map: dict[int, Constructor] = {}
        # Type parameters of the function being reversed -> their fresh copies (a
        # module may not share a type variable between two definitions).
        self.tv_map: dict[int, TypeVar] = {}
        self._plan_adts()

    # ------------------------------------------------------------ types

    def _plan_adts(self) -> None:
        """ADTs whose constructors hold tensors or functions (or such ADTs) get copies."""
        defs = self.work.type_definitions
        needs: set[int] = set()
        changed = True
        while changed:
            changed = False
            for gtv, data in defs.items():
                if id(gtv) in needs:
                    continue
                if any(self._mentions(t, needs) for c in data.constructors for t in c.inputs):
                    needs.add(id(gtv))
                    changed = True
        if not needs:
            return
        taken = {g.name_hint for g in defs}
        ctor_names = {c.name for d in defs.values() for c in d.constructors}
        for gtv in defs:
            if id(gtv) in needs:
                self.adt_map[id(gtv)] = GlobalTypeVar(_fresh_name(gtv.name_hint + "_grad", taken))
        for gtv, data in defs.items():
            if id(gtv) not in needs:
                continue
            new_gtv = self.adt_map[id(gtv)]
            saved, self.tv_map = self.tv_map, {}
            type_params = self.fresh_type_params(data.type_params)   # not shared
            ctors = []
            for c in data.constructors:
                new = Constructor(_fresh_name(c.name + "_grad", ctor_names),
                                  tuple(self.rev_type(t) for t in c.inputs), new_gtv, c.tag,
                                  span=c.span)
                self.ctor_map[id(c)] = new
                ctors.append(new)
            self.tv_map = saved
            self.new_types[new_gtv] = TypeData(new_gtv, type_params, tuple(ctors),
                                               span=data.span)

    @staticmethod
    def _mentions(t: Type, needs: set[int]) -> bool:
        stack = [t]
        while stack:
            cur = stack.pop()
            if isinstance(cur, (TensorType, FuncType)) or id(cur) in needs:
                return True
            stack.extend(type_children(cur))
        return False

    def rev_type(self, t: Type) -> Type:
        """TVM's ReverseType: tensors paired with a reference to their adjoint, functions
        given the backpropagator parameter, ADTs with tensor fields renamed."""
        done: dict[int, Type] = {}
        stack: list[tuple[Type, bool]] = [(t, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in done:
                continue
            kids = type_children(node)
            if kids and not expanded:
                stack.append((node, True))
                stack.extend((k, False) for k in kids)
                continue
            new = [done[id(k)] for k in kids]
            if isinstance(node, TensorType):
                out: Type = TupleType((node, RefType(node)))
            elif isinstance(node, FuncType):
                out = FuncType((*new[:-1], BP_TYPE), new[-1], node.type_params)
            elif isinstance(node, GlobalTypeVar):
                out = self.adt_map.get(id(node), node)
            elif isinstance(node, TypeVar):
                out = self.tv_map.get(id(node), node)
            elif isinstance(node, TypeCall):
                out = TypeCall(new[0], tuple(new[1:]))
            elif kids:
                out = with_type_children(node, new)
            else:
                out = node
            done[id(node)] = out
        return done[id(t)]

    # ------------------------------------------------------------ values

    def var(self, v: Var, annotate: bool = False) -> Var:
        """The variable standing for `v` in the reversed program."""
        new = self.vars.get(id(v))
        if new is None:
            # Annotated where the original was, or where an ADT is involved (`Nil` alone
            # does not say its element type).
            annotate = annotate or v.type_annotation is not None or \
                self._mentions_adt(v.checked_type)
            new = Var(v.name_hint, self.rev_type(v.checked_type) if annotate else None,
                      span=v.span)
            self.vars[id(v)] = new
        return new

    @staticmethod
    def _mentions_adt(t: Type) -> bool:
        stack = [t]
        while stack:
            cur = stack.pop()
            if isinstance(cur, (TypeCall, GlobalTypeVar)):
                return True
            stack.extend(type_children(cur))
        return False

    def global_var(self, gv: GlobalVar) -> GlobalVar:
        new = self.global_map.get(id(gv))
        if new is None:
            taken = {g.name_hint for g in self.work.functions} | \
                {g.name_hint for g in self.new_globals}
            name = gv.name_hint + "_grad"
            while name in taken:
                name += "_"
            new = GlobalVar(name)
            self.global_map[id(gv)] = new
            self.new_globals[new] = None  # type: ignore[assignment]  # reserved
            fn = self.work.functions.get(gv)
            if fn is None:
                _fail(f"gradient: the global @{gv.name_hint} is not in the module (pass mod=)",
                      gv.span, self.sources, code="not-differentiable")
            self.pending.append((new, fn))
        return new

    @staticmethod
    def get_rev(t: Type, value: Expr, bindings: deque | list) -> Expr:
        """`value` (forward, of tensor-tree type `t`) paired with fresh adjoint refs."""
        from ..op import make
        if isinstance(t, TensorType):
            return Tuple((value, RefCreate(make.zeros_like(value))))
        if isinstance(t, TupleType):
            if not isinstance(value, (Var, Tuple)):
                bound = _var("v", t)
                bindings.append((bound, value))
                value = bound
            return Tuple(tuple(_HigherOrder.get_rev(f, _field(value, (i,)), bindings)
                               for i, f in enumerate(t.fields)))
        raise TypeError(f"not a tensor tree: {t}")

    @staticmethod
    def get_value(t: Type, rev: Expr) -> Expr:
        if isinstance(t, TensorType):
            return _field(rev, (0,))
        if isinstance(t, TupleType):
            return Tuple(tuple(_HigherOrder.get_value(f, _field(rev, (i,)))
                               for i, f in enumerate(t.fields)))
        raise TypeError(f"not a tensor tree: {t}")

    @staticmethod
    def get_grad(t: Type, rev: Expr) -> Expr:
        if isinstance(t, TensorType):
            return RefRead(_field(rev, (1,)))
        if isinstance(t, TupleType):
            return Tuple(tuple(_HigherOrder.get_grad(f, _field(rev, (i,)))
                               for i, f in enumerate(t.fields)))
        raise TypeError(f"not a tensor tree: {t}")

    @staticmethod
    def update_grad(t: Type, rev: Expr, grad: Expr, out: list[tuple[Var, Expr]]) -> None:
        """Add `grad` into the adjoint references of `rev` (float tensors only)."""
        from ..op import make
        for path, lt in _leaves(t):
            if not _is_diff_tensor(lt):
                continue
            ref = _field(_field(rev, path), (1,))
            g = _field(grad, path)
            out.append((_var("_", UNIT), RefWrite(ref, make.add(RefRead(ref), g))))

    def constant(self, c: Constant) -> Expr:
        from ..op import make
        return Tuple((c, RefCreate(make.zeros_like(c))))

    def constructor_function(self, ctor: Constructor) -> Function:
        """A constructor used as a function value, as a reversed function: it takes the
        backpropagator too (`fn (%a, %b, %bp) { Cons(%a, %b) }`)."""
        params = tuple(Var(f"f{i}") for i in range(len(ctor.inputs)))
        return Function((*params, Var("bp", BP_TYPE)),
                        Call(self.ctor_map.get(id(ctor), ctor), params), span=ctor.span)

    # ------------------------------------------------------------ the walk

    def entry(self, fn: Function) -> Function:
        """The gradient function of the typed, A-normal `fn` (TVM's `Gradient`)."""
        from ..op import make
        bp = _var("bp", BP_TYPE)
        head: deque[tuple[Var, Expr]] = deque()
        head.append((bp, RefCreate(Function((), Tuple(()), UNIT))))
        for p in fn.params:
            pv = self.var(p)
            head.append((pv, self.get_rev(p.checked_type, p, head)))
        block = self.transform(fn.body, bp)
        head.extend(block.bindings)
        result = block.tail
        ret_t = fn.checked_type.ret_type
        if not isinstance(result, Var):
            bound = _var("result", None)
            head.append((bound, result))
            result = bound
        for path, lt in _leaves(ret_t):
            if _is_diff_tensor(lt):
                # added, not written: a result may hold the same value twice
                pair = _field(result, path)
                ref = _field(pair, (1,))
                seed = make.add(RefRead(ref), make.ones_like(_field(pair, (0,))))
                head.append((_var("_", UNIT), RefWrite(ref, seed)))
        head.append((_var("_", UNIT), Call(RefRead(bp), ())))
        grads = Tuple(tuple(self.get_grad(p.checked_type, self.vars[id(p)]) for p in fn.params))
        body = _wrap(head, Tuple((self.get_value(ret_t, result), grads)))
        while self.pending:
            gv, g = self.pending.pop()
            self.vars = {}           # no binder is shared between two definitions
            self.new_globals[gv] = self.global_function(g)
        return Function(fn.params, body, None, (), fn.attrs, span=fn.span)

    def fresh_type_params(self, params: tuple[TypeVar, ...]) -> tuple[TypeVar, ...]:
        out = tuple(TypeVar(tp.name_hint, span=tp.span) for tp in params)
        self.tv_map.update((id(old), new) for old, new in zip(params, out))
        return out

    def global_function(self, fn: Function) -> Function:
        type_params = self.fresh_type_params(fn.type_params)
        bp = _var("bp", BP_TYPE, annotate=True)
        params = tuple(self.var(p, annotate=True) for p in fn.params)
        body = self.transform(fn.body, bp).expr()
        ret = fn.checked_type.ret_type
        return Function((*params, bp), body, self.rev_type(ret), type_params, fn.attrs,
                        span=fn.span)

    def transform(self, body: Expr, bp: Var) -> _Block:
        """The reversed `body` (of a function whose backpropagator is `bp`)."""
        # Each call's backpropagator: that of its innermost enclosing function.
        bp_of: dict[int, Var] = {}
        fn_bp: dict[int, Var] = {}
        fresh_tps: dict[int, tuple[TypeVar, ...]] = {}
        stack: list[tuple[Expr, Var]] = [(body, bp)]
        seen: set[int] = set()
        while stack:
            node, cur = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, Function):
                if is_opaque(node):
                    _fail("gradient: a primitive function cannot be differentiated",
                          node.span, self.sources, code="not-differentiable")
                cur = fn_bp[id(node)] = _var("bp", BP_TYPE, annotate=True)
                fresh_tps[id(node)] = self.fresh_type_params(node.type_params)
            elif isinstance(node, Call):
                bp_of[id(node)] = cur
            stack.extend((c, cur) for c in node.children())

        done: dict[int, Any] = {}

        def res(child: Expr) -> Expr:
            if isinstance(child, Constant):
                return self.constant(child)
            if isinstance(child, Constructor) and child.inputs:
                return self.constructor_function(child)
            r = done[id(child)]
            return r.expr() if isinstance(r, _Block) else r

        for node in post_order(body):
            for i, c in enumerate(node.children()):
                if isinstance(c, Op) and not (isinstance(node, Call) and i == 0):
                    _fail(f"gradient: the operator `{c.name}` is used as a function value; "
                          f"wrap it in a function (`fn (%x) {{ {c.name}(%x) }}`)",
                          node.span, self.sources, code="not-differentiable")
            if isinstance(node, Var):
                done[id(node)] = self.var(node)
            elif isinstance(node, Constant):
                done[id(node)] = None           # made fresh at each use (res)
            elif isinstance(node, GlobalVar):
                done[id(node)] = self.global_var(node)
            elif isinstance(node, Op):
                done[id(node)] = node
            elif isinstance(node, Constructor):
                done[id(node)] = self.ctor_map.get(id(node), node)
            elif isinstance(node, Tuple):
                done[id(node)] = Tuple(tuple(res(f) for f in node.fields), span=node.span)
            elif isinstance(node, TupleGetItem):
                done[id(node)] = TupleGetItem(res(node.tuple_value), node.index, span=node.span)
            elif isinstance(node, Let):
                done[id(node)] = self._let(node, done, res)
            elif isinstance(node, If):
                done[id(node)] = If(TupleGetItem(res(node.cond), 0), res(node.true_branch),
                                    res(node.false_branch), span=node.span)
            elif isinstance(node, Function):
                params = tuple(self.var(p, annotate=True) for p in node.params)
                ret = node.checked_type.ret_type
                done[id(node)] = Function((*params, fn_bp[id(node)]), res(node.body),
                                          self.rev_type(ret), fresh_tps[id(node)], node.attrs,
                                          span=node.span)
            elif isinstance(node, Call):
                done[id(node)] = self._call(node, bp_of[id(node)], res)
            elif isinstance(node, RefCreate):
                done[id(node)] = RefCreate(res(node.value), span=node.span)
            elif isinstance(node, RefRead):
                done[id(node)] = RefRead(res(node.ref), span=node.span)
            elif isinstance(node, RefWrite):
                done[id(node)] = RefWrite(res(node.ref), res(node.value), span=node.span)
            elif isinstance(node, Match):
                clauses = tuple(Clause(self._pattern(c.lhs), res(c.rhs), span=c.span)
                                for c in node.clauses)
                done[id(node)] = Match(res(node.data), clauses, node.complete, span=node.span)
            else:
                _fail(f"gradient: cannot differentiate a {type(node).__name__}", node.span,
                      self.sources, code="not-differentiable")
        top = done[id(body)]
        if isinstance(top, _Block):
            return top
        if isinstance(body, Constant):
            top = self.constant(body)
        return _Block(deque(), top)

    def _let(self, node: Let, done: dict[int, Any], res: Callable[[Expr], Expr]) -> _Block:
        annotate = isinstance(node.value, Function)
        v = self.var(node.var, annotate=annotate)
        value = done[id(node.value)]
        body = done[id(node.body)]
        if not isinstance(body, _Block):
            body = _Block(deque(), res(node.body))
        if isinstance(value, _Block):
            body.bindings.appendleft((v, value.tail))
            body.bindings.extendleft(reversed(value.bindings))
        else:
            body.bindings.appendleft((v, res(node.value)))
        return body

    def _pattern(self, root: Pattern) -> Pattern:
        done: dict[int, Pattern] = {}
        for p in _pattern_post_order(root):
            if isinstance(p, PatternVar):
                done[id(p)] = PatternVar(self.var(p.var, annotate=True), span=p.span)
            elif isinstance(p, PatternConstructor):
                done[id(p)] = PatternConstructor(self.ctor_map.get(id(p.constructor),
                                                                   p.constructor),
                                                 tuple(done[id(c)] for c in p.patterns),
                                                 span=p.span)
            elif isinstance(p, PatternTuple):
                done[id(p)] = PatternTuple(tuple(done[id(c)] for c in p.patterns), span=p.span)
            else:
                done[id(p)] = p
        return done[id(root)]

    def _call(self, node: Call, bp: Var, res: Callable[[Expr], Expr]) -> Any:
        if isinstance(node.op, Constructor):
            ctor = self.ctor_map.get(id(node.op), node.op)
            return Call(ctor, tuple(res(a) for a in node.args), span=node.span)
        if not isinstance(node.op, Op):
            return Call(res(node.op), (*(res(a) for a in node.args), bp), span=node.span)
        return self._op_call(node, bp, res)

    def _op_call(self, node: Call, bp: Var, res: Callable[[Expr], Expr]) -> _Block:
        rule = _rule(node, self.sources)
        for a in node.args:
            if not _tensor_tree(a.checked_type):
                _fail(f"gradient: an argument of `{node.op.name}` is not a tensor or a tuple "
                      "of tensors", a.span or node.span, self.sources, code="not-differentiable")
        bindings: deque[tuple[Var, Expr]] = deque()
        fwd: list[Expr] = []
        revs: list[Expr | None] = []
        for a in node.args:
            if isinstance(a, Constant):
                fwd.append(a)
                revs.append(None)
                continue
            rev = res(a)
            v = _var(a.name_hint if isinstance(a, Var) else "a", a.checked_type)
            bindings.append((v, self.get_value(a.checked_type, rev)))
            fwd.append(v)
            revs.append(rev)
        orig = Call(node.op, tuple(fwd), node.attrs, node.type_args, span=node.span)
        orig.set_checked_type(node.checked_type)
        out_t = node.checked_type
        out = _var("out", out_t)
        bindings.append((out, orig))
        ret = _var("r", self.rev_type(out_t))
        bindings.append((ret, self.get_rev(out_t, out, bindings)))
        saved = _var("bp", None)
        bindings.append((saved, RefRead(bp)))
        # the backward step
        inner: list[tuple[Var, Expr]] = []
        g = _var("g", out_t)
        inner.append((g, self.get_grad(out_t, ret)))
        grads = _apply_rule(rule, orig, g, out, self.sources)
        for a, rev, ga in zip(node.args, revs, grads):
            if rev is None or not any(_is_diff_tensor(lt) for _, lt in _leaves(a.checked_type)):
                continue
            gv = _var("ga", a.checked_type)
            inner.append((gv, ga))
            self.update_grad(a.checked_type, rev, gv, inner)
        step = Function((), _wrap(inner, Call(saved, ())), UNIT)
        bindings.append((_var("_", UNIT), RefWrite(bp, step)))
        return _Block(bindings, ret)


def _pattern_post_order(root: Pattern) -> list[Pattern]:
    out: list[Pattern] = []
    stack: list[tuple[Pattern, bool]] = [(root, False)]
    while stack:
        p, ready = stack.pop()
        if ready or not isinstance(p, (PatternConstructor, PatternTuple)):
            out.append(p)
        else:
            stack.append((p, True))
            stack.extend((c, False) for c in reversed(p.patterns))
    return out


# ---------------------------------------------------------------- dead references


@register_pass
@dataclass(frozen=True)
class EliminateDeadReferences(FunctionPass):
    """Remove the references of each global function that are written but never read."""

    name: ClassVar[str] = "EliminateDeadReferences"
    opt_level: ClassVar[int] = 1

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        body = eliminate_dead_references(fn.body)
        return fn if body is fn.body else Function(fn.params, body, fn.ret_type,
                                                   fn.type_params, fn.attrs, span=fn.span)


def eliminate_dead_references(expr: Expr) -> Expr:
    """`expr` without the `let %r = ref(...)` whose variable is used only as the target
    of `ref_write`s, and without those writes (a write becomes `()`, after its value if
    computing that has an effect). Repeated while it removes some: a closure that read
    another reference may have gone with a write."""
    from ..analysis import op_is_stateful
    while True:
        order = post_order(expr, opaque_children)
        lets = {id(n.var): n for n in order
                if isinstance(n, Let) and isinstance(n.value, RefCreate)}
        if not lets:
            return expr
        read: set[int] = set()
        for n in order:
            for i, c in enumerate(opaque_children(n)):
                if id(c) in lets and not (isinstance(n, RefWrite) and i == 0):
                    read.add(id(c))
        dead = lets.keys() - read
        if not dead:
            return expr
        memo: dict[int, tuple[Expr, bool]] = {}

        def effect(value: Expr, new: Expr, rest: Expr,
                   memo: dict[int, tuple[Expr, bool]] = memo) -> Expr:
            if pure_value(value, op_is_stateful, memo):
                return rest
            return Let(Var("_"), new, rest)

        done: dict[int, Expr] = {}
        for n in order:
            if isinstance(n, Let) and id(n.var) in dead:
                assert isinstance(n.value, RefCreate)
                done[id(n)] = effect(n.value.value, done[id(n.value.value)], done[id(n.body)])
            elif isinstance(n, RefWrite) and id(n.ref) in dead:
                done[id(n)] = effect(n.value, done[id(n.value)], Tuple((), span=n.span))
            else:
                kids = opaque_children(n)
                done[id(n)] = n.with_children([done[id(c)] for c in kids]) if kids else n
        expr = done[id(expr)]
