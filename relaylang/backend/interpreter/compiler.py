"""The compiler of the reference interpreter: function bodies to linear stack-machine code.

(TVM's src/relay/backend/interpreter.cc compiles nothing; `interpreter.py` runs this code.)
A body becomes its nodes in evaluation order (post-order, operands left to right), one
instruction each; each branch of an `if`, clause of a `match` and function body is a
block of its own, compiled on first use. `_scopes` places the nodes shared by several
users as TVM's interpreter does after ToANormalForm: in the innermost block enclosing all
their users, at their first use there. Here: the opcodes, `Unit` and `Block` (the code
the machine runs), `Compiler` (which makes and keeps it) and the scope analysis.
"""
from __future__ import annotations

from typing import Any

from ... import op as op_registry
from ...ir.expr import (Call, Constant, Constructor, Expr, Function, GlobalVar, If, Let, Match, Op,
                        PatternConstructor, PatternVar, PatternWildcard, RefCreate, RefRead,
                        RefWrite, Tuple, TupleGetItem, Var, pattern_vars)
from ...ir.scope_tree import ScopeTree
from ...ir.traverse import post_order

# Opcodes; an instruction is a tuple whose first item is its opcode. The run loop tests
# them in this order, the most frequent first.
(OP2, OP2C, CONST, LOCAL, TAKE, OP1, FREE, CALL, CALL_GLOBAL, IF, RET, STORE, BIND, MATCH,
 OPN, TUPLE, GET_ITEM, FUNC, GLOBAL, CTOR, REF_NEW, REF_READ, REF_WRITE, FAIL) = range(24)
_TAIL_ABLE = {CALL: 3, CALL_GLOBAL: 4, IF: 3, MATCH: 3}      # opcode -> index of its tail flag
_HOIST = -1                  # compiler-only marker: compute a node here for a nested block
_LEAVES = (Var, Constant, GlobalVar, Constructor, Op)        # no code of their own to place
_CONSTANT_KINDS = {Constant, GlobalVar, Constructor, Op}


class _Scopes:
    """Where the nodes under one root are computed, as TVM's interpreter does it: it runs
    ToANormalForm first, which binds each node in the innermost scope enclosing all its
    users (src/relay/transforms/to_a_normal_form.cc, scopes as in
    src/relay/analysis/dependency_graph.cc), at its first use there in evaluation order.

    Scopes that run as separate code are blocks: the root, each function body, each
    branch of an `if`, each clause of a `match` (a `let` scope runs inline). So a node
    used only in one branch is computed there; one used in both branches, or inside a
    closure and outside it, is computed before the `if` or the `fn` that needs it
    (`hoists`) and looked up from the inner block; it is one value per activation of
    its home block's function."""

    __slots__ = ("bound", "entry", "escapes", "functions", "hoists", "home", "root", "shared",
                 "unit_of")

    def __init__(self, root: Expr):
        self.root = root                          # alive: the ids below are its nodes'
        self.home: dict[int, int] = {}            # node -> the block that computes it
        self.shared: set[int] = set()             # nodes with several users
        self.escapes: set[int] = set()            # nodes used outside their home block
        self.entry: dict[tuple[int, int], int] = {}   # (construct, slot) -> block it opens
        self.unit_of: list[int] = [0]             # block -> its function's body block
        self.hoists: dict[int, tuple[Expr, ...]] = {}     # construct -> nodes to compute
        self.bound: dict[int, set[int]] = {}      # body block -> vars of lets and patterns
        self.functions: list[Function] = []       # every function node under the root


class Unit:
    """A function body (or an `eval` root): the variables its activation binds (params,
    lets and pattern variables outside nested functions; None for an `eval` root, whose
    activation is the caller's), its compiled body, and its blocks by scope."""

    __slots__ = ("blocks", "code", "drop", "keys", "local", "scopes")

    def __init__(self, scopes: _Scopes, keys: tuple[int, ...], local: set[int] | None,
                 drop: bool):
        self.scopes = scopes
        self.keys = keys
        self.local = local
        self.drop = drop                  # values die at their last use (not in `eval`)
        self.blocks: dict[int, Block] = {}
        self.code: list[tuple] = []


