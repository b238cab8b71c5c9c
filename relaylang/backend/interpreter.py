"""The reference interpreter: Relay's meaning, as an explicit-stack machine.

(TVM's src/relay/backend/interpreter.cc is a recursive evaluator; this is not.)
The machine has a task stack and a value stack. Evaluating a node pushes a
continuation (what to do with its children's values) and then its children;
continuations are data, so deep programs and deep recursion cost heap, not
Python stack. A call in tail position leaves nothing behind it: the callee's
body is evaluated in place of the call, so a tail-recursive loop runs in
constant space, and a non-tail recursion a million deep holds a million small
frames.

A node shared by several users (graph form) is computed once per activation:
its value is remembered in the activation that computed it.
"""
from __future__ import annotations

from typing import Any, Callable

from .. import op as op_registry
from ..ir.expr import (Call, Constant, Constructor, Expr, Function, GlobalVar, If, Let, Match, Op,
                       PatternConstructor, PatternTuple, PatternVar, RefCreate, RefRead, RefWrite,
                       Tuple, TupleGetItem, Var)
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

    __slots__ = ("values", "parent")

    def __init__(self, values: dict[int, Any], parent: Activation | None):
        self.values = values
        self.parent = parent

    def lookup(self, var: Var) -> Any:
        key = id(var)
        env: Activation | None = self
        while env is not None:
            if key in env.values:
                return env.values[key]
            env = env.parent
        raise InterpreterError(f"variable `%{var.name_hint}` is not bound", var.span)

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

# Task kinds: evaluate a node, or resume a node once its children's values are on the stack.
EVAL, RESUME, REMEMBER = 0, 1, 2


