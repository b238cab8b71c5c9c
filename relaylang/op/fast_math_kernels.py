"""NumPy kernels of `fast_exp`, `fast_tanh` and `fast_erf`: TVM's approximations, step by
step in the tensor's dtype (include/tvm/topi/elemwise.h `fast_exp_float32`,
`fast_tanh_float`; src/tir/op/op.cc `fast_erf_float_expr`, both from Eigen).

As in TVM, only float32 (and float16 for `fast_erf`) is approximated; other dtypes get
the exact function (the tensor family's kernels compute integers in float64 and cast back).
NaN inputs give NaN. Measured worst errors against the float64 functions, over 2e6
float32 points evenly spread in [-100, 100] plus ±1e-30 .. ±1e-3 (the bounds that
tests/transform/test_fast_math.py checks, with a little margin, are in brackets):

  fast_exp   relative error 1.07e-6 on [-20, 20] [1.5e-6] and 4.08e-6 on [-87, 88.37]
             [5e-6]: it grows with |x| because f = x - n * ln2 is rounded to float32.
             Below -87, where exp(x) is denormal, absolute error 8.3e-39 [1.2e-38] (the
             result flushes to 0); from 88.3763 on the result is inf (exp overflows
             float32 only at 88.72).
  fast_tanh  absolute error 3.25e-7 [5e-7], relative 3.25e-7 [5e-7] where |x| >= 1e-3
             and 1.97e-7 [3e-7] below; ±1 beyond |x| = 9, as float32 tanh.
  fast_erf   float32: absolute error 4.19e-7 [5e-7], relative 4.19e-7 [5e-7] where
             |x| >= 1e-3 and 2.03e-7 [3e-7] below; ±1 beyond |x| = 4 (erf is within 1.6e-8
             of it). float16, TVM's coefficients and steps in float16: absolute error
             0.041 [0.05], near |x| = 4 (float16's spacing just below 1 is 4.9e-4).
"""
from __future__ import annotations

import numpy as np

from .numpy_support import erf

Array = np.ndarray


def _consts(dtype: np.dtype, *values: float) -> list[np.generic]:
    return [dtype.type(v) for v in values]


# exp(f) on [-ln2/2, ln2/2] ~ 1 + f + f^2 * P(f) (TVM's p[0..5], highest degree first).
_EXP_P = (1.9875691500e-4, 1.3981999507e-3, 8.3334519073e-3, 4.1665795894e-2,
          1.6666665459e-1, 5.0000001201e-1)


def fast_exp(x: Array) -> Array:
    """2^n * exp(f) with n = floor(x * log2(e) + 1/2), f = x - n * ln2; 2^n built from
    the exponent bits, as TVM does (so n + 127 <= 0 flushes to 0)."""
    if x.dtype != np.float32:
        return np.exp(x)
    f32 = np.dtype(np.float32)
    x_hi, x_lo, log2e, ln2, one, half, bias = _consts(
        f32, 88.3762626647950, -88.3762626647949, 1.44269504088896341, 0.6931471805599453,
        1.0, 0.5, 127.0)
    clamped = np.maximum(np.minimum(x, x_hi), x_lo)
    n = np.floor(clamped * log2e + half)
    f = clamped - n * ln2
    p = np.full_like(f, _EXP_P[0])
    for c in _EXP_P[1:]:
        p = p * f + f32.type(c)
    y = p * f * f + f + one
    exponent = np.nan_to_num(n + bias).astype(np.int32)       # NaN: any bits, fixed below
    two_n = np.left_shift(exponent, 23).view(np.float32)
    out = np.maximum(two_n * y, x)
    return np.where(np.isnan(x), x, out)


_TANH_ALPHA = (-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
               5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
               4.89352455891786e-03)                     # alpha_13 .. alpha_1
_TANH_BETA = (1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
              4.89352518554385e-03)                       # beta_6 .. beta_0


def fast_tanh(x: Array) -> Array:
    """Eigen's rational approximation: x * P(x^2) / Q(x^2) on x clamped to [-9, 9]."""
    if x.dtype != np.float32:
        return np.tanh(x)
    return _odd_rational(x, 9.0, _TANH_ALPHA, _TANH_BETA)


_ERF_ALPHA = (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
              -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
              -1.60960333262415e-02)                     # alpha_13 .. alpha_1
_ERF_BETA = (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
             -7.37332916720468e-03, -1.42647390514189e-02)  # beta_8 .. beta_0


def fast_erf(x: Array) -> Array:
    """Eigen's rational approximation on x clamped to [-4, 4], for float32 and float16."""
    if x.dtype not in (np.float32, np.float16):
        return erf(x)
    return _odd_rational(x, 4.0, _ERF_ALPHA, _ERF_BETA)


def _odd_rational(x: Array, bound: float, alpha: tuple[float, ...], beta: tuple[float, ...]
                  ) -> Array:
    """x * P(x^2) / Q(x^2) by Horner's rule, x clamped to [-bound, bound], in x's dtype."""
    dt = x.dtype
    c = np.maximum(np.minimum(x, dt.type(bound)), dt.type(-bound))
    x2 = c * c
    p = x2 * dt.type(alpha[0]) + dt.type(alpha[1])
    for a in alpha[2:]:
        p = x2 * p + dt.type(a)
    q = x2 * dt.type(beta[0]) + dt.type(beta[1])
    for b in beta[2:]:
        q = x2 * q + dt.type(b)
    return (c * p) / q
