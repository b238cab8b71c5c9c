"""LLVM lowering of image.resize2d (and the resampling nn.upsampling shares with it).

The kernel (`op/resize_numpy.py`) resamples W then H, in float32, each output position
reading a few input positions ("taps") with weights: nearest one tap, linear two,
cubic four, the source coordinates and weights computed in float32 from the output
position alone. Those per-axis tables are computed here with the kernel's own NumPy
functions at lowering time (so nearest picks exactly the kernel's indices) and baked
into the module as constants; the lowered code is the weighted sum
sum_j (sum_k x[.., ih_j, iw_k] * ww_k) * wh_j in float32, cast to the output dtype.
Interpolating (linear, cubic) to an integer dtype is left to NumPy: LLVM may contract
a product and a sum into an fma, and the truncation to an integer would show it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..registry import implement

if TYPE_CHECKING:
    import numpy as np


def _taps(n: int, out_len: int, method: str, mode: str, rounding: str, alpha: float,
          exclude: bool) -> list[tuple[np.ndarray, np.ndarray | None]]:
    """[(input index per output position, float32 weight or None), ...] for one axis:
    `resize_numpy.resize_axis` as tables."""
    import numpy as np

    from ..resize_numpy import F32, _cubic_weights, nearest_index, source_coords
    if method == "nearest_neighbor":
        if mode == "asymmetric" and out_len % n == 0:
            idx = np.arange(out_len) // (out_len // n)
        else:
            rounding = rounding or ("round" if mode == "align_corners" else "floor")
            idx = nearest_index(source_coords(out_len, n, mode), rounding)
        return [(np.clip(idx, 0, n - 1).astype(np.int64), None)]
    coords = source_coords(out_len, n, mode)
    base = np.floor(coords)
    t = coords - base
    base = base.astype(np.int64)
    if method == "linear":
        return [(np.clip(base, 0, n - 1), (F32(1) - t).astype(F32)),
                (np.clip(base + 1, 0, n - 1), t.astype(F32))]
    weights = _cubic_weights(t, alpha)
    if exclude:
        weights = [np.where((base - 1 + k < 0) | (base + k > n), F32(0), w)
                   for k, w in enumerate(weights)]
        total = sum(weights)
        weights = [w / total for w in weights]
    return [(np.clip(base - 1 + k, 0, n - 1), np.asarray(w, F32))
            for k, w in enumerate(weights)]


def _table(b: Any, data: np.ndarray, name: str) -> Any:
    import numpy as np
    if not hasattr(b, "placeholder"):
        raise NotImplementedError("the lowering context cannot bake a constant table")
    data = np.ascontiguousarray(data)
    return b.placeholder(data.shape, str(data.dtype), name, scope="constant", data=data)


def resize_lowering(b: Any, x: Any, layout: str, size: tuple[int, int], method: str,
                    mode: str, rounding: str, out_dtype: str, alpha: float = -0.5,
                    exclude: bool = False) -> Any:
    from ..layouts import axis_positions
    h, w = axis_positions(layout, "HW", "layout")
    if x.size == 0 or 0 in size:
        raise NotImplementedError("resize of an empty tensor")
    if method != "nearest_neighbor" and not out_dtype.startswith("float"):
        # an interpolated value truncated to an integer: LLVM's contraction of a * w0 +
        # b * w1 into an fma can move it across an integer (NumPy rounds each product)
        raise NotImplementedError(f"{method} resize to {out_dtype}")
    taps = {}
    for ax, out_len, tag in ((h, size[0], "h"), (w, size[1], "w")):
        taps[ax] = [(_table(b, idx, f"resize_{tag}{k}_idx"),
                     None if wt is None else _table(b, wt, f"resize_{tag}{k}_wt"))
                    for k, (idx, wt) in enumerate(_taps(x.shape[ax], out_len, method, mode,
                                                        rounding, alpha, exclude))]
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
        return b.cast(total, out_dtype)
    return b.compute(tuple(shape), f, dtype=out_dtype, name="resize")


@implement("image.resize2d", target="llvm")
def resize2d(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    return resize_lowering(b, x, attrs.layout, tuple(int(s) for s in attrs.size),
                           attrs.method, attrs.coordinate_transformation_mode,
                           attrs.rounding_method, str(out_type.dtype),
                           float(attrs.cubic_alpha), bool(attrs.cubic_exclude))
