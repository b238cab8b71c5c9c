"""Type inference for a whole module (TVM's src/relay/transforms/type_infer.cc).

One pass over every function, children before parents (the iterative
`post_order`), gives each expression a type, possibly with holes
(`IncompleteType`), and unifies as it goes. Op calls become relation
constraints, solved at once when their arguments are known and otherwise
retried in a fixpoint loop at the end; so is a projection of a tuple whose
type is not known yet. Every constraint is solved a bounded number of times:
inference is linear in program size.

Global functions get a signature up front (annotations, holes where there are
none), so calls may come before definitions and functions may recurse. Bodies
are inferred one strongly connected component of the call graph at a time,
callees first (scc.py); once a component is done, the holes its bodies filled
are substituted into the signatures of its globals with type parameters, which
are then instantiated afresh at each use, as in Hindley-Milner with declared
type parameters:

    def @id[A](%p: A) { %p }                    @id : fn [A](A) -> A after its component
    def @main(%x: float32, %i: int32) { (@id(%x), @id(%i)) }    two instantiations
"""
from __future__ import annotations

from typing import Any, Callable

from .. import op as op_registry
from ..ir.diagnostics import DiagnosticContext, Note
from ..ir.equal import structural_equal
from ..ir.expr import (
    Call,
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
from ..ir.module import IRModule
from ..ir.traverse import post_order, rewrite
from ..ir.types import (
    FuncType,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    map_type,
    type_children,
)
from ..op.relation import TypeRelError
from .patterns import PatternTyper
from .report import LazyNote, Reporter, Site, Use, type_text
from .scc import strongly_connected_components
from .solver import Solver, UnifyError

BOOL = TensorType((), "bool")
UNIT = TupleType(())


class _Pending:
    """A constraint that waits for more type information: an op relation or a projection."""

    __slots__ = ("node", "kind")

    def __init__(self, node: Expr, kind: str):
        self.node, self.kind = node, kind


class Inferencer:
    def __init__(self, mod: IRModule, diag: DiagnosticContext, *, op_type_args: bool = False):
        """`op_type_args`: also record each operator call's argument types as its type
        arguments (TVM's InferType does), for `with_type_args`."""
        self.mod = mod
        self.op_type_args = op_type_args
        self.solver = Solver()
        self.report = Reporter(diag, self.solver, mod.sources)
        self.types: dict[int, Type] = {}
        self.var_types: dict[int, Type] = {}
        self.signatures: dict[str, FuncType] = {}
        self.pending: list[_Pending] = []
        self.call_type_args: list[tuple[Call, tuple[Type, ...]]] = []
        # Globals whose component is being inferred and whose uses are monomorphic there.
        self.monomorphic: set[str] = set()
        self.patterns = PatternTyper(self)
        self.visit: dict[type, Callable[[Any], Type]] = {
            Var: self.var_type, GlobalVar: self._global, Constant: self._constant,
            Op: self._op, Constructor: self._constructor, Tuple: self._tuple,
            TupleGetItem: self._get_item, Call: self._call, Let: self._let, If: self._if,
            Function: self._function, Match: self._match, RefCreate: self._ref_create,
            RefRead: self._ref_read, RefWrite: self._ref_write}

    # ------------------------------------------------------------ driver
    def run(self) -> None:
        for gv, fn in self.mod.functions.items():
            self.signatures[gv.name_hint] = self._signature(fn)
        for component in self._components():
            self._infer_component(component)
        self._report_pending()

    def _components(self) -> list[list[tuple[str, Function, list[Expr] | None]]]:
        """The globals grouped into strongly connected components of the call graph,
        callees first (each entry: name, function, its nodes in post-order if computed).

        Only edges into a global whose signature has holes count: a fully annotated
        global's type is known up front, so where it is checked does not matter to its
        users (as GHC's dependency analysis ignores uses of functions with complete
        signatures). A module without such holes keeps its own order, unscanned."""
        items = [(gv.name_hint, fn) for gv, fn in self.mod.functions.items()]
        is_complete = self.solver.is_complete
        open_names = {name for name, _ in items if not is_complete(self.signatures[name])}
        if not open_names or len(items) == 1:
            return [[(name, fn, None)] for name, fn in items]
        nodes_of: dict[str, list[Expr]] = {}
        edges: dict[str, list[str]] = {}
        for name, fn in items:
            nodes = nodes_of[name] = post_order(fn)
            edges[name] = [n.name_hint for n in nodes
                           if isinstance(n, GlobalVar) and n.name_hint in open_names]
        functions = dict(items)
        return [[(name, functions[name], nodes_of[name]) for name in component]
                for component in strongly_connected_components([n for n, _ in items], edges)]

    def _infer_component(self, component: list[tuple[str, Function, list[Expr] | None]]
                         ) -> None:
        """Infer the bodies of one component, then close its polymorphic signatures.

        Inside the component a global with type parameters but holes in its signature
        is used monomorphically (Hindley-Milner: its type is not known until the whole
        component is); a fully annotated one is instantiated at every use, which allows
        polymorphic recursion. Afterwards the holes its body filled are substituted into
        its signature, so that later components instantiate a closed type rather than
        share the holes. Holes still open stay shared: only declared type parameters
        are generalised (a global without them may get its types from its callers)."""
        signatures, is_complete = self.signatures, self.solver.is_complete
        generic_open = [name for name, _, _ in component
                        if signatures[name].type_params and not is_complete(signatures[name])]
        self.monomorphic.update(generic_open)
        first_pending = len(self.pending)
        for name, fn, nodes in component:
            inferred = self.infer(fn, nodes)
            # An unannotated result is a hole in the signature until the body fills it.
            self.unify(signatures[name].ret_type, inferred.ret_type, Use(fn, 0),
                       f"the result of `@{name}`")
        self.monomorphic.difference_update(generic_open)
        if not generic_open:
            return     # nothing to generalise: waiting constraints are retried at the end
        # The signatures may wait on this component's op relations and projections.
        self.pending[first_pending:] = self._retry(self.pending[first_pending:])
        if not all(is_complete(signatures[name]) for name in generic_open):
            # Or on an earlier component's, which a call here may have unblocked.
            self.pending = self._retry(self.pending)
        for name in generic_open:
            signatures[name] = self.solver.resolve(signatures[name])

    def infer(self, root: Expr, nodes: list[Expr] | None = None) -> Type:
        """The type of `root`; `nodes` is its post-order when the caller has it already."""
        types, visit = self.types, self.visit
        order = post_order(root) if nodes is None else nodes
        # A let-bound variable takes its value's type before the body is inferred (as
        # in TVM), so a let-bound `fn[A]` is instantiated afresh at each use in the body.
        lets: dict[int, list[Let]] = {}
        for node in order:
            if type(node) is Let:
                lets.setdefault(id(node.value), []).append(node)
        for node in order:
            types[id(node)] = visit[type(node)](node)
            if lets and id(node) in lets:
                for let in lets.pop(id(node)):
                    self._bind_let(let)
        return types[id(root)]

    def _signature(self, fn: Function) -> FuncType:
        params = tuple(self.var_type(p) for p in fn.params)
        ret = fn.ret_type if fn.ret_type is not None else self.solver.fresh()
        return FuncType(params, ret, fn.type_params)

    def t(self, node: Expr) -> Type:
        """The type of `node` at this use. Globals and constructors are one shared node
        per module but may be polymorphic: each use gets its own instantiation."""
        if isinstance(node, GlobalVar):
            return self._global(node)
        if isinstance(node, Constructor):
            return self._constructor(node)
        return self.types[id(node)]

    def unify(self, expected: Type, actual: Type, site: Site, what: str,
              *notes: Note | LazyNote) -> Type:
        """Unify; on a mismatch report it at `site` (a `Use` is located only then)."""
        try:
            return self.solver.unify(expected, actual)
        except UnifyError as e:
            report = self.report
            report.mismatch(what, expected, actual, e.message, report.span(site),
                            *(report.note(n) for n in notes))
            return expected

    def instantiate(self, ft: FuncType) -> FuncType:
        """A polymorphic function type with its type parameters replaced by fresh holes."""
        return self._instantiate_with_args(ft)[0]

    def _instantiate_with_args(self, ft: FuncType) -> tuple[FuncType, tuple[Type, ...]]:
        """`instantiate`, also returning the holes chosen for the type parameters, in order."""
        if not ft.type_params:
            return ft, ()
        holes = tuple(self.solver.fresh() for _ in ft.type_params)
        fresh = {id(tv): hole for tv, hole in zip(ft.type_params, holes)}
        body = FuncType(ft.arg_types, ft.ret_type)
        return map_type(body, lambda t: fresh.get(id(t)) if isinstance(t, TypeVar) else None), holes

    # ------------------------------------------------------------ leaves
    def var_type(self, var: Var) -> Type:
        t = self.var_types.get(id(var))
        if t is None:
            t = var.type_annotation if var.type_annotation is not None else self.solver.fresh()
            self.var_types[id(var)] = t
        return t

    def _global(self, gv: GlobalVar) -> Type:
        sig = self.signatures.get(gv.name_hint)
        if sig is None:
            self.report.error(f"`@{gv.name_hint}` is not defined in this module", gv.span,
                              code="undefined-name")
            return self.solver.fresh()
        return self._instantiate_global(gv.name_hint, sig)[0]

    def _instantiate_global(self, name: str, sig: FuncType
                            ) -> tuple[FuncType, tuple[Type, ...]]:
        """A use of a global's signature and its type arguments: fresh holes, or, while
        its own component is inferred and its signature has holes, its own (rigid) type
        parameters, so that recursive uses share the holes (see `_infer_component`)."""
        if name in self.monomorphic:
            return FuncType(sig.arg_types, sig.ret_type), tuple(sig.type_params)
        return self._instantiate_with_args(sig)

    def _constant(self, node: Constant) -> Type:
        dtype = node.data.dtype
        # the carriers of ir/bfloat16.py and ir/lowp.py: one field named after the dtype
        name = dtype.names[0] if dtype.kind == "V" and dtype.names else str(dtype)
        return TensorType(tuple(int(d) for d in node.data.shape), name)

    def _op(self, node: Op) -> Type:
        return self.solver.fresh()     # typed at its call; an op is not a first-class value

    def _constructor(self, ctor: Constructor) -> Type:
        return self.instantiate(self._constructor_scheme(ctor))

    def _constructor_scheme(self, ctor: Constructor) -> FuncType:
        """The constructor's type, polymorphic over its ADT's type parameters."""
        data = self.mod.type_definitions.get(ctor.belong_to)
        params = data.type_params if data is not None else ()
        result = TypeCall(ctor.belong_to, tuple(params))
        return FuncType(ctor.inputs, result, tuple(params))

    # ------------------------------------------------------------ composites
    def _tuple(self, node: Tuple) -> Type:
        return TupleType(tuple(self.t(f) for f in node.fields))

    def _get_item(self, node: TupleGetItem) -> Type:
        self.types[id(node)] = self.solver.fresh()
        if not self._try_get_item(node):
            self.pending.append(_Pending(node, "project"))
        return self.t(node)

    def _try_get_item(self, node: TupleGetItem) -> bool:
        t = self.solver.find(self.t(node.tuple_value))
        if isinstance(t, IncompleteType):
            return False
        if not isinstance(t, TupleType):
            self.report.error(f"cannot project field {node.index} of a value of type "
                              f"{type_text(self.solver, t)}: it is not a tuple", node.span,
                              code="tuple-projection")
        elif node.index >= len(t.fields):
            self.report.error(f"field {node.index} is out of range for a tuple of "
                              f"{len(t.fields)} fields", node.span, code="tuple-projection")
        else:
            self.unify(self.t(node), t.fields[node.index], node.span, "projection")
        return True

    def _let(self, node: Let) -> Type:
        return self.t(node.body)     # the variable was bound when the value was inferred

    def _bind_let(self, node: Let) -> None:
        declared = self.var_type(node.var)
        notes = [Note("annotated here", node.var.type_annotation.span)] \
            if node.var.type_annotation is not None and node.var.type_annotation.span else []
        self.unify(declared, self.t(node.value), Use(node, 0),
                   f"the value bound to `%{node.var.name_hint}`", *notes)

    def _if(self, node: If) -> Type:
        self.unify(BOOL, self.t(node.cond), Use(node, 0), "the condition of `if`")
        return self.unify(self.t(node.true_branch), self.t(node.false_branch),
                          Use(node, 2), "the else-branch of `if`",
                          LazyNote("the then-branch is here", Use(node, 1)))

    def _function(self, fn: Function) -> Type:
        body = self.t(fn.body)
        if fn.ret_type is not None:
            notes = [Note("the result type is declared here", fn.ret_type.span)] \
                if fn.ret_type.span else []
            self.unify(fn.ret_type, body, Use(fn, 0), "the function body", *notes)
        return FuncType(tuple(self.var_type(p) for p in fn.params),
                        fn.ret_type if fn.ret_type is not None else body, fn.type_params)

    def _match(self, node: Match) -> Type:
        data = self.t(node.data)
        result: Type | None = None
        for clause in node.clauses:
            self.patterns.check(clause.lhs, data, node.data.span)
            rhs = self.t(clause.rhs)
            result = rhs if result is None else self.unify(
                result, rhs, clause.rhs.span, "this match arm",
                Note("the first arm is here", node.clauses[0].rhs.span))
        self.patterns.check_exhaustive(node)
        return result if result is not None else self.solver.fresh()

    def _ref_create(self, node: RefCreate) -> Type:
        return RefType(self.t(node.value))

    def _ref_read(self, node: RefRead) -> Type:
        value = self.solver.fresh()
        self.unify(RefType(value), self.t(node.ref), Use(node, 0),
                   "the argument of ref_read")
        return value

    def _ref_write(self, node: RefWrite) -> Type:
        self.unify(RefType(self.t(node.value)), self.t(node.ref), Use(node, 0),
                   "the reference of ref_write")
        return UNIT

    # ------------------------------------------------------------ calls
    def _call(self, node: Call) -> Type:
        if isinstance(node.op, Op):
            self.types[id(node)] = self.solver.fresh()
            if self.op_type_args:       # TVM's: the argument types, whatever the call carried
                self.call_type_args.append((node, tuple(self.t(a) for a in node.args)))
            if not self._try_relation(node):
                self.pending.append(_Pending(node, "relation"))
            return self.t(node)
        callee = self._callee_type(node)
        args = [self.t(a) for a in node.args]
        if isinstance(callee, IncompleteType):
            result = self.solver.fresh()
            self.unify(callee, FuncType(tuple(args), result), Use(node, 0), "the callee")
            return result
        if not isinstance(callee, FuncType):
            self.report.error(f"cannot call a value of type {type_text(self.solver, callee)}: "
                              "it is not a function", self.report.at(node, 0),
                              code="not-callable")
            return self.solver.fresh()
        name = self.report.callee_name(node.op)
        if len(callee.arg_types) != len(node.args):
            self.report.error(f"{name} expects {len(callee.arg_types)} argument"
                              f"{'s' if len(callee.arg_types) != 1 else ''}, got {len(node.args)}",
                              node.span, *self.report.definition_note(node.op, self.mod),
                              code="arity")
            return callee.ret_type
        notes = self._monomorphic_note(node.op)
        for i, (param, arg) in enumerate(zip(callee.arg_types, node.args)):
            self.unify(param, self.t(arg), Use(node, i + 1), f"argument {i + 1} of {name}",
                       *self.report.param_note(node.op, i, self.mod), *notes)
        return callee.ret_type

    def _monomorphic_note(self, callee: Expr) -> tuple[Note, ...]:
        """Why a recursive call cannot use the callee at other types, should it try."""
        if not isinstance(callee, GlobalVar) or callee.name_hint not in self.monomorphic:
            return ()
        fn = self.mod.functions.get(callee)
        return (Note(f"`@{callee.name_hint}` is called from its own recursive group, and its "
                     "signature is not fully annotated: there it can only be used at its own "
                     "type parameters; annotate its parameters and result type to call it at "
                     "other types", fn.span if fn is not None else None),)

    def _callee_type(self, node: Call) -> Type:
        """The callee's type at this call. A polymorphic callee (global, constructor, local
        `fn[A]`) is instantiated with fresh holes: the call's type arguments, which
        `with_type_args` writes to `Call.type_args` once solved (as TVM's InferType).
        Type arguments the call already carries (set by a pass) pin the holes."""
        op = node.op
        if isinstance(op, GlobalVar):
            generic: Type | None = self.signatures.get(op.name_hint)
            if generic is None:
                return self._global(op)     # reports the undefined name
        elif isinstance(op, Constructor):
            generic = self._constructor_scheme(op)
        else:
            generic = self.solver.find(self.t(op))
        if not isinstance(generic, FuncType) or not generic.type_params:
            return generic
        callee, holes = self._instantiate_global(op.name_hint, generic) \
            if isinstance(op, GlobalVar) else self._instantiate_with_args(generic)
        if node.type_args and len(node.type_args) != len(holes):
            self.report.error(f"{self.report.callee_name(op)} takes {len(holes)} type "
                              f"argument{'s' if len(holes) != 1 else ''}, the call carries "
                              f"{len(node.type_args)}", node.span, code="arity")
        elif node.type_args:
            for i, (hole, given) in enumerate(zip(holes, node.type_args)):
                self.unify(hole, given, node.span, f"type argument {i + 1} of "
                           f"{self.report.callee_name(op)}")
        else:
            self.call_type_args.append((node, holes))
        return callee

    def solved_type_args(self) -> dict[int, tuple[Type, ...]]:
        """Each polymorphic call's solved type arguments, by call identity; calls whose
        arguments are not fully known are left out (a hole would mean nothing to a pass)."""
        resolve, complete = self.solver.resolve, self.solver.is_complete
        out: dict[int, tuple[Type, ...]] = {}
        for node, holes in self.call_type_args:
            solved = tuple(resolve(h) for h in holes)
            if all(complete(t) for t in solved):
                out[id(node)] = solved
        return out

    def _try_relation(self, node: Call) -> bool:
        """Apply the op's type relation if its arguments are known; False to wait."""
        opdef = op_registry.get_op_def(node.op.name)
        if opdef is None or opdef.type_rel is None:
            self.report.error(f"operator `{node.op.name}` has no type relation yet", node.span,
                              code="op-type-relation")
            return True
        if 0 <= opdef.num_inputs != len(node.args):      # relations index their inputs
            count = opdef.num_inputs
            names = f" ({', '.join(opdef.input_names)})" if opdef.input_names else ""
            self.report.error(f"`{node.op.name}` expects {count} argument{'s' if count != 1 else ''}"
                              f"{names}, got {len(node.args)}", node.span, code="arity")
            return True
        args = [self.solver.resolve(self.t(a)) for a in node.args]
        try:
            result = opdef.type_rel(args, node.attrs)
        except TypeRelError as e:
            at = self.report.at(node, e.arg + 1) if e.arg is not None and e.arg < len(node.args) \
                else None
            self.report.error(f"{node.op.name}: {e.message}", at or node.span,
                              code="op-type-relation")
            return True
        if result is None:
            return False
        self.unify(self.t(node), result, node.span, f"the result of {node.op.name}")
        return True

    def _retry(self, items: list[_Pending]) -> list[_Pending]:
        """Retry waiting constraints until none makes progress; those still waiting."""
        progress = True
        while items and progress:
            progress = False
            waiting = []
            for item in items:
                done = self._try_relation(item.node) if item.kind == "relation" \
                    else self._try_get_item(item.node)
                progress |= done
                if not done:
                    waiting.append(item)
            items = waiting
        return items

    def _report_pending(self) -> None:
        self.pending = self._retry(self.pending)
        for item in self.pending:
            node = item.node
            if item.kind == "relation" and self._report_type_parameter_argument(node):
                continue
            if item.kind == "relation":
                shown = ", ".join(type_text(self.solver, self.t(a)) for a in node.args)
                self.report.error(f"cannot infer the type of this `{node.op.name}` call: its "
                                  f"arguments ({shown}) are not known; annotate them", node.span,
                                  code="cannot-infer")
            else:
                self.report.error("cannot infer the type of the tuple projected here; "
                                  "annotate it", node.span, code="cannot-infer")

    def _report_type_parameter_argument(self, node: Call) -> bool:
        """An op call still waiting with no holes left in its arguments waits on a type
        parameter, which stays abstract in its function's body: say so at the argument."""
        args = [self.solver.resolve(self.t(a)) for a in node.args]
        if not all(self.solver.is_complete(t) for t in args):
            return False
        for i, t in enumerate(args):
            param = _first_type_var(t)
            if param is not None:
                shown = type_text(self.solver, t)
                self.report.error(
                    f"`{node.op.name}` cannot take argument {i + 1} of type {shown}: type "
                    f"parameter {param.name_hint} stands for any type, and the operator needs "
                    "a tensor", self.report.at(node, i + 1) or node.span, code="op-type-relation")
                return True
        return False


def _first_type_var(t: Type) -> TypeVar | None:
    stack = [t]
    while stack:
        n = stack.pop()
        if isinstance(n, TypeVar):
            return n
        stack.extend(reversed(type_children(n)))
    return None


def _same_types(a: tuple[Type, ...], b: tuple[Type, ...]) -> bool:
    return len(a) == len(b) and all(x is y or structural_equal(x, y) for x, y in zip(a, b))


def with_type_args(mod: IRModule, inf: Inferencer) -> IRModule:
    """`mod`, type-checked by `inf`, with `Call.type_args` filled in (TVM's InferType fills
    them too). Calls are immutable and may be shared with the caller's module, so each
    call gaining type arguments is a new node, as is each ancestor, keeping its
    `checked_type`; the input module is not changed, so its structural identity holds."""
    solved = inf.solved_type_args()
    if not solved:
        return mod

    def visit(old: Expr, new: Expr) -> Expr | None:
        if isinstance(new, Call) and id(old) in solved:
            args = solved[id(old)]
            # An operator call's are its argument types now, replacing any it carried (a
            # pass may have changed its arguments); another call's given ones were kept.
            if not new.type_args or \
                    (isinstance(new.op, Op) and not _same_types(new.type_args, args)):
                new = Call(new.op, new.args, new.attrs, args, span=new.span)
        if new is not old and old.checked_type is not None:
            new.set_checked_type(old.checked_type)
        return new
    out = mod.copy()
    for gv, fn in mod.functions.items():
        out.functions[gv] = rewrite(fn, visit)  # type: ignore[assignment]
    return out
