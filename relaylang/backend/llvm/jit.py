"""Host target machine, O3 (new pass manager), MCJIT, object code, `Kernel`.

    kernels = compile_kernels([prim, ...], cache=True)   # {name: Kernel}, one LLVM module
    k = kernels["fused_add"]; k(arrays)                    # inputs then (preallocated) outputs
    k.module.get_source("ll")        # optimised LLVM IR ("ll-raw": before optimisation)
    k.module.get_source("asm")       # host assembly
    k.module.object_code             # bytes of the object file (load_object loads it back)
"""
from __future__ import annotations

import ctypes
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import llvmlite
import llvmlite.binding as llvm

from ...ir.dtype import CARRIED
from . import loop_ir as L
from .codegen import (  # noqa: F401  (STATUS_OK: re-exported for the executor)
    STATUS_INT_DIV_BY_ZERO,
    STATUS_INT_MOD_BY_ZERO,
    STATUS_OK,
    build_module,
)

COMPILER_VERSION = "relaylang-llvm-2"

_LOCK = threading.RLock()
_TM: Any = None
_ENGINES: list[Any] = []      # every engine stays alive (its code may be referenced)


def _init() -> None:
    global _TM
    if _TM is not None:
        return
    with _LOCK:
        if _TM is not None:
            return
        llvm.initialize_native_target()
        llvm.initialize_native_asmprinter()
        target = llvm.Target.from_default_triple()
        _TM = target.create_target_machine(cpu=host_cpu(), features=host_features(),
                                           opt=3, codemodel="jitdefault")


def host_cpu() -> str:
    return llvm.get_host_cpu_name()


def host_features() -> str:
    return llvm.get_host_cpu_features().flatten()


def target_id() -> str:
    """What a compiled object depends on: triple, CPU, features, LLVM, our codegen."""
    return f"{llvm.get_default_triple()}|{host_cpu()}|{host_features()}|{llvmlite.__version__}|{COMPILER_VERSION}"


def target_machine() -> Any:
    _init()
    return _TM


def optimize(mod: Any) -> None:
    """O3 for the host, in place (new pass manager)."""
    tm = target_machine()
    pto = llvm.PipelineTuningOptions(speed_level=3)
    pto.loop_vectorization = True
    pto.slp_vectorization = True
    pto.loop_unrolling = False       # True: O3 unrolls small fp16 kernels into 100s of KB
    pto.loop_interleaving = True
    pb = llvm.PassBuilder(tm, pto)
    mpm = pb.getModulePassManager()
    mpm.run(mod, pb)


@dataclass(frozen=True)
class KernelInfo:
    """What a Kernel needs besides code: its name and parameters (shape, dtype), the
    number of inputs and the parallel extent (JSON-able, for the cache and export)."""
    name: str
    params: tuple[tuple[tuple[int, ...], str], ...]
    num_inputs: int
    parallel_extent: int
    work: int = 0                # PrimFunc.work: stores over the whole range
    knobs: tuple[tuple[str, int], ...] = ()     # PrimFunc.knobs: its schedule
    knob_key: str = ""

    @staticmethod
    def of(prim: L.PrimFunc) -> KernelInfo:
        return KernelInfo(prim.name, tuple((tuple(p.shape), p.dtype) for p in prim.params),
                          prim.num_inputs, prim.parallel_extent, prim.work, prim.knobs,
                          prim.knob_key)

    def to_json(self) -> dict:
        return {"name": self.name, "params": [[list(s), d] for s, d in self.params],
                "num_inputs": self.num_inputs, "parallel_extent": self.parallel_extent,
                "work": self.work, "knobs": [[k, v] for k, v in self.knobs],
                "knob_key": self.knob_key}

    @staticmethod
    def from_json(d: dict) -> KernelInfo:
        return KernelInfo(str(d["name"]), tuple((tuple(int(x) for x in s), str(t))
                                                for s, t in d["params"]),
                          int(d["num_inputs"]), int(d["parallel_extent"]),
                          int(d.get("work", 0)),
                          tuple((str(k), int(v)) for k, v in d.get("knobs", ())),
                          str(d.get("knob_key", "")))


