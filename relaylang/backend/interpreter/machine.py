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
million small frames. The continuations are bounded (`max_depth`, by default
sized to the machine's memory, `default_max_depth()`): an endless non-tail
recursion stops with `RecursionTooDeep` at the call that went too deep, naming
the function, instead of taking all the memory there is.

A node shared by several users (graph form) is computed once, where TVM's
interpreter computes it after ToANormalForm: in the innermost block enclosing
all its users, at its first use there; its value is kept in that
block's activation and dies at its last use when nothing else can need it, so
a model's intermediates live no longer than in NumPy code. Floating-point
errors are ignored for a whole run (TVM's kernels do not trap either), so the
kernels skip their own `np.errstate`.

This module holds the machine (`Interpreter`, its run loop, `Activation`,
`InterpreterError`); the compiler that makes its code is `compile.py`.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.expr import (Call, Constructor, Expr, Function, PatternConstructor, PatternTuple,
                        PatternVar, Var)
from ...ir.module import IRModule
from ...ir.span import Span
from ...op.registry import NoImplementation
from .compiler import (BIND, CALL, CALL_GLOBAL, CONST, CTOR, FAIL, FREE, FUNC, GET_ITEM, GLOBAL, IF,
                       LOCAL, MATCH, OP1, OP2, OP2C, OPN, REF_NEW, REF_READ, REF_WRITE, RET, STORE,
                       TAKE, TUPLE, Block, Compiler, Unit)
from .values import Closure, ConstructorValue, NativeClosure, RefValue


class InterpreterError(Exception):
    """A run-time error of the program (a failed `match?`, a kernel failure), with its span."""

    def __init__(self, message: str, span: Span | None):
        super().__init__(f"{span}: {message}" if span else message)
        self.message = message
        self.span = span


class RecursionTooDeep(InterpreterError):
    """More than `max_depth` calls (or `if`/`match` bodies) were pending at once."""


# Bytes a pending non-tail call holds (continuation, activation, its dict; measured
# ~470 for a one-parameter function), and the share of the machine's memory the
# default depth may take.
_BYTES_PER_LEVEL = 512
_MEMORY_SHARE = 16
_MIN_DEPTH, _MAX_DEPTH = 2_000_000, 100_000_000


def default_max_depth() -> int:
    """The default bound on pending calls: 1/16 of physical memory at 512 bytes a level,
    never under two million (a million-deep recursion must run) nor over 100 million."""
    import os
    try:
        memory = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        memory = 8 << 30
    depth = memory // _MEMORY_SHARE // _BYTES_PER_LEVEL
    return max(_MIN_DEPTH, min(_MAX_DEPTH, depth))


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

_KERNEL_CALLS = (OP1, OP2, OP2C, OPN)


class Interpreter:
    """Runs the functions of `mod`: `apply(global_closure("main"), args)`, or `eval` of an
    expression. Function bodies are compiled on their first call and kept."""

    def __init__(self, mod: IRModule, max_depth: int | None = None,
                 primitive: Callable[[Function], Callable[[list], Any] | None] | None = None,
                 compiler: Compiler | None = None):
        self.mod = mod
        # The native backend's hook (mixed mode): for a `Primitive=1` function, a callable
        # running it on a list of argument values (or None: interpret its body). Asked
        # once per function node, when a closure of it is first made.
        self.primitive = primitive
        self._natives: dict[int, Any] = {}
        self.max_depth = default_max_depth() if max_depth is None else max_depth
        if self.max_depth < 1:
            raise ValueError(f"max_depth must be at least 1, not {self.max_depth}")
        self._globals: dict[str, Closure] = {}
        # The profiler passes a compiler whose op instructions call timed kernels: the
        # run loop is the same, so an unprofiled run pays nothing for profiling.
        self._compiler = compiler if compiler is not None else Compiler()
        # The run loop's view of the compiler: its table of function units, and its
        # methods as attributes, so a call through them costs no extra Python frame.
        self._units: dict[Function, Unit] = self._compiler.units
        self._function_unit = self._compiler.function_unit
        self._code = self._compiler.code

    # ------------------------------------------------------------ entry points
    def global_closure(self, name: str) -> Closure:
        closure = self._globals.get(name)
        if closure is None:
            fn = self.mod[name]
            if not isinstance(fn, Function):
                raise KeyError(f"@{name} is not a function")
            closure = self._globals[name] = _global(fn, name, self)
        return closure

    def apply(self, callee: Any, args: list[Any]) -> Any:
        """Call a closure (or constructor) with argument values, to completion."""
        if type(callee) is NativeClosure:
            return callee.native(list(args))
        if isinstance(callee, Closure):
            unit = self._units.get(callee.function) or self._function_unit(callee.function)
            if len(unit.keys) != len(args):
                _check_arity(unit, len(args), None)
            return self._run(unit.code, Activation(dict(zip(unit.keys, args)), callee.env))
        if isinstance(callee, Constructor):
            return ConstructorValue(callee, tuple(args))
        raise InterpreterError(f"cannot call a value of type {type(callee).__name__}", None)

    def eval(self, expr: Expr, env: Activation | None = None) -> Any:
        return self._run(self._compiler.eval_unit(expr).code, env or Activation({}, None))


    # The classes of the value stack and of the continuation (task) stack: hooks for tests
    # that measure their depth.
    _value_stack: type[list] = list
    _task_stack: type[list] = list

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
        globals_, units, limit = self._globals, self._units, self.max_depth
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
                            if type(callee) is not Closure:     # run by a BYOC codegen
                                args = stack[base:]
                                del stack[base:]
                                push(callee.native(args))
                                continue
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
                            if len(conts) > limit:
                                self._too_deep(ins, callee)
                        env = Activation(frame, callee.env)
                        vals, code, pc = frame, unit.code, 0
                    elif op == IF:
                        block = ins[1] if pop() else ins[2]
                        if not ins[3]:
                            conts.append((code, pc, env))
                            if len(conts) > limit:
                                self._too_deep(ins, None)
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
                            if len(conts) > limit:
                                self._too_deep(ins, None)
                        code, pc = block.code or self._code(block), 0
                    else:
                        self._other(ins, stack, env)
            except Exception as e:  # noqa: BLE001  (each is recovered from or re-raised)
                self._fault(e, ins, env, stack)

    def _too_deep(self, ins: tuple, callee: Closure | None) -> None:
        """Raise RecursionTooDeep at the call (or `if`, `match`) of `ins`, naming the
        function called, else the global whose text holds the node."""
        node = ins[3] if ins[0] == CALL_GLOBAL else ins[2] if ins[0] == CALL else \
            ins[4] if ins[0] == IF else ins[1]
        if ins[0] == CALL_GLOBAL:
            name = "@" + ins[1]
        elif ins[0] == CALL and type(node.op) is Var and not any(
                f is callee.function for f in self.mod.functions.values()):
            name = "%" + node.op.name_hint
        else:
            name = self._global_name(callee.function if callee is not None else None,
                                     node.span)
        raise RecursionTooDeep(
            f"recursion too deep: more than {self.max_depth:,} calls pending in {name} "
            "(an endless recursion? raise the limit with --max-depth / max_depth=)",
            node.span)

    def _global_name(self, fn: Function | None, span: Span | None) -> str:
        """`@name` of the global that is `fn`, or whose definition holds `span`."""
        for gv, f in self.mod.functions.items():
            if f is fn:
                return "@" + gv.name_hint
        for gv, f in self.mod.functions.items():
            s = f.span
            if span is not None and s is not None and s.source_name == span.source_name and \
                    (s.line, s.column) <= (span.line, span.column) and \
                    (span.end_line, span.end_column) <= (s.end_line, s.end_column):
                return "@" + gv.name_hint
        return "a local function"

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
            # An op without reference semantics (memory.alloc_storage, call_lowered) says so
            # itself; anything else is the kernel failing.
            message = str(e) if isinstance(e, NoImplementation) else f"{node.op.name} failed: {e}"
            raise InterpreterError(message, node.span) from e
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
            stack.append(Closure(ins[1], env, self) if self.primitive is None else
                         self._closure(ins[1], env))
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

    def _closure(self, fn: Function, env: Activation) -> Closure:
        """The closure of `fn` in `env`; a native one when the `primitive` hook runs it."""
        native = self._natives.get(id(fn), _MISSING)
        if native is _MISSING:
            primitive = fn.attrs is not None and bool(fn.attrs.get("Primitive", 0))
            native = self.primitive(fn) if primitive else None
            self._natives[id(fn)] = native
        if native is None:
            return Closure(fn, env, self)
        return NativeClosure(fn, env, self, native)

    def _call_value(self, stack: list, base: int, node: Call) -> Any:
        """CALL of a value that is not a plain closure: its operands leave the stack."""
        callee, args = stack[base - 1], stack[base:]
        del stack[base - 1:]
        if type(callee) is NativeClosure:
            return callee.native(args)
        if isinstance(callee, Constructor):
            return ConstructorValue(callee, tuple(args))
        if isinstance(callee, Closure):          # a subclass: run it on its own
            return self.apply(callee, args)
        raise InterpreterError(f"cannot call a value of type {type(callee).__name__}", node.span)


# ---------------------------------------------------------------- helpers of the machine

def _global(fn: Function, name: str, interpreter: Interpreter) -> Closure:
    """The closure of the global `fn`: a partitioned function (`Compiler="T"`) whose
    target has a codegen runs the codegen's callable (backend/byoc/runner.py); any other
    function, or one of a target without a codegen, is interpreted."""
    if fn.attrs is not None and fn.attrs.get("Compiler") is not None:
        from ..byoc.runner import ExternalFunctionError, external_function
        ext = external_function(fn, name)
        if ext is not None:
            def run(args: list, ext: Any = ext) -> Any:
                try:
                    return ext(args)
                except ExternalFunctionError as e:
                    raise InterpreterError(e.message, e.span) from e.__cause__
            return NativeClosure(fn, None, interpreter, run)
    return Closure(fn, None, interpreter)


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


def _check_arity(unit: Unit, n: int, node: Call | None) -> None:
    if len(unit.keys) != n:
        raise InterpreterError(f"function of {len(unit.keys)} parameters called with {n} "
                               "arguments", node.span if node is not None else None)


def _select(ins: tuple, data: Any, values: dict[int, Any]) -> Block:
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




_quietly: Any = None


def _load_quietly() -> Any:
    """numpy_support.quietly: runs a program with floating-point errors ignored, the
    kernels skipping their own `np.errstate`. Loaded on first use: it imports NumPy."""
    global _quietly
    from ...op.numpy_support import quietly
    _quietly = quietly
    return quietly
