"""NumPy reference kernels of the scatter family. "update" assigns in row-major order of
the indices (the last of equal places wins); the reductions use the ufuncs' `.at`
(unbuffered, every update counts). An index out of range is a ValueError naming it.
float16 is computed in float32 and rounded once."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32, implement

_UFUNCS = {"add": np.add, "mul": np.multiply, "min": np.minimum, "max": np.maximum}


def _wrapped(idx: np.ndarray, n: int, what: str) -> np.ndarray:
    idx = idx.astype(np.int64)
    bad = (idx < -n) | (idx >= n)
    if bad.any():
        raise ValueError(f"{what}: index {int(idx[bad].reshape(-1)[0])} is out of range for "
                         f"an axis of size {n}")
    return np.where(idx < 0, idx + n, idx)


def _apply(out: np.ndarray, where: tuple, updates: np.ndarray, reduction: str) -> None:
    if reduction == "update":
        out[where] = updates
    else:
        _UFUNCS[reduction].at(out, where, updates)


@implement("scatter_elements", float16=float16_in_float32)
def scatter_elements(inputs: list, attrs: Any) -> np.ndarray:
    data, indices, updates = inputs
    axis = attrs.axis + data.ndim if attrs.axis < 0 else attrs.axis
    out = np.array(data, copy=True, order="C")
    if indices.size == 0:
        return out
    grid = list(np.indices(indices.shape, sparse=True))
    grid[axis] = _wrapped(indices, data.shape[axis], "scatter_elements")
    where = tuple(np.broadcast_arrays(*grid))
    _apply(out, where, np.asarray(updates, out.dtype), attrs.reduction)
    return out


@implement("scatter_nd", float16=float16_in_float32)
def scatter_nd(inputs: list, attrs: Any) -> np.ndarray:
    data, indices, updates = inputs
    m = indices.shape[0]
    out = np.array(data, copy=True, order="C")
    count = int(np.prod(indices.shape[1:], dtype=np.int64))
    if count == 0:
        return out
    idx = indices.reshape(m, count)
    where = tuple(_wrapped(idx[p], data.shape[p], "scatter_nd") for p in range(m))
    upd = np.asarray(updates, out.dtype).reshape((count,) + data.shape[m:])
    if m == 0:                         # every update covers the whole tensor
        for u in upd:
            if attrs.mode == "update":
                out[...] = u
            else:
                out[...] = _UFUNCS[attrs.mode](out, u)
        return out
    _apply(out, where, upd, attrs.mode)
    return out
