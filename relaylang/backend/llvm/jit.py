"""Host target machine, O3 (new pass manager), MCJIT, object code, `Kernel`.

    kernels = compile_kernels([prim, ...], cache=True)   # {name: Kernel}, one LLVM module
    k = kernels["fused_add"]; k(arrays)                    # inputs then (preallocated) outputs
    k.module.get_source("ll")        # optimised LLVM IR ("ll-raw": before optimisation)
    k.module.get_source("asm")       # host assembly
    k.module.object_code             # bytes of the object file (load_object loads it back)

    modules = compile_modules([prim, ...], cache=True)   # [CompiledModule, ...]: the same
                                     # kernels compiled in parts, in parallel (rl.build)

Compiling in parallel (`compile_modules`): llvmlite serialises every LLVM call behind one
lock, so threads cannot share the work; instead the kernels are split into up to
`compile_jobs()` parts of about equal size (loop IR nodes, a proxy for LLVM's time),
each part but the first compiled (LLVM IR text, O3, object code) by a forked child
process that sends its object code back through a pipe, while this process compiles the
first. A part whose child fails (it exits nonzero or sends nothing) is compiled here, so
an error is raised here with its usual message; so is one whose child is still busy long
after this process finished its own part (`WORKER_TIMEOUT_*`: the child is killed).
Linux only (fork after LLVM and the native pool's threads exist is safe there: the child
runs one thread, takes no lock another thread may hold -- our lock and llvmlite's are
held across the fork -- and leaves with `os._exit`); elsewhere, for small modules, and
with `RELAY_COMPILE_JOBS=1`, one part compiled here. A cold `rl.build` of ResNet-50 b1
costs about 2.6 s of CPU, 2.2 s of it compiling its 35 kernels (about 7,200 loop IR
nodes): 1.5-1.8 s in two parts with a core free (load 1.4), 2.5-2.7 s in one part or
two when no core is free (load 2.2-2.5) (2026-11-26, benchmarks/build_time.py). The kernel cache keeps the parts of one set of kernels in one
entry (keyed by the whole set), so a hit does not depend on how many parts there were.
"""
from __future__ import annotations

import ctypes
import json
import os
import re
import sys
import threading
import time
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
    obj, opt = _optimise_and_emit(raw_ir, keep_ir=keep_ir)
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
        name = m.group(2)
        width = widths.get(name, default)
        attrs = " nounwind"
        if name.endswith("__impl") and name[:-len("__impl")] in widths:
            attrs += " noinline"
        if width:
            attrs += f' "prefer-vector-width"="{width}"'
        return f"{m.group(1)}{attrs}\n{{"
    # a string attribute llvmlite.ir cannot spell, on every function; and a kernel's
    # body (`__impl`) is not inlined into its entry (which only unpacks the argument
    # pointers and calls it once per run): inlined, O3 simplifies the whole body twice
    # (in the body, then in the entry). Measured on ResNet-50 b1's 35 kernels
    # (2026-11-26, load 4): O3 and object code 5.3 -> 4.5 s; the kernels' times A/B over
    # 41 alternations 23.16 -> 22.98 ms in all (each kernel within noise), the same
    # vector instructions but for a handful
    text = re.sub(r'^(define [^\n]*@"?([\w.$]+)"?\([^\n]*\))( nounwind)?\n\{', attribute,
                  text, flags=re.MULTILINE)
    return text


class _Phases:
    """Adds the seconds of each step to `timer` (a BuildTimer: `.add(phase, seconds)`),
    if one was given."""

    def __init__(self, timer: Any) -> None:
        self.timer = timer
        self.start = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        if self.timer is not None:
            self.timer.add(phase, now - self.start)
        self.start = now


