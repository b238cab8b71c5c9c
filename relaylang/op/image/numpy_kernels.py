"""NumPy reference kernel of image.resize2d (registered with `@implement`); the
resampling itself is `op/resize_numpy.py`."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement
from ..resize_numpy import resize_hw, resampling


@implement("image.resize2d", float16=IN_FLOAT32)
def resize2d(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    return resize_hw(x, attrs.layout, tuple(attrs.size), resampling(attrs),
                     attrs.out_dtype or x.dtype, attrs.scales, attrs.roi)
