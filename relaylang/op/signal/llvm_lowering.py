"""LLVM lowering of dft: the O(n^2) sum, accumulated in float64.

For an output position k along the last axis (length n) each part is one reduction
over the input positions j:

    re[k] = sum_j xr[j] * cos(2 pi jk/n) + s * xi[j] * sin(2 pi jk/n)
    im[k] = sum_j xi[j] * cos(2 pi jk/n) - s * xr[j] * sin(2 pi jk/n)

with s = 1 for the forward transform and -1 for the inverse (whose sums are then
scaled by 1/n). The twiddle factors are two float64 tables of n entries, computed at
lowering time from the exact angle of (j*k mod n), so that no angle grows with n and
the values are those NumPy's FFT uses. The inputs are widened to float64 and each sum
is rounded once to the output dtype, as the NumPy kernel (numpy.fft in float64) does.
"""
from __future__ import annotations

from typing import Any

from ..registry import implement


def _table(b: Any, data: Any, name: str) -> Any:
    import numpy as np
    data = np.ascontiguousarray(data)
    return b.placeholder(data.shape, str(data.dtype), name, scope="constant", data=data)


@implement("dft", target="llvm")
def dft(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    import numpy as np
    re, im = inputs
    dtype = str(out_type.fields[0].dtype)
    shape = re.shape
    n = shape[-1]
    if re.size == 0:
        raise NotImplementedError("dft of an empty tensor")
    angle = 2 * np.pi * np.arange(n, dtype=np.float64) / n
    cos = _table(b, np.cos(angle), "dft_cos")
    sin = _table(b, np.sin(angle), "dft_sin")
    scale = 1.0 / n if attrs.inverse else 1.0

    def part(imaginary: bool) -> Any:
        def f(*i: Any) -> Any:
            j = b.reduce_axis(n, "j")
            at = tuple(i[:-1]) + (j,)
            xr = b.cast(re[at], "float64")
            xi = b.cast(im[at], "float64")
            m = (j * i[-1]) % n
            c, s = cos[m], sin[m]
            if imaginary:
                term = xi * c + xr * s if attrs.inverse else xi * c - xr * s
            else:
                term = xr * c - xi * s if attrs.inverse else xr * c + xi * s
            return b.reduce_sum(term, [j])
        total = b.compute(shape, f, dtype="float64", name="dft_im" if imaginary else "dft_re")
        if scale == 1.0:
            return b.compute(shape, lambda *i: b.cast(total[i], dtype), dtype=dtype,
                             name="dft_out")
        return b.compute(shape, lambda *i: b.cast(total[i] * scale, dtype), dtype=dtype,
                         name="dft_out")
    return part(False), part(True)