ENTRY = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int64,
                         ctypes.c_int64)


class CompiledModule:
    """One compiled LLVM module: its kernels, sources and object code."""

    def __init__(self, raw_ir: str | Callable[[], str], object_code: bytes,
                 infos: list[KernelInfo], optimized_ir: str | None = None):
        # the IR text, or a function making it (a module from the kernel cache needs it
        # only for its sources and an export)
        self._raw_ir = raw_ir
        self.object_code = object_code
        self.infos = infos
        self._optimized_ir = optimized_ir
        self._asm: str | None = None
        self.engine = _engine_from_object(object_code)
        self.kernels = {info.name: Kernel(info, self.engine.get_function_address(info.name),
                                          self) for info in infos}

    @property
    def raw_ir(self) -> str:
        if not isinstance(self._raw_ir, str):
            self._raw_ir = self._raw_ir()
        return self._raw_ir

    @raw_ir.setter
    def raw_ir(self, text: str) -> None:
        self._raw_ir = text

    def get_source(self, fmt: str = "ll") -> str:
        """"ll": optimised LLVM IR; "ll-raw": before optimisation; "asm": assembly."""
        if fmt == "ll-raw":
            return self.raw_ir
        if fmt in ("ll", "asm"):
            if self._optimized_ir is None or (fmt == "asm" and self._asm is None):
                mod = llvm.parse_assembly(self.raw_ir)
                _prepare(mod)
                optimize(mod)
                self._optimized_ir = str(mod)
                self._asm = target_machine().emit_assembly(mod)
            if fmt == "ll":      # LLVM drops comments: the schedules are stated anew
                return _schedule_comments(self.infos) + self._optimized_ir
            assert self._asm is not None
            return self._asm
        raise ValueError(f"unknown source format {fmt!r} (ll, ll-raw, asm)")


def _prepare(mod: Any) -> None:
    tm = target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)


def _engine_from_object(obj: bytes) -> Any:
    tm = target_machine()
    with _LOCK:
        empty = llvm.parse_assembly("")
        _prepare(empty)
        engine = llvm.create_mcjit_compiler(empty, tm)
        engine.add_object_file(llvm.ObjectFileRef.from_data(obj))
        engine.finalize_object()
        _ENGINES.append(engine)
    return engine


def compile_ir(raw_ir: str, keep_ir: bool = False) -> tuple[bytes, str | None, str]:
    """(object code, optimised IR or None, assembly) of an LLVM IR module text (the
    optimised IR's text only with `keep_ir`: printing it costs a tenth of a second for
    a large model, and `get_source` can make it again)."""
    with _LOCK:
        mod = llvm.parse_assembly(raw_ir)
        _prepare(mod)
        mod.verify()
        optimize(mod)
        opt = str(mod) if keep_ir else None
        obj = target_machine().emit_object(mod)
    return obj, opt, ""


def jit_functions(raw_ir: str, names: list[str], cache: bool = True) -> dict[str, int]:
    """Compile an LLVM IR module text for the host (O3; from the kernel cache when it has
    it) into an engine of its own, kept for the process's lifetime; the addresses of the
    named functions (0: not found)."""
    from . import cache as kcache
    hit = kcache.load(raw_ir) if cache else None
    if hit is not None:
        try:
            engine = _engine_from_object(hit)
            return {name: int(engine.get_function_address(name) or 0) for name in names}
        except (RuntimeError, ValueError, OSError):   # a foreign entry: compiled below
            pass
    obj, _, _ = compile_ir(raw_ir)
    if cache:
        kcache.store(raw_ir, obj)
    engine = _engine_from_object(obj)
    return {name: int(engine.get_function_address(name) or 0) for name in names}


