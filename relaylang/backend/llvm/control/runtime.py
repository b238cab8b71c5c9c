"""Running compiled globals: argument validation, the native call (retried on a big
stack), results as numpy arrays; export and load."""
from __future__ import annotations

import ctypes
import threading
from dataclasses import dataclass
from typing import Any

from .analysis import _FnInfo, _rebuild, _structure, _type_of

# the module globals through which a caller lends its worker pool to large kernels
POOL_GLOBAL = "relay_parallel_pool"
RUN_GLOBAL = "relay_parallel_run"

STATUS_STACK = 0x7FFF0001
STATUS_OOM = 0x7FFF0002
CALLER_STACK_BUDGET = 256 << 10    # stack the first attempt may use in the calling thread
BIG_STACK = 512 << 20              # the retry thread's stack (2M frames of 256 bytes)
BIG_STACK_MARGIN = 4 << 20         # of it kept for Python/ctypes frames


class NativeProgramError(RuntimeError):
    """A native program failed at run time (a kernel's status, out of memory)."""


class ProgramCallError(ValueError):
    """Wrong arguments to a NativeProgram function (count, structure, shape, dtype)."""



# ---------------------------------------------------------------- running

_ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64)
_STACK_LOCK = threading.Lock()


def _on_big_stack(run: Any) -> Any:
    """`run()` on a fresh thread with a BIG_STACK-byte stack; its result or exception."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = run()
        except BaseException as err:  # noqa: BLE001  (re-raised in the caller)
            box["error"] = err
    with _STACK_LOCK:
        old = threading.stack_size(BIG_STACK)
        try:
            t = threading.Thread(target=target, name="relay-native", daemon=True)
            t.start()
        finally:
            threading.stack_size(old)
    t.join()
    if "error" in box:
        raise box["error"]
    return box["value"]


@dataclass(frozen=True)
class Signature:
    """What calling a compiled global needs besides code (JSON-able, for export):
    its entry symbol, per parameter the type's structure (nested tuples of leaf
    indices) and leaves (shape, dtype), and the result's structure and leaves."""
    name: str
    entry_symbol: str
    params: tuple[tuple[Any, tuple[tuple[tuple[int, ...], str], ...]], ...]
    results: tuple[tuple[tuple[int, ...], str], ...]
    ret_structure: Any
    where: str = ""

    @staticmethod
    def of(info: _FnInfo) -> Signature:
        params = []
        for p, leaves in zip(info.fn.params, info.param_leaves):
            params.append((_structure(_type_of(p), [0]), tuple(leaves)))
        span = info.fn.span
        return Signature(info.name, info.entry_symbol, tuple(params), tuple(info.ret_leaves),
                         info.ret_structure, str(span) if span else "")

    def to_json(self) -> dict:
        return {"name": self.name, "entry_symbol": self.entry_symbol,
                "params": [[_structure_json(st), [[list(sh), d] for sh, d in lv]]
                           for st, lv in self.params],
                "results": [[list(sh), d] for sh, d in self.results],
                "ret_structure": _structure_json(self.ret_structure), "where": self.where}

    @staticmethod
    def from_json(d: dict) -> Signature:
        def leaves(xs: list) -> tuple:
            return tuple((tuple(int(v) for v in sh), str(dt)) for sh, dt in xs)
        return Signature(str(d["name"]), str(d["entry_symbol"]),
                         tuple((_structure_from_json(st), leaves(lv)) for st, lv in d["params"]),
                         leaves(d["results"]), _structure_from_json(d["ret_structure"]),
                         str(d.get("where", "")))


def _structure_json(st: Any) -> Any:
    """Nested tuples of ints -> nested lists (iterative)."""
    if isinstance(st, int):
        return st
    return _rebuild_as(st, list)


def _structure_from_json(st: Any) -> Any:
    if isinstance(st, int):
        return st
    return _rebuild_as(st, tuple)


def _rebuild_as(st: Any, kind: Any) -> Any:
    root: list[Any] = []
    stack: list[tuple[Any, list[Any], int]] = [(st, root, 0)]
    while stack:
        s, acc, i = stack.pop()
        if i == len(s):
            if stack:
                stack[-1][1].append(kind(acc))
            continue
        stack.append((s, acc, i + 1))
        x = s[i]
        if isinstance(x, int):
            acc.append(x)
        else:
            stack.append((x, [], 0))
    return kind(root)