def compile_module(prims: list[L.PrimFunc], cache: bool = True,
                   timer: Any = None) -> CompiledModule:
    """Compile the PrimFuncs into one module (from the kernel cache when it has it: the
    cache is keyed by `structure_key`, so a hit does not even generate the LLVM IR).
    `timer` (`.add(phase, seconds)`) gets the steps: "kernel cache" (key and look-up),
    "lowering" (LLVM IR text), "LLVM optimisation" (O3), "codegen" (object code and
    loading it); from the cache, "loading (from the kernel cache)"."""
    prims = list(prims)
    infos = [KernelInfo.of(p) for p in prims]
    clock = _Phases(timer)
    key = ""
    if cache:
        from . import cache as kcache
        key = structure_key(prims)
        hit = kcache.load(key)
        clock.lap("kernel cache")
        if hit is not None and not hit.startswith(_BUNDLE):
            try:
                module = CompiledModule(lambda: module_ir(prims), hit, infos)
                clock.lap("loading (from the kernel cache)")
                return module
            except (RuntimeError, ValueError, OSError):   # a foreign entry: rebuild it
                pass
    raw = module_ir(prims)
    clock.lap("lowering")
    obj, opt = _optimise_and_emit(raw, clock, keep_ir=False)
    module = CompiledModule(raw, obj, infos, optimized_ir=opt)
    clock.lap("codegen")
    if cache:
        from . import cache as kcache
        kcache.store(key, obj)
    return module


def _optimise_and_emit(raw: str, clock: _Phases | None = None,
                       keep_ir: bool = False) -> tuple[bytes, str | None]:
    """(object code, optimised IR text if `keep_ir`) of an LLVM IR module text; the
    steps' seconds to `clock` ("LLVM optimisation", then the object code's time is left
    running for the caller's "codegen")."""
    with _LOCK:
        mod = llvm.parse_assembly(raw)
        _prepare(mod)
        mod.verify()
        optimize(mod)
        opt = str(mod) if keep_ir else None
        if clock is not None:
            clock.lap("LLVM optimisation")
        obj = target_machine().emit_object(mod)
    return obj, opt


# ---------------------------------------------------------------- compiling in parts

# A set of kernels is compiled in parallel parts only from this many loop IR nodes
# (`_node_lines`). LLVM IR text, O3 and object code cost 0.35-0.6 ms per node on the
# 2-core AVX-512 development machine (serially, 2026-11-26: MNIST 518 nodes 0.18 s,
# GPT-2 stack 1,238 nodes 0.42 s, MobileNet 3,278 nodes 1.2 s, ResNet-50 about 7,200
# nodes 2.3-4.5 s by load), forking a process holding ResNet-50's weights about 10 ms:
# from about 0.35 s of work on, two parts save more than the fork and the second
# module's fixed costs.
PARALLEL_MIN_NODES = 1000
# At most this many parts (processes) however many CPUs there are: each part repeats
# the module's fixed costs, and the build's other phases do not run in parallel.
MAX_COMPILE_JOBS = 4

# A child not done this long after this process compiled its part (at least
# WORKER_TIMEOUT_MIN seconds, else WORKER_TIMEOUT_FACTOR times as long as this process
# took) is killed and its part compiled here: the parts are of about equal size, so
# only a stuck child takes that long.
WORKER_TIMEOUT_MIN = 120.0
WORKER_TIMEOUT_FACTOR = 10.0

_BUNDLE = b"RLKPARTS1\n"       # a kernel cache entry holding several object files


def compile_jobs() -> int:
    """How many processes compile a large set of kernels (`compile_modules`):
    `RELAY_COMPILE_JOBS` if set, else the CPUs this process may run on (at most
    MAX_COMPILE_JOBS); 1 where fork is not available or not safe (not Linux)."""
    env = os.environ.get("RELAY_COMPILE_JOBS", "").strip()
    if not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return 1
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, MAX_COMPILE_JOBS))


