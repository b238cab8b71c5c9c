"""NumPy reference kernels of image.resize1d and image.resize2d (registered with `@implement`); the
resampling itself is `op/resize_numpy.py`."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..layouts import axis_positions
from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from ..resize_numpy import resampling, resampling_of, resize_axes, resize_hw


@implement("image.resize2d", float16=IN_FLOAT32)
def resize2d(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return resize_hw(x, attrs.layout, tuple(attrs.size), resampling(attrs),
                     attrs.out_dtype or x.dtype, attrs.scales, attrs.roi)


@implement("image.resize1d", float16=IN_FLOAT32)
def resize1d(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    (w,) = axis_positions(attrs.layout, "W", "layout")
    span = tuple(attrs.roi) if attrs.roi else (0.0, 1.0)
    return resize_axes(x, [(w, int(attrs.size[0]), span)], resampling_of(attrs),
                       attrs.out_dtype or x.dtype)
