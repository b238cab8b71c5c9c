"""LLVM lowering of nn.max_pool2d_with_argmax: one argmax reduction over the window
(positions outside the data read as the dtype's lowest value), its flat window position
turned back into (h, w), the value read there. The argmax keeps the first maximum, as
the kernel does. When it lands outside the data (every position inside holds the
lowest value, -inf for floats), the window's first position inside the data is taken
instead, as the kernel does; a window with no position inside gives 0 and -1."""
from __future__ import annotations

from typing import Any

from ..registry import implement
from .numpy_kernels import geometry


@implement("nn.max_pool2d_with_argmax", target="llvm")
def max_pool2d_with_argmax(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    n, c, h, w = x.shape
    k, s, d, pads, (oh, ow) = geometry(attrs, h, w)
    shape = (n, c, oh, ow)
    if 0 in shape or h == 0 or w == 0:
        return (b.compute(shape, lambda *i: b.const(0, x.dtype), dtype=x.dtype, name="pool"),
                b.compute(shape, lambda *i: b.const(-1, "int64"), name="argpool"))

    def rows(i: Any, a: Any) -> Any:
        return i * s[0] - pads[0][0] + a * d[0]

    def cols(j: Any, e: Any) -> Any:
        return j * s[1] - pads[1][0] + e * d[1]

    def inside(y: Any, z: Any) -> Any:
        return b.logical_and(b.logical_and(b.ge(y, 0), b.lt(y, h)),
                             b.logical_and(b.ge(z, 0), b.lt(z, w)))

    def fargmax(nn: Any, cc: Any, i: Any, j: Any) -> Any:
        ka, ke = b.reduce_axis(k[0], "ka"), b.reduce_axis(k[1], "kb")
        y, z = rows(i, ka), cols(j, ke)
        yc = b.min(b.max(y, 0), h - 1)
        zc = b.min(b.max(z, 0), w - 1)
        return b.reduce_argmax(b.select(inside(y, z), x[nn, cc, yc, zc], b.min_value(x.dtype)),
                               [ka, ke])
    arg = b.compute(shape, fargmax, dtype="int64", name="pool_arg")

    def first(start: Any, step: int, n: int) -> Any:
        """The smallest window offset t with 0 <= start + t * step (clamped to 0)."""
        return b.max(b.floordiv(step - 1 - start, step), 0)

    def where(i: Any, j: Any, nn: Any, cc: Any) -> tuple[Any, Any, Any]:
        a = arg[nn, cc, i, j]
        y = rows(i, b.floordiv(a, k[1]))
        z = cols(j, b.floormod(a, k[1]))
        y1 = rows(i, first(rows(i, 0), d[0], h))
        z1 = cols(j, first(cols(j, 0), d[1], w))
        ok1 = b.logical_and(inside(y1, z1), b.logical_and(
            b.lt(first(rows(i, 0), d[0], h), k[0]), b.lt(first(cols(j, 0), d[1], w), k[1])))
        hit = inside(y, z)
        use_first = b.logical_and(b.logical_not(hit), ok1)
        return (b.select(use_first, y1, y), b.select(use_first, z1, z),
                b.logical_or(hit, ok1))

    def fvalue(nn: Any, cc: Any, i: Any, j: Any) -> Any:
        y, z, ok = where(i, j, nn, cc)
        v = x[nn, cc, b.min(b.max(y, 0), h - 1), b.min(b.max(z, 0), w - 1)]
        return b.select(ok, v, b.const(0, x.dtype))

    def findex(nn: Any, cc: Any, i: Any, j: Any) -> Any:
        y, z, ok = where(i, j, nn, cc)
        inner = y * w + z if attrs.storage_order == 0 else y + z * h
        flat = (nn * c + cc) * (h * w) + inner
        return b.select(ok, b.cast(flat, "int64"), b.const(-1, "int64"))
    return (b.compute(shape, fvalue, dtype=x.dtype, name="pool_max"),
            b.compute(shape, findex, dtype="int64", name="pool_index"))