class Block:
    """Code evaluating one expression in one activation (a branch, a clause), made on
    first use."""

    __slots__ = ("code", "root", "scope", "unit")

    def __init__(self, root: Expr, scope: int, unit: Unit):
        self.root = root
        self.scope = scope
        self.unit = unit
        self.code: list[tuple] | None = None




class Compiler:
    """Compiles and keeps the code of an interpreter's functions, `eval` roots and blocks."""

    def __init__(self) -> None:
        self.units: dict[Function, Unit] = {}      # nodes hash by identity
        self._scopes_of: dict[int, _Scopes] = {}    # id(scanned root or Function node)
        self._evals: dict[int, Unit] = {}          # id(expression given to eval) -> unit
        self._kernels: dict[str, Any] = {}

    def eval_unit(self, expr: Expr) -> Unit:
        """The unit of an expression given to `eval`: it runs in the caller's activation."""
        unit = self._evals.get(id(expr))
        if unit is None:
            scopes = self._scan(expr)
            unit = self._evals[id(expr)] = Unit(scopes, (), None, drop=False)
            unit.code = self._compile(expr, 0, unit)
        return unit

    def _scan(self, root: Expr) -> _Scopes:
        scopes = _scopes(root)
        self._scopes_of[id(root)] = scopes
        for fn in scopes.functions:          # closures' bodies are compiled with these
            self._scopes_of.setdefault(id(fn), scopes)
        return scopes

    def function_unit(self, fn: Function) -> Unit:
        unit = self.units.get(fn)
        if unit is None:
            scopes = self._scopes_of.get(id(fn))
            if scopes is None or (id(fn), 0) not in scopes.entry:
                scopes = self._scan(fn)
            params, body = tuple(id(p) for p in fn.params), scopes.entry[(id(fn), 0)]
            unit = Unit(scopes, params, set(params) | scopes.bound.get(body, set()), True)
            unit.code = self._compile(fn.body, body, unit)
            self.units[fn] = unit
        return unit

    def code(self, block: Block) -> list[tuple]:
        """The code of `block`, compiled on its first use."""
        if block.code is None:
            block.code = self._compile(block.root, block.scope, block.unit)
        return block.code

    def _compile(self, root: Expr, scope: int, unit: Unit) -> list[tuple]:
        """Linear code evaluating `root` as block `scope` of `unit`, ending in RET.

        A node homed here is computed at its first use (or hoisted before the nested block
        that first needs it); a shared one is kept in the activation (STORE) for its later
        users (LOCAL, the last one TAKE). A node homed in an enclosing block was computed
        before this block ran: LOCAL in the same activation, FREE in an enclosing one."""
        scopes = unit.scopes
        home, shared = scopes.home, scopes.shared
        here = scopes.unit_of[scope]
        code: list[tuple] = []
        emitted: set[int] = set()        # shared nodes whose value is in the activation
        work: list[Any] = [root]
        while work:
            item = work.pop()
            if type(item) is tuple:
                if item[0] == _HOIST:
                    if id(item[1]) not in emitted:
                        emitted.add(id(item[1]))
                        work.append((BIND, id(item[1])))
                        self._expand(item[1], unit, work)
                    continue
                if item[0] == OP2 and code[-1][0] == CONST:     # fuse a constant operand
                    item = (OP2C,) + item[1:4] + (code.pop()[1],)
                code.append(item)
                continue
            key = id(item)
            if isinstance(item, _LEAVES):
                code.append(self._leaf(item, unit))
            elif home[key] != scope:
                same = scopes.unit_of[home[key]] == here
                code.append((LOCAL if same else FREE, key, item))
            elif key in emitted:
                code.append((LOCAL, key, item))
            else:
                if key in shared:
                    emitted.add(key)
                    work.append((STORE, key))
                self._expand(item, unit, work)
        code.append((RET,))
        _mark_tails(code)
        if unit.drop:
            _mark_last_uses(code, scopes.escapes)
        return code

    def _op_instruction(self, op: Op, node: Call) -> tuple:
        kernel = self._kernels.get(op.name)
        if kernel is None:
            opdef = op_registry.get_op_def(op.name)
            if opdef is None or opdef.kernel is None:
                return (FAIL, f"operator `{op.name}` has no kernel", node.span)
            kernel = self._kernels[op.name] = opdef.kernel
        n = len(node.args)
        return (OP1 if n == 1 else OP2 if n == 2 else OPN, kernel, node.attrs, node, n)

    def _leaf(self, node: Expr, unit: Unit) -> tuple:
        """The instruction of a node without operands."""
        kind = type(node)
        if kind is Var:           # FREE: bound in an enclosing function's activation
            free = unit.local is not None and id(node) not in unit.local
            return (FREE if free else LOCAL, id(node), node)
        if kind is Constant:
            return (CONST, node.data)
        if kind is GlobalVar:
            return (GLOBAL, node.name_hint)
        if kind is Constructor:
            return (CONST, node)
        return (FAIL, f"operator `{node.name}` used as a value", node.span)

    def _expand(self, node: Expr, unit: Unit, work: list) -> None:
        """Push onto `work` what evaluates `node`: its operands in order, the nodes to
        compute before the blocks it opens, then its own instruction (pushed first, as
        `work` is a stack)."""
        kind = type(node)
        if kind is Call:
            callee, n = node.op, len(node.args)
            operands = node.args
            if type(callee) is Op:
                work.append(self._op_instruction(callee, node))
            elif type(callee) is GlobalVar:
                work.append((CALL_GLOBAL, callee.name_hint, n, node, False))
            elif type(callee) is Constructor:
                work.append((CTOR, callee, n))
            else:
                work.append((CALL, n, node, False))
                operands = node.children()
        elif kind is Let:
            operands = (node.value, (BIND, id(node.var)), node.body)
        elif kind is If or kind is Match or kind is Function:
            operands = self._opener(node, unit, work)
        else:
            work.append(_SIMPLE[kind](node))
            operands = node.children()
        work.extend(reversed(operands))

    def _opener(self, node: Expr, unit: Unit, work: list) -> tuple:
        """The instruction of an `if`, `match` or `fn`, after the nodes homed here that its
        blocks use (computed first, in evaluation order); returns its operands."""
        if type(node) is If:
            work.append((IF, self._block(node, 1, node.true_branch, unit),
                         self._block(node, 2, node.false_branch, unit), False, node))
        elif type(node) is Match:
            clauses = tuple(_clause(c.lhs) + (self._block(node, i + 1, c.rhs, unit),)
                            for i, c in enumerate(node.clauses))
            work.append((MATCH, node, clauses, False))
        else:
            work.append((FUNC, node))
        hoisted = unit.scopes.hoists.get(id(node), ())
        work.extend((_HOIST, h) for h in reversed(hoisted))
        return (node.cond,) if type(node) is If else (node.data,) if type(node) is Match else ()

    def _block(self, opener: Expr, slot: int, root: Expr, unit: Unit) -> Block:
        scope = unit.scopes.entry[(id(opener), slot)]
        block = unit.blocks.get(scope)
        if block is None:
            block = unit.blocks[scope] = Block(root, scope, unit)
        return block


