"""LLVM lowerings of the pool family (see /work/llvm_spec.md, "The lowering API").

Semantics follow `numpy_kernels.py`: a max pool's padding (and the ceil_mode tail)
holds the dtype's lowest finite value, an average divides the window sum by the number
of window positions inside the data (or inside the padded input with
count_include_pad, not counting the ceil_mode tail), at least 1; integer averages sum
in int64 and truncate toward zero. Adaptive windows are [floor(i * n / out),
ceil((i + 1) * n / out)) per axis. float16 is computed in float32 and rounded once.

Each pool is one reduction over the window axes per output element, the window read
with bounds checks (no padded copy: the kernel stays one stage), except along an axis
whose windows all lie inside the data (no padding before it, no ceil_mode tail): read
unchecked there. A window of at most `UNROLLED_WINDOW_MAX` positions is written out
(no reduction loop: the output's innermost loop vectorises).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

from ..registry import implement

# A window of at most this many positions is written out (max(x[..r=0], x[..r=1], ...)
# for each output element, no reduction loop): the output's innermost loop then
# vectorises, a strided window column read as an interleaved group. Kernel times, one
# thread, NCHW, reduction loop (with the unchecked axes) -> written out: max 2x2/2 of
# 1x8x28x28 2.2 -> 1.5 us, of 1x64x56x56 65 -> 46 us; max 3x3/3 of 1x16x14x14 3.2 ->
# 0.75 us; max 3x3/2 pad 1 of 1x64x112x112 529 -> 339 us; avg 2x2/2 of 1x32x28x28
# 11.1 -> 3.2 us. (NCHWc pools, channels innermost, vectorise either way.)
UNROLLED_WINDOW_MAX = 16


def _acc(dtype: str, kind: str) -> str:
    if dtype == "float16":
        return "float32"
    if kind == "avg" and not dtype.startswith("float"):
        return "int64"
    return dtype


def _lowest(b: Any, dtype: str) -> Any:
    """tvm::min_value: the lowest finite value (numpy_kernels.lowest)."""
    import numpy as np
    if dtype.startswith("float"):
        return b.const(float(np.finfo(np.dtype(dtype)).min), dtype)
    return b.min_value(dtype)


def _divide(b: Any, total: Any, count: Any, acc: str, dtype: str) -> Any:
    """TVM's div: true division of floats, integers truncated toward zero (C division)."""
    return b.cast(total / b.cast(count, acc), dtype)


def _count(b: Any, start: Any, k: int, d: int, lo: int, hi: int) -> Any:
    """How many of start + r * d (r in [0, k)) lie in [lo, hi): index arithmetic."""
    if d == 1:
        first = b.max(start, lo)
        last = b.min(start + k, hi)
        return b.max(last - first, 0)
    # r0 = max(0, ceil((lo - start) / d)), r1 = min(k - 1, floor((hi - 1 - start) / d))
    r0 = b.max(-b.floordiv(start - lo, d), 0)
    r1 = b.min(b.floordiv(hi - 1 - start, d), k - 1)
    return b.max(r1 - r0 + 1, 0)


def _pool(nd: int, kind: str) -> Any:
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        from .relations import pool_geometry
        (x,) = inputs
        shape = tuple(int(d) for d in out_type.shape)
        dt = x.dtype
        acc = _acc(dt, kind)
        g = pool_geometry(attrs, nd)
        axes = list(g.axes)
        ks = [int(k) for k in g.pool_size]
        ss = [int(s) for s in g.strides]
        ds = [int(d) for d in g.dilation]
        pads = [(int(p), int(q)) for p, q in g.pads]
        sizes = [x.shape[a] for a in axes]
        # an axis whose windows never leave the data (no padding before it, the last
        # window inside it: no ceil_mode tail) reads it unchecked
        inside_always = [pads[j][0] == 0 and shape[a] > 0
                         and (shape[a] - 1) * ss[j] + (ks[j] - 1) * ds[j] < sizes[j]
                         for j, a in enumerate(axes)]
        unrolled = 0 < math.prod(ks) <= UNROLLED_WINDOW_MAX
        r = [] if unrolled else [b.reduce_axis(k, f"r{j}") for j, k in enumerate(ks)]

        def window(i: tuple, rv: Sequence[Any]) -> tuple[list, list]:
            starts, pos = [], []
            for j, a in enumerate(axes):
                st = i[a] * ss[j] - pads[j][0] if ss[j] != 1 else i[a] - pads[j][0]
                starts.append(st)
                pos.append(st + (rv[j] * ds[j] if ds[j] != 1 else rv[j]))
            return starts, pos

        def value(i: tuple, pos: list, fill: Any) -> Any:
            idx = list(i)
            inside = None
            for j, a in enumerate(axes):
                if inside_always[j]:
                    idx[a] = pos[j]
                    continue
                n = sizes[j]
                ok = b.logical_and(b.ge(pos[j], 0), b.lt(pos[j], n))
                inside = ok if inside is None else b.logical_and(inside, ok)
                idx[a] = b.min(b.max(pos[j], 0), max(n - 1, 0))
            if x.size == 0:
                return fill
            v = b.cast(x[tuple(idx)], acc)
            return v if inside is None else b.select(inside, v, fill)

        def terms(i: tuple, fill: Any) -> list:
            """The window's values, in the reduction's order (unrolled form)."""
            return [value(i, window(i, rv)[1], fill)
                    for rv in itertools.product(*(range(k) for k in ks))]

        if kind == "max":
            def fmax(*i: Any) -> Any:
                if unrolled:
                    vals = terms(i, _lowest(b, acc))
                    out = vals[0]
                    for v in vals[1:]:
                        out = b.max(out, v)
                    return out
                return b.reduce_max(value(i, window(i, r)[1], _lowest(b, acc)), r)
            t = b.compute(shape, fmax, dtype=acc, name=f"max_pool{nd}d")
            if acc == dt:
                return t
            return b.compute(shape, lambda *i: b.cast(t[i], dt), dtype=dt, name="pool_cast")

        def fsum(*i: Any) -> Any:
            if unrolled:
                out = b.const(0, acc)
                for v in terms(i, b.const(0, acc)):
                    out = out + v
                return out
            return b.reduce_sum(value(i, window(i, r)[1], b.const(0, acc)), r)
        total = b.compute(shape, fsum, dtype=acc, name=f"avg_pool{nd}d")

        def favg(*i: Any) -> Any:
            starts, _ = window(i, [0] * nd)
            count = None
            for j in range(nd):
                lo, hi = (-pads[j][0], sizes[j] + pads[j][1]) if attrs.count_include_pad \
                    else (0, sizes[j])
                c = _count(b, starts[j], ks[j], ds[j], lo, hi)
                count = c if count is None else count * c
            return _divide(b, total[i], b.max(count, 1), acc, dt)
        return b.compute(shape, favg, dtype=dt, name=f"avg_pool{nd}d_div")
    lower.__name__ = f"{kind}_pool{nd}d"
    return lower