def vector_width() -> int:
    """The widest vectors the host prefers: 512 bits with AVX-512, else LLVM's choice."""
    return 512 if "+avx512f" in host_features().split(",") else 0


def _schedule_comments(kernels: Sequence[L.PrimFunc | KernelInfo]) -> str:
    """`; schedule NAME [KEY]: knob=value ...` per kernel that asked for knobs: the
    choices its loops were made with (knobs.py), readable in `lib.get_source("ll")`."""
    from .knobs import describe
    lines = [f"; schedule {k.name} [{k.knob_key}]: {describe(dict(k.knobs))}\n"
             for k in kernels if k.knobs]
    return "".join(lines)


def module_ir(prims: list[L.PrimFunc]) -> str:
    mod = build_module(prims)
    tm = target_machine()
    mod.triple = tm.triple
    mod.data_layout = str(tm.target_data)
    text = _schedule_comments(prims) + str(mod)
    default = vector_width()
    # a kernel's own width (its knob schedule.vector_bits) on its entry and __impl
    widths = {}
    for p in prims:
        bits = dict(p.knobs).get("schedule.vector_bits", default)
        widths[p.name] = widths[f"{p.name}__impl"] = bits

    def attribute(m: re.Match) -> str:
        width = widths.get(m.group(2), default)
        if not width:
            return m.group(0)
        return f'{m.group(1)} nounwind "prefer-vector-width"="{width}"\n{{'
    # a string attribute llvmlite.ir cannot spell, on every function
    text = re.sub(r'^(define [^\n]*@"?([\w.$]+)"?\([^\n]*\))( nounwind)?\n\{', attribute,
                  text, flags=re.MULTILINE)
    return text


def compile_module(prims: list[L.PrimFunc], cache: bool = True) -> CompiledModule:
    """Compile the PrimFuncs into one module (from the kernel cache when it has it: the
    cache is keyed by `structure_key`, so a hit does not even generate the LLVM IR)."""
    infos = [KernelInfo.of(p) for p in prims]
    key = structure_key(prims) if cache else ""
    if cache:
        from . import cache as kcache
        hit = kcache.load(key)
        if hit is not None:
            try:
                return CompiledModule(lambda: module_ir(prims), hit, infos)
            except (RuntimeError, ValueError, OSError):   # a foreign entry: rebuild it
                hit = None
    raw = module_ir(prims)
    obj, opt, _ = compile_ir(raw)
    if cache:
        from . import cache as kcache
        kcache.store(key, obj)
    return CompiledModule(raw, obj, infos, optimized_ir=opt)


_SOURCE_DIGEST: list[str] = []


def _codegen_digest() -> str:
    """A digest of the sources that turn a PrimFunc into object code (a kernel cache
    keyed by the loop IR must not outlive a change to them)."""
    if not _SOURCE_DIGEST:
        import hashlib
        from pathlib import Path
        h = hashlib.sha256()
        here = Path(__file__).resolve().parent
        for name in ("loop_ir.py", "codegen.py", "jit.py"):
            h.update((here / name).read_bytes())
        _SOURCE_DIGEST.append(h.hexdigest())
    return _SOURCE_DIGEST[0]


