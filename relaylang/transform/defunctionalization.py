"""Defunctionalization: make one function first-order (TVM's relay.transform.Defunctionalization,
src/relay/transforms/defunctionalization.cc).

Every call of a global whose instantiated type takes functions is redirected to a
copy of that global specialised at the call's type arguments (`Call.type_args`,
recorded by InferType), in which each function parameter has become a value of
an ADT: one ADT per function type, one constructor per function passed at that
type (a closure's captured variables are the constructor's fields), and one
`@apply` global per function type that matches on the constructor and runs the
function. Calls of such a parameter become calls of `@apply`:

    def @map[A, B](%f: fn (A) -> B, %xs: List[A]) -> List[B] {...%f(%x)...}
    def @main(%l: List[float32], %k: float32) -> List[float32] {
      @map(fn (%x: float32) -> float32 { add(%x, %k) }, %l)
    }
                                   ==>
    type Defunc0 { Defunc0_fn0(float32) }
    def @main(%l: List[float32], %k: float32) -> List[float32] { @map_0(Defunc0_fn0(%k), %l) }
    def @map_0(%f: Defunc0[], %xs: List[float32]) -> List[float32] {...@apply0(%f, %x)...}
    def @apply0(%f: Defunc0[], %y0: float32) -> float32 {
      match (%f) { Defunc0_fn0(%k1) => add(%y0, %k1) }
    }

Names: `Defunc<n>` and `@apply<n>` per function type, `<ADT>_<global>` and `<ADT>_fn<i>`
for constructors, `@<global>_<i>` for copies (TVM appends type texts, which do not
parse); a `_<n>` suffix avoids names the module already has.

Only the chosen function (`func`, default `main`) is rewritten, and the copies it
needs; other globals stay (RemoveUnusedFunctions drops the unused ones). As in
TVM, a function argument must be a lambda, a global or a function parameter
already encoded; functions may not be returned, stored in data or let-bound, and
function types may not nest (a function taking a function as an argument of an
argument). Such programs get a diagnostic, not a partial rewrite.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ..ir.analysis import free_vars
from ..ir.diagnostics import Diagnostic, DiagnosticError
from ..ir.expr import (
    Call,
    Clause,
    Constructor,
    Expr,
    Function,
    GlobalVar,
    Match,
    PatternConstructor,
    PatternVar,
    Var,
)
from ..ir.module import IRModule
from ..ir.span import Span
from ..ir.traverse import rewrite
from ..ir.types import FuncType, GlobalTypeVar, Type, TypeCall, TypeData, TypeVar, type_children
from ..typing import infer_types
from .defunc_specialize import has_func_type, instantiate, is_higher_order, specialize, type_key
from .infer_type import InferType
from .inline import substitute
from .pass_infra import ModulePass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class Defunctionalization(ModulePass):
    """Make `func` first-order: function arguments become ADT values plus `@apply`."""

    name: ClassVar[str] = "Defunctionalization"
    opt_level: ClassVar[int] = 0
    func: str = "main"

    def transform_module(self, mod: IRModule, ctx: PassContext) -> IRModule:
        # Typed before (the rewrite reads calls' type arguments and variables' types) and
        # after, so the new nodes print with their types.
        infer = InferType()
        typed = infer_types(mod, type_args=True)
        out = defunctionalize(typed, self.func)
        # Nothing to do: the input, typed as InferType types it (without type arguments).
        # The type arguments were for the rewrite: the printer does not write them, so
        # they are dropped, and the output re-parses to a structurally equal module.
        return infer.transform_module(mod if out is typed else _without_type_args(out), ctx)


def _without_type_args(mod: IRModule) -> IRModule:
    def strip(old: Expr, new: Expr) -> Expr | None:
        if isinstance(new, Call) and new.type_args:
            return Call(new.op, new.args, new.attrs, (), span=new.span)
        return None
    out = mod.copy()
    for gv, fn in mod.functions.items():
        out.functions[gv] = rewrite(fn, strip)                       # type: ignore[assignment]
    return out


def defunctionalize(mod: IRModule, func: str = "main") -> IRModule:
    """`mod`, typed with type arguments (`infer_types(mod, type_args=True)`), with global `func`
    made first-order (see the module doc)."""
    return _Defunctionalizer(mod).run(func)


class _Unsupported(Exception):
    def __init__(self, message: str, span: Span | None):
        super().__init__(message)
        self.message, self.span = message, span


@dataclass
class _Encoding:
    """The ADT standing for the functions of one type, and its `@apply`."""

    ft: FuncType
    adt: GlobalTypeVar
    apply: GlobalVar
    params: tuple[Var, ...]            # `@apply`'s: the encoded function, then its arguments
    constructors: list[Constructor] = field(default_factory=list)
    clauses: list[Clause] = field(default_factory=list)


class _Defunctionalizer:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self.functions = dict(mod.functions)
        self.taken = {gv.name_hint for gv in mod.functions} | \
            {t.name_hint for t in mod.type_definitions} | \
            {c.name for d in mod.type_definitions.values() for c in d.constructors}
        self.encodings: dict[str, _Encoding] = {}          # by function type
        self.by_adt: dict[int, _Encoding] = {}
        self.specialized: dict[str, GlobalVar] = {}        # by global and instantiated type
        self.global_ctors: dict[str, Constructor] = {}     # by global and instantiated type
        self.lambda_ctors: dict[int, Constructor] = {}
        self.var_types: dict[int, Type] = {}               # binders of specialised copies
        self.queue: list[GlobalVar] = []

    def run(self, func: str) -> IRModule:
        try:
            entry = self.mod.get_global_var(func)
        except KeyError:
            # located at the module's first function (as Gradient's missing entry)
            names = ", ".join("@" + g.name_hint for g in self.mod.functions) or "none"
            first = next(iter(self.mod.functions.values()), None)
            self._fail(f"no global function @{func} to defunctionalize (the module's "
                       f"functions: {names})", first.span if first is not None else None)
        fn = self.mod.functions[entry]
        self._check_entry(fn, func)
        try:
            self.functions[entry] = rewrite(fn, self._visit)  # type: ignore[assignment]
            while self.queue:
                gv = self.queue.pop()
                clone = self.functions[gv]
                self.functions[gv] = Function(clone.params, rewrite(clone.body, self._visit),
                                              clone.ret_type, (), clone.attrs, span=clone.span)
        except _Unsupported as e:
            self._fail(e.message, e.span)
        if not self.encodings and self.functions[entry] is fn:
            return self.mod                                  # already first-order
        return self._module()

    def _check_entry(self, fn: Function, func: str) -> None:
        if fn.type_params:
            self._fail(f"@{func} is polymorphic; its types must be known", fn.span)
        for p in fn.params:
            if has_func_type(p.checked_type):
                self._fail(f"@{func} takes a function (%{p.name_hint}); it cannot be made "
                           "first-order", p.span)
        ret = fn.checked_type.ret_type if isinstance(fn.checked_type, FuncType) else fn.ret_type
        if has_func_type(ret):
            self._fail(f"@{func} returns a function; it cannot be made first-order", fn.span)

    def _fail(self, message: str, span: Span | None):
        raise DiagnosticError([Diagnostic.error(f"Defunctionalization: {message}", span)],
                              self.mod.sources)

    def _module(self) -> IRModule:
        out = IRModule(self.functions, self.mod.type_definitions, self.mod.source_name,
                       self.mod.sources)
        for enc in self.encodings.values():
            out.add_type_definition(TypeData(enc.adt, (), tuple(enc.constructors)))
            body = Match(enc.params[0], tuple(enc.clauses))
            out.functions[enc.apply] = Function(enc.params, body, enc.ft.ret_type)
        return out

    # ------------------------------------------------------------ calls
    def _visit(self, old: Expr, new: Expr) -> Expr | None:
        if not isinstance(new, Call):
            return None
        if isinstance(new.op, GlobalVar) and new.op in self.mod.functions:
            return self._global_call(new, new.op)
        if isinstance(new.op, Var):
            enc = self._encoding_of(new.op)
            if enc is not None:          # a function parameter, now an ADT value
                return Call(enc.apply, (new.op, *new.args), span=new.span)
        return None

    def _global_call(self, call: Call, gv: GlobalVar) -> Expr | None:
        # The function's own type, not the GlobalVar's: a GlobalVar outlives rewrites of
        # its function, a rewritten function is a new node typed afresh.
        generic = self.mod.functions[gv].checked_type
        if not isinstance(generic, FuncType):
            return None
        if len(call.type_args) != len(generic.type_params):
            raise _Unsupported(f"the call of @{gv.name_hint} has no known type arguments",
                               call.span)
        ft = instantiate(generic, call.type_args)
        if not is_higher_order(ft):
            return None
        if has_func_type(ft.ret_type):
            raise _Unsupported(f"@{gv.name_hint} returns a function here; only function "
                               "arguments can be encoded", call.span)
        args = tuple(self._encode(a, t) if has_func_type(t) else a
                     for a, t in zip(call.args, ft.arg_types))
        return Call(self._specialization(gv, call.type_args, ft), args, span=call.span)

    def _specialization(self, gv: GlobalVar, type_args: tuple[Type, ...],
                        ft: FuncType) -> GlobalVar:
        key = f"@{gv.name_hint}:{type_key(ft)}"
        target = self.specialized.get(key)
        if target is None:
            count = sum(k.startswith(f"@{gv.name_hint}:") for k in self.specialized)
            target = self.specialized[key] = GlobalVar(self._fresh(f"{gv.name_hint}_{count}"))
            clone = specialize(self.mod.functions[gv], type_args, self._param_type,
                               self.var_types)
            self.functions[target] = clone     # its body is rewritten from the queue
            self.queue.append(target)
        return target

    def _param_type(self, t: Type) -> Type:
        if isinstance(t, FuncType):
            return TypeCall(self._encoding(t, None).adt, ())
        if has_func_type(t):
            raise _Unsupported("a parameter holds functions inside a tuple, reference or "
                               "ADT; only plain function parameters can be encoded", None)
        return t

    # ------------------------------------------------------------ encodings
    def _encoding(self, ft: Type, span: Span | None) -> _Encoding:
        if not isinstance(ft, FuncType) or any(has_func_type(t) for t in ft.arg_types) \
                or has_func_type(ft.ret_type):
            raise _Unsupported(f"cannot encode a function of type {type_key(ft)}: function "
                               "types nest", span)
        key = type_key(ft)
        enc = self.encodings.get(key)
        if enc is None:
            k = len(self.encodings)
            adt = GlobalTypeVar(self._fresh(f"Defunc{k}"))
            params = (Var("f", TypeCall(adt, ())),
                      *(Var(f"y{i}", t) for i, t in enumerate(ft.arg_types)))
            enc = _Encoding(ft, adt, GlobalVar(self._fresh(f"apply{k}")), params)
            self.encodings[key] = self.by_adt[id(adt)] = enc
        return enc

    def _encoding_of(self, var: Var) -> _Encoding | None:
        t = self.var_types.get(id(var), var.type_annotation)
        if isinstance(t, TypeCall) and not t.args:
            return self.by_adt.get(id(t.func))
        return None

    def _encode(self, arg: Expr, ft: Type) -> Expr:
        enc = self._encoding(ft, arg.span)
        if isinstance(arg, Var):
            if self._encoding_of(arg) is not enc:
                raise _Unsupported(f"%{arg.name_hint} is a function bound by let or match; "
                                   "only lambdas, globals and parameters can be encoded",
                                   arg.span)
            return arg
        if isinstance(arg, GlobalVar):
            return Call(self._global_constructor(arg, enc), (), span=arg.span)
        if isinstance(arg, Function) and arg.type_params:
            # A polymorphic lambda (TVM's test_simple): a copy at the type it is used at.
            type_args = _type_args_at(arg, ft)
            if type_args is not None:
                arg = specialize(arg, type_args, lambda t: t, self.var_types)
        if isinstance(arg, Function) and not arg.type_params:
            ctor, captured = self._lambda_constructor(arg, enc)
            return Call(ctor, captured, span=arg.span)
        raise _Unsupported("a function argument must be a lambda, a global or a parameter",
                           arg.span)

    def _new_constructor(self, enc: _Encoding, suffix: str, inputs: tuple[Type, ...]
                         ) -> Constructor:
        ctor = Constructor(self._fresh(f"{enc.adt.name_hint}_{suffix}"), inputs, enc.adt,
                           len(enc.constructors))
        enc.constructors.append(ctor)
        return ctor

    def _global_constructor(self, gv: GlobalVar, enc: _Encoding) -> Constructor:
        key = f"@{gv.name_hint}:{type_key(enc.ft)}"
        ctor = self.global_ctors.get(key)
        if ctor is None:
            ctor = self.global_ctors[key] = self._new_constructor(enc, gv.name_hint, ())
            enc.clauses.append(Clause(PatternConstructor(ctor, ()),
                                      Call(gv, enc.params[1:])))
        return ctor

    def _lambda_constructor(self, fn: Function, enc: _Encoding
                            ) -> tuple[Constructor, tuple[Expr, ...]]:
        """A constructor whose fields are the lambda's captured variables, and an `@apply`
        case running its body with the parameters and captures bound by the match."""
        captured = tuple(free_vars(fn))
        ctor = self.lambda_ctors.get(id(fn))
        if ctor is None:
            inputs = tuple(self._captured_type(v) for v in captured)
            ctor = self.lambda_ctors[id(fn)] = self._new_constructor(
                enc, f"fn{len(enc.constructors)}", inputs)
            fields = tuple(Var(v.name_hint, span=v.span) for v in captured)
            subst: dict[int, Expr] = {id(v): f for v, f in zip(captured, fields)}
            subst.update((id(p), y) for p, y in zip(fn.params, enc.params[1:]))
            enc.clauses.append(Clause(PatternConstructor(ctor, tuple(map(PatternVar, fields))),
                                      substitute(fn.body, subst)))
        return ctor, captured

    def _captured_type(self, v: Var) -> Type:
        t = self.var_types.get(id(v)) or v.checked_type or v.type_annotation
        if t is None or has_func_type(t):
            raise _Unsupported(f"the lambda captures %{v.name_hint}, a function or of unknown "
                               "type", v.span)
        return t

    def _fresh(self, base: str) -> str:
        """`base`, or `base_<n>` if the module already has that name."""
        name, n = base, 0
        while name in self.taken:
            n += 1
            name = f"{base}_{n}"
        self.taken.add(name)
        return name


def _type_args_at(fn: Function, ft: Type) -> tuple[Type, ...] | None:
    """The type arguments at which the polymorphic lambda `fn` has the type `ft`, found by
    matching its signature against `ft`; None when some type parameter is not fixed."""
    sig = fn.checked_type
    if not isinstance(sig, FuncType):
        return None
    params = {id(tv) for tv in sig.type_params}
    found: dict[int, Type] = {}
    stack: list[tuple[Type, Type]] = [(FuncType(sig.arg_types, sig.ret_type), ft)]
    while stack:                                  # types nest: walk them with a stack
        pattern, concrete = stack.pop()
        if isinstance(pattern, TypeVar) and id(pattern) in params:
            found.setdefault(id(pattern), concrete)
            continue
        kids, concrete_kids = type_children(pattern), type_children(concrete)
        if type(pattern) is type(concrete) and len(kids) == len(concrete_kids):
            stack.extend(zip(kids, concrete_kids))
    if len(found) != len(params):
        return None
    return tuple(found[id(tv)] for tv in sig.type_params)