def _adaptive(nd: int, kind: str, global_pool: bool = False) -> Any:
    def lower(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
        import numpy as np

        from .relations import pooled_axes
        (x,) = inputs
        shape = tuple(int(d) for d in out_type.shape)
        dt = x.dtype
        acc = _acc(dt, kind)
        axes = pooled_axes(attrs.layout, nd)
        sizes = [x.shape[a] for a in axes]
        outs = [shape[a] for a in axes]
        # the longest window per axis: the reduction extent (shorter ones are masked)
        longest = []
        exact = []
        for n, o in zip(sizes, outs):
            i = np.arange(o)
            start, end = (i * n) // o, -((-(i + 1) * n) // o)
            longest.append(int((end - start).max()) if o else 0)
            exact.append(bool(o) and n % o == 0)
        r = [b.reduce_axis(k, f"r{j}") for j, k in enumerate(longest)]

        def bounds(i: tuple) -> tuple[list, list]:
            starts, ends = [], []
            for j, a in enumerate(axes):
                n, o = sizes[j], outs[j]
                if global_pool or o == 1:
                    starts.append(0)
                    ends.append(n)
                else:
                    starts.append((i[a] * n) / o)
                    ends.append(((i[a] + 1) * n + (o - 1)) / o)
            return starts, ends

        def value(i: tuple, fill: Any) -> Any:
            starts, ends = bounds(i)
            idx = list(i)
            inside = None
            for j, a in enumerate(axes):
                p = starts[j] + r[j] if not (isinstance(starts[j], int) and starts[j] == 0) \
                    else r[j]
                idx[a] = p
                if not exact[j] and not global_pool:
                    ok = b.lt(p, ends[j])
                    inside = ok if inside is None else b.logical_and(inside, ok)
                    idx[a] = b.min(p, sizes[j] - 1)
            v = b.cast(x[tuple(idx)], acc)
            return v if inside is None else b.select(inside, v, fill)

        if kind == "max":
            t = b.compute(shape, lambda *i: b.reduce_max(value(i, _lowest(b, acc)), r),
                          dtype=acc, name="adaptive_max_pool")
            if acc == dt:
                return t
            return b.compute(shape, lambda *i: b.cast(t[i], dt), dtype=dt, name="pool_cast")
        total = b.compute(shape, lambda *i: b.reduce_sum(value(i, b.const(0, acc)), r),
                          dtype=acc, name="adaptive_avg_pool")

        def favg(*i: Any) -> Any:
            starts, ends = bounds(i)
            count = None
            for j in range(nd):
                c = ends[j] - starts[j]
                count = c if count is None else count * c
            if isinstance(count, int):
                count = b.const(count, "int64")
            return _divide(b, total[i], count, acc, dt)
        return b.compute(shape, favg, dtype=dt, name="adaptive_avg_pool_div")
    lower.__name__ = f"adaptive_{kind}_pool{nd}d"
    return lower


for _nd in (1, 2, 3):
    for _kind in ("max", "avg"):
        implement(f"nn.{_kind}_pool{_nd}d", target="llvm")(_pool(_nd, _kind))
        implement(f"nn.adaptive_{_kind}_pool{_nd}d", target="llvm")(_adaptive(_nd, _kind))
implement("nn.global_max_pool2d", target="llvm")(_adaptive(2, "max", global_pool=True))
implement("nn.global_avg_pool2d", target="llvm")(_adaptive(2, "avg", global_pool=True))