# ---------------------------------------------------------------- helpers of the compiler

def _clause(pattern: Any) -> tuple[str | None, tuple[int, ...], Any]:
    """(constructor name, variable keys (0: wildcard), pattern) for a constructor pattern
    over variables and wildcards, which MATCH tests without `_match`; else (None, (), p)."""
    if isinstance(pattern, PatternConstructor) and all(
            isinstance(p, (PatternVar, PatternWildcard)) for p in pattern.patterns):
        keys = tuple(id(p.var) if isinstance(p, PatternVar) else 0 for p in pattern.patterns)
        return pattern.constructor.name, keys, pattern
    return None, (), pattern


def _mark_tails(code: list[tuple]) -> None:
    """Flag the calls, ifs and matches that leave nothing behind them in their block."""
    for i in range(len(code) - 1):
        flag = _TAIL_ABLE.get(code[i][0])
        if flag is not None and code[i + 1][0] == RET:
            code[i] = code[i][:flag] + (True,) + code[i][flag + 1:]


def _mark_last_uses(code: list[tuple], escapes: set[int]) -> None:
    """Turn the last LOCAL of each value used in this block only into TAKE, which drops it
    from the activation: a model's activations then die at their last use, as in
    NumPy code, instead of all living until the function returns (fresh memory costs
    page faults). Block code has no jumps: the last LOCAL is the last use."""
    seen: set[int] = set()
    for i in range(len(code) - 1, -1, -1):
        ins = code[i]
        if ins[0] == LOCAL and ins[1] not in seen and ins[1] not in escapes:
            seen.add(ins[1])
            code[i] = (TAKE,) + ins[1:]