def _node_lines(root: Any) -> list[str]:
    """The loop IR under `root` as one line per distinct node (children first), each
    field a value or `#k` for the k-th node: linear in the size of the DAG (expressions
    share subtrees, which a plain repr would expand, exponentially for repeated squaring)
    and exact (floats by repr; a Var's process-wide `uid` is replaced by its line)."""
    import dataclasses

    def kids(value: Any) -> list[Any]:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            out = []
            for f in dataclasses.fields(value):
                if f.name != "constants":
                    out.extend(kids_of_field(getattr(value, f.name)))
            return out
        return []

    def kids_of_field(v: Any) -> list[Any]:
        if isinstance(v, tuple):
            return [x for item in v for x in kids_of_field(item)]
        return [v] if dataclasses.is_dataclass(v) and not isinstance(v, type) else []

    index: dict[int, int] = {}
    lines: list[str] = []

    def show(v: Any) -> str:
        if isinstance(v, tuple):
            return "(" + ",".join(show(x) for x in v) + ")"
        if dataclasses.is_dataclass(v) and not isinstance(v, type):
            return f"#{index[id(v)]}"
        return repr(v)
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in index:
            continue
        if not ready:
            stack.append((node, True))
            stack.extend((k, False) for k in kids(node) if id(k) not in index)
            continue
        fields = [f"{f.name}={show(getattr(node, f.name))}"
                  for f in dataclasses.fields(node) if f.name not in ("uid", "constants")]
        index[id(node)] = len(lines)
        lines.append(f"{type(node).__name__}({','.join(fields)})")
    return lines


def structure_key(prims: list[L.PrimFunc]) -> str:
    """The kernel cache's key text of a module: every PrimFunc node by node (names,
    buffers, loops, expressions; float constants as exact reprs; `_node_lines`), the
    baked constants' bytes, the vector width, and the codegen sources' digest. About
    30 ms for ResNet-50's kernels, against 0.3 s for the LLVM IR text."""
    import hashlib

    import numpy as np
    parts = [f"loop-ir-key 2 codegen={_codegen_digest()} width={vector_width()}"]
    for p in prims:
        parts.extend(_node_lines(p))
        for buf, data in p.constants:
            arr = np.asarray(data, order="C")
            parts.append(f"constant {buf.name} {arr.dtype.str} {arr.shape} "
                         f"{hashlib.sha256(arr.tobytes()).hexdigest()}")
    return "\n".join(parts)


def compile_kernels(prims: list[L.PrimFunc], cache: bool = True) -> dict[str, Kernel]:
    return dict(compile_module(prims, cache=cache).kernels)


def load_object(object_code: bytes, infos: list[KernelInfo], raw_ir: str = ""
                ) -> CompiledModule:
    """A CompiledModule from object code emitted before (e.g. an exported library)."""
    return CompiledModule(raw_ir, object_code, infos)


class KernelCallError(ValueError):
    """Wrong arguments to a kernel (count, shape, dtype, layout)."""


class Kernel:
    """One native kernel; `k(arrays)` runs it over its whole parallel range."""

    def __init__(self, info: KernelInfo, address: int, module: CompiledModule):
        if not address:
            raise RuntimeError(f"kernel {info.name} not found in the compiled module")
        self.info = info
        self.name = info.name
        self.params = [(s, d) for s, d in info.params]
        self.num_inputs = info.num_inputs
        self.parallel_extent = info.parallel_extent
        self.address = address
        self.module = module
        self._fn = ENTRY(address)

    def check(self, arrays: list[Any]) -> list[Any]:
        """The arrays, validated (and copied to 64-byte aligned memory when they are
        not aligned); raises KernelCallError."""
        import numpy as np
        if len(arrays) != len(self.params):
            raise KernelCallError(f"kernel {self.name} takes {len(self.params)} arrays "
                                  f"({self.num_inputs} inputs, then outputs), got {len(arrays)}")
        out = []
        for k, (a, (shape, dtype)) in enumerate(zip(arrays, self.params)):
            what = "input" if k < self.num_inputs else "output"
            if not isinstance(a, np.ndarray):
                raise KernelCallError(f"{self.name}: {what} {k} is not a numpy array")
            if tuple(a.shape) != tuple(shape) or str(a.dtype) != dtype:
                raise KernelCallError(f"{self.name}: {what} {k} must be {dtype}{list(shape)}, "
                                      f"got {a.dtype}{list(a.shape)}")
            if not a.flags.c_contiguous:
                raise KernelCallError(f"{self.name}: {what} {k} is not C-contiguous")
            if k >= self.num_inputs and not a.flags.writeable:
                raise KernelCallError(f"{self.name}: output {k} is read-only")
            out.append(a)
        return out

    def __call__(self, arrays: list[Any]) -> None:
        arrays = self.check(list(arrays))
        staged = [a if a.size == 0 or a.flags.aligned else aligned_copy(a)
                  for a in arrays]
        ptrs = pointer_array(staged)
        self.run_range(ptrs, 0, self.parallel_extent)
        for a, s in zip(arrays[self.num_inputs:], staged[self.num_inputs:]):
            if s is not a:
                a[...] = s

    def run_range(self, ptrs: Any, begin: int, end: int) -> None:
        """The native call over [begin, end) of the parallel loop; `ptrs` from
        `pointer_array` (no checks: the arrays must be right, C-contiguous and aligned to
        their element size).
        A nonzero status raises `status_error(status, name)` (ZeroDivisionError for an
        integer division by zero, as the NumPy kernels)."""
        rc = self._fn(ptrs, begin, end)
        if rc != 0:
            raise status_error(rc, self.name)

    def run_range_status(self, ptrs: Any, begin: int, end: int) -> int:
        """`run_range` returning the kernel's status (0: success) instead of raising;
        statuses of several sub-ranges combine with `|`."""
        return int(self._fn(ptrs, begin, end))

    def __repr__(self) -> str:
        return f"<Kernel {self.name} params={self.params} parallel={self.parallel_extent}>"


