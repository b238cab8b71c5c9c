"""Steps of an execution plan run by Python code through a ctypes callback.

Two kinds of step call code the compiler did not generate:

* an external function (`call_dps_packed(..., func="env.linear")` or an op made by
  `rl.register_extern_op`), alone in its primitive function (FuseOps leaves opaque ops
  alone): the callee writes the step's output buffer in place (destination-passing
  style); no tensor is copied;
* a partitioned function of a BYOC target (`Compiler="blas"`), run by the callable its
  codegen returned (`backend/byoc/runner.py`): its result is copied into the step's
  output buffers (the callable makes its own arrays).

Either is an `ExternCall`: to the graph runtime and the step table (`native_pool`) it is
a native kernel with the kernels' ABI `i32 entry(i8** args, i64 begin, i64 end)`, whose
entry is a `ctypes.CFUNCTYPE` trampoline. Native code (`run_steps`, `run_graph`) calls it
like any kernel, in order with its neighbours, in the same one ctypes call; the
trampoline (holding the GIL again) reads the argument pointers, wraps each as a NumPy
array of the step's static shape and dtype (`np.frombuffer` over the memory: a view, not
a copy; views are kept per address, so a step whose buffers do not move makes them once),
runs the Python code and returns 0, or a nonzero status after keeping the exception,
which `_fail` raises for the step (an `InterpreterError` at the call's span, as a
failing kernel's). Inputs are read-only views. The trampoline object lives as long as
the `ExternCall`, which the library's runtime holds (its `runners`).

A step is never split over the native pool (its extent is 1 and it is not parallel), so
the callback always runs on the thread that called into native code.
"""
from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...ir.dtype import CARRIED
from ...ir.expr import Call, Function, Op, Var
from ...ir.types import TensorType, Type, tuple_leaves
from .kernels import NativeCall
from .memory import count

ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
                         ctypes.c_int64)
FAILED = 1          # the trampoline's status when the Python code raised


class _Entry:
    """What the step table reads of a kernel: `address` (the trampoline's) and the
    Python-side `run_range_status` (used where there is no native step runner)."""

    def __init__(self, owner: ExternCall):
        self.trampoline = ENTRY(owner._trampoline)
        self.address = ctypes.cast(self.trampoline, ctypes.c_void_p).value or 0
        self.parallel_extent = 1
        self.params = owner.params
        self.num_inputs = owner.num_inputs
        self.info = None
        self._owner = owner

    def run_range_status(self, ptrs: Any, begin: int, end: int) -> int:
        return self._owner._trampoline(ptrs, begin, end)


class ExternCall(NativeCall):
    """A plan step run by `body(inputs, outputs)` (NumPy arrays over the step's buffers;
    see the module docstring). `params`: (shape, dtype) of each input then each output."""

    __slots__ = ("_error", "_views", "body", "failed", "num_inputs", "target", "trampoline")

    def __init__(self, name: str, params: Sequence[tuple[tuple[int, ...], str]],
                 num_inputs: int, body: Callable[[list[np.ndarray], list[np.ndarray]], Any],
                 result_type: Type | None = None, ops: Sequence[str] = (), span: Any = None,
                 target: str = ""):
        self.name = name
        self.result_type = result_type
        self.ops = list(ops)
        self.span = span
        self.target = target             # "" for an external function, else the BYOC target
        self.body = body
        self.params = [(tuple(int(d) for d in s), str(d)) for s, d in params]
        self.num_inputs = num_inputs
        self._views: list[dict[int, np.ndarray]] = [{} for _ in self.params]
        self._error: BaseException | None = None
        self.failed = False          # an error is kept for `_fail`
        self.kernel = _Entry(self)
        self.trampoline = self.kernel.trampoline
        self.extent = 1
        self.nbytes = sum(count(s) * _dtype(d).itemsize for s, d in self.params)
        self.parallel = False
        self.python_parallel = False
        self.ranges_per_thread = 0
        self.pointer_type = ctypes.c_void_p * max(1, len(self.params))
        self.outputs = [(s, d, count(s) <= 1) for s, d in self.params[num_inputs:]]

    def __repr__(self) -> str:
        return f"<ExternCall {self.name}>"

    def _array(self, position: int, address: int | None) -> np.ndarray:
        """The array over `address` for parameter `position` (made once per address)."""
        views = self._views[position]
        a = views.get(address or 0)
        if a is None:
            shape, dtype = self.params[position]
            dt = _dtype(dtype)
            n = count(shape)
            if n == 0 or not address:
                a = np.zeros(shape, dt)
            else:
                buf = (ctypes.c_char * (n * dt.itemsize)).from_address(address)
                a = np.frombuffer(buf, dtype=dt).reshape(shape)
            if position < self.num_inputs:
                a.flags.writeable = False
            if len(views) > 64:          # buffers that move each call: keep a few
                views.clear()
            views[address or 0] = a
        return a

    def _trampoline(self, args: Any, begin: int, end: int) -> int:
        try:
            arrays = [self._array(i, args[i]) for i in range(len(self.params))]
            self.body(arrays[:self.num_inputs], arrays[self.num_inputs:])
            return 0
        except BaseException as e:  # noqa: BLE001 -- raised again by _fail, for the step
            self._error, self.failed = e, True
            return FAILED

    def _fail(self, status: int) -> None:
        from ..byoc.runner import ExternalFunctionError
        from ..interpreter.machine import InterpreterError
        error, self._error, self.failed = self._error, None, False
        if isinstance(error, InterpreterError):
            raise error
        if isinstance(error, ExternalFunctionError):
            raise InterpreterError(error.message, error.span) from error.__cause__
        if error is not None and not isinstance(error, Exception):
            raise error                  # KeyboardInterrupt, SystemExit: as they are
        what = ", ".join(self.ops) if self.ops else self.name
        detail = f"{type(error).__name__}: {error}" if error is not None else \
            f"status {status}"
        raise InterpreterError(f"{what} failed: {detail}", self.span) from error


