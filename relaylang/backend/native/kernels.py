"""Kernels for primitive functions: native ones from the core, else the NumPy fallback.

`lower(fn, name)` asks the core (`backend/llvm/lower.py`) for the loop IR of one
`Primitive=1` function; `compile_native(prims)` turns a batch into native `Kernel`s in
one LLVM module (`backend/llvm/jit.py`; with `parts=True`, as `rl.build` asks, a large
batch in several modules compiled in parallel by forked processes). An op without a lowering makes the core raise
`NoLowering`: that primitive function then runs with the NumPy kernels through the
interpreter (`Fallback`), and its ops are reported in `lib.fallback_ops`.
`NativeCall` adapts a `Kernel` to the executors: argument pointers, parallel split.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ir.expr import Call, Function, Op, Var
from ...ir.module import IRModule
from ...ir.traverse import post_order, rewrite
from ...ir.types import TensorType, TupleType, Type
from ..interpreter.machine import Interpreter
from ..interpreter.values import Closure
from ..llvm import jit as core_jit
from ..llvm import knobs as core_knobs
from ..llvm import lower as core_lower
from ..llvm.schedule import ranges_per_thread
from . import native_pool
from .memory import address, aligned_empty, as_aligned, count
from .threads import (  # noqa: F401  (the native pool's thresholds, re-exported)
    PARALLEL_MIN_BYTES,
    PARALLEL_MIN_WORK,
    PYTHON_POOL_MIN_BYTES,
    PYTHON_POOL_MIN_WORK,
    get_pool,
    worth_splitting,
)

NoLowering = core_lower.NoLowering


def is_primitive(fn: Any) -> bool:
    return type(fn) is Function and fn.attrs is not None and bool(fn.attrs.get("Primitive", 0))


def op_names(fn: Function) -> list[str]:
    """The ops a primitive function calls, sorted, each once."""
    return sorted({n.op.name for n in post_order(fn.body)
                   if type(n) is Call and type(n.op) is Op})


def kernel_name(fn: Function, index: int) -> str:
    """`fused_<ops>_<index>`: readable in the LLVM IR, unique in one library."""
    names = [n.op.name.replace(".", "_") for n in post_order(fn.body)
             if type(n) is Call and type(n.op) is Op]
    stem = "_".join(names[-3:]) if names else "copy"
    return f"fused_{stem[:48]}_{index}"


def function_key(fn: Function) -> str:
    """A structural key of a primitive function (its kernel in a library file): the
    knob key of its kernel without constant parameters (one format for both)."""
    return core_knobs.kernel_key(fn)


def is_static(ty: Type | None) -> bool:
    """Whether every dimension in `ty` (tensors, tuples of them) is a known int."""
    stack = [ty]
    while stack:
        t = stack.pop()
        if isinstance(t, TupleType):
            stack.extend(t.fields)
        elif not (isinstance(t, TensorType) and all(type(d) is int for d in t.shape)):
            return False
    return True


def is_static_function(fn: Function) -> bool:
    return all(is_static(p.checked_type) for p in fn.params) and is_static(fn.body.checked_type)


def lower(fn: Function, name: str, constant_params: frozenset[int] = frozenset()) -> Any:
    """The core's PrimFunc for `fn`, or the `NoLowering` it raised (an op without a
    lowering, or a dtype or construct the backend does not lower). `constant_params`:
    parameters bound to build-time constants (their packable stages become packers: a
    `PackedPrimFunc`)."""
    try:
        return core_lower.lower_primitive(fn, name=name, constant_params=constant_params)
    except NoLowering as refusal:
        return refusal


def is_refusal(lowered: Any) -> bool:
    return isinstance(lowered, NoLowering)


def compile_native(prims: Sequence[Any], cache: bool = True, timer: Any = None,
                   parts: bool = False) -> Any:
    """The core's CompiledModule of the PrimFuncs (one LLVM module): `.kernels` by name,
    `.object_code`, `.infos`, `get_source(fmt)`. With `parts`, a list of them (a large
    set of kernels is compiled in parallel parts: `jit.compile_modules`). A `timer`
    (`relay build --time`) gets the core's steps: "kernel cache", LLVM IR generation
    (counted in "lowering"), "LLVM optimisation" (O3), "codegen" (object code, loaded),
    "compile workers (wait)" (parts compiled by other processes)."""
    if parts:
        return core_jit.compile_modules(list(prims), cache=cache, timer=timer)
    return core_jit.compile_module(list(prims), cache=cache, timer=timer)


def load_native(object_code: bytes, infos: list[dict[str, Any]]) -> Any:
    """A CompiledModule from the object code of an exported library (no LLVM passes)."""
    return core_jit.load_object(object_code, [core_jit.KernelInfo.from_json(i) for i in infos])


def module_source(module: Any, fmt: str) -> str:
    return module.get_source(fmt)


def host_target() -> dict[str, str]:
    """The CPU name and features a library compiled here needs, and the versions."""
    import llvmlite
    import llvmlite.binding as llvm
    return {"triple": llvm.get_default_triple(), "cpu": core_jit.host_cpu(),
            "features": core_jit.host_features(), "llvmlite": llvmlite.__version__,
            "compiler": core_jit.COMPILER_VERSION}


def specialise(fn: Function, types: Sequence[Type]) -> Function:
    """`fn` with its parameters of the given (static) types, type-checked anew: a kernel
    for the concrete shapes of one call of a function with `?` dimensions."""
    from ...typing import infer_types
    new_params = tuple(Var(p.name_hint, t) for p, t in zip(fn.params, types))
    mapping = {id(p): q for p, q in zip(fn.params, new_params)}

    def swap(old: Any, rebuilt: Any) -> Any:
        return mapping.get(id(old)) if type(old) is Var else None

    body = rewrite(fn.body, swap)
    fresh = Function(new_params, body, None, (), fn.attrs, span=fn.span)
    typed = infer_types(IRModule.from_expr(fresh))
    result = typed["main"]
    assert isinstance(result, Function)
    return result


def value_type(value: Any) -> Type | None:
    """The static type of a run-time tensor or tuple of tensors, else None."""
    if isinstance(value, np.ndarray):
        return TensorType(tuple(int(d) for d in value.shape), str(value.dtype))
    if isinstance(value, tuple):
        fields = [value_type(v) for v in value]
        if any(f is None for f in fields):
            return None
        return TupleType(tuple(fields))
    return None


def flatten(value: Any) -> list[np.ndarray]:
    """The tensors of a value (tuples walked in order); NumPy scalars become 0-d arrays."""
    return [v if type(v) is np.ndarray else np.asarray(v)
            for v in core_lower.flatten_tuples(value)]


def aligned_value(value: Any) -> Any:
    """A tensor (or tuple of them) in C-contiguous memory aligned to its element size (a
    copy only where needed); other values as they are."""
    if isinstance(value, np.ndarray):
        return as_aligned(value)
    if isinstance(value, tuple):
        return tuple(aligned_value(v) for v in value)
    return value


def missing_ops(fn: Function, refusal: Any = None) -> list[str]:
    """The ops of `fn` to blame for its fallback: those without an LLVM lowering, and the
    op the core refused (a dtype or attribute it does not lower); all of them when none
    can be named."""
    from ...op.registry import implementation
    names = op_names(fn)
    missing = {n for n in names if implementation(n, "llvm") is None}
    if refusal is not None and getattr(refusal, "op_name", None) in names:
        missing.add(refusal.op_name)
    return sorted(missing) or names


class Fallback:
    """A primitive function run with the NumPy kernels (the interpreter's machine).
    `ops`: the ops to blame (`missing_ops`); `reason`: the core's refusal, if known."""

    def __init__(self, fn: Function, refusal: Any = None):
        self.function = fn
        self.ops = missing_ops(fn, refusal)
        self.reason = str(refusal) if refusal is not None else ""
        self._interpreter = Interpreter(IRModule())
        self._closure = Closure(fn, None, self._interpreter)

    def __call__(self, args: Sequence[Any]) -> Any:
        return self._interpreter.apply(self._closure, list(args))


def prim_worth_splitting(prim: Any) -> bool:
    """Whether calls of the PrimFunc `prim` should run over the native pool (the rule
    `NativeCall.parallel` applies to a compiled kernel). Used for the kernels of native
    programs (`compile_program(parallel=...)`)."""
    nbytes = sum(int(np.prod(b.shape, dtype=np.int64)) * np.dtype(b.dtype).itemsize
                 for b in prim.params)
    return worth_splitting(int(prim.parallel_extent or 1), nbytes, int(prim.work))


def pointer_array(arrays: Sequence[np.ndarray]) -> Any:
    return (ctypes.c_void_p * len(arrays))(*[a.ctypes.data for a in arrays])


class NativeCall:
    """A native kernel with what its callers need: its parameters' types, and a run over
    an argument pointer array that splits the parallel loop over the pool when the kernel
    is large enough."""

    __slots__ = ("extent", "kernel", "name", "nbytes", "ops", "outputs", "parallel", "params",
                 "pointer_type", "python_parallel", "ranges_per_thread", "result_type", "span")

    def __init__(self, name: str, kernel: Any, result_type: Type | None = None,
                 ops: Sequence[str] = (), span: Any = None):
        self.name = name
        self.result_type = result_type
        self.ops = list(ops)          # for messages: what failed
        self.span = span
        self.kernel = kernel
        self.params = [(tuple(int(d) for d in shape), str(dtype))
                       for shape, dtype in kernel.params]
        self.extent = int(kernel.parallel_extent)       # 0: nothing to run
        self.nbytes = sum(int(np.prod(s, dtype=np.int64)) * np.dtype(d).itemsize
                          for s, d in self.params)
        info = getattr(kernel, "info", None)
        work = int(getattr(info, "work", 0) or 0)
        # split over the pool when large enough, unless its knob keeps it on the caller
        self.parallel = worth_splitting(self.extent, self.nbytes, work) \
            and core_knobs.knob_of(info, "schedule.threads", 0) != 1
        self.python_parallel = worth_splitting(self.extent, self.nbytes, work,
                                               PYTHON_POOL_MIN_BYTES, PYTHON_POOL_MIN_WORK)
        # ranges per thread of a split over the native pool (0: the pool's default): a
        # kernel repeating a prologue in every call says how many (schedule.py)
        self.ranges_per_thread = ranges_per_thread(info)
        self.pointer_type = ctypes.c_void_p * max(1, len(self.params))
        n_in = int(getattr(kernel, "num_inputs", len(self.params)))
        self.outputs = [(s, d, count(s) <= 1) for s, d in self.params[n_in:]]

    def run(self, ptrs: Any) -> None:
        """Run over argument pointers (inputs then outputs, C-contiguous, aligned). A
        nonzero kernel status (integer division by zero) is raised once the whole range
        ran, as the interpreter reports it: `InterpreterError("<ops> failed: ...")`."""
        status = self.status(ptrs)
        if status:
            self._fail(status)

    def status(self, ptrs: Any) -> int:
        """Run over argument pointers; the kernel's status (the OR over the split's
        ranges), 0 on success. A parallel kernel goes through the native pool, or the
        Python pool where there is none (only when it is large enough to pay for that
        pool's slower dispatch)."""
        if self.parallel:
            pool = native_pool.get_native_pool()
            if pool is not None:
                return pool.run(self.kernel.address, ptrs, self.extent, self.ranges_per_thread)
            if self.python_parallel:
                python_pool = get_pool()
                if python_pool.size > 1:
                    run_range = self.kernel.run_range_status
                    statuses: list[int] = []
                    python_pool.run(lambda begin, end: statuses.append(
                        run_range(ptrs, begin, end)), self.extent)
                    status = 0
                    for s in statuses:
                        status |= s
                    return status
        return self.kernel.run_range_status(ptrs, 0, self.extent)

    def _fail(self, status: int) -> None:
        from ..interpreter.machine import InterpreterError
        error = core_jit.status_error(status, self.name)
        what = ", ".join(self.ops) if self.ops else f"kernel {self.name}"
        raise InterpreterError(f"{what} failed: {error}", self.span) from error

    def call(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Run on input arrays (copied only when not C-contiguous or misaligned for their
        element); fresh outputs (64-byte aligned when larger than one element)."""
        n_in = len(inputs)
        ptrs = self.pointer_type()
        keep = []
        for i, a in enumerate(inputs):
            at = address(a)
            if a.ndim and not (a.flags.aligned and a.flags.c_contiguous) and a.size > 1:
                a = as_aligned(a)
                keep.append(a)
                at = address(a)
            ptrs[i] = at
        outputs = [np.empty(s, d) if small else aligned_empty(s, d)
                   for s, d, small in self.outputs]
        for i, a in enumerate(outputs, n_in):
            ptrs[i] = address(a)
        self.run(ptrs)
        return outputs
