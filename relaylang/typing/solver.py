"""Unification over Relay types (TVM's src/relay/analysis/type_solver.cc, simplified).

Unknown types are `IncompleteType` objects ("holes"); the solver maps each
bound hole to what it stands for (union-find with path compression). Type
parameters of a function are rigid inside its body: a `TypeVar` only unifies
with itself or a hole. Two function types with type parameters unify as in TVM: the
more polymorphic one is instantiated (its extra parameters become fresh holes), so a
polymorphic function used as a value fits each use, and the unified type is the less
polymorphic one (the branches of an `if`). Everything here walks types with explicit
stacks, so even pathological nesting cannot overflow.
"""
from __future__ import annotations

from ..ir.node import AnyDim
from ..ir.types import (
    FuncType,
    GlobalTypeVar,
    IncompleteType,
    RefType,
    TensorType,
    TupleType,
    Type,
    TypeCall,
    TypeVar,
    map_type,
    type_children,
    with_type_children,
)


class UnifyError(Exception):
    """Two types that cannot be the same; `message` says where they differ."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class Solver:
    def __init__(self) -> None:
        self._bound: dict[int, Type] = {}
        # Bound holes are kept alive: `_bound` is keyed by id(), and a freed hole's id
        # could be reused by a new hole, which would inherit its binding.
        self._holes: list[IncompleteType] = []
        self._closed: dict[int, Type] = {}     # types without unbound holes (kept alive)
        self._memo: dict[int, tuple[Type, Type]] = {}    # resolve's, until the next binding
        self._memo_at = 0

    # ------------------------------------------------------------ holes
    def fresh(self) -> IncompleteType:
        return IncompleteType()

    def find(self, t: Type) -> Type:
        """The representative of `t`: follows bound holes (with path compression)."""
        if not isinstance(t, IncompleteType):
            return t
        path = []
        while isinstance(t, IncompleteType) and id(t) in self._bound:
            path.append(t)
            t = self._bound[id(t)]
        for hole in path[:-1]:
            self._bound[id(hole)] = t
        return t

    def resolve(self, t: Type) -> Type:
        """`t` with every bound hole replaced by what it stands for, all the way down.

        Results are remembered until the next binding, so resolving the types of every
        node of a program (each nested tuple type sharing its fields' types) costs the
        size of all the types together, not the sum of their sizes."""
        if isinstance(t, TensorType):
            return t
        if self._memo_at != len(self._holes):
            self._memo, self._memo_at = {}, len(self._holes)
        done = self._memo                  # id -> (type, resolved): the key kept alive
        stack: list[tuple[Type, bool]] = [(t, False)]
        while stack:
            node, expanded = stack.pop()
            if id(node) in done:
                continue
            if isinstance(node, IncompleteType):
                target = self.find(node)
                if target is node:
                    done[id(node)] = (node, node)
                elif id(target) in done:
                    done[id(node)] = (node, done[id(target)][1])
                else:
                    stack.extend(((node, True), (target, False)))
                continue
            kids = type_children(node)
            if not kids:
                done[id(node)] = (node, node)
            elif not expanded:
                stack.append((node, True))
                stack.extend((k, False) for k in kids if id(k) not in done)
            else:
                new = [done[id(k)][1] for k in kids]
                same = all(a is b for a, b in zip(kids, new))
                done[id(node)] = (node, node if same else with_type_children(node, new))
        return done[id(t)][1]

    def is_complete(self, t: Type) -> bool:
        """Whether `t` has no unbound hole left."""
        return not self._reaches(t, None)

    def _occurs(self, hole: IncompleteType, t: Type) -> bool:
        return self._reaches(t, hole)

    def _reaches(self, t: Type, hole: IncompleteType | None) -> bool:
        """Whether `t` reaches `hole` (any unbound hole if None), following bindings.

        A type that reaches no unbound hole never will (a bound hole stays bound), so
        such types are remembered as closed and never walked again: the occurs check
        of `let %t2 = (%t1, %x)` stops at the closed type of `%t1`, and checking a
        chain of nested tuples is linear. Each walk visits a shared subtree once."""
        closed, find = self._closed, self.find
        open_: set[int] = set()
        stack: list[tuple[Type, bool]] = [(t, False)]
        while stack:
            node, expanded = stack.pop()
            node = find(node)
            key = id(node)
            if key in closed:
                continue
            if expanded:               # its children are decided: closed, or open
                if all(id(find(k)) in closed for k in type_children(node)):
                    closed[key] = node
                continue
            if key in open_:
                continue               # seen in this walk (a shared subtree), or open
            if isinstance(node, IncompleteType):       # unbound: find stopped here
                if hole is None or node is hole:
                    return True
                open_.add(key)
                continue
            kids = type_children(node)
            if not kids:
                closed[key] = node
                continue
            open_.add(key)             # seen; closed once its children are
            stack.append((node, True))
            stack.extend((k, False) for k in kids)
        return False

    # ------------------------------------------------------------ unification
    def unify(self, a: Type, b: Type) -> Type:
        """Make `a` and `b` the same type; UnifyError says where they differ.

        Returns the unified type. Where a function type with type parameters met one
        with fewer (an `if` whose branches are `fn [a](%x: a) { %x }` and
        `fn (%z) { %z }`), the unified type is the less polymorphic one, as in TVM: the
        more polymorphic side was instantiated there, and its fresh holes are the other
        side's types; returning it unchanged would cut them off from the annotations
        that decide them."""
        pending = [(a, b, "")]
        instantiated: set[int] | None = None     # the type parameters instantiated here
        while pending:
            x, y, where = pending.pop()
            x, y = self.find(x), self.find(y)
            if x is y:
                continue
            if isinstance(x, IncompleteType) or isinstance(y, IncompleteType):
                hole, other = (x, y) if isinstance(x, IncompleteType) else (y, x)
                if self._occurs(hole, other):
                    raise UnifyError(f"a type would contain itself{where}")
                self._bound[id(hole)] = other
                self._holes.append(hole)
                continue
            if isinstance(x, FuncType) and isinstance(y, FuncType) and \
                    len(x.type_params) != len(y.type_params):
                more = x if len(x.type_params) > len(y.type_params) else y
                if instantiated is None:
                    instantiated = set()
                instantiated.update(id(tv) for tv in more.type_params)
            pending.extend(self._unify_step(x, y, where))
        return self.find(a) if instantiated is None else self._joined(a, b, instantiated)

    def _joined(self, a: Type, b: Type, instantiated: set[int]) -> Type:
        """The type `a` and `b` were unified to, resolved: `a`'s, except where a function
        type met one with fewer type parameters. There the result has the fewer
        parameters, and where one side has a type parameter of the more polymorphic one
        (an id in `instantiated`: it was instantiated by the unification) the other
        side's type is taken. The two are walked side by side, by position: a
        polymorphic type object may also stand elsewhere in `a` as itself."""
        find, resolve = self.find, self.resolve
        done: dict[tuple[int, int], Type] = {}
        stack: list[tuple[Type, Type, bool]] = [(a, b, False)]
        while stack:
            x, y, expanded = stack.pop()
            x, y = find(x), find(y)
            key = (id(x), id(y))
            if expanded:
                kids = [done[(id(find(kx)), id(find(ky)))]
                        for kx, ky in zip(type_children(x), type_children(y))]
                if isinstance(x, FuncType) and isinstance(y, FuncType):
                    fewer = x if len(x.type_params) <= len(y.type_params) else y
                    done[key] = FuncType(tuple(kids[:-1]), kids[-1], fewer.type_params,
                                         span=x.span)
                else:
                    done[key] = with_type_children(x, kids)
                continue
            if key in done:
                continue
            if x is y:
                done[key] = resolve(x)
            elif isinstance(x, TypeVar) and id(x) in instantiated:
                done[key] = resolve(y)
            elif isinstance(y, TypeVar) and id(y) in instantiated:
                done[key] = resolve(x)
            elif _joinable(x, y):
                stack.append((x, y, True))
                stack.extend((kx, ky, False) for kx, ky in zip(type_children(x),
                                                               type_children(y)))
            else:
                done[key] = resolve(x)
        return done[(id(find(a)), id(find(b)))]

    def _unify_step(self, x: Type, y: Type, where: str) -> list[tuple[Type, Type, str]]:
        if isinstance(x, TensorType) and isinstance(y, TensorType):
            self._unify_tensors(x, y, where)
            return []
        if isinstance(x, TupleType) and isinstance(y, TupleType):
            if len(x.fields) != len(y.fields):
                raise UnifyError(f"{len(x.fields)} tuple fields against {len(y.fields)}{where}")
            return [(a, b, f"{where} in tuple field {i}")
                    for i, (a, b) in enumerate(zip(x.fields, y.fields))]
        if isinstance(x, FuncType) and isinstance(y, FuncType):
            if len(x.arg_types) != len(y.arg_types):
                raise UnifyError(f"{len(x.arg_types)} parameters against {len(y.arg_types)}"
                                 f"{where}")
            if x.type_params or y.type_params:
                x, y = self._align_type_params(x, y)
            out = [(a, b, f"{where} in parameter {i + 1}")
                   for i, (a, b) in enumerate(zip(x.arg_types, y.arg_types))]
            return out + [(x.ret_type, y.ret_type, f"{where} in the result")]
        if isinstance(x, TypeCall) and isinstance(y, TypeCall):
            if not _same_head(x.func, y.func) or len(x.args) != len(y.args):
                raise UnifyError(f"{_head(x)} against {_head(y)}{where}")
            return [(a, b, f"{where} in type argument {i + 1}")
                    for i, (a, b) in enumerate(zip(x.args, y.args))]
        if isinstance(x, RefType) and isinstance(y, RefType):
            return [(x.value, y.value, f"{where} in the referenced type")]
        if isinstance(x, GlobalTypeVar) and isinstance(y, GlobalTypeVar) and \
                x.name_hint == y.name_hint:
            return []
        raise UnifyError(f"{_kind(x)} against {_kind(y)}{where}")

    def _align_type_params(self, x: FuncType, y: FuncType) -> tuple[FuncType, FuncType]:
        """`x` and `y` over the same type parameters, as TVM's unifier does: the more
        polymorphic one's first parameters are renamed to the other's, and the rest
        become fresh holes. A polymorphic function used as a value (a local `fn[A]`
        passed to a higher-order function, an eta-expanded constructor returned as
        `fn(A, List[A]) -> List[A]`) is thereby instantiated at each use, while the
        other side's parameters stay rigid."""
        swapped = len(x.type_params) < len(y.type_params)
        more, fewer = (y, x) if swapped else (x, y)
        subst: dict[int, Type] = {id(tv): other
                                  for tv, other in zip(more.type_params, fewer.type_params)}
        for tv in more.type_params[len(fewer.type_params):]:
            subst[id(tv)] = self.fresh()
        body = self.resolve(FuncType(more.arg_types, more.ret_type))
        renamed = map_type(body, lambda t: subst.get(id(t)) if isinstance(t, TypeVar) else None)
        assert isinstance(renamed, FuncType)
        plain = FuncType(fewer.arg_types, fewer.ret_type)
        return (plain, renamed) if swapped else (renamed, plain)

    @staticmethod
    def _unify_tensors(x: TensorType, y: TensorType, where: str) -> None:
        if x.dtype != y.dtype:
            raise UnifyError(f"dtype {x.dtype} against {y.dtype}{where}")
        if len(x.shape) != len(y.shape):
            raise UnifyError(f"rank {len(x.shape)} against rank {len(y.shape)}{where}")
        for i, (a, b) in enumerate(zip(x.shape, y.shape)):
            if isinstance(a, AnyDim) or isinstance(b, AnyDim):
                continue      # `?` is decided at run time
            if a != b:
                raise UnifyError(f"dimension {i} is {_dim(a)} against {_dim(b)}{where}")


def _joinable(x: Type, y: Type) -> bool:
    """Whether `Solver._joined` walks into `x` and `y`: the same constructor and arity, and
    for function types, no type parameters or different numbers of them (two functions
    with as many type parameters unify with `x`'s, which the result keeps)."""
    if isinstance(x, FuncType) and isinstance(y, FuncType):
        return len(x.arg_types) == len(y.arg_types) and \
            (len(x.type_params) != len(y.type_params) or not x.type_params)
    if isinstance(x, TupleType) and isinstance(y, TupleType):
        return len(x.fields) == len(y.fields)
    if isinstance(x, TypeCall) and isinstance(y, TypeCall):
        return len(x.args) == len(y.args)
    return isinstance(x, RefType) and isinstance(y, RefType)


def _dim(d: object) -> str:
    return str(d) if isinstance(d, int) else "symbolic"


def _same_head(a: Type, b: Type) -> bool:
    if isinstance(a, GlobalTypeVar) and isinstance(b, GlobalTypeVar):
        return a.name_hint == b.name_hint
    return a is b


def _head(t: TypeCall) -> str:
    name = getattr(t.func, "name_hint", "?")
    return f"{name}[{len(t.args)} argument{'s' if len(t.args) != 1 else ''}]" if t.args else name


def _kind(t: Type) -> str:
    if isinstance(t, TensorType):
        return "a tensor"
    if isinstance(t, TupleType):
        return "a tuple"
    if isinstance(t, FuncType):
        return "a function"
    if isinstance(t, TypeCall):
        return f"a value of type {_head(t)}"
    if isinstance(t, RefType):
        return "a reference"
    if isinstance(t, TypeVar):
        return f"type parameter {t.name_hint}"
    return type(t).__name__
