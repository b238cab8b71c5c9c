"""NumPy reference kernel of the signal family (registered with `@implement`).

dft: numpy.fft (pocketfft) on the complex signal in the input's precision -- complex64
for float32 (float16 and bfloat16 through float32), complex128 for float64 -- with ifft
for the inverse (scaled by 1/n). That is how ONNX's reference DFT computes (numpy.fft
on the float32 signal), so the conformance outputs are matched to the last bit, rounding
noise included; pocketfft's error grows as log(n), well below onnxruntime's float32
Bluestein/radix-2 transforms'."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement


@implement("dft", float16=IN_FLOAT32)
def dft(inputs: list, attrs: Any) -> tuple[np.ndarray, np.ndarray]:
    re, im = (np.asarray(x) for x in inputs)
    dtype = re.dtype
    if re.shape[-1] == 0:                       # numpy.fft refuses n = 0: nothing to sum
        return np.zeros(re.shape, dtype), np.zeros(re.shape, dtype)
    ctype = np.complex64 if dtype == np.float32 else np.complex128
    z = np.empty(re.shape, ctype)
    z.real, z.imag = re, im
    out = np.fft.ifft(z, axis=-1) if attrs.inverse else np.fft.fft(z, axis=-1)
    return (np.ascontiguousarray(out.real).astype(dtype),
            np.ascontiguousarray(out.imag).astype(dtype))
