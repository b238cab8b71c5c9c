"""Reference kernels of the vm family."""
from __future__ import annotations

from typing import Any

import numpy as np

from ..memory.numpy_kernels import only_after_lowering
from ..registry import implement


@implement("vm.shape_of")
def shape_of(inputs: list, attrs: Any) -> np.ndarray:
    x = inputs[0]
    # As `shape_of`: a scalar's shape is typed 0-d (TVM's RankShape); its value is the rank.
    return np.array(x.shape if x.ndim else 0, dtype=attrs.dtype or "int64")


@implement("vm.reshape_tensor")
def reshape_tensor(inputs: list, attrs: Any) -> np.ndarray:
    data, shape = inputs
    newshape = tuple(int(d) for d in np.asarray(shape).reshape(-1))
    if any(isinstance(d, int) and d != n for d, n in zip(attrs.newshape, newshape)) \
            or len(newshape) != len(attrs.newshape):
        raise ValueError(f"the shape tensor {list(newshape)} disagrees with newshape "
                         f"{list(attrs.newshape)}")
    if int(np.prod(newshape, dtype=np.int64)) != data.size:
        raise ValueError(f"cannot reshape {data.shape} ({data.size} elements) to {newshape}")
    return np.reshape(data, newshape)


implement("vm.invoke_tvm_op")(
    only_after_lowering("vm.invoke_tvm_op", "calls a lowered primitive on its outputs", __name__))
