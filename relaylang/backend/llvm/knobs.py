"""Scheduling knobs: the numbers a kernel's loops are made with, as data.

Every choice the lowering makes with a number -- the width of a register tile, how many
rows share it, the column block of a GEMM, when a convolution takes its direct form --
is a *knob*: a name, the value used when nothing says otherwise (the default, from a
simple model of the host below), and the values it may take (its choices, which the
asker computes for the kernel at hand, so that an invalid point cannot be expressed).
The scheduler asks with `ask(name, default, choices)`; an op's lowering asks through
its lowering context, `b.knob(name, default, choices)` (the op layer does not import the
backend). What was asked, and what was answered, is recorded per kernel
(`PrimFunc.knobs`, `PrimFunc.knob_space`): the build reports it, the LLVM source states
it, and the tuner (`relay tune`) searches `knob_space`.

What the answer is comes from the `Settings` in force (`using(settings)`, a context
like TVM's `ApplyHistoryBest`): values for every kernel (`every`), then values for
one kernel (`per_kernel`, keyed by `kernel_key`: the structural hash of the primitive
function and which parameters are build-time constants). A value outside the knob's
choices is ignored (a database written for other shapes cannot produce a wrong kernel).

Host model (`host()`): the vector width and register count (from LLVM's host
features: AVX-512 has 32 registers of 64 bytes, AVX2 16 of 32) and the cache sizes
(Linux sysfs, else typical sizes). The defaults that depend on them:

  schedule.tile_bytes            4 vectors (256 bytes on AVX-512): a tile of output
                                 columns is 4 independent accumulator chains, enough to
                                 cover the FMA latency of one row
  schedule.accumulator_vectors   the registers a row-blocked tile may hold: all but 8
                                 (24 of 32; 8 of 16 on AVX2), the rest for the broadcast
                                 values and the weight vectors
  schedule.k_chunk_bytes         0 (off: measured slower with unpacked activations, see
                                 schedule.py); its choices are fractions of L1 and L2
  schedule.vector_bits           512 with AVX-512 (256 the other choice), else LLVM's own
  schedule.threads               0 (the pool's threads); 1 runs the kernel on the caller
  schedule.prefetch_chunks       software prefetch of the next 0-2 weight chunks of a
                                 chunked reduction (asked in schedule.py, where a
                                 reduction is chunked; the NCHWc convolution's default 1)
"""
from __future__ import annotations

import contextlib
import functools
import os
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Host:
    """What the scheduling defaults depend on."""
    cpu: str
    vector_bytes: int          # the widest vector the code generator prefers
    vector_registers: int
    l1d: int                   # bytes, per core
    l2: int                    # bytes, per core
    l3: int                    # bytes, shared

    def describe(self) -> str:
        kib = 1024
        return (f"{self.cpu}: {self.vector_bytes * 8}-bit vectors x {self.vector_registers}, "
                f"L1d {self.l1d // kib} KiB, L2 {self.l2 // kib} KiB, L3 {self.l3 // kib} KiB")


# Sizes taken when the host does not say (sysfs missing: not Linux, a container
# hiding it): a typical x86-64 core of the last years.
TYPICAL_CACHES = {1: 32 * 1024, 2: 1024 * 1024, 3: 16 * 1024 * 1024}


def _cache_sizes(root: str = "/sys/devices/system/cpu/cpu0/cache") -> dict[int, int]:
    """{level: bytes} of the data (or unified) caches of CPU 0, from sysfs."""
    sizes: dict[int, int] = {}
    try:
        entries = sorted(os.listdir(root))
    except OSError:
        return dict(TYPICAL_CACHES)
    for entry in entries:
        if not entry.startswith("index"):
            continue
        try:
            with open(os.path.join(root, entry, "level")) as f:
                level = int(f.read().strip())
            with open(os.path.join(root, entry, "type")) as f:
                kind = f.read().strip()
            with open(os.path.join(root, entry, "size")) as f:
                text = f.read().strip().upper()
        except (OSError, ValueError):
            continue
        if kind == "Instruction":
            continue
        scale = {"K": 1024, "M": 1024 * 1024, "G": 1024 ** 3}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes[level] = int(digits) * scale
    return {lvl: sizes.get(lvl, TYPICAL_CACHES[lvl]) for lvl in (1, 2, 3)}


@functools.lru_cache(maxsize=1)
def host() -> Host:
    """The host's model (read once)."""
    import llvmlite.binding as llvm
    features = set(llvm.get_host_cpu_features().flatten().split(","))
    if "+avx512f" in features:
        vector_bytes, registers = 64, 32
    elif "+avx2" in features or "+avx" in features:
        vector_bytes, registers = 32, 16
    else:
        vector_bytes, registers = 16, 16
    caches = _cache_sizes()
    return Host(llvm.get_host_cpu_name(), vector_bytes, registers, caches[1], caches[2],
                caches[3])


# ---------------------------------------------------------------- the scheduler's knobs