class NativeFunction:
    """One compiled global: `f(*args)` validates, runs natively, returns numpy arrays."""

    def __init__(self, sig: Signature, address: int):
        self.signature = sig
        self.name = sig.name
        self.params = [list(leaves) for _, leaves in sig.params]
        self.results = list(sig.results)
        self.ret_structure = sig.ret_structure
        self.address = address
        self._fn = _ENTRY(address)
        self.needs_big_stack = False
        # raises the error an external function's callback kept, given the status
        self.on_failure: Any = None

    def _arg_leaves(self, k: int, value: Any, out: list[Any]) -> None:
        import numpy as np

        from ..jit import aligned_copy
        structure, leaves = self.signature.params[k]
        stack = [(value, structure, f"argument {k}")]
        while stack:
            v, st, where = stack.pop()
            if isinstance(st, tuple):
                if not isinstance(v, (tuple, list)) or len(v) != len(st):
                    raise ProgramCallError(f"@{self.name}: {where} must be a tuple of "
                                           f"{len(st)}")
                for i in reversed(range(len(st))):
                    stack.append((v[i], st[i], f"{where}.{i}"))
                continue
            shape, dtype = leaves[st]
            if isinstance(v, np.ndarray):
                a = v
            elif isinstance(v, np.generic):
                a = np.asarray(v)
            elif isinstance(v, bool) and dtype == "bool" or (
                    isinstance(v, int) and not isinstance(v, bool)
                    and dtype != "bool") or (isinstance(v, float) and dtype.startswith("float")):
                a = np.asarray(v, dtype=dtype)
            else:
                raise ProgramCallError(f"@{self.name}: {where} must be a {dtype}{list(shape)} "
                                       f"array, got {type(v).__name__}")
            if str(a.dtype) != dtype or tuple(a.shape) != shape:
                raise ProgramCallError(f"@{self.name}: {where} must be {dtype}{list(shape)}, "
                                       f"got {a.dtype}{list(a.shape)}")
            if not a.flags.c_contiguous or (a.size and not a.flags.aligned):
                a = aligned_copy(np.asarray(a, order="C"))
            out.append(a)

    def __call__(self, *args: Any) -> Any:
        from ..jit import aligned_empty, pointer_array
        if len(args) != len(self.params):
            raise ProgramCallError(f"@{self.name} takes {len(self.params)} arguments, "
                                   f"got {len(args)}")
        ins: list[Any] = []
        for k, a in enumerate(args):
            self._arg_leaves(k, a, ins)
        outs = [aligned_empty(s, d) for s, d in self.results]
        ptrs = pointer_array(outs + ins)
        self.run_pointers(ptrs)
        return _rebuild(self.ret_structure, outs)

    def run_pointers(self, ptrs: Any) -> None:
        """The native call on a `void*[]` of outputs then inputs (element-aligned,
        C-contiguous; no checks). Retries on a big stack; raises RecursionTooDeep when
        even that is used up, NativeProgramError for another non-zero status."""
        rc = STATUS_STACK
        if not self.needs_big_stack:
            rc = self._fn(ptrs, CALLER_STACK_BUDGET)
        if rc == STATUS_STACK:
            self.needs_big_stack = True
            rc = _on_big_stack(lambda: self._fn(ptrs, BIG_STACK - BIG_STACK_MARGIN))
        if rc == STATUS_STACK:
            from ...interpreter.machine import RecursionTooDeep
            where = f" (defined at {self.signature.where})" if self.signature.where else ""
            raise RecursionTooDeep(
                f"recursion too deep: @{self.name}{where} used up the native stack "
                f"({BIG_STACK >> 20} MiB)", None)
        if rc != 0 and self.on_failure is not None:
            self.on_failure(rc)
        if rc != 0:
            raise NativeProgramError(f"@{self.name} failed natively (status {rc}"
                                     f"{': out of memory' if rc == STATUS_OOM else ''})")


