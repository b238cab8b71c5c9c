"""LLVM lowerings of the pool family (see /work/llvm_spec.md, "The lowering API").

Semantics follow `numpy_kernels.py`: a max pool's padding (and the ceil_mode tail)
holds the dtype's lowest finite value, an average divides the window sum by the number
of window positions inside the data (or inside the padded input with
count_include_pad, not counting the ceil_mode tail), at least 1; integer averages sum
in int64 and truncate toward zero. Adaptive windows are [floor(i * n / out),
ceil((i + 1) * n / out)) per axis. float16 is computed in float32 and rounded once.

Each pool is one reduction over the window axes per output element, the window read
with bounds checks (no padded copy: the kernel stays one stage).
"""
from __future__ import annotations

from typing import Any

from ..registry import implement


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
        r = [b.reduce_axis(k, f"r{j}") for j, k in enumerate(ks)]

        def window(i: tuple) -> tuple[list, list]:
            starts, pos = [], []
            for j, a in enumerate(axes):
                st = i[a] * ss[j] - pads[j][0] if ss[j] != 1 else i[a] - pads[j][0]
                starts.append(st)
                pos.append(st + (r[j] * ds[j] if ds[j] != 1 else r[j]))
            return starts, pos

        def value(i: tuple, pos: list, fill: Any) -> Any:
            idx = list(i)
            inside = None
            for j, a in enumerate(axes):
                n = sizes[j]
                ok = b.logical_and(b.ge(pos[j], 0), b.lt(pos[j], n))
                inside = ok if inside is None else b.logical_and(inside, ok)
                idx[a] = b.min(b.max(pos[j], 0), max(n - 1, 0))
            if x.size == 0:
                return fill
            return b.select(inside, b.cast(x[tuple(idx)], acc), fill)

        if kind == "max":
            def fmax(*i: Any) -> Any:
                _, pos = window(i)
                return b.reduce_max(value(i, pos, _lowest(b, acc)), r)
            t = b.compute(shape, fmax, dtype=acc, name=f"max_pool{nd}d")
            if acc == dt:
                return t
            return b.compute(shape, lambda *i: b.cast(t[i], dt), dtype=dt, name="pool_cast")

        def fsum(*i: Any) -> Any:
            _, pos = window(i)
            return b.reduce_sum(value(i, pos, b.const(0, acc)), r)
        total = b.compute(shape, fsum, dtype=acc, name=f"avg_pool{nd}d")

        def favg(*i: Any) -> Any:
            starts, _ = window(i)
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
