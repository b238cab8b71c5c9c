"""LLVM lowering of det: Gaussian elimination with partial pivoting, in float64.

The loop IR has no loop-carried state besides reductions, so the factorisation is
unrolled over its n - 1 pivot steps, each two stages over all matrices at once:
step k works on the trailing (n-k) x (n-k) block S_k (S_0 the matrix, widened to
float64),

    p_k            = argmax_i |S_k[i, 0]|        (the first largest, as LAPACK's idamax)
    S_{k+1}[i, j]  = S_k[r, j+1] - S_k[r, 0] / S_k[p_k, 0] * S_k[p_k, j+1]
                     with r = 0 if i+1 == p_k else i+1   (rows 0 and p_k swapped)

(a zero pivot, where the whole column is zero, eliminates nothing, as LAPACK's getrf).
The determinant is the product of the pivots S_k[p_k, 0] and of S_{n-1}, negated once
per step that swapped rows (p_k != 0), rounded once to the output dtype: what
numpy.linalg.det computes in the NumPy kernel, up to float64 rounding.

The unrolling makes 2(n-1) stages and an expression of O(n) terms; matrices larger
than `MAX_ORDER` are left to the NumPy kernel (the lowering declines).
"""
from __future__ import annotations

from typing import Any

from ..registry import implement

MAX_ORDER = 64


@implement("det", target="llvm")
def det(b: Any, inputs: list, attrs: Any, out_type: Any) -> Any:
    (x,) = inputs
    dtype = str(out_type.dtype)
    n = x.shape[-1]
    batch = x.shape[:-2]
    if x.size == 0 and n != 0:
        raise NotImplementedError("det of an empty batch")
    if n > MAX_ORDER:
        raise NotImplementedError(f"det of {n} x {n} matrices (more than {MAX_ORDER} "
                                  "unrolled elimination steps)")
    if n == 0:
        return b.compute(batch, lambda *i: b.const(1, dtype), dtype=dtype, name="det")
    s = b.compute(x.shape, lambda *i: b.cast(x[i], "float64"), name="det_f64")
    steps = []                        # (pivot row stage, the block it was chosen in)
    for k in range(n - 1):
        m = n - k

        def pick(*bi: Any, s: Any = s, m: int = m) -> Any:
            r = b.reduce_axis(m, "r")
            return b.reduce_argmax(b.call("fabs", s[bi + (r, 0)]), [r])
        p = b.compute(batch, pick, name="det_pivot")

        def eliminate(*idx: Any, s: Any = s, p: Any = p) -> Any:
            bi, i, j = tuple(idx[:-2]), idx[-2] + 1, idx[-1] + 1
            pk = p[bi]
            row = b.select(b.eq(i, pk), b.const(0, "int64"), i)
            pivot = s[bi + (pk, 0)]
            factor = b.select(b.eq(pivot, 0.0), b.const(0.0, "float64"),
                              s[bi + (row, 0)] / pivot)
            return s[bi + (row, j)] - factor * s[bi + (pk, j)]
        steps.append((p, s))
        s = b.materialize(b.compute(batch + (m - 1, m - 1), eliminate, name="det_lu"))

    def result(*bi: Any) -> Any:
        acc = s[bi + (0, 0)]
        for p, block in steps:
            pk = p[bi]
            acc = acc * block[bi + (pk, 0)]
            acc = b.select(b.ne(pk, 0), -acc, acc)
        return b.cast(acc, dtype)
    return b.compute(batch, result, dtype=dtype, name="det")
