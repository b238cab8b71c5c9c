"""`Library`: what `rl.build` returns and `rl.runtime.load_module` loads.

A library has one of three forms (`lib.mode`): "graph" (a plan of kernels for a dataflow
`@main`), "program" (first-order control flow compiled to native functions by the
core's `llvm.control.compile_program`, run by `ProgramRuntime`), or "mixed" (the
interpreter's machine calling native kernels; `lib.mixed_reason` says why the program
could not be compiled whole).

`lib(*args)` runs the entry function (`lib["name"](*args)` any function the library
can run: the entry of a graph plan, every compiled global of a program (those
reachable from the entry), every global in mixed mode). Arguments are checked
against the entry's parameter types before any native code runs (`InputError`, one
line, as the interpreter's executor says it). `lib.fallback_ops` lists the ops that run
with their NumPy kernels; `get_source("ll" | "asm")` gives the kernels' LLVM IR or
assembly; `export_library(path)` writes the one-file library (`library_file.py`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.types import FuncType, TensorType, TupleType, Type
from ..interpreter.executor import InputError, convert_argument
from .graph_runtime import NOT_FAST, GraphRuntime
from .kernels import flatten
from .mixed import MixedRuntime


class ProgramFunction:
    """What a program library knows of one compiled global: its parameters (name,
    type), its result type, and where to blame a native stack overflow met when calling
    it (`overflow`: the callee's name and the span of a recursive call that is not a
    self tail call, found at build)."""

    __slots__ = ("overflow", "params", "result_type", "span")

    def __init__(self, params: list[tuple[str, Type | None]], result_type: Type | None,
                 span: Any = None, overflow: tuple[str, Any] | None = None):
        self.params = params
        self.result_type = result_type
        self.span = span
        self.overflow = overflow

    def to_json(self) -> dict[str, Any]:
        from .plan import type_to_json
        return {"params": [[n, type_to_json(t)] for n, t in self.params],
                "result": type_to_json(self.result_type), "span": _span_json(self.span),
                "overflow": None if self.overflow is None else
                [self.overflow[0], _span_json(self.overflow[1])]}

    @staticmethod
    def from_json(d: dict[str, Any]) -> ProgramFunction:
        from .plan import type_from_json
        overflow = d.get("overflow")
        return ProgramFunction([(str(n), type_from_json(t)) for n, t in d["params"]],
                               type_from_json(d["result"]), _span_from_json(d.get("span")),
                               None if overflow is None else
                               (str(overflow[0]), _span_from_json(overflow[1])))


def _span_json(span: Any) -> Any:
    return None if span is None else list(span)


def _span_from_json(value: Any) -> Any:
    from ...ir.span import Span
    if not value:
        return None
    name, line, column, end_line, end_column = value
    return Span(str(name), int(line), int(column), int(end_line), int(end_column))


class ProgramRuntime:
    """A NativeProgram (`relaylang.backend.llvm.control`) with what the library needs to
    call it like the interpreter: parameter names and types, and its failures turned
    into the interpreter's errors. `module`, the optimised module (only in the process
    that built it), lets a kernel failure be located exactly: the call runs again in
    mixed mode (programs are pure), where the failing primitive function reports
    itself as the interpreter does."""

    def __init__(self, program: Any, functions: dict[str, ProgramFunction],
                 module: Any = None, cache: bool = True):
        self.program = program
        self.functions = functions
        self.module = module
        self.cache = cache
        self._mixed: MixedRuntime | None = None

    def run(self, name: str, values: list[Any]) -> Any:
        from ..interpreter.machine import RecursionTooDeep
        from ..llvm.control import NativeProgramError
        lend_pool(self.program)
        try:
            return self.program.call(name, *values)
        except RecursionTooDeep as e:
            raise self._overflow(name) from e
        except NativeProgramError as e:
            raise self._failure(name, values, e) from e

    def _overflow(self, name: str) -> Exception:
        from ..interpreter.machine import RecursionTooDeep
        from ..llvm.control import runtime as control_runtime
        info = self.functions[name]
        callee, span = info.overflow or (name, info.span)
        size = control_runtime.BIG_STACK >> 20
        return RecursionTooDeep(
            f"recursion too deep: the native stack ({size} MiB) ran out with calls "
            f"pending in @{callee} (an endless recursion?)", span)

    def _failure(self, name: str, values: list[Any], error: Exception) -> Exception:
        import re

        from ..interpreter.machine import InterpreterError
        from ..llvm import jit
        from ..llvm.control import STATUS_OOM
        found = re.search(r"status (\d+)", str(error))
        status = int(found.group(1)) if found else -1
        if status == STATUS_OOM:
            return MemoryError(f"@{name} ran out of memory natively")
        if self.module is not None:
            try:
                self._mixed_runtime().run(name, values)
            except InterpreterError as located:
                return located
            except Exception:  # noqa: BLE001, S110 - then the native message below
                pass
        cause = jit.status_error(status, name) if status > 0 else error
        return InterpreterError(f"@{name} failed: {cause}", self.functions[name].span)

    def _mixed_runtime(self) -> MixedRuntime:
        if self._mixed is None:
            from .mixed import PrimitiveKernels
            kernels = PrimitiveKernels(cache=self.cache)
            kernels.prebuild(self.module)
            self._mixed = MixedRuntime(self.module, kernels)
        return self._mixed


def lend_pool(program: Any) -> None:
    """Point a native program's large kernels at the process's native pool (sized by
    `RELAY_NUM_THREADS` now; none off Linux x86-64: they run inline)."""
    from .native_pool import get_native_pool
    pool = get_native_pool()
    if pool is None or pool.size < 2:
        program.set_parallel(0, 0)
    elif getattr(program, "_lent_to", None) is not pool:
        program.set_parallel(pool.address, pool.run_ranges_address, keep=pool)
        program._lent_to = pool


class LibraryFunction:
    """`lib["name"]`: a callable running one function of the library."""

    def __init__(self, library: Library, name: str):
        self.library = library
        self.name = name

    def __call__(self, *args: Any) -> Any:
        return self.library._call(self.name, args)

    def __repr__(self) -> str:
        return f"<relaylang library function @{self.name}>"


class Library:
    """A built program: a graph plan (`graph`), a native program (`program`) or a
    mixed-mode module (`mixed`), with its kernels."""

    def __init__(self, *, entry: str, graph: GraphRuntime | None = None,
                 mixed: MixedRuntime | None = None, program: ProgramRuntime | None = None,
                 fallback_ops: set[str] | None = None,
                 modules: list[Any] | None = None, export: Callable[[str], None] | None = None,
                 kernel_names: list[str] | None = None, mixed_reason: str = ""):
        assert sum(x is not None for x in (graph, mixed, program)) == 1
        self.entry = entry
        self.graph = graph
        self.mixed = mixed
        self.program = program
        # why a program that is not a dataflow graph was not compiled whole (mixed mode)
        self.mixed_reason = mixed_reason if mixed is not None else ""
        self._fallback_ops = set(fallback_ops or ())
        self.modules = list(modules or [])       # the core's compiled kernel modules
        self._export = export
        self._kernel_names = list(kernel_names or [])
        self._fast_params: list[tuple[tuple[int, ...], Any]] | None = None
        # `rl.build(byoc=...)`: the partitioning passes' notes (a pattern that matched
        # nothing), as Diagnostics
        self.notes: list[Any] = []

    @property
    def external_steps(self) -> list[tuple[str, str]]:
        """(name, kind) of each step run by Python code through a ctypes callback
        (`extern.py`): kind "dps" for an external function, else the BYOC target; in a
        native program, each external function its code calls. The callbacks live as
        long as the library (its runtime holds them). Empty in mixed mode."""
        if self.program is not None:        # a native program's calls of them
            return [(call.name, call.target or "dps")
                    for _, _, call in self.program.program.externs]
        if self.graph is None:
            return []
        return [(s.kernel, s.extern) for s in self.graph.plan.steps if s.extern]

    # ------------------------------------------------------------ what it holds
    @property
    def fallback_ops(self) -> list[str]:
        """The ops that run with their NumPy kernels (sorted); in mixed mode this grows as
        functions with new shapes are met."""
        ops = set(self._fallback_ops)
        if self.mixed is not None:
            ops |= self.mixed.kernels.fallback_ops
        return sorted(ops)

    @property
    def fallback_reasons(self) -> dict[str, str]:
        """For fallback ops that do have a lowering but were refused here (a dtype, an
        attribute, a construct the core does not lower): op -> the core's message."""
        from .kernels import Fallback
        runners: list[Any] = []
        if self.graph is not None:
            runners = self.graph.runners
        elif self.mixed is not None:
            runners = list(self.mixed.kernels.runners())
        reasons: dict[str, str] = {}
        for r in runners:
            if isinstance(r, Fallback) and r.reason and "has no LLVM lowering" not in r.reason:
                for op in r.ops:
                    reasons.setdefault(op, r.reason)
        return reasons

    @property
    def kernel_names(self) -> list[str]:
        """The native kernels (in mixed mode: so far, as shapes are met)."""
        if self.mixed is not None:
            return list(self.mixed.kernels.native_names)
        return list(self._kernel_names)

    @property
    def kernel_schedules(self) -> dict[str, tuple[str, dict[str, int]]]:
        """Per native kernel: (its knob key, the scheduling knobs its loops were made
        with) (backend/llvm/knobs.py); in mixed mode, of the kernels compiled so far. A
        native program's kernels are inlined into its functions: see its source's
        `; schedule` lines."""
        modules = list(self.modules)
        if self.mixed is not None:
            modules += [m for m in self.mixed.kernels.modules if m not in modules]
        out: dict[str, tuple[str, dict[str, int]]] = {}
        for m in modules:
            for info in getattr(m, "infos", ()):
                if info.knobs or info.knob_key:
                    out[info.name] = (info.knob_key, dict(info.knobs))
        return out

    @property
    def mode(self) -> str:
        """"graph" (a plan of kernels), "program" (native functions with their control
        flow) or "mixed" (the interpreter's machine calls the kernels)."""
        if self.graph is not None:
            return "graph"
        return "program" if self.program is not None else "mixed"

    def entry_params(self, name: str | None = None) -> list[tuple[str, Type | None]]:
        """(name, type) of the parameters of `@name` (default: the entry)."""
        name = name or self.entry
        if self.graph is not None and name == self.entry:
            return list(self.graph.plan.params)
        if self.program is not None:
            return list(self.program.functions[name].params)
        assert self.mixed is not None
        fn = self.mixed.mod[name]
        ft = self.mixed.mod.get_global_var(name).checked_type
        types = ft.arg_types if isinstance(ft, FuncType) else [None] * len(fn.params)
        return [(p.name_hint, t) for p, t in zip(fn.params, types)]

    def result_type(self) -> Type | None:
        if self.graph is not None:
            return self.graph.plan.result_type
        if self.program is not None:
            return self.program.functions[self.entry].result_type
        assert self.mixed is not None
        ft = self.mixed.mod.get_global_var(self.entry).checked_type
        return ft.ret_type if isinstance(ft, FuncType) else None

    def get_source(self, fmt: str = "ll") -> str:
        """The LLVM IR (`"ll"`) or assembly (`"asm"`, `"s"`) of the native kernels (of
        a program: its whole module, control code and kernels)."""
        from .kernels import module_source
        fmt = {"s": "asm", "llvm": "ll"}.get(fmt, fmt)
        if fmt not in ("ll", "asm"):
            raise ValueError(f"get_source: unknown format {fmt!r} (expected 'll' or 'asm')")
        if self.program is not None:
            return str(self.program.program.get_source(fmt))
        return "\n".join(module_source(m, fmt) for m in self.modules)

    def export_library(self, path: str) -> None:
        """Write this library to one file (`rl.runtime.load_module` reads it back)."""
        if self._export is None:
            raise ValueError("this library cannot be exported")
        self._export(str(path))

    # ------------------------------------------------------------ running
    def __getitem__(self, name: str) -> LibraryFunction:
        name = name.removeprefix("@")
        if self.graph is not None and name != self.entry:
            raise KeyError(f"the library has no function @{name} (it was built for "
                           f"@{self.entry})")
        if self.mixed is not None and name not in self.mixed.mod:
            raise KeyError(f"the library has no function @{name}")
        if self.program is not None and name not in self.program.functions:
            names = ", ".join("@" + n for n in sorted(self.program.functions))
            raise KeyError(f"the library has no function @{name} (compiled: {names})")
        return LibraryFunction(self, name)

    def __call__(self, *args: Any) -> Any:
        graph = self.graph
        if graph is not None:            # the one-native-call path (graph_runtime.call)
            result = graph.call(args)
            if result is not NOT_FAST:
                return result
        return self._call(self.entry, args, tried=True)

    def check_arguments(self, name: str, args: tuple | list) -> list[Any]:
        """The arguments converted and checked against @name's parameter types
        (`InputError` before any native code runs)."""
        params = self.entry_params(name)
        if len(args) != len(params):
            names = ", ".join("%" + n for n, _ in params)
            raise InputError(f"@{name} takes {len(params)} argument(s) ({names}), "
                             f"got {len(args)}")
        return [convert_argument(a, t, f"argument %{n} of @{name}")
                for a, (n, t) in zip(args, params)]

    def _call(self, name: str, args: tuple | list, tried: bool = False) -> Any:
        if self.graph is not None and name == self.entry:
            if not tried:       # `tried`: the one-native-call path said NOT_FAST already
                result = self.graph.call(args)
                if result is not NOT_FAST:
                    return result
            fast = self._fast_params
            if fast is None:
                fast = self._fast_params = _static_tensor_params(self.graph.plan.params)
            # the common case, checked in a few attribute reads: arrays of exactly the
            # entry's static shapes and dtypes (anything else: the full check below)
            if fast and len(args) == len(fast) and all(
                    type(a) is np.ndarray and a.shape == shape and a.dtype == dtype
                    for a, (shape, dtype) in zip(args, fast)):
                return self.graph.run(args)
        values = self.check_arguments(name, args)
        if self.graph is not None:
            return self.graph.run(flatten(tuple(values)))
        if self.program is not None:
            return self.program.run(name, values)
        assert self.mixed is not None
        return self.mixed.run(name, values)

    def __repr__(self) -> str:
        if self.program is not None:
            return (f"<relaylang library @{self.entry}: program mode, native functions: "
                    f"{', '.join('@' + n for n in self.kernel_names)}>")
        return (f"<relaylang library @{self.entry}: {self.mode} mode, "
                f"{len(self.kernel_names)} native kernel(s), fallback ops: "
                f"{', '.join(self.fallback_ops) or 'none'}>")


def _static_tensor_params(params: list[tuple[str, Type | None]]
                          ) -> list[tuple[tuple[int, ...], Any]]:
    """(shape, NumPy dtype) of each parameter when all are tensors of static shape with
    a NumPy dtype of their own, else [] (no fast argument check)."""
    out = []
    for _, ty in params:
        if not (isinstance(ty, TensorType) and all(type(d) is int for d in ty.shape)):
            return []
        if ty.dtype in CARRIED:  # bfloat16, ir/lowp.py's: structured carrier dtypes, the
            return []            # full check converts
        out.append((tuple(ty.shape), np.dtype(ty.dtype)))
    return out


def num_leaves(ty: Type | None) -> int:
    """Tensors in a result of type `ty` (tuples flattened)."""
    if isinstance(ty, TupleType):
        return sum(num_leaves(f) for f in ty.fields)
    return 1
