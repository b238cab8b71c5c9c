"""Mixed mode: the interpreter's machine runs the control part, kernels the tensor part.

A program that is not a static dataflow graph (if, recursion through globals, closures,
ADTs, match, references, `?` dimensions) runs on the reference interpreter's machine
with its `primitive` hook set: each `Primitive=1` function it meets is called through
`PrimitiveKernels`, which keeps one runner per concrete argument type: a native kernel
(compiled on the first call with those shapes, or at build for functions whose types are
static), else the function's NumPy fallback. A function with `?` dimensions is compiled
for at most `SPECIALISE_MAX` distinct shapes; further shapes (a loop-carried tensor that
grows every iteration) run its NumPy kernels, since each compilation costs tens of
milliseconds. A primitive function that only calls an external function
(`call_dps_packed`, an extern op) runs it through `extern.ExternCall` (its output written
in place); a partitioned `Compiler=` global is called by the interpreter's machine through
its codegen (`byoc/runner.py`), or interpreted when its target has none (its ops are then
listed in `fallback_ops`).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.expr import Function
from ...ir.module import IRModule
from ...ir.traverse import post_order
from ...ir.types import TensorType, from_tuple_leaves
from ..byoc.registry import get_codegen
from ..byoc.runner import compiler_of
from ..interpreter.machine import Interpreter
from .extern import ExternCall, dps_call
from .kernels import (
    Fallback,
    NativeCall,
    compile_native,
    flatten,
    is_primitive,
    is_refusal,
    is_static_function,
    kernel_name,
    lower,
    op_names,
    specialise,
    value_type,
)

# distinct argument shapes one function with `?` dims is compiled for
SPECIALISE_MAX = 8


class PrimitiveKernels:
    """Runners for the primitive functions of a module, by function and argument types."""

    def __init__(self, cache: bool = True):
        self.cache = cache
        self.fallback_ops: set[str] = set()
        self.native_names: list[str] = []
        self._runners: dict[tuple[int, Any], Any] = {}
        self._specialised: dict[int, int] = {}      # function id -> shapes compiled
        self._generic: dict[int, Fallback] = {}     # function id -> its NumPy runner
        self._count = 0
        # function id -> its place in the module (`primitive_functions`), for export
        self._position: dict[int, str] = {}
        self.modules: list[Any] = []        # the core's compiled modules (for sources)

    def native_runners(self) -> list[tuple[str, Any, NativeCall]]:
        """(position of the function, argument types key, kernel) of every native runner
        (for export); the module must be the one this runs."""
        return [(self._position[fid], types, runner)
                for (fid, types), runner in self._runners.items()
                if type(runner) is NativeCall and fid in self._position]

    def restore(self, fn: Function, types: Any, call: NativeCall) -> None:
        """Use `call` for `fn` on arguments of `types` (a loaded library's kernel)."""
        self._runners[(id(fn), types)] = call
        self.native_names.append(call.name)

    def runners(self) -> list[Any]:
        """Every runner made so far (native calls and fallbacks)."""
        return list(self._runners.values())

    def _name(self, fn: Function) -> str:
        self._count += 1
        return kernel_name(fn, self._count)

    def prebuild(self, mod: IRModule, timer: Any = None) -> None:
        """Compile the kernels of every primitive function with static types now, in one
        batch (those `restore`d from a library file are kept)."""
        prims, names, fns = [], {}, {}
        from ...ir.progress import track
        for fkey, fn in track(primitive_functions(mod), "lowering kernels", unit="kernel"):
            self._position[id(fn)] = fkey
            if compiler_of(fn) is not None:
                # a partitioned function: run by its codegen through the interpreter's
                # global call (byoc/runner.py), or its body interpreted (no codegen)
                if get_codegen(str(compiler_of(fn))) is None:
                    self.fallback_ops.update(op_names(fn))
                continue
            if not is_static_function(fn):
                continue
            key = (id(fn), _type_key([p.checked_type for p in fn.params]))
            if key in self._runners:
                continue
            extern = dps_call(fn)
            if extern is not None:          # an external function, called in place
                self._runners[key] = extern
                continue
            name = self._name(fn)
            start = time.perf_counter()
            prim = lower(fn, name)
            if timer is not None:
                timer.add("lowering", time.perf_counter() - start)
            if is_refusal(prim):
                self._runners[key] = Fallback(fn, prim)
                self.fallback_ops.update(self._runners[key].ops)
                continue
            prims.append(prim)
            names[name] = (key, fkey)
            fns[name] = fn
        if prims:
            if timer is not None and not timer.detailed:
                start = time.perf_counter()
                module = compile_native(prims, cache=self.cache)
                timer.add("LLVM optimisation and codegen", time.perf_counter() - start)
            else:
                module = compile_native(prims, cache=self.cache, timer=timer)
            self.modules.append(module)
            for name, (key, fkey) in names.items():
                fn = fns[name]
                call = NativeCall(name, module.kernels[name], fn.body.checked_type,
                                  op_names(fn), fn.body.span or fn.span)
                self._runners[key] = call
                self.native_names.append(name)

    def hook(self, fn: Function) -> Callable[[list], Any]:
        """The interpreter's `primitive` hook: a callable running `fn` on argument values."""
        runners, fid = self._runners, id(fn)

        def run(args: list) -> Any:
            key = (fid, _value_key(args))
            runner = runners.get(key)
            if runner is None:
                runner = self._make(fn, args, key)
            if type(runner) is NativeCall or type(runner) is ExternCall:
                simple = all(type(a) is np.ndarray for a in args)
                outputs = runner.call(args if simple else flatten(tuple(args)))
                ty = runner.result_type
                return outputs[0] if isinstance(ty, TensorType) else from_tuple_leaves(ty, outputs)
            return runner(args)

        return run

    def _make(self, fn: Function, args: Sequence[Any], key: tuple) -> Any:
        types = [value_type(_array(a)) for a in args]
        if any(t is None for t in types):
            runner: Any = Fallback(fn)
        elif not is_static_function(fn) and self._specialised.get(id(fn), 0) >= SPECIALISE_MAX:
            runner = self._generic.get(id(fn))
            if runner is None:
                runner = self._generic[id(fn)] = Fallback(fn)
            self._runners[key] = runner
            return runner           # not a fallback op: its kernels exist, shapes vary
        else:
            if not is_static_function(fn):
                self._specialised[id(fn)] = self._specialised.get(id(fn), 0) + 1
            concrete = fn if is_static_function(fn) else specialise(fn, types)  # type: ignore[arg-type]
            name = self._name(concrete)
            extern = dps_call(concrete)
            prim = lower(concrete, name) if extern is None else None
            if extern is not None:          # an external function, called in place
                runner = extern
            elif is_refusal(prim):
                runner = Fallback(fn, prim)
            else:
                module = compile_native([prim], cache=self.cache)
                self.modules.append(module)
                runner = NativeCall(name, module.kernels[name], concrete.body.checked_type,
                                    op_names(fn), fn.body.span or fn.span)
                self.native_names.append(name)
        if isinstance(runner, Fallback):
            self.fallback_ops.update(runner.ops)
        self._runners[key] = runner
        return runner


def _array(value: Any) -> Any:
    return np.asarray(value) if isinstance(value, np.generic) else value


def _value_key(args: Sequence[Any]) -> tuple:
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append((a.shape, a.dtype.str))
        elif isinstance(a, tuple):
            out.append(_value_key(a))
        else:
            out.append(type(a).__name__)
    return tuple(out)


def _type_key(types: Sequence[Any]) -> tuple:
    from ...ir.types import TensorType, TupleType
    out: list[Any] = []
    for t in types:
        if isinstance(t, TupleType):
            out.append(_type_key(t.fields))
        elif isinstance(t, TensorType):
            if t.dtype in CARRIED:          # bfloat16, ir/lowp.py's: as their carriers
                from ...op.numpy_support import carrier_dtype
                dtype = carrier_dtype(t.dtype)
            else:
                dtype = np.dtype(t.dtype)
            out.append((tuple(int(d) for d in t.shape), dtype.str))
        else:
            out.append(None)
    return tuple(out)


def primitive_functions(mod: IRModule) -> list[tuple[str, Function]]:
    """The primitive functions of `mod` with a key naming their place (`@global:index`,
    in post-order): the same after printing and parsing the module again."""
    out = []
    for gv, fn in sorted(mod.functions.items(), key=lambda item: item[0].name_hint):
        index = 0
        for node in post_order(fn):
            if is_primitive(node):
                out.append((f"@{gv.name_hint}:{index}", node))
                index += 1
    return out


class MixedRuntime:
    """A typed, optimised module run by the interpreter's machine with native kernels."""

    def __init__(self, mod: IRModule, kernels: PrimitiveKernels, max_depth: int | None = None):
        self.mod = mod
        self.kernels = kernels
        self.interpreter = Interpreter(mod, max_depth=max_depth, primitive=kernels.hook)

    def run(self, entry: str, args: list[Any]) -> Any:
        return self.interpreter.apply(self.interpreter.global_closure(entry), args)


__all__ = ["MixedRuntime", "PrimitiveKernels"]
