"""The reference interpreter: Relay's meaning, as an explicit-stack machine.

(TVM's src/relay/backend/interpreter.cc is a recursive evaluator; this is not.)
Each function body is compiled, lazily and once, into linear code for a stack
machine: its nodes in evaluation order (post-order, operands left to right),
one instruction each, popping the operands' values and pushing the node's.
Control flow is blocks of such code: an `if` runs the block of the branch
taken, a `match` the block of the clause that accepts, a call the callee's
body. Where nothing follows in the current block (tail position) the new block
replaces it; otherwise the rest of the current block (code, position,
activation) is pushed as a continuation. Continuations are data, so deep
programs and deep recursion cost heap, not Python stack: a tail-recursive loop
runs in constant space, and a non-tail recursion a million deep holds a
million small frames.

A node shared by several users (graph form) is computed once, where TVM's
interpreter computes it after ToANormalForm: in the innermost block enclosing
all its users, at its first use there (`_Scopes`); its value is kept in that
block's activation and dies at its last use when nothing else can need it, so
a model's intermediates live no longer than in NumPy code. Floating-point
errors are ignored for a whole run (TVM's kernels do not trap either), so the
kernels skip their own `np.errstate`.
"""
from __future__ import annotations

from typing import Any

from .. import op as op_registry
from ..ir.expr import (Call, Constant, Constructor, Expr, Function, GlobalVar, If, Let, Match, Op,
                       PatternConstructor, PatternTuple, PatternVar, PatternWildcard, RefCreate,
                       RefRead, RefWrite, Tuple, TupleGetItem, Var, pattern_vars)
from ..ir.module import IRModule
from ..ir.span import Span
from ..ir.traverse import post_order
from .values import Closure, ConstructorValue, RefValue


class InterpreterError(Exception):
    """A run-time error of the program (a failed `match?`, a kernel failure), with its span."""

    def __init__(self, message: str, span: Span | None):
        super().__init__(f"{span}: {message}" if span else message)
        self.message = message
        self.span = span


class Activation:
    """The values of one function invocation: its variables, and its shared nodes' values."""

    __slots__ = ("parent", "values")

    def __init__(self, values: dict[int, Any], parent: Activation | None):
        self.values = values
        self.parent = parent

    def lookup(self, var: Var) -> Any:
        value = self.remembered(id(var))
        if value is _MISSING:
            raise InterpreterError(f"variable `%{var.name_hint}` is not bound", var.span)
        return value

    def remembered(self, key: int) -> Any:
        """The value of a shared node computed in this activation or one it closes over
        (a node of an enclosing scope is the same computation there: `ref(0)` stays one
        cell)."""
        env: Activation | None = self
        while env is not None:
            value = env.values.get(key, _MISSING)
            if value is not _MISSING:
                return value
            env = env.parent
        return _MISSING


_MISSING = object()

# Opcodes; an instruction is a tuple whose first item is its opcode. The run loop tests
# them in this order, the most frequent first.
(OP2, OP2C, CONST, LOCAL, TAKE, OP1, FREE, CALL, CALL_GLOBAL, IF, RET, STORE, BIND, MATCH,
 OPN, TUPLE, GET_ITEM, FUNC, GLOBAL, CTOR, REF_NEW, REF_READ, REF_WRITE, FAIL) = range(24)
_KERNEL_CALLS = (OP1, OP2, OP2C, OPN)
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


class _Unit:
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
        self.blocks: dict[int, _Block] = {}
        self.code: list[tuple] = []


class _Block:
    """Code evaluating one expression in one activation (a branch, a clause), made on
    first use."""

    __slots__ = ("code", "root", "scope", "unit")

    def __init__(self, root: Expr, scope: int, unit: _Unit):
        self.root = root
        self.scope = scope
        self.unit = unit
        self.code: list[tuple] | None = None


