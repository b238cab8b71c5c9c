"""What the nn family's LLVM lowerings share: dtype rules, the output's shape, the
register-tile blocks, products in the accumulator dtype, flat-row indexing."""
from __future__ import annotations

from typing import Any

# Output channel (dense: column) blocks, the widest first: a block is the scheduler's
# register tile (64 float32 = 4 AVX-512 accumulators: enough independent FMAs in flight).
_BLOCKS = (64, 32, 16, 8)


def _acc(dtype: str) -> str:
    """The dtype arithmetic runs in: float16 is computed in float32."""
    return "float32" if dtype == "float16" else dtype


def _widen(b: Any, e: Any, dtype: str) -> Any:
    return b.cast(e, dtype)


def _out(out_type: Any) -> tuple[tuple[int, ...], str]:
    return tuple(int(d) for d in out_type.shape), str(out_type.dtype)


def _conv_window(g: Any, dtype: str) -> tuple[list[int], list[int], list[tuple[int, int]]]:
    """A convolution geometry's strides, dilation and (before, after) padding as ints;
    NotImplementedError (the op falls back to its NumPy kernel) for what the convolution
    lowerings do not compute: bool tensors, negative padding."""
    if dtype == "bool":
        raise NotImplementedError("convolution of bool tensors")
    pads = [(int(p), int(q)) for p, q in g.pads]
    if any(p < 0 or q < 0 for p, q in pads):
        raise NotImplementedError("negative convolution padding")
    return [int(s) for s in g.strides], [int(d) for d in g.dilation], pads


def _finish(b: Any, t: Any, dtype: str, name: str) -> Any:
    """`t` (computed in _acc(dtype)) as a tensor of `dtype`."""
    if t.dtype == dtype:
        return t
    return b.compute(t.shape, lambda *i: b.cast(t[i], dtype), dtype=dtype, name=name)


def _axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _product(b: Any, a: Any, c: Any, dtype: str) -> Any:
    return _widen(b, a, dtype) * _widen(b, c, dtype)


def _row_index(lead: tuple, m: Any) -> tuple:
    """The multi-index over `lead` of the flat row `m`."""
    idx = []
    rest = m
    for pos, d in enumerate(reversed(lead)):
        if pos == len(lead) - 1:
            idx.append(rest)
        else:
            idx.append(rest % d)
            rest = rest / d
    return tuple(reversed(idx))