_SIMPLE = {
    Tuple: lambda node: (TUPLE, len(node.fields)),
    TupleGetItem: lambda node: (GET_ITEM, node.index),
    RefCreate: lambda node: (REF_NEW,),
    RefRead: lambda node: (REF_READ,),
    RefWrite: lambda node: (REF_WRITE,),
}


def _scopes(root: Expr) -> _Scopes:
    """Each node's home block: the lowest common ancestor of the blocks of its uses,
    found with users before the nodes they use (TVM's CalcScope). Block 0 is the root's.
    Constants, globals, constructors and operators have no home: they are used in place."""
    out = _Scopes(root)
    order = post_order(root)                 # children first; walked backwards below
    tree, opener = ScopeTree(), [root]       # blocks; block 0 is the root's
    home, users = out.home, {id(root): 1}
    home[id(root)] = 0
    spread: dict[int, set[int]] = {}         # node -> its use blocks, when more than one
    for node in reversed(order):
        kind = type(node)
        if kind in _CONSTANT_KINDS or kind is Var:
            continue
        here = home[id(node)]
        edges = _scope_edges(node, here, out, tree, opener)
        for child, block in edges:
            if type(child) in _CONSTANT_KINDS:
                continue
            key = id(child)
            first = home.get(key)
            if first is None:
                home[key], users[key] = block, 1
                continue
            users[key] += 1
            if block != first:
                spread.setdefault(key, {first}).add(block)
                home[key] = tree.lca(first, block)
    _finish_scopes(out, order, spread, tree, opener)
    out.shared.update(key for key, n in users.items() if n > 1)
    return out


def _finish_scopes(out: _Scopes, order: list[Expr], spread: dict[int, set[int]],
                   tree: ScopeTree, opener: list[Expr]) -> None:
    """Escapes and hoists: a node used in blocks nested in its home is computed before the
    construct (`if`, `match`, `fn`) of its home that opens the way to them, in evaluation
    order (post-order rank)."""
    rank = {id(node): i for i, node in enumerate(order)}
    hoists: dict[int, set[int]] = {}
    for key, blocks in spread.items():
        out.escapes.add(key)
        node, home = order[rank[key]], out.home[key]
        if type(node) is Var:
            continue
        level = tree.depth[home] + 1
        for block in blocks - {home}:
            block = tree.ancestor_at(block, level)      # the block of `home` it lies in
            hoists.setdefault(id(opener[block]), set()).add(key)
    out.hoists = {k: tuple(order[i] for i in sorted(rank[key] for key in v))
                  for k, v in hoists.items()}


def _scope_edges(node: Expr, here: int, out: _Scopes, tree: ScopeTree,
                 opener: list[Expr]) -> Any:
    """(child, block of its use) for each child of `node` (home block `here`), opening the
    blocks of function bodies, branches and clauses; also records functions and the
    variables lets and patterns bind in each function's activation."""
    kind = type(node)
    if kind is Let:
        out.bound.setdefault(out.unit_of[here], set()).add(id(node.var))
    if kind is not Function and kind is not If and kind is not Match:
        return [(child, here) for child in node.children()]
    if kind is Function:
        out.functions.append(node)
        roots = [node.body]
    elif kind is If:
        roots = [node.true_branch, node.false_branch]
    else:
        roots = [c.rhs for c in node.clauses]
        out.bound.setdefault(out.unit_of[here], set()).update(
            id(v) for c in node.clauses for v in pattern_vars(c.lhs))
    edges = [(node.cond, here)] if kind is If else [(node.data, here)] if kind is Match else []
    for slot, child in enumerate(roots, 0 if kind is Function else 1):
        block = out.entry[(id(node), slot)] = tree.add(here)
        opener.append(node)
        out.unit_of.append(block if kind is Function else out.unit_of[here])
        edges.append((child, block))
    return edges