def _dtype(name: str) -> np.dtype:
    if name in CARRIED:
        from ...op.numpy_support import carrier_dtype
        return carrier_dtype(name)
    return np.dtype(name)


# ---------------------------------------------------------------- external functions

def extern_target(fn: Function) -> tuple[str, Call] | None:
    """(function name, call) when the primitive function `fn` is one call of an external
    function (call_dps_packed or a registered extern op) on its parameters, each tensor
    of a NumPy dtype; else None (it runs as a NumPy fallback)."""
    from ...op.extern import dps_callee_name
    body = fn.body
    if type(body) is not Call or type(body.op) is not Op:
        return None
    name = dps_callee_name(body)
    if name is None:
        return None
    params = {id(p) for p in fn.params}
    if not all(type(a) is Var and id(a) in params for a in body.args):
        return None
    types = [p.checked_type for p in fn.params] + [body.checked_type]
    if not all(isinstance(t, TensorType) and t.dtype not in CARRIED and
               all(type(d) is int for d in t.shape) for t in types):
        return None
    return name, body


def dps_call(fn: Function, name: str | None = None) -> ExternCall | None:
    """The step running the external function that `fn` calls, writing its output in
    place (None when `fn` is not such a function: `extern_target`)."""
    from ...op.extern import dps_callee
    found = extern_target(fn)
    if found is None:
        return None
    callee_name, call = found
    index = {id(p): i for i, p in enumerate(fn.params)}
    order = [index[id(a)] for a in call.args]
    op_name = call.op.name
    out_type = call.checked_type

    def body(inputs: list[np.ndarray], outputs: list[np.ndarray]) -> None:
        from ...op.extern.numpy_kernels import ExternalCallError
        func = dps_callee(call)          # looked up per call, as the interpreter does
        out = outputs[0]
        try:
            result = func(*[inputs[i] for i in order], out)
        except Exception as e:
            raise ExternalCallError(f"external function {callee_name} failed: "
                                    f"{type(e).__name__}: {e}") from e
        if result is not None and result is not out:
            got = np.asarray(result)
            if got.shape != out.shape:
                raise ExternalCallError(f"external function {callee_name} returned shape "
                                        f"{list(got.shape)}, expected {list(out.shape)}")
            out[...] = got

    params = [(tuple(p.checked_type.shape), p.checked_type.dtype) for p in fn.params]
    params.append((tuple(out_type.shape), out_type.dtype))
    return ExternCall(name or f"extern_{callee_name.replace('.', '_')}", params,
                      len(fn.params), body, out_type, [op_name], call.span or fn.span)


# ---------------------------------------------------------------- BYOC functions

def codegen_call(ext: Any, span: Any = None) -> ExternCall:
    """The step running a partitioned function by its codegen's callable (`ext`: a
    `byoc.runner.ExternalFunction`): its result copied into the step's outputs."""
    fn = ext.function
    inputs = [t for p in fn.params for t in tuple_leaves(p.checked_type)]
    params = [(tuple(t.shape), t.dtype) for t in inputs]
    params += [(tuple(t.shape), t.dtype) for t in ext.result_leaves]

    def body(ins: list[np.ndarray], outs: list[np.ndarray]) -> None:
        for out, leaf in zip(outs, ext.call_arrays(ins)):
            np.copyto(out, leaf, casting="unsafe")

    return ExternCall(ext.symbol, params, len(inputs), body, ext.result_type,
                      [f"@{ext.symbol}"], ext.span or span, target=ext.target)


def program_extern(fn: Function) -> ExternCall | None:
    """What a native program calls for the primitive function `fn` through a callback
    (`compile_program(externs=...)`): a BYOC partitioned function's codegen step (its
    codegen run now; None without one), an external function's step, else None."""
    from ..byoc.runner import compiler_of, external_function
    if compiler_of(fn) is not None:
        attrs = fn.attrs
        symbol = str(attrs.get("global_symbol") or "") if attrs is not None else ""
        ext = external_function(fn, symbol or "external")
        return codegen_call(ext) if ext is not None else None
    return dps_call(fn)
