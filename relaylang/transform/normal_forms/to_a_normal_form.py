"""ToANormalForm: bind every computation to a variable, once, where all its uses see it.

TVM's src/relay/transforms/to_a_normal_form.cc, with the scopes of
src/relay/analysis/dependency_graph.cc. Sharing in the graph becomes sharing of
a variable; the order of the `let`s is the evaluation order (post-order,
operands left to right), so effects keep their order.

    def @f(%c: bool, %x: float32) {          def @f(%c: bool, %x: float32) {
      %0 = add(%x, 1f);                        let %x1 = add(%x, 1f);
      if (%c) {                                let %x2 = if (%c) {
        multiply(%0, %0)            ==>          let %x3 = multiply(%x1, %x1);
      } else {                                   %x3
        %0                                     } else {
      }                                          %x1
    }                                          };
                                               %x2
                                             }

Scopes are the global function's body, function bodies, `if` branches and
`match` arms (a `let` opens none: an existing `let` chain is flattened into its
scope). A computation is bound in the lowest common ancestor of the scopes of
its uses: nothing computed in one branch is hoisted into the other, nothing used
only inside a closure leaves it. A `let`-bound value keeps its variable. The
result is what `relaylang.ir.normal_forms.is_anf` accepts.

Constants are atoms here (what `is_anf` accepts); TVM's pass binds them too
(`let %x = 1f; ...`: test_order and test_if of its test_pass_to_a_normal_form.py).
`ToANormalForm{bind_constants=true}` does as TVM (docs/TVM_DIFFERENCES.md).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from ...ir.block_forms import Scope, lca
from ...ir.expr import Constant, Expr, Function, If, Let, Match, Var
from ...ir.module import IRModule
from ...ir.normal_forms import ATOMIC, is_opaque
from ...ir.traverse import post_order
from ..pass_infra import FunctionPass, PassContext, register_pass


@register_pass
@dataclass(frozen=True)
class ToANormalForm(FunctionPass):
    """Put the body of each global function in A-normal form (primitive ones stay as they are)."""

    name: ClassVar[str] = "ToANormalForm"
    opt_level: ClassVar[int] = 1
    bind_constants: bool = False       # TVM binds constants too (see the docstring)

    def transform_function(self, fn: Function, mod: IRModule, ctx: PassContext) -> Function:
        if is_opaque(fn):
            return fn
        body = to_a_normal_form(fn.body, self.bind_constants)
        return fn if body is fn.body else Function(fn.params, body, fn.ret_type, fn.type_params,
                                                   fn.attrs, span=fn.span)


def to_a_normal_form(expr: Expr, bind_constants: bool = False) -> Expr:
    """`expr` (a scope: its free variables stay free) in A-normal form; constants are
    atoms unless `bind_constants` (then each is bound by a `let`, as TVM's pass does)."""
    atomic = _NON_CONSTANT_ATOMS if bind_constants else ATOMIC
    root = _Scope()
    scopes = _scopes(expr, root, atomic)
    return root.wrap(_Fill(scopes, atomic).run(expr))


_NON_CONSTANT_ATOMS = tuple(t for t in ATOMIC if t is not Constant)


# ---------------------------------------------------------------- scopes


class _Scope(Scope):
    """A block of bindings (var, value, span) in evaluation order, ended by an atom.

    The nesting lives in a `ScopeTree`, whose jump pointers make an LCA cost
    O(log depth) even when a node is shared across 100,000 nested scopes."""

    def wrap(self, tail: Expr) -> Expr:
        for var, value, span in reversed(self.bindings):   # a loop: chains are long
            tail = Let(var, value, tail, span=span)       # type: ignore[arg-type]
        return tail


_lca = lca


def _edges(node: Expr) -> list[tuple[Expr, int | None]]:
    """Each child with the sub-scope it lies in (None: the node's own scope)."""
    if isinstance(node, If):
        return [(node.cond, None), (node.true_branch, 0), (node.false_branch, 1)]
    if isinstance(node, Match):
        return [(node.data, None)] + [(c.rhs, k) for k, c in enumerate(node.clauses)]
    if isinstance(node, Function):
        return [] if is_opaque(node) else [(node.body, 0)]
    return [(child, None) for child in node.children()]


@dataclass
class _Scopes:
    scope: dict[int, _Scope]             # id(computation) -> where it is bound
    sub: dict[int, list[_Scope]]         # id(node) -> the sub-scopes it opens


def _scopes(root: Expr, top: _Scope, atomic: tuple[type, ...] = ATOMIC) -> _Scopes:
    """Each computation's scope: the LCA of the scopes of its uses, parents first."""
    order = post_order(root, lambda n: [c for c, _ in _edges(n)])
    out = _Scopes({id(root): top}, {})
    for node in reversed(order):         # a parent before each of its children
        if isinstance(node, atomic):
            continue
        s = out.scope[id(node)]
        edges = _edges(node)
        subs = [s.child() for _ in range(1 + max((k for _, k in edges if k is not None),
                                                  default=-1))]
        out.sub[id(node)] = subs
        for child, k in edges:
            if isinstance(child, atomic):
                continue
            edge = s if k is None else subs[k]
            seen = out.scope.get(id(child))
            out.scope[id(child)] = edge if seen is None else _lca(seen, edge)
    return out


# ---------------------------------------------------------------- filling the scopes


@dataclass(eq=False)
class _Want:
    """The variable a `let` asks its value to be bound to, and the `let`'s scope."""

    var: Var
    scope: _Scope


@dataclass(eq=False)
class _Frame:
    node: Expr
    want: _Want | None
    tasks: list[tuple[Expr, _Want | None, _Scope | None]]   # child, its variable, its scope
    results: list[Expr] = field(default_factory=list)


class _Fill:
    """Visit the graph in evaluation order, binding each computation in its scope.

    TVM's `Fill`, with continuations as data: a frame per node under construction."""

    def __init__(self, scopes: _Scopes, atomic: tuple[type, ...] = ATOMIC):
        self.scopes = scopes
        self.atomic = atomic
        self.memo: dict[int, Expr] = {}          # id(node) -> the atom that names it

    def run(self, root: Expr) -> Expr:
        stack: list[_Frame] = []
        result = self.start(root, None, stack)
        while stack:
            frame = stack[-1]
            if len(frame.results) < len(frame.tasks):
                child, want, _ = frame.tasks[len(frame.results)]
                atom = self.start(child, want, stack)
                if atom is not None:
                    self.give(frame, atom)
                continue
            stack.pop()
            atom = self.memo[id(frame.node)] = self.finish(frame)
            if stack:
                self.give(stack[-1], atom)
            else:
                result = atom
        assert result is not None
        return result

    def give(self, frame: _Frame, atom: Expr) -> None:
        sub = frame.tasks[len(frame.results)][2]
        frame.results.append(atom if sub is None else sub.wrap(atom))

    def start(self, node: Expr, want: _Want | None, stack: list[_Frame]) -> Expr | None:
        """The atom for `node` if known at once; else push its frame and return None."""
        known = node if isinstance(node, self.atomic) else self.memo.get(id(node))
        if known is not None:
            if want is not None:
                want.scope.bindings.append((want.var, known, node.span))
            return known
        stack.append(_Frame(node, want, self.tasks(node, want)))
        return None

    def tasks(self, node: Expr, want: _Want | None) -> list[tuple[Expr, _Want | None,
                                                               _Scope | None]]:
        if isinstance(node, Let):
            here = _Want(node.var, self.scopes.scope[id(node)])
            return [(node.value, here, None), (node.body, want, None)]
        subs = self.scopes.sub[id(node)]
        return [(child, None, None if k is None else subs[k]) for child, k in _edges(node)]

    def finish(self, frame: _Frame) -> Expr:
        node = frame.node
        if isinstance(node, Let):
            return frame.results[1]      # the chain joined this scope; the body names it
        new = node.with_children(frame.results) if frame.tasks else node
        var = frame.want.var if frame.want is not None else Var("x", span=node.span)
        self.scopes.scope[id(node)].bindings.append((var, new, node.span))
        return var