@functools.lru_cache(maxsize=4)
def schedule_defaults(h: Host) -> dict[str, tuple[int, tuple[int, ...]]]:
    """The scheduler's own knobs on host `h`: name -> (default, choices)."""
    v = h.vector_bytes
    regs = h.vector_registers
    return {
        "schedule.tile_bytes": (4 * v, (v, 2 * v, 4 * v, 8 * v)),
        "schedule.accumulator_vectors": (
            max(4, regs - 8), tuple(n for n in (4, 8, 12, 16, 20, 24, 28) if n <= regs - 4)),
        "schedule.row_block_max": (8, (1, 2, 4, 6, 8, 12, 16)),
        "schedule.unroll_max": (4, (1, 2, 4, 8, 16)),
        "schedule.par_min": (64, (1, 16, 32, 64, 128, 256)),
        "schedule.prologue_share": (16, (4, 8, 16, 32, 64)),
        "schedule.k_chunk_bytes": (0, (0, h.l1d // 2, h.l1d, h.l2 // 4, h.l2 // 2)),
        # the vectors LLVM's vectoriser prefers (0: its own choice): AVX-512 hosts may
        # also take 256 bits (a memory-bound kernel can run as fast with half the width)
        "schedule.vector_bits": (512, (256, 512)) if v == 64 else (0, (0,)),
        # threads a kernel with a parallel loop is split over: 0 all of the pool's (when
        # it is large enough: native/threads.py), 1 the calling thread only
        "schedule.threads": (0, (0, 1)),
    }


# ---------------------------------------------------------------- settings

@dataclass(frozen=True)
class Settings:
    """Knob values to use instead of the defaults: `every` kernel's, then
    `per_kernel[kernel_key]`'s (which win)."""
    every: Mapping[str, int] = field(default_factory=dict)
    per_kernel: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def for_kernel(self, key: str) -> dict[str, int]:
        values = dict(self.every)
        values.update(self.per_kernel.get(key, {}))
        return values


DEFAULT_SETTINGS = Settings()
_SETTINGS = threading.local()


def current_settings() -> Settings:
    return getattr(_SETTINGS, "value", DEFAULT_SETTINGS)


@contextlib.contextmanager
def using(settings: Settings | None) -> Iterator[Settings]:
    """Kernels lowered inside the block take their knobs from `settings` (None: the
    defaults)."""
    before = current_settings()
    _SETTINGS.value = settings or DEFAULT_SETTINGS
    try:
        yield _SETTINGS.value
    finally:
        _SETTINGS.value = before


def parse_assignments(text: str) -> dict[str, int]:
    """`name=value,name=value` (the command line's `--knob`) -> {name: value}; raises
    ValueError with the offending item."""
    out: dict[str, int] = {}
    for item in (p.strip() for p in text.split(",")):
        if not item:
            continue
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"{item!r}: expected NAME=INTEGER")
        try:
            out[name.strip()] = int(value.strip(), 0)
        except ValueError:
            raise ValueError(f"{item!r}: {value.strip()!r} is not an integer") from None
    return out


# ---------------------------------------------------------------- asking, per kernel

@dataclass
class Chooser:
    """The knobs of the kernel being lowered: what the settings say for it, and a
    record of every knob asked (its value and its choices)."""
    key: str
    values: dict[str, int]
    chosen: dict[str, int] = field(default_factory=dict)
    space: dict[str, tuple[int, ...]] = field(default_factory=dict)
    defaults: dict[str, int] = field(default_factory=dict)

    def ask(self, name: str, default: int, choices: Sequence[int] = ()) -> int:
        options = tuple(dict.fromkeys(int(c) for c in choices))
        if default not in options:
            options = (int(default),) + options
        value = self.values.get(name, default)
        if value not in options:
            value = default
        if name not in self.chosen:
            self.chosen[name] = int(value)
            self.space[name] = options
            self.defaults[name] = int(default)
        return self.chosen[name]


_ACTIVE = threading.local()


@contextlib.contextmanager
def lowering(key: str) -> Iterator[Chooser]:
    """The knobs of one kernel (`key`: its `kernel_key`) while it is lowered."""
    before = getattr(_ACTIVE, "chooser", None)
    chooser = Chooser(key, current_settings().for_kernel(key))
    _ACTIVE.chooser = chooser
    try:
        yield chooser
    finally:
        _ACTIVE.chooser = before


def ask(name: str, default: int, choices: Sequence[int] = ()) -> int:
    """The value of knob `name` for the kernel being lowered (`default` outside a
    `lowering` block)."""
    chooser: Chooser | None = getattr(_ACTIVE, "chooser", None)
    if chooser is None:
        return int(default)
    return chooser.ask(name, int(default), choices)


def ask_schedule(name: str) -> int:
    """One of the scheduler's knobs (`schedule_defaults`), its default from the host."""
    default, choices = schedule_defaults(host())[name]
    return ask(name, default, choices)


def kernel_key(fn: Any, constant_params: Sequence[int] = ()) -> str:
    """The key a kernel's knob values are stored under: the structural hash of its
    primitive function, and which of its parameters are build-time constants (a packed
    weight changes the kernel)."""
    from ...ir.equal import structural_hash
    h = structural_hash(fn) & 0xFFFFFFFFFFFFFFFF
    consts = ",".join(str(i) for i in sorted(constant_params))
    return f"{h:016x}" + (f"+c{consts}" if consts else "")


def knob_of(kernel: Any, name: str, default: int = 0) -> int:
    """The value of the knob `name` a kernel was made with (the `knobs` pairs of its
    PrimFunc, or of its compiled KernelInfo: kept by the kernel cache and an exported
    library), else `default`."""
    for knob, value in getattr(kernel, "knobs", ()) or ():
        if knob == name and type(value) is int:
            return value
    return default


def describe(chosen: Mapping[str, int]) -> str:
    """`name=value name=value` (sorted): a kernel's knobs in one line."""
    return " ".join(f"{k}={v}" for k, v in sorted(chosen.items()))
