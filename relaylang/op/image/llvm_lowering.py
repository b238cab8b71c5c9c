"""LLVM lowering of image.resize2d and image.resize1d (and the resampling nn.upsampling
and nn.upsampling3d share with them: `resize_lowering` over H and W, `resize_axes_lowering`
over any axes).

The kernel (`op/resize_numpy.py`) resamples W then H, in float32, each output position
reading a few input positions ("taps") with weights: nearest one tap, linear two,
cubic four (more when antialiasing), the source coordinates and weights computed from
the output position alone. Those per-axis tables are the kernel's own
(`resize_numpy.axis_taps`, so nearest picks exactly the kernel's indices), baked into
the module as constants; the lowered code is the weighted sum
sum_j (sum_k x[.., ih_j, iw_k] * ww_k) * wh_j in float32, cast to the output dtype.
Interpolating (linear, cubic) to an integer dtype is left to NumPy: LLVM may contract
a product and a sum into an fma, and the truncation to an integer would show it.
"""
from __future__ import annotations

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
    import numpy as np

    from ..layouts import axis_positions
    from ..resize_numpy import axis_taps
    h, w = axis_positions(layout, "HW", "layout")
    if x.size == 0 or 0 in size:
        raise NotImplementedError("resize of an empty tensor")
    if how.method != "nearest_neighbor" and not out_dtype.startswith("float"):
        # an interpolated value truncated to an integer: LLVM's contraction of a * w0 +
        # b * w1 into an fma can move it across an integer (NumPy rounds each product)
        raise NotImplementedError(f"{how.method} resize to {out_dtype}")
    box = tuple(roi) if roi else (0.0, 0.0, 1.0, 1.0)
    per_axis = {h: (size[0], scales[0] if scales else None, (box[0], box[2]), "h"),
                w: (size[1], scales[1] if scales else None, (box[1], box[3]), "w")}
    taps, inside = {}, {}
    for ax, (out_len, scale, span, tag) in per_axis.items():
        table, valid = axis_taps(x.shape[ax], out_len, how, scale, span)
        taps[ax] = [(_table(b, idx, f"resize_{tag}{k}_idx"),
                     None if wt is None else _table(b, wt, f"resize_{tag}{k}_wt"))
                    for k, (idx, wt) in enumerate(table)]
        if valid is not None:
            inside[ax] = _table(b, valid.astype(np.float32), f"resize_{tag}_inside")
    shape = list(x.shape)
    shape[h], shape[w] = size

    def f(*i: Any) -> Any:
        total = None
        for ih, wh in taps[h]:
            row = None
            for iw, ww in taps[w]:
                idx = list(i)
                idx[h], idx[w] = ih[i[h]], iw[i[w]]
                v = b.cast(x[tuple(idx)], "float32")
                if ww is not None:
                    v = v * ww[i[w]]
                row = v if row is None else row + v
            if wh is not None:
                row = row * wh[i[h]]
            total = row if total is None else total + row
        if inside:
            # tf_crop_and_resize: outside the box the extrapolation value (the masks are
            # 0 or 1, so the blend is exact)
            m = None
            for ax, table in inside.items():
                m = table[i[ax]] if m is None else m * table[i[ax]]
            total = total * m + b.const(how.extrapolation, "float32") * (1.0 - m)
        return b.cast(total, out_dtype)
    return b.compute(tuple(shape), f, dtype=out_dtype, name="resize")


@implement("image.resize2d", target="llvm")
def resize2d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    from ..resize_numpy import resampling
    (x,) = inputs
    return resize_lowering(b, x, attrs.layout, tuple(int(s) for s in attrs.size),
                           resampling(attrs), str(out_type.dtype), attrs.scales, attrs.roi)


def resize_axes_lowering(b: Any, x: Any, axes: list[tuple[int, int, tuple[float, float]]],
                         how: Any, out_dtype: str) -> Any:
    """`resize_numpy.resize_axes` as loops: each (axis, out_len, roi span) of `axes` read
    through its tap table (the kernel's own), the weighted sum nested last axis innermost,
    in float32, cast to `out_dtype`; tf_crop_and_resize's outside positions take the
    extrapolation value."""
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
        table, valid = axis_taps(x.shape[ax], out_len, how, None, span)
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
