"""Checkers for A-normal form and graph normal form, and the facts GNF decides by.

Mirrors the shapes TVM's passes produce (apache/tvm: src/relay/transforms/
to_a_normal_form.cc, to_graph_normal_form.cc); TVM itself only had `detect_feature`.

A-normal form (ANF), what `ToANormalForm` produces:

    scope  ::= let %v = value; scope  |  atom
    value  ::= atom | op(atom, ...) | (atom, ...) | atom.N | ref(atom) | ref_read(atom)
             | ref_write(atom, atom) | if (atom) { scope } else { scope }
             | match (atom) { pattern => scope, ... } | fn (...) { scope }
    atom   ::= %var | @global | constant | operator | constructor

and no computation is shared (each is bound once; only atoms are used twice).
Function bodies, `if` branches and `match` arms are scopes; a `let` does not open
one. A function is a value: it is let-bound, and its body is itself in ANF.
Functions marked `Primitive=1` (or `Compiler=...`) are opaque, as in TVM.

Graph normal form (GNF), what `ToGraphNormalForm` produces: no `let` is left
whose removal keeps the meaning. A `let` stays when its value is recursive
(mentions its own variable), has an effect (see `pure_value`), or its variable
is used inside a closure defined in its body (inlining would redo the work at
every call), unless its body is just its variable (`let %v = e; %v` is `e`).
Every other `let` is inlined into the DAG: its value becomes a node shared by
all uses of the variable.

Everything is iterative and memoised by identity.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .expr import (
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
    Var,
)
from .traverse import post_order, pre_order

if TYPE_CHECKING:
    from .module import IRModule

ATOMIC = (Var, GlobalVar, Constant, Op, Constructor)

StatefulOp = Callable[[Op], bool]


@dataclass(frozen=True)
class Violation:
    """The first node that breaks a normal form, and why (for error messages)."""

    node: Expr
    reason: str


def is_opaque(fn: Function) -> bool:
    """Functions the normal-form passes leave alone (TVM: `Primitive`, `Compiler`)."""
    return fn.attrs is not None and bool(fn.attrs.get("Primitive", 0) or fn.attrs.get("Compiler"))


def map_unfused_functions(mod: IRModule, transform: Callable[[Function], Function]
                          ) -> IRModule:
    """A copy of `mod` with `transform` applied to each global function but the opaque
    (fused or external) ones, which passes over a whole module leave alone."""
    out = mod.copy()
    for gv, fn in mod.functions.items():
        if not is_opaque(fn):
            out.functions[gv] = transform(fn)
    return out


def roots(expr_or_module: Expr | IRModule) -> Iterator[Expr]:
    from .module import IRModule
    if isinstance(expr_or_module, IRModule):
        yield from expr_or_module.functions.values()
    else:
        yield expr_or_module


# ---------------------------------------------------------------- ANF


def is_anf(expr_or_module: Expr | IRModule) -> bool:
    return anf_violation(expr_or_module) is None


def anf_violation(expr_or_module: Expr | IRModule) -> Violation | None:
    """The first node (in program order) that is not in A-normal form, or None."""
    for root in roots(expr_or_module):
        if isinstance(root, Function):
            if is_opaque(root):
                continue
            root = root.body
        found = _AnfCheck().run(root)
        if found is not None:
            return found
    return None


class _AnfCheck:
    def __init__(self) -> None:
        self.seen: set[int] = set()

    def run(self, root: Expr) -> Violation | None:
        scopes = [root]                   # scope roots still to check, next last
        while scopes:
            e = scopes.pop()
            inner: list[Expr] = []
            while isinstance(e, Let):     # the let chain of this scope, by a loop
                found = self.mark(e) or self.value(e.value, inner)
                if found:
                    return found
                e = e.body
            if not isinstance(e, ATOMIC):
                return Violation(e, "a scope must end in a variable or constant; "
                                    "ANF binds this expression with `let`")
            scopes.extend(reversed(inner))
        return None

    def mark(self, e: Expr) -> Violation | None:
        if id(e) in self.seen:
            return Violation(e, "a computation is shared; ANF binds it once with `let`")
        self.seen.add(id(e))
        return None

    def value(self, v: Expr, scopes: list[Expr]) -> Violation | None:
        """Check a let-bound value; the scopes it opens are appended to `scopes`."""
        if isinstance(v, ATOMIC):
            return None
        if isinstance(v, Let):
            return Violation(v, "a let value must not be a let chain; ANF flattens it")
        found = self.mark(v)
        if found or (isinstance(v, Function) and is_opaque(v)):
            return found
        if isinstance(v, Function):
            scopes.append(v.body)
            return None
        operands = v.children()
        if isinstance(v, If):
            operands = (v.cond,)
            scopes += (v.true_branch, v.false_branch)
        elif isinstance(v, Match):
            operands = (v.data,)
            scopes += (c.rhs for c in v.clauses)
        for x in operands:
            if not isinstance(x, ATOMIC):
                return Violation(x, "an operand must be a variable or constant; "
                                    "ANF binds this expression with `let`")
        return None


# ---------------------------------------------------------------- GNF


def is_gnf(expr_or_module: Expr | IRModule, stateful: StatefulOp) -> bool:
    return gnf_violation(expr_or_module, stateful) is None


def gnf_violation(expr_or_module: Expr | IRModule,
                  stateful: StatefulOp) -> Violation | None:
    """The first `let` that graph normal form would inline, or None.

    `stateful(op)` says which operators have effects (the op registry knows; this layer
    cannot import it: `relaylang.analysis.is_gnf` passes the registry's answer)."""
    for root in roots(expr_or_module):
        if isinstance(root, Function) and is_opaque(root):
            continue
        facts = LetFacts(root, stateful)
        for node in pre_order(root):
            if isinstance(node, Let) and facts.keep_reason(node, node.value) is None:
                return Violation(node, f"`let %{node.var.name_hint}` can be inlined: its value "
                                       "is pure, not recursive and not used inside a closure")
    return None



class LetFacts:
    """What decides whether a `let` of `root` may be inlined (computed in one walk).

    `pos`: each node's index in post-order. A let variable first reached before
    its value is finished occurs inside that value: the `let` is recursive.
    `depth`: how many function bodies enclose a node (the most over all paths);
    a variable reached deeper than its `let` is used inside a closure."""

    def __init__(self, root: Expr, stateful: StatefulOp):
        self.order = post_order(root, opaque_children)
        self.pos = {id(n): i for i, n in enumerate(self.order)}
        self.depth: dict[int, int] = {}
        for node in reversed(self.order):
            d = self.depth.get(id(node), 0) + isinstance(node, Function)
            for child in opaque_children(node):
                if self.depth.get(id(child), -1) < d:
                    self.depth[id(child)] = d
        self.stateful = stateful
        self.pure: dict[int, tuple[Expr, bool]] = {}

    def recursive(self, let: Let) -> bool:
        return self.pos.get(id(let.var), len(self.order)) <= self.pos[id(let.value)]

    def captured(self, let: Let) -> bool:
        return self.depth.get(id(let.var), -1) > self.depth.get(id(let), 0)

    def keep_reason(self, let: Let, value: Expr) -> str | None:
        """Why `let` must stay (its value now being `value`), or None if it can go."""
        if self.recursive(let):
            return "recursive"
        if let.body is let.var:          # `let %v = e; %v` is `e`, whatever `e` does
            return None
        if self.captured(let):
            return "used inside a closure"
        if not pure_value(value, self.stateful, self.pure):
            return "has an effect"
        return None


def opaque_children(node: Expr) -> tuple[Expr, ...]:
    if isinstance(node, Function) and is_opaque(node):
        return ()
    return node.children()


def pure_value(value: Expr, stateful: StatefulOp,
               memo: dict[int, tuple[Expr, bool]] | None = None) -> bool:
    """Whether evaluating `value` has no effect, conservatively.

    Effects: references (create, read, write), a call of anything but a stateless
    operator or a constructor (a global or closure may do anything, or not
    terminate), a `match?` (may fail), and a `let` (one that stayed). Building a
    closure has no effect, whatever its body does, so function bodies are not
    looked into. `memo` (id -> (node, result)) may be shared between calls."""
    memo = {} if memo is None else memo

    def kids(n: Expr) -> tuple[Expr, ...]:
        return () if isinstance(n, Function) or id(n) in memo else n.children()

    for node in post_order(value, kids):
        if id(node) not in memo:
            ok = _pure_here(node, stateful) and all(memo[id(c)][1] for c in kids(node))
            memo[id(node)] = (node, ok)
    return memo[id(value)][1]


def _pure_here(node: Expr, stateful: StatefulOp) -> bool:
    if isinstance(node, (RefCreate, RefRead, RefWrite, Let)):
        return False
    if isinstance(node, Match):
        return node.complete
    if isinstance(node, Call):
        callee = node.op
        return isinstance(callee, Constructor) or (isinstance(callee, Op)
                                                   and not stateful(callee))
    return True