class Interpreter:
    """Runs the functions of `mod`: `apply(global_closure("main"), args)`, or `eval` of an
    expression. Function bodies are compiled on their first call and kept."""

    def __init__(self, mod: IRModule):
        self.mod = mod
        self._globals: dict[str, Closure] = {}
        self._scopes_of: dict[int, _Scopes] = {}    # id(scanned root or Function node)
        self._units: dict[Function, _Unit] = {}     # nodes hash by identity
        self._evals: dict[int, _Unit] = {}          # id(expression given to eval) -> unit
        self._kernels: dict[str, Any] = {}

    # ------------------------------------------------------------ entry points
    def global_closure(self, name: str) -> Closure:
        closure = self._globals.get(name)
        if closure is None:
            fn = self.mod[name]
            if not isinstance(fn, Function):
                raise KeyError(f"@{name} is not a function")
            closure = self._globals[name] = Closure(fn, None, self)
        return closure

    def apply(self, callee: Any, args: list[Any]) -> Any:
        """Call a closure (or constructor) with argument values, to completion."""
        if isinstance(callee, Closure):
            unit = self._units.get(callee.function) or self._function_unit(callee.function)
            if len(unit.keys) != len(args):
                _check_arity(unit, len(args), None)
            return self._run(unit.code, Activation(dict(zip(unit.keys, args)), callee.env))
        if isinstance(callee, Constructor):
            return ConstructorValue(callee, tuple(args))
        raise InterpreterError(f"cannot call a value of type {type(callee).__name__}", None)

    def eval(self, expr: Expr, env: Activation | None = None) -> Any:
        unit = self._evals.get(id(expr))
        if unit is None:
            scopes = self._scan(expr)
            unit = self._evals[id(expr)] = _Unit(scopes, (), None, drop=False)
            unit.code = self._compile(expr, 0, unit)
        return self._run(unit.code, env or Activation({}, None))

    # The classes of the value stack and of the continuation (task) stack: hooks for tests
    # that measure their depth.
    _value_stack: type[list] = list
    _task_stack: type[list] = list

    def _scan(self, root: Expr) -> _Scopes:
        scopes = _scopes(root)
        self._scopes_of[id(root)] = scopes
        for fn in scopes.functions:          # closures' bodies are compiled with these
            self._scopes_of.setdefault(id(fn), scopes)
        return scopes

    def _function_unit(self, fn: Function) -> _Unit:
        unit = self._units.get(fn)
        if unit is None:
            scopes = self._scopes_of.get(id(fn))
            if scopes is None or (id(fn), 0) not in scopes.entry:
                scopes = self._scan(fn)
            params, body = tuple(id(p) for p in fn.params), scopes.entry[(id(fn), 0)]
            unit = _Unit(scopes, params, set(params) | scopes.bound.get(body, set()), True)
            unit.code = self._compile(fn.body, body, unit)
            self._units[fn] = unit
        return unit

    # ------------------------------------------------------------ the compiler
    def _compile(self, root: Expr, scope: int, unit: _Unit) -> list[tuple]:
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

    def _leaf(self, node: Expr, unit: _Unit) -> tuple:
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

    def _expand(self, node: Expr, unit: _Unit, work: list) -> None:
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

    def _opener(self, node: Expr, unit: _Unit, work: list) -> tuple:
        """The instruction of an `if`, `match` or `fn`, after the nodes homed here that its
        blocks use (computed first, in evaluation order); returns its operands."""
        if type(node) is If:
            work.append((IF, self._block(node, 1, node.true_branch, unit),
                         self._block(node, 2, node.false_branch, unit), False))
        elif type(node) is Match:
            clauses = tuple(_clause(c.lhs) + (self._block(node, i + 1, c.rhs, unit),)
                            for i, c in enumerate(node.clauses))
            work.append((MATCH, node, clauses, False))
        else:
            work.append((FUNC, node))
        hoisted = unit.scopes.hoists.get(id(node), ())
        work.extend((_HOIST, h) for h in reversed(hoisted))
        return (node.cond,) if type(node) is If else (node.data,) if type(node) is Match else ()

    def _block(self, opener: Expr, slot: int, root: Expr, unit: _Unit) -> _Block:
        scope = unit.scopes.entry[(id(opener), slot)]
        block = unit.blocks.get(scope)
        if block is None:
            block = unit.blocks[scope] = _Block(root, scope, unit)
        return block

    def _code(self, block: _Block) -> list[tuple]:
        if block.code is None:
            block.code = self._compile(block.root, block.scope, block.unit)
        return block.code

    # ------------------------------------------------------------ the machine
    def _run(self, code: list[tuple], env: Activation) -> Any:
        return (_quietly or _load_quietly())(self._loop, code, env)

    def _loop(self, code: list[tuple], env: Activation) -> Any:
        """Run `code` in `env` to its final RET. One function on purpose: a Python call
        per instruction would cost more than most instructions do. Operands are popped
        into the kernel's argument list directly, so no local variable keeps a value
        alive after its last use."""
        stack, conts = self._value_stack(), self._task_stack()
        push, pop = stack.append, stack.pop
        globals_, units = self._globals, self._units
        vals, pc, ins = env.values, 0, ()
        while True:
            try:
                while True:
                    ins = code[pc]
                    pc += 1
                    op = ins[0]
                    if op == OP2:
                        push(ins[1]([pop(-2), pop()], ins[2]))
                    elif op == OP2C:
                        push(ins[1]([pop(), ins[4]], ins[2]))
                    elif op == CONST:
                        push(ins[1])
                    elif op == LOCAL:
                        push(vals[ins[1]])
                    elif op == TAKE:
                        push(vals.pop(ins[1]))
                    elif op == OP1:
                        push(ins[1]([pop()], ins[2]))
                    elif op == FREE:
                        key, outer = ins[1], env.parent
                        while key not in outer.values:     # None at the end: not bound
                            outer = outer.parent
                        push(outer.values[key])
                    elif op == CALL or op == CALL_GLOBAL:
                        if op == CALL:
                            n = ins[1]
                            base = len(stack) - n
                            callee = stack[base - 1]
                            if type(callee) is not Closure:
                                push(self._call_value(stack, base, ins[2]))
                                continue
                        else:
                            n = ins[2]
                            base = len(stack) - n
                            callee = globals_.get(ins[1]) or self.global_closure(ins[1])
                        unit = units.get(callee.function) or \
                            self._function_unit(callee.function)
                        keys = unit.keys
                        if len(keys) != n:
                            _check_arity(unit, n, ins[2 if op == CALL else 3])
                        # a dict display is three times faster than dict(zip(...))
                        frame = ({keys[0]: stack[base], keys[1]: stack[base + 1]} if n == 2 else
                                 {keys[0]: stack[base]} if n == 1 else
                                 dict(zip(keys, stack[base:])))
                        del stack[base - 1 if op == CALL else base:]
                        if not ins[-1]:
                            conts.append((code, pc, env))
                        env = Activation(frame, callee.env)
                        vals, code, pc = frame, unit.code, 0
                    elif op == IF:
                        block = ins[1] if pop() else ins[2]
                        if not ins[3]:
                            conts.append((code, pc, env))
                        code, pc = block.code or self._code(block), 0
                    elif op == RET:
                        if not conts:
                            return pop()
                        code, pc, env = conts.pop()
                        vals = env.values
                    elif op == STORE:
                        vals[ins[1]] = stack[-1]
                    elif op == BIND:
                        vals[ins[1]] = pop()
                    elif op == MATCH:
                        block = _select(ins, pop(), vals)
                        if not ins[3]:
                            conts.append((code, pc, env))
                        code, pc = block.code or self._code(block), 0
                    else:
                        self._other(ins, stack, env)
            except Exception as e:  # noqa: BLE001  (each is recovered from or re-raised)
                self._fault(e, ins, env, stack)

    def _fault(self, e: Exception, ins: tuple, env: Activation, stack: list) -> None:
        """An exception in the instruction `ins`: recover (a LOCAL whose variable is bound
        in an enclosing activation) or raise it, a kernel's failure as the program's."""
        op = ins[0]
        if (op == LOCAL or op == TAKE) and type(e) is KeyError or \
                op == FREE and type(e) is AttributeError:
            stack.append(_free(env, ins))    # found further out, or raises: not bound
            return
        if op in _KERNEL_CALLS and not isinstance(e, InterpreterError):
            node = ins[3]
            raise InterpreterError(f"{node.op.name} failed: {e}", node.span) from e
        raise e

    def _other(self, ins: tuple, stack: list, env: Activation) -> None:
        """The instructions that neither branch nor occur often."""
        op = ins[0]
        if op == OPN or op == TUPLE or op == CTOR:
            n = ins[-1]
            operands = stack[len(stack) - n:]
            del stack[len(stack) - n:]
            stack.append(ins[1](operands, ins[2]) if op == OPN else
                         tuple(operands) if op == TUPLE else
                         ConstructorValue(ins[1], tuple(operands)))
        elif op == GET_ITEM:
            stack[-1] = stack[-1][ins[1]]
        elif op == FUNC:
            stack.append(Closure(ins[1], env, self))
        elif op == GLOBAL:
            stack.append(self.global_closure(ins[1]))
        elif op == REF_NEW:
            stack[-1] = RefValue(stack[-1])
        elif op == REF_READ:
            stack[-1] = stack[-1].value
        elif op == REF_WRITE:
            value = stack.pop()
            stack[-1].value = value
            stack[-1] = ()
        else:
            assert op == FAIL, ins
            raise InterpreterError(ins[1], ins[2])

    def _call_value(self, stack: list, base: int, node: Call) -> Any:
        """CALL of a value that is not a plain closure: its operands leave the stack."""
        callee, args = stack[base - 1], stack[base:]
        del stack[base - 1:]
        if isinstance(callee, Constructor):
            return ConstructorValue(callee, tuple(args))
        if isinstance(callee, Closure):          # a subclass: run it on its own
            return self.apply(callee, args)
        raise InterpreterError(f"cannot call a value of type {type(callee).__name__}", node.span)


