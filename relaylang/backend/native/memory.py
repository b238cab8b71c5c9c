"""Buffers for native kernels: 64-byte aligned NumPy arrays, and storage planning.

`aligned_empty(shape, dtype)` is an uninitialised C-contiguous array whose data starts
on a 64-byte boundary (the executor's own buffers, for aligned vector access; the
kernels' arguments only promise their element's alignment, so a user's array is used
in place). `plan_storage`
assigns the intermediate values of an execution plan to storage slots once per build,
from their lifetimes: a slot is free again after the last step that reads the value it
holds, and a later value of any dtype takes the smallest free slot that is large enough
(else grows the largest free one, else a new slot), as TVM's graph memory planner does.
"""
from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np

from ...ir.dtype import CARRIED
from ..llvm.jit import aligned_empty

ALIGNMENT = 64


def aligned_bytes(nbytes: int) -> np.ndarray:
    """A uint8 array of `nbytes` (at least 1) whose data is 64-byte aligned."""
    raw = np.empty(max(nbytes, 1) + ALIGNMENT, dtype=np.uint8)
    offset = (-raw.ctypes.data) % ALIGNMENT
    return raw[offset:offset + max(nbytes, 1)]


def count(shape: Sequence[int]) -> int:
    """Elements of a tensor of `shape` (plain Python: `np.prod` costs microseconds)."""
    n = 1
    for d in shape:
        n *= int(d)
    return n


_char_at = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def address(array: np.ndarray) -> int:
    """The address of a C-contiguous array's data: through the buffer protocol when it is
    writable (4x faster than `array.ctypes.data`, which makes a helper object)."""
    try:
        return _addressof(_char_at(array))
    except (TypeError, ValueError, BufferError):   # read-only, empty
        return array.ctypes.data


def is_aligned(array: np.ndarray) -> bool:
    return array.flags.aligned and array.flags.c_contiguous


def as_aligned(array: np.ndarray) -> np.ndarray:
    """`array` itself when C-contiguous and aligned to its element size (all a kernel's
    arguments promise), else a 64-byte aligned copy."""
    if array.flags.c_contiguous and (array.size <= 1 or array.flags.aligned):
        return array
    out = aligned_empty(array.shape, array.dtype)
    np.copyto(out, array)
    return out


def view(buffer: np.ndarray, shape: Sequence[int], dtype: str) -> np.ndarray:
    """The first bytes of a slot's buffer as an array of `shape` and `dtype`."""
    if dtype in CARRIED:                    # bfloat16, ir/lowp.py's dtypes: their carriers
        from ...op.numpy_support import carrier_dtype
        dt = carrier_dtype(dtype)
    else:
        dt = np.dtype(dtype)
    return buffer[:count(shape) * dt.itemsize].view(dt).reshape(tuple(shape))


def plan_storage(sizes: dict[int, int], defined: dict[int, int], last_use: dict[int, int],
                 inplace: dict[int, int] | None = None) -> tuple[dict[int, int], list[int]]:
    """Slots for values: `sizes[v]` bytes, defined by step `defined[v]`, read last by step
    `last_use[v]` (absent: never read). `inplace[v] = u`: value `v` may take the slot of
    `u` when `u` dies at the step defining `v` (the caller checked that the kernel allows
    it). Returns (slot of each value, bytes of each slot)."""
    inplace = inplace or {}
    slot_of: dict[int, int] = {}
    slot_bytes: list[int] = []
    free: list[int] = []                       # free slots
    by_step: dict[int, list[int]] = {}
    for v, step in defined.items():
        by_step.setdefault(step, []).append(v)
    dying: dict[int, list[int]] = {}
    for v, step in last_use.items():
        if v in sizes:
            dying.setdefault(step, []).append(v)
    taken: set[int] = set()                    # values whose slot was handed on in place
    for step in sorted(set(by_step) | set(dying)):
        for v in sorted(by_step.get(step, ())):
            u = inplace.get(v)
            if u is not None and u in slot_of and u not in taken and \
                    last_use.get(u) == step and slot_bytes[slot_of[u]] >= sizes[v]:
                slot_of[v] = slot_of[u]
                taken.add(u)
                continue
            slot_of[v] = _take(free, slot_bytes, sizes[v])
        for v in dying.get(step, ()):
            if v in slot_of and v not in taken:
                free.append(slot_of[v])
        for v in by_step.get(step, ()):        # defined but never read: free at once
            if v not in last_use:
                free.append(slot_of[v])
    return slot_of, slot_bytes


def _take(free: list[int], slot_bytes: list[int], nbytes: int) -> int:
    fits = [s for s in free if slot_bytes[s] >= nbytes]
    if fits:
        best = min(fits, key=lambda s: slot_bytes[s])
    elif free:
        best = max(free, key=lambda s: slot_bytes[s])
        slot_bytes[best] = nbytes              # grown: the slot is allocated once, at the end
    else:
        slot_bytes.append(nbytes)
        return len(slot_bytes) - 1
    free.remove(best)
    return best