def split_parts(weights: Sequence[int], jobs: int) -> list[list[int]]:
    """Indices 0..n-1 in at most `jobs` parts of about equal total weight (largest
    first, each to the lightest part so far); each part in index order, the parts in
    order of their first index, none empty. Deterministic."""
    jobs = max(1, min(jobs, len(weights)))
    bins: list[list[int]] = [[] for _ in range(jobs)]
    load = [0] * jobs
    for i in sorted(range(len(weights)), key=lambda i: (-weights[i], i)):
        j = min(range(jobs), key=lambda j: (load[j], j))
        bins[j].append(i)
        load[j] += max(1, weights[i])
    parts = [sorted(b) for b in bins if b]
    parts.sort(key=lambda b: b[0])
    return parts


def compile_modules(prims: Sequence[L.PrimFunc], cache: bool = True, timer: Any = None,
                    jobs: int | None = None) -> list[CompiledModule]:
    """The PrimFuncs compiled into one or more modules (their kernels together are the
    PrimFuncs'): in parallel parts when the set is large (`PARALLEL_MIN_NODES`) and
    `jobs` (default `compile_jobs()`) is above 1, see the module docstring. One kernel
    cache entry for the whole set (a hit loads its parts, however many). `timer` as for
    `compile_module`, plus "compile workers (wait)": the time waiting for the other
    parts after this process compiled its own."""
    prims = list(prims)
    if not prims:
        return []
    jobs = compile_jobs() if jobs is None else max(1, int(jobs))
    clock = _Phases(timer)
    lines = [_prim_lines(p) for p in prims] if cache or jobs > 1 else []
    key = _key_of_lines(lines) if cache else ""
    if cache:
        from . import cache as kcache
        hit = kcache.load(key)
        clock.lap("kernel cache")
        if hit is not None:
            try:
                modules = _modules_of_entry(hit, prims)
                clock.lap("loading (from the kernel cache)")
                return modules
            except (RuntimeError, ValueError, OSError, KeyError):   # foreign: rebuild
                pass
    total = sum(len(x) for x in lines)
    if jobs <= 1 or total < PARALLEL_MIN_NODES:
        parts = [list(range(len(prims)))]
    else:
        parts = split_parts([len(x) for x in lines], jobs)
    groups = [[prims[i] for i in part] for part in parts]
    started = time.perf_counter()
    workers = [_fork_compile(g) for g in groups[1:]]
    if workers:
        clock.lap("compile workers (start)")
    try:
        raw = module_ir(groups[0])
        clock.lap("lowering")
        obj, opt = _optimise_and_emit(raw, clock, keep_ir=False)
        objects = [obj]
        modules = [CompiledModule(raw, obj, [KernelInfo.of(p) for p in groups[0]],
                                  optimized_ir=opt)]
        clock.lap("codegen")
        # a child still busy long after this process compiled its own part is stuck
        deadline = time.perf_counter() + max(WORKER_TIMEOUT_MIN,
                                             WORKER_TIMEOUT_FACTOR * (time.perf_counter()
                                                                      - started))
        for k, group in enumerate(groups[1:]):
            worker, workers[k] = workers[k], None
            obj_k = _collect(worker, deadline)
            clock.lap("compile workers (wait)")
            if obj_k is None:                  # the child failed: compile the part here
                raw_k = module_ir(group)
                clock.lap("lowering")
                obj_k, opt_k = _optimise_and_emit(raw_k, clock, keep_ir=False)
                module = CompiledModule(raw_k, obj_k, [KernelInfo.of(p) for p in group],
                                        optimized_ir=opt_k)
            else:
                module = CompiledModule(lambda g=group: module_ir(g), obj_k,
                                        [KernelInfo.of(p) for p in group])
            objects.append(obj_k)
            modules.append(module)
            clock.lap("codegen")
    finally:                                   # an error here: no child outlives it
        for worker in workers:
            _abandon(worker)
    if cache:
        from . import cache as kcache
        kcache.store(key, objects[0] if len(objects) == 1 else
                     _bundle([[p.name for p in g] for g in groups], objects))
    return modules


