"""NumPy reference kernel of the linalg family (registered with `@implement`).

det: numpy.linalg.det (LAPACK's LU factorisation with partial pivoting) in float64,
rounded to the input dtype (float16 and bfloat16 through float32)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import float16_in_float32 as IN_FLOAT32
from ..numpy_support import implement


@implement("det", float16=IN_FLOAT32)
def det(inputs: list, attrs: Any) -> np.ndarray:
    x = np.asarray(inputs[0])
    if x.size == 0:         # no matrices, or 0 x 0 ones (whose determinant is 1)
        return np.ones(x.shape[:-2], x.dtype)
    return np.asarray(np.linalg.det(x.astype(np.float64))).astype(x.dtype)