class Interpreter:
    def __init__(self, mod: IRModule):
        self.mod = mod
        self._globals: dict[str, Closure] = {}
        self._shared: set[int] = set()
        self._scanned: set[int] = set()
        self._kernels: dict[str, Callable[..., Any]] = {}
        self._resume: dict[type, Callable[..., None]] = {
            Call: self._resume_call, Let: self._resume_let, If: self._resume_if,
            Tuple: self._resume_tuple, TupleGetItem: self._resume_get_item,
            Match: self._resume_match, RefCreate: self._resume_ref_create,
            RefRead: self._resume_ref_read, RefWrite: self._resume_ref_write}

    # ------------------------------------------------------------ entry points
    def global_closure(self, name: str) -> Closure:
        closure = self._globals.get(name)
        if closure is None:
            fn = self.mod[name]
            if not isinstance(fn, Function):
                raise KeyError(f"@{name} is not a function")
            self._scan(fn)
            closure = self._globals[name] = Closure(fn, None, self)
        return closure

    def apply(self, callee: Any, args: list[Any]) -> Any:
        """Call a closure (or constructor) with argument values, to completion."""
        tasks: list[tuple] = []
        values: list[Any] = []
        self._call(callee, args, None, tasks, values)
        return self._run(tasks, values)

    def eval(self, expr: Expr, env: Activation | None = None) -> Any:
        self._scan(expr)
        return self._run([(EVAL, expr, env or Activation({}, None))], [])

    def _scan(self, root: Expr) -> None:
        """Find the nodes with several users (computed once per activation)."""
        if id(root) in self._scanned:
            return
        users: dict[int, int] = {}
        for node in post_order(root):
            self._scanned.add(id(node))
            for child in node.children():
                users[id(child)] = users.get(id(child), 0) + 1
        self._shared.update(k for k, n in users.items() if n > 1)

    # ------------------------------------------------------------ the machine
    def _run(self, tasks: list[tuple], values: list[Any]) -> Any:
        shared, resume = self._shared, self._resume
        while tasks:
            kind, node, env = tasks.pop()
            if kind == EVAL:
                if type(node) is Var:
                    values.append(env.lookup(node))
                    continue
                if id(node) in shared:
                    memo = env.remembered(id(node))
                    if memo is not _MISSING:
                        values.append(memo)
                        continue
                    tasks.append((REMEMBER, node, env))
                self._eval(node, env, tasks, values)
            elif kind == RESUME:
                resume[type(node)](node, env, tasks, values)
            else:
                env.values[id(node)] = values[-1]
        return values.pop()

    def _eval(self, node: Expr, env: Activation, tasks: list, values: list) -> None:
        kind = type(node)
        if kind is Constant:
            values.append(node.data)
        elif kind is GlobalVar:
            values.append(self.global_closure(node.name_hint))
        elif kind is Function:
            values.append(Closure(node, env, self))
        elif kind is Constructor:
            values.append(node)
        elif kind is Op:
            raise InterpreterError(f"operator `{node.name}` used as a value", node.span)
        else:
            tasks.append((RESUME, node, env))
            if kind is Call and type(node.op) is Op:
                children = node.args           # the operator itself is not evaluated
            elif kind is Let:
                children = (node.value,)
            elif kind is If:
                children = (node.cond,)
            elif kind is Match:
                children = (node.data,)
            else:
                children = node.children()
            if all(type(c) is Var or type(c) is Constant for c in children):
                # Every operand is at hand: resume now, without a task per operand.
                tasks.pop()
                for c in children:
                    values.append(env.lookup(c) if type(c) is Var else c.data)
                self._resume[kind](node, env, tasks, values)
                return
            for child in reversed(children):
                tasks.append((EVAL, child, env))

    # ------------------------------------------------------------ continuations
    def _resume_call(self, node: Call, env: Activation, tasks: list, values: list) -> None:
        n = len(node.args)
        args = values[len(values) - n:] if n else []
        del values[len(values) - n:]
        if type(node.op) is Op:
            values.append(self._apply_op(node, args))
            return
        self._call(values.pop(), args, node, tasks, values)

    def _apply_op(self, node: Call, args: list[Any]) -> Any:
        kernel = self._kernels.get(node.op.name)
        if kernel is None:
            opdef = op_registry.get_op_def(node.op.name)
            if opdef is None or opdef.kernel is None:
                raise InterpreterError(f"operator `{node.op.name}` has no kernel", node.span)
            kernel = self._kernels[node.op.name] = opdef.kernel
        try:
            return kernel(args, node.attrs)
        except InterpreterError:
            raise
        except Exception as e:        # a kernel failing on these values is the program's error
            raise InterpreterError(f"{node.op.name} failed: {e}", node.span) from e

    def _call(self, callee: Any, args: list[Any], node: Call | None, tasks: list,
              values: list) -> None:
        span = node.span if node is not None else None
        if isinstance(callee, Closure):
            fn = callee.function
            if len(fn.params) != len(args):
                raise InterpreterError(f"function of {len(fn.params)} parameters called with "
                                       f"{len(args)} arguments", span)
            self._scan(fn)
            frame = Activation({id(p): a for p, a in zip(fn.params, args)}, callee.env)
            tasks.append((EVAL, fn.body, frame))   # in place of the call: tail calls are free
        elif isinstance(callee, Constructor):
            values.append(ConstructorValue(callee, tuple(args)))
        else:
            raise InterpreterError(f"cannot call a value of type {type(callee).__name__}", span)

    def _resume_let(self, node: Let, env: Activation, tasks: list, values: list) -> None:
        env.values[id(node.var)] = values.pop()
        tasks.append((EVAL, node.body, env))

    def _resume_if(self, node: If, env: Activation, tasks: list, values: list) -> None:
        branch = node.true_branch if bool(values.pop()) else node.false_branch
        tasks.append((EVAL, branch, env))

    def _resume_tuple(self, node: Tuple, env: Activation, tasks: list, values: list) -> None:
        n = len(node.fields)
        fields = tuple(values[len(values) - n:]) if n else ()
        del values[len(values) - n:]
        values.append(fields)

    def _resume_get_item(self, node: TupleGetItem, env: Activation, tasks: list,
                         values: list) -> None:
        values.append(values.pop()[node.index])

    def _resume_ref_create(self, node: RefCreate, env: Activation, tasks: list,
                           values: list) -> None:
        values.append(RefValue(values.pop()))

    def _resume_ref_read(self, node: RefRead, env: Activation, tasks: list, values: list) -> None:
        values.append(values.pop().value)

    def _resume_ref_write(self, node: RefWrite, env: Activation, tasks: list,
                          values: list) -> None:
        value = values.pop()
        values.pop().value = value
        values.append(())

    def _resume_match(self, node: Match, env: Activation, tasks: list, values: list) -> None:
        data = values.pop()
        for clause in node.clauses:
            bindings = _match(clause.lhs, data)
            if bindings is not None:
                env.values.update(bindings)
                tasks.append((EVAL, clause.rhs, env))
                return
        raise InterpreterError(f"no clause of this match accepts the value {data!r}", node.span)


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