def _bundle(names: list[list[str]], objects: list[bytes]) -> bytes:
    """A kernel cache entry holding several object files: the magic, one line of JSON
    (each part's kernel names and object size), then the objects."""
    head = json.dumps({"parts": names, "sizes": [len(o) for o in objects]})
    return _BUNDLE + head.encode() + b"\n" + b"".join(objects)


def _modules_of_entry(entry: bytes, prims: list[L.PrimFunc]) -> list[CompiledModule]:
    """The CompiledModules of a kernel cache entry (one object file, or a bundle) for
    `prims` (ValueError or KeyError when it does not hold exactly their kernels)."""
    by_name = {p.name: p for p in prims}
    if not entry.startswith(_BUNDLE):
        return [CompiledModule(lambda: module_ir(prims), entry,
                               [KernelInfo.of(p) for p in prims])]
    body = entry[len(_BUNDLE):]
    line, _, data = body.partition(b"\n")
    head = json.loads(line.decode())
    names, sizes = head["parts"], head["sizes"]
    if (len(names) != len(sizes) or sum(sizes) != len(data)
            or sorted(n for part in names for n in part) != sorted(by_name)):
        raise ValueError("a kernel cache entry of other kernels")
    modules, at = [], 0
    for part, size in zip(names, sizes):
        group = [by_name[n] for n in part]
        modules.append(CompiledModule(lambda g=group: module_ir(g), data[at:at + size],
                                      [KernelInfo.of(p) for p in group]))
        at += size
    return modules


def _llvmlite_lock() -> Any:
    """llvmlite's own lock around every LLVM call (held across a fork so that no other
    thread is inside LLVM then), or a no-op where llvmlite has none."""
    import contextlib
    lock = getattr(getattr(getattr(llvm, "ffi", None), "lib", None), "_lock", None)
    if lock is None or not hasattr(lock, "__enter__"):
        return contextlib.nullcontext()
    return lock


def _fork_compile(prims: list[L.PrimFunc]) -> tuple[int, int] | None:
    """A child process compiling `prims` (LLVM IR, O3, object code) and writing the
    object code to a pipe: (pid, read end), or None when it cannot be started."""
    target_machine()                       # initialised once, before the fork
    try:
        r, w = os.pipe()
    except OSError:
        return None
    import warnings
    with _LOCK, _llvmlite_lock(), warnings.catch_warnings():
        # Python 3.12 warns about any fork of a process with threads (the native pool's
        # workers): the child here runs no other thread's code and takes no lock
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
    if pid == 0:                           # the child: never returns
        status = 1
        try:
            os.close(r)
            obj, _ = _optimise_and_emit(module_ir(prims))
            view = memoryview(obj)
            while view:
                view = view[os.write(w, view):]
            status = 0
        except BaseException:  # noqa: BLE001, S110 -- the parent compiles it again
            pass
        finally:
            os._exit(status)
    os.close(w)
    return pid, r


def _abandon(worker: tuple[int, int] | None) -> None:
    """Stop a `_fork_compile` child whose result is not wanted any more, and reap it."""
    if worker is None:
        return
    import signal
    pid, r = worker
    try:
        os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        os.close(r)
    except OSError:
        pass
    try:
        os.waitpid(pid, 0)
    except ChildProcessError:
        pass


def _collect(worker: tuple[int, int] | None, deadline: float | None = None
             ) -> bytes | None:
    """The object code a `_fork_compile` child sent, None if it failed or did not finish
    by `deadline` (a `time.perf_counter()` value; it is then killed). The child is
    reaped whatever happens."""
    if worker is None:
        return None
    import select
    pid, r = worker
    chunks: list[bytes] = []
    status = 1
    reaped = False
    try:
        poller = select.poll()
        poller.register(r, select.POLLIN | select.POLLHUP | select.POLLERR)
        while True:
            if deadline is not None:
                left = deadline - time.perf_counter()
                if left <= 0 or not poller.poll(int(left * 1000) + 1):
                    chunks = []
                    break                      # stuck: killed below
            chunk = os.read(r, 1 << 20)
            if not chunk:
                _, status = os.waitpid(pid, 0)
                reaped = True
                break
            chunks.append(chunk)
    except (OSError, ValueError):
        chunks = []
    finally:
        if not reaped:
            _abandon((pid, r))                 # kills, closes and reaps
        else:
            os.close(r)
    data = b"".join(chunks)
    if status != 0 or not data:
        return None
    return data


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