# ---------------------------------------------------------------- helpers of the machine

def _free(env: Activation | None, ins: tuple) -> Any:
    """The value of the variable of a FREE (or LOCAL) instruction, through enclosing
    activations."""
    key = ins[1]
    while env is not None:
        values = env.values
        if key in values:
            return values[key]
        env = env.parent
    node = ins[2]
    if type(node) is not Var:        # a node of an enclosing block: always computed first
        raise AssertionError(f"internal error: {node!r} used before it was computed")
    raise InterpreterError(f"variable `%{node.name_hint}` is not bound", node.span)


def _check_arity(unit: _Unit, n: int, node: Call | None) -> None:
    if len(unit.keys) != n:
        raise InterpreterError(f"function of {len(unit.keys)} parameters called with {n} "
                               "arguments", node.span if node is not None else None)


def _select(ins: tuple, data: Any, values: dict[int, Any]) -> _Block:
    """The block of the first clause of MATCH `ins` that accepts `data`, its variables
    bound in `values`."""
    for name, keys, pattern, block in ins[2]:
        if name is not None:                 # Ctor(%a, _, ...): test the name, bind
            if not isinstance(data, ConstructorValue) or data.constructor.name != name:
                continue
            for key, field in zip(keys, data.fields):
                if key:
                    values[key] = field
            return block
        bindings = _match(pattern, data)
        if bindings is not None:
            values.update(bindings)
            return block
    raise InterpreterError(f"no clause of this match accepts the value {data!r}", ins[1].span)


