"""`Library`: what `rl.build` returns and `rl.runtime.load_module` loads.

`lib(*args)` runs the entry function (`lib["name"](*args)` any function the library
can run: the entry of a graph plan, every global in mixed mode). Arguments are checked
against the entry's parameter types before any native code runs (`InputError`, one
line, as the interpreter's executor says it). `lib.fallback_ops` lists the ops that run
with their NumPy kernels; `get_source("ll" | "asm")` gives the kernels' LLVM IR or
assembly; `export_library(path)` writes the one-file library (`library_file.py`).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...ir.types import FuncType, TupleType, Type
from ..interpreter.executor import InputError, convert_argument
from .graph_runtime import GraphRuntime
from .kernels import flatten
from .mixed import MixedRuntime


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
    """A built program: a graph plan (`graph`) or a mixed-mode module (`mixed`), with
    its kernels."""

    def __init__(self, *, entry: str, graph: GraphRuntime | None = None,
                 mixed: MixedRuntime | None = None, fallback_ops: set[str] | None = None,
                 modules: list[Any] | None = None, export: Callable[[str], None] | None = None,
                 kernel_names: list[str] | None = None):
        assert (graph is None) != (mixed is None)
        self.entry = entry
        self.graph = graph
        self.mixed = mixed
        self._fallback_ops = set(fallback_ops or ())
        self.modules = list(modules or [])       # the core's compiled kernel modules
        self._export = export
        self._kernel_names = list(kernel_names or [])

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
    def mode(self) -> str:
        """"graph" (a plan of kernels) or "mixed" (the interpreter's machine calls them)."""
        return "graph" if self.graph is not None else "mixed"

    def entry_params(self, name: str | None = None) -> list[tuple[str, Type | None]]:
        """(name, type) of the parameters of `@name` (default: the entry)."""
        name = name or self.entry
        if self.graph is not None and name == self.entry:
            return list(self.graph.plan.params)
        assert self.mixed is not None
        fn = self.mixed.mod[name]
        ft = self.mixed.mod.get_global_var(name).checked_type
        types = ft.arg_types if isinstance(ft, FuncType) else [None] * len(fn.params)
        return [(p.name_hint, t) for p, t in zip(fn.params, types)]

    def result_type(self) -> Type | None:
        if self.graph is not None:
            return self.graph.plan.result_type
        assert self.mixed is not None
        ft = self.mixed.mod.get_global_var(self.entry).checked_type
        return ft.ret_type if isinstance(ft, FuncType) else None

    def get_source(self, fmt: str = "ll") -> str:
        """The LLVM IR (`"ll"`) or assembly (`"asm"`, `"s"`) of the native kernels."""
        from .kernels import module_source
        fmt = {"s": "asm", "llvm": "ll"}.get(fmt, fmt)
        if fmt not in ("ll", "asm"):
            raise ValueError(f"get_source: unknown format {fmt!r} (expected 'll' or 'asm')")
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
        return LibraryFunction(self, name)

    def __call__(self, *args: Any) -> Any:
        return self._call(self.entry, args)

    def check_arguments(self, name: str, args: tuple | list) -> list[Any]:
        params = self.entry_params(name)
        if len(args) != len(params):
            names = ", ".join("%" + n for n, _ in params)
            raise InputError(f"@{name} takes {len(params)} argument(s) ({names}), "
                             f"got {len(args)}")
        return [convert_argument(a, t, f"argument %{n} of @{name}")
                for a, (n, t) in zip(args, params)]

    def _call(self, name: str, args: tuple | list) -> Any:
        values = self.check_arguments(name, args)
        if self.graph is not None:
            return self.graph.run(flatten(tuple(values)))
        assert self.mixed is not None
        return self.mixed.run(name, values)

    def __repr__(self) -> str:
        return (f"<relaylang library @{self.entry}: {self.mode} mode, "
                f"{len(self.kernel_names)} native kernel(s), fallback ops: "
                f"{', '.join(self.fallback_ops) or 'none'}>")


def num_leaves(ty: Type | None) -> int:
    """Tensors in a result of type `ty` (tuples flattened)."""
    if isinstance(ty, TupleType):
        return sum(num_leaves(f) for f in ty.fields)
    return 1