STATUS_MESSAGES = {
    STATUS_INT_DIV_BY_ZERO: (ZeroDivisionError, "integer division by zero"),
    STATUS_INT_MOD_BY_ZERO: (ZeroDivisionError, "integer division by zero"),
}


def status_error(status: int, kernel: str | None = None) -> Exception:
    """The exception for a kernel's nonzero status, as the NumPy kernels raise it:
    ZeroDivisionError("integer division by zero") for an integer division or remainder
    by zero (the interpreter reports it as "<op> failed: integer division by zero").
    The exception carries `.status` and `.kernel`; an unknown status is a RuntimeError."""
    err: Exception
    # kernel statuses are flags below 0x100 (larger ones, e.g. the control-flow
    # runtime's 0x7FFF....., are not ours)
    flags = status if 0 < status < 0x100 else 0
    for bit, (cls, message) in STATUS_MESSAGES.items():
        if flags & bit:
            err = cls(message)
            break
    else:
        err = RuntimeError(f"kernel {kernel or '?'} failed (status {status})")
    err.status = status              # type: ignore[attr-defined]
    err.kernel = kernel              # type: ignore[attr-defined]
    return err


def pointer_array(arrays: list[Any]) -> Any:
    """The `void*[]` of the arrays' data pointers (keep the arrays alive while used)."""
    ptrs = (ctypes.c_void_p * max(len(arrays), 1))()
    for k, a in enumerate(arrays):
        ptrs[k] = a.ctypes.data
    return ptrs


def aligned_empty(shape: Any, dtype: Any, align: int = 64) -> Any:
    """An uninitialised C-contiguous array whose data is `align`-byte aligned (the
    executor allocates every buffer with it: sizes in plain Python, as `np.prod` costs
    microseconds per call)."""
    import numpy as np
    if isinstance(dtype, str) and dtype in CARRIED:    # bfloat16, ir/lowp.py's dtypes: their
        from ...op.numpy_support import carrier_dtype  # carriers (not ml_dtypes' dtypes of
        dtype = carrier_dtype(dtype)                   # the same names, once imported)
    dtype = np.dtype(dtype)
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    raw = np.empty(n + align, dtype=np.uint8)
    off = (-raw.ctypes.data) % align
    return raw[off:off + n].view(dtype).reshape(shape)


def aligned_copy(a: Any) -> Any:
    out = aligned_empty(a.shape, a.dtype)
    out[...] = a
    return out
