"""LLVM lowering of image.resize2d and image.resize1d (and the resampling nn.upsampling
and nn.upsampling3d share with them: `resize_lowering` over H and W, `resize_axes_lowering`
over any axes).

The kernel (`op/resize_numpy.py`) resamples the last axis first, in float32, each output position
reading a few input positions ("taps") with weights: nearest one tap, linear two,
cubic four (more when antialiasing), the source coordinates and weights computed from
the output position alone. Those per-axis tables are the kernel's own
(`resize_numpy.axis_taps`, so nearest picks exactly the kernel's indices), baked into
the module as constants; the lowered code is the weighted sum
sum_j (sum_k x[.., ih_j, iw_k] * ww_k) * wh_j in float32 (for H and W), cast to the
output dtype.
Interpolating (linear, cubic) to an integer dtype is left to NumPy: LLVM may contract
a product and a sum into an fma, and the truncation to an integer would show it.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..registry import implement

if TYPE_CHECKING:
    import numpy as np


def _table(b: Any, data: np.ndarray, name: str) -> Any:
    import numpy as np
    if not hasattr(b, "placeholder"):
        raise NotImplementedError("the lowering context cannot bake a constant table")
    data = np.ascontiguousarray(data)
    return b.placeholder(data.shape, str(data.dtype), name, scope="constant", data=data)


def resize_lowering(b: Any, x: Any, layout: str, size: tuple[int, int], how: Any,
                    out_dtype: str, scales: tuple[float, float] | None = None,
                    roi: tuple[float, ...] | None = None) -> Any:
    """Resampling over the layout's H and W (`roi`: TVM's (h0, w0, h1, w1) box; `scales`:
    the ratios the coordinates use instead of the sizes'), H outermost."""
    from ..layouts import axis_positions
    h, w = axis_positions(layout, "HW", "layout")
    box = tuple(roi) if roi else (0.0, 0.0, 1.0, 1.0)
    return resize_axes_lowering(b, x, [(h, size[0], (box[0], box[2])),
                                       (w, size[1], (box[1], box[3]))], how, out_dtype,
                                scales)


@implement("image.resize2d", target="llvm")
def resize2d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from ..resize_numpy import resampling
    (x,) = inputs
    return resize_lowering(b, x, attrs.layout, tuple(int(s) for s in attrs.size),
                           resampling(attrs), str(out_type.dtype), attrs.scales, attrs.roi)


def resize_axes_lowering(b: Any, x: Any, axes: list[tuple[int, int, tuple[float, float]]],
                         how: Any, out_dtype: str,
                         scales: Sequence[float | None] | None = None) -> Any:
    """`resize_numpy.resize_axes` as loops: each (axis, out_len, roi span) of `axes` read
    through its tap table (the kernel's own; `scales[k]`, when given, the ratio axis k's
    coordinates use), the weighted sum nested last axis innermost, in float32, cast to
    `out_dtype`; tf_crop_and_resize's outside positions take the extrapolation value."""
    import numpy as np

    from ..resize_numpy import axis_taps
    sizes = [n for _, n, _ in axes]
    if x.size == 0 or 0 in sizes:
        raise NotImplementedError("resize of an empty tensor")
    if how.method != "nearest_neighbor" and not out_dtype.startswith("float"):
        raise NotImplementedError(f"{how.method} resize to {out_dtype}")
    taps, inside = [], {}
    shape = list(x.shape)
    for k, (ax, out_len, span) in enumerate(axes):
        table, valid = axis_taps(x.shape[ax], out_len, how, scales[k] if scales else None,
                                 span)
        taps.append((ax, [(_table(b, idx, f"resize_a{k}_{j}_idx"),
                           None if wt is None else _table(b, wt, f"resize_a{k}_{j}_wt"))
                          for j, (idx, wt) in enumerate(table)]))
        if valid is not None:
            inside[ax] = _table(b, valid.astype(np.float32), f"resize_a{k}_inside")
        shape[ax] = out_len

    def f(*i: Any) -> Any:
        def level(k: int, idx: list) -> Any:
            if k == len(taps):
                return b.cast(x[tuple(idx)], "float32")
            ax, table = taps[k]
            total = None
            for src, wt in table:
                sub = list(idx)
                sub[ax] = src[i[ax]]
                v = level(k + 1, sub)
                if wt is not None:
                    v = v * wt[i[ax]]
                total = v if total is None else total + v
            return total
        total = level(0, list(i))
        if inside:
            m = None
            for ax, table in inside.items():
                m = table[i[ax]] if m is None else m * table[i[ax]]
            total = total * m + b.const(how.extrapolation, "float32") * (1.0 - m)
        return b.cast(total, out_dtype)
    return b.compute(tuple(shape), f, dtype=out_dtype, name="resize")


@implement("image.resize1d", target="llvm")
def resize1d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from ..layouts import axis_positions
    from ..resize_numpy import resampling_of
    (x,) = inputs
    (w,) = axis_positions(attrs.layout, "W", "layout")
    span = tuple(attrs.roi) if attrs.roi else (0.0, 1.0)
    return resize_axes_lowering(b, x, [(w, int(attrs.size[0]), span)], resampling_of(attrs),
                                str(out_type.dtype))