class NativeProgram:
    """The compiled globals of a program: `prog(*args)` runs @main, `prog.call(name,
    *args)` / `prog[name](*args)` any global; results are numpy arrays (tuples as
    tuples). `export()` -> (object code, JSON-able metadata); `load_program` loads it
    back without LLVM optimisation."""

    def __init__(self, compiled: Any, signatures: list[Signature],
                 externs: list[tuple[str, Any, Any]] = ()):
        self.compiled = compiled
        self.signatures = list(signatures)
        self._lent: list[Any] = []          # pools lent to the code (their memory stays)
        self.functions: dict[str, NativeFunction] = {}
        for sig in signatures:
            addr = compiled.engine.get_function_address(sig.entry_symbol)
            if not addr:
                raise RuntimeError(f"native entry of @{sig.name} not found")
            self.functions[sig.name] = NativeFunction(sig, addr)
        # (module global, primitive function, callback object) of each external
        # function the code calls (`compile_program(externs=...)`): the objects (and
        # their ctypes callbacks) live as long as the program, which holds their address
        self.externs = list(externs)
        for symbol, _, call in self.externs:
            at = compiled.engine.get_global_value_address(symbol)
            address = int(getattr(getattr(call, "kernel", None), "address", 0) or 0)
            if not at or not address:
                raise RuntimeError(f"external function slot {symbol} cannot be bound")
            ctypes.c_void_p.from_address(at).value = address
        if self.externs:
            for f in self.functions.values():
                f.on_failure = self._extern_failed

    def _extern_failed(self, status: int) -> None:
        """A non-zero status of a call: raise the error an external function kept
        (`_fail` of its callback object), if one did."""
        for _, _, call in self.externs:
            if getattr(call, "failed", False):
                call._fail(status)

    def set_parallel(self, pool_address: int, run_address: int, keep: Any = None) -> None:
        """Lend a worker pool to the program's large kernels (compiled with
        `compile_program(parallel=...)`): `pool_address` its memory, `run_address` its
        `pool_run_ranges(pool, entry, args, extent, ranges_per_thread) -> status` (0
        ranges per thread: the pool's own count); (0, 0): every kernel inline.
        `keep` (the pool object) is kept alive with the program, since the code holds
        its address."""
        pool = self.compiled.engine.get_global_value_address(POOL_GLOBAL)
        run = self.compiled.engine.get_global_value_address(RUN_GLOBAL)
        if not pool or not run:
            return                      # compiled without pooled calls
        if (pool_address == 0) != (run_address == 0):
            raise ValueError("set_parallel: give both addresses or neither")
        if keep is not None and all(k is not keep for k in self._lent):
            self._lent.append(keep)
        ctypes.c_void_p.from_address(run).value = run_address or None
        ctypes.c_void_p.from_address(pool).value = pool_address or None

    def __getitem__(self, name: str) -> NativeFunction:
        return self.functions[name]

    def __contains__(self, name: str) -> bool:
        return name in self.functions

    def call(self, name: str, *args: Any) -> Any:
        if name not in self.functions:
            raise KeyError(f"@{name} is not a compiled global ({sorted(self.functions)})")
        return self.functions[name](*args)

    def __call__(self, *args: Any) -> Any:
        return self.call("main", *args)

    def get_source(self, fmt: str = "ll") -> str:
        """"ll" (optimised), "ll-raw" or "asm", as `CompiledModule.get_source`."""
        return self.compiled.get_source(fmt)

    def export(self) -> tuple[bytes, dict]:
        """(object code for this host, metadata) for `load_program`."""
        from ..jit import target_id
        meta: dict[str, Any] = {
            "format": "relaylang-native-program-1", "target": target_id(),
            "functions": [s.to_json() for s in self.signatures]}
        if self.externs:
            from ....ir.expr import GlobalVar
            from ....ir.module import IRModule
            from ....syntax.printer import astext
            mod = IRModule({GlobalVar(symbol): fn for symbol, fn, _ in self.externs})
            meta["externs"] = astext(mod, show_meta_data=True)
        return self.compiled.object_code, meta


def load_program(object_code: bytes, meta: dict, raw_ir: str = "",
                 externs: Any = None) -> NativeProgram:
    """A NativeProgram from `NativeProgram.export()` output (same host CPU and compiler:
    ValueError otherwise). A program calling external functions has their primitive
    functions as Relay text, parsed here and given to `externs` (as to
    `compile_program`)."""
    from ..jit import load_object, target_id
    if meta.get("format") != "relaylang-native-program-1":
        raise ValueError("not an exported native program")
    if meta.get("target") != target_id():
        raise ValueError(f"the native program was built for {meta.get('target')!r}, "
                         f"this host is {target_id()!r}")
    compiled = load_object(object_code, [], raw_ir)
    bound: list[tuple[str, Any, Any]] = []
    if meta.get("externs"):
        from ....syntax.parser import parse
        from ....typing import infer_types
        mod = infer_types(parse(meta["externs"], source_name="<external functions>"))
        for gv, fn in mod.functions.items():
            call = externs(fn) if externs is not None else None
            if call is None:
                raise ValueError(f"the program calls the external function of "
                                 f"@{gv.name_hint}, which cannot be bound here")
            bound.append((gv.name_hint, fn, call))
    return NativeProgram(compiled, [Signature.from_json(d) for d in meta["functions"]],
                         bound)