def _match(pattern: Any, value: Any) -> dict[int, Any] | None:
    """The variables `pattern` binds when it accepts `value`, else None (iterative)."""
    bindings: dict[int, Any] = {}
    stack = [(pattern, value)]
    while stack:
        p, v = stack.pop()
        if isinstance(p, PatternVar):
            bindings[id(p.var)] = v
        elif isinstance(p, PatternConstructor):
            if not isinstance(v, ConstructorValue) or v.constructor.name != p.constructor.name:
                return None
            stack.extend(zip(p.patterns, v.fields))
        elif isinstance(p, PatternTuple):
            if not isinstance(v, tuple) or len(v) != len(p.patterns):
                return None
            stack.extend(zip(p.patterns, v))
    return bindings


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
            code[i] = code[i][:flag] + (True,)


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
    parent, depth, opener = [-1], [0], [root]         # per block
    home, users = out.home, {id(root): 1}
    home[id(root)] = 0
    spread: dict[int, set[int]] = {}         # node -> its use blocks, when more than one
    for node in reversed(order):
        kind = type(node)
        if kind in _CONSTANT_KINDS or kind is Var:
            continue
        here = home[id(node)]
        edges = _scope_edges(node, here, out, parent, depth, opener)
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
                home[key] = _lca(first, block, parent, depth)
    _finish_scopes(out, order, spread, parent, opener)
    out.shared.update(key for key, n in users.items() if n > 1)
    return out


def _finish_scopes(out: _Scopes, order: list[Expr], spread: dict[int, set[int]],
                   parent: list[int], opener: list[Expr]) -> None:
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
        for block in blocks - {home}:
            while parent[block] != home:
                block = parent[block]
            hoists.setdefault(id(opener[block]), set()).add(key)
    out.hoists = {k: tuple(order[i] for i in sorted(rank[key] for key in v))
                  for k, v in hoists.items()}


def _scope_edges(node: Expr, here: int, out: _Scopes, parent: list[int], depth: list[int],
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
        block = out.entry[(id(node), slot)] = len(parent)
        parent.append(here)
        depth.append(depth[here] + 1)
        opener.append(node)
        out.unit_of.append(block if kind is Function else out.unit_of[here])
        edges.append((child, block))
    return edges


def _lca(a: int, b: int, parent: list[int], depth: list[int]) -> int:
    while depth[a] > depth[b]:
        a = parent[a]
    while depth[b] > depth[a]:
        b = parent[b]
    while a != b:
        a, b = parent[a], parent[b]
    return a


_quietly: Any = None


def _load_quietly() -> Any:
    """elemwise_kernels.quietly: runs a program with floating-point errors ignored, the
    kernels skipping their own `np.errstate`. Loaded on first use: it imports NumPy."""
    global _quietly
    from ..op.elemwise_kernels import quietly
    _quietly = quietly
    return quietly
