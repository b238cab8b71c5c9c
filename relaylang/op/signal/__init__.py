"""The signal family: the discrete Fourier transform.

`dft(re_data, im_data, inverse=False)` mirrors TVM's `relay.dft`
(python/tvm/relay/op/transform.py, DFTAttrs of include/tvm/relay/attrs/transform.h,
topi.signal.dft; kOpaque): the DFT along the last axis of the complex signal
`re_data + i * im_data`, the two parts of one shape and float dtype, returned as the
tuple (real part, imaginary part) of that shape and dtype:

    X[..., k] = sum_j x[..., j] * exp(-2 pi i j k / n)              (inverse=False)
    x[..., j] = 1/n * sum_k X[..., k] * exp(+2 pi i j k / n)        (inverse=True)

(the inverse is scaled by 1/n, as TVM's topi and numpy.fft.ifft). The relation is in
`relations.py`; the NumPy kernel (`numpy_kernels.py`) computes with numpy.fft in
float64 and rounds the result to the input dtype; the LLVM lowering
(`llvm_lowering.py`) is the O(n^2) sum, accumulated in float64. ONNX's DFT and STFT
(transforms along any axis, padding or truncation to `dft_length`, one-sided spectra,
windows) are built from it by the ONNX frontend.
"""
from __future__ import annotations

from typing import ClassVar

from ...ir.attrs import Attrs
from ..registry import OpPattern, declare_op
from ..schema import attrs_schema
from .relations import dft_rel


@attrs_schema
class DFTAttrs(Attrs):
    inverse: bool = False

    type_key: ClassVar[str] = "relay.attrs.DFTAttrs"


declare_op("dft", inputs=("re_data", "im_data"), attrs=DFTAttrs, rel=dft_rel,
           pattern=OpPattern.OPAQUE,
           doc="The discrete Fourier transform along the last axis of re_data + i*im_data "
               "(float tensors of one shape): the tuple (real part, imaginary part); "
               "inverse=True is the inverse transform, scaled by 1/n.")
