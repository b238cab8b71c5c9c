"""The NumPy kernel of einsum: `np.einsum`; float16 and bfloat16 operands are computed in
float32 and the result rounded once (the operands come as a tuple, so the kernel widens
them itself rather than through the registry's float16 wrapper)."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..numpy_support import BFLOAT16, from_bfloat16, implement, to_bfloat16


def einsum(inputs: list, attrs: Any) -> np.ndarray:
    operands = [np.asarray(x) for x in inputs[0]]
    dtype = operands[0].dtype if operands else None
    if dtype == BFLOAT16:
        wide = [from_bfloat16(x) for x in operands]
        return to_bfloat16(np.asarray(np.einsum(attrs.equation, *wide), order="C"))
    if dtype == np.float16:
        wide = [x.astype(np.float32) for x in operands]
        return np.asarray(np.einsum(attrs.equation, *wide), order="C").astype(np.float16)
    return np.asarray(np.einsum(attrs.equation, *operands), order="C")


einsum.handles_bfloat16 = True          # type: ignore[attr-defined]  (the carrier, above)
implement("einsum", bfloat16=False)(einsum)