# Fields no object code depends on: a Var's process-wide `uid`, the baked constants
# (keyed by their bytes), and a PrimFunc's `knob_key` and `knob_space` (its knob
# *values* are keyed; the key is a structural hash of the Relay function, which uses
# Python's `hash` of strings and so differs from one process to the next: keyed, no
# entry written by one process was ever found by another).
_NOT_KEYED = frozenset({"uid", "constants", "knob_key", "knob_space"})


_KEYED_FIELDS: dict[type, tuple[str, ...]] = {}


def _keyed_fields(cls: type) -> tuple[str, ...]:
    """The names of the fields of the loop IR node class `cls` that are keyed."""
    names = _KEYED_FIELDS.get(cls)
    if names is None:
        import dataclasses
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _NOT_KEYED)
        _KEYED_FIELDS[cls] = names
    return names


_IS_NODE: dict[type, bool] = {}


def _node_lines(root: Any) -> list[str]:
    """The loop IR under `root` as one line per distinct node (children first), each
    field a value or `#k` for the k-th node: linear in the size of the DAG (expressions
    share subtrees, which a plain repr would expand, exponentially for repeated squaring)
    and exact (floats by repr; a Var's process-wide `uid` is replaced by its line)."""
    index: dict[int, int] = {}
    lines: list[str] = []
    is_node = _IS_NODE

    def node_type(t: type) -> bool:
        flag = is_node.get(t)
        if flag is None:
            flag = is_node[t] = hasattr(t, "__dataclass_fields__") and t is not type
        return flag

    def show(v: Any) -> str:
        t = type(v)
        if t is tuple or isinstance(v, tuple):
            return "(" + ",".join([show(x) for x in v]) + ")"
        if node_type(t):
            return f"#{index[id(v)]}"
        return repr(v)
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, ready = stack.pop()
        if id(node) in index:
            continue
        names = _keyed_fields(type(node))
        if not ready:
            stack.append((node, True))
            todo = [getattr(node, name) for name in names]
            while todo:
                v = todo.pop()
                t = type(v)
                if t is tuple or isinstance(v, tuple):
                    todo.extend(v)
                elif node_type(t) and id(v) not in index:
                    stack.append((v, False))
            continue
        fields = [f"{name}={show(getattr(node, name))}" for name in names]
        index[id(node)] = len(lines)
        lines.append(f"{type(node).__name__}({','.join(fields)})")
    return lines


def _prim_lines(p: L.PrimFunc) -> list[str]:
    """One PrimFunc's lines of `structure_key`."""
    import hashlib

    import numpy as np
    lines = _node_lines(p)
    for buf, data in p.constants:
        arr = np.asarray(data, order="C")
        lines.append(f"constant {buf.name} {arr.dtype.str} {arr.shape} "
                     f"{hashlib.sha256(arr.tobytes()).hexdigest()}")
    return lines


def _key_of_lines(lines: list[list[str]]) -> str:
    head = f"loop-ir-key 3 codegen={_codegen_digest()} width={vector_width()}"
    return "\n".join([head] + [line for part in lines for line in part])


def structure_key(prims: list[L.PrimFunc]) -> str:
    """The kernel cache's key text of a module: every PrimFunc node by node (names,
    buffers, loops, expressions, knob values; float constants as exact reprs;
    `_node_lines`), the baked constants' bytes, the vector width, and the codegen
    sources' digest; the same in every process (nothing derived from Python's `hash`).
    About 30 ms for ResNet-50's kernels, against 0.3 s for the LLVM IR text."""
    return _key_of_lines([_prim_lines(p) for p in prims])


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
